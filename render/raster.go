package render

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"

	"github.com/yutenv/yutenv/env"
)

// Image renders state s as a new Width x Height RGBA image showing what SVG
// shows. Shapes are filled with golang.org/x/image/vector (anti-aliased) and
// text is drawn with the Go fonts. A nil s renders an empty board.
func Image(s *env.State, opts Options) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, Width, Height))
	drawInto(img, s, opts)
	return img
}

// Draw renders state s into dst, which must be exactly Width x Height
// (any origin); a dst of another size is an error and is left untouched.
func Draw(dst *image.RGBA, s *env.State, opts Options) error {
	if dst == nil {
		return fmt.Errorf("render: Draw into a nil image")
	}
	if sz := dst.Bounds().Size(); sz.X != Width || sz.Y != Height {
		return fmt.Errorf("render: Draw needs a %dx%d image, got %dx%d", Width, Height, sz.X, sz.Y)
	}
	if dst.Bounds().Min == (image.Point{}) {
		drawInto(dst, s, opts)
		return nil
	}
	tmp := pooledImage()
	defer imagePool.Put(tmp)
	drawInto(tmp, s, opts)
	for y := 0; y < Height; y++ {
		copy(dst.Pix[dst.PixOffset(dst.Bounds().Min.X, dst.Bounds().Min.Y+y):], tmp.Pix[y*tmp.Stride:y*tmp.Stride+4*Width])
	}
	return nil
}

// RGBSize is the length of an RGB frame: Height x Width x 3 bytes.
const RGBSize = Height * Width * 3

// RGB renders state s as Height x Width x 3 bytes (rows top to bottom, pixels
// left to right, then red, green, blue), the layout of a numpy uint8 array of
// shape (Height, Width, 3) as gymnasium's rgb_array render mode wants. It
// writes into dst when cap(dst) >= RGBSize (no allocation but a pooled
// scratch image) and returns dst[:RGBSize]; otherwise it allocates.
func RGB(s *env.State, opts Options, dst []byte) []byte {
	if cap(dst) < RGBSize {
		dst = make([]byte, RGBSize)
	}
	dst = dst[:RGBSize]
	img := pooledImage()
	defer imagePool.Put(img)
	drawInto(img, s, opts)
	j := 0
	for i := 0; i < len(img.Pix); i += 4 {
		dst[j], dst[j+1], dst[j+2] = img.Pix[i], img.Pix[i+1], img.Pix[i+2]
		j += 3
	}
	return dst
}

// PNG encodes Image(s, opts) as PNG to w.
func PNG(w io.Writer, s *env.State, opts Options) error {
	if err := png.Encode(w, Image(s, opts)); err != nil {
		return fmt.Errorf("render: png: %w", err)
	}
	return nil
}

var imagePool = sync.Pool{New: func() any { return image.NewRGBA(image.Rect(0, 0, Width, Height)) }}

func pooledImage() *image.RGBA { return imagePool.Get().(*image.RGBA) }

// drawInto draws over every pixel of img, whose bounds are (0,0)-(Width,Height).
func drawInto(img *image.RGBA, s *env.State, opts Options) {
	if s == nil {
		s = &env.State{}
	}
	f := newFaces()
	defer f.close()
	_, overlay := build(s, opts, f)
	copy(img.Pix, boardLayer(geomOf(s.Rules()), opts.Numbers).Pix)
	c := &canvas{img: img, z: vector.NewRasterizer(1, 1), f: f}
	for _, it := range overlay {
		c.item(it)
	}
}

// The empty board of each layout, with and without station numbers, is
// rasterized once: it is most of the pixels and never changes.
var (
	boardMu     sync.Mutex
	boardLayers = map[[2]int]*image.RGBA{}
)

func boardLayer(b *geom, numbers bool) *image.RGBA {
	key := [2]int{b.key, 0}
	if numbers {
		key[1] = 1
	}
	boardMu.Lock()
	defer boardMu.Unlock()
	if img, ok := boardLayers[key]; ok {
		return img
	}
	img := image.NewRGBA(image.Rect(0, 0, Width, Height))
	f := newFaces()
	defer f.close()
	c := &canvas{img: img, z: vector.NewRasterizer(1, 1), f: f}
	for _, it := range boardItems(b, numbers) {
		c.item(it)
	}
	boardLayers[key] = img
	return img
}

// canvas rasterizes items onto an image, one shape at a time, each in a
// rasterizer sized to the shape's bounding box.
type canvas struct {
	img *image.RGBA
	z   *vector.Rasterizer
	f   *faces
}

// shape is a set of closed polygons that together make one filled mask.
// Polygons with positive orientation add coverage, negative ones cut holes.
type shape struct {
	polys [][]point
	neg   []bool
}

func (sh *shape) add(pts []point, hole bool) {
	if len(pts) < 3 {
		return
	}
	a := signedArea(pts)
	if (a < 0) != hole {
		pts = reversed(pts)
	}
	sh.polys = append(sh.polys, pts)
	sh.neg = append(sh.neg, hole)
}

func signedArea(pts []point) float64 {
	a := 0.0
	for i := range pts {
		p, q := pts[i], pts[(i+1)%len(pts)]
		a += p.X*q.Y - q.X*p.Y
	}
	return a / 2
}

func reversed(pts []point) []point {
	out := make([]point, len(pts))
	for i, p := range pts {
		out[len(pts)-1-i] = p
	}
	return out
}

// fill rasterizes the shape and composites col over the image.
func (c *canvas) fill(sh *shape, col color.NRGBA) {
	if col.A == 0 || len(sh.polys) == 0 {
		return
	}
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, poly := range sh.polys {
		for _, p := range poly {
			minX, minY = math.Min(minX, p.X), math.Min(minY, p.Y)
			maxX, maxY = math.Max(maxX, p.X), math.Max(maxY, p.Y)
		}
	}
	b := image.Rect(int(math.Floor(minX))-1, int(math.Floor(minY))-1, int(math.Ceil(maxX))+1, int(math.Ceil(maxY))+1)
	b = b.Intersect(c.img.Bounds())
	if b.Empty() {
		return
	}
	c.z.Reset(b.Dx(), b.Dy())
	ox, oy := float64(b.Min.X), float64(b.Min.Y)
	for _, poly := range sh.polys {
		c.z.MoveTo(float32(poly[0].X-ox), float32(poly[0].Y-oy))
		for _, p := range poly[1:] {
			c.z.LineTo(float32(p.X-ox), float32(p.Y-oy))
		}
		c.z.ClosePath()
	}
	c.z.Draw(c.img, b, image.NewUniform(col), image.Point{})
}

// circlePts approximates a circle by a polygon fine enough that no edge is
// off by more than a twentieth of a pixel.
func circlePts(ctr point, r float64) []point {
	n := int(math.Ceil(math.Pi / math.Acos(math.Max(0, 1-0.05/math.Max(r, 0.1)))))
	if n < 12 {
		n = 12
	}
	pts := make([]point, n)
	for i := range pts {
		a := 2 * math.Pi * float64(i) / float64(n)
		pts[i] = point{ctr.X + r*math.Cos(a), ctr.Y + r*math.Sin(a)}
	}
	return pts
}

// rrectPts is the outline of a rectangle with corners of radius rx, clockwise
// on screen from the top edge's start, as SVG draws it.
func rrectPts(x, y, w, h, rx float64) []point {
	rx = math.Min(rx, math.Min(w, h)/2)
	if rx <= 0 {
		return []point{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}}
	}
	const steps = 8
	corners := [4]struct {
		c point
		a float64
	}{
		{point{x + w - rx, y + rx}, -math.Pi / 2},
		{point{x + w - rx, y + h - rx}, 0},
		{point{x + rx, y + h - rx}, math.Pi / 2},
		{point{x + rx, y + rx}, math.Pi},
	}
	var pts []point
	for _, k := range corners {
		for i := 0; i <= steps; i++ {
			a := k.a + math.Pi/2*float64(i)/steps
			pts = append(pts, point{k.c.X + rx*math.Cos(a), k.c.Y + rx*math.Sin(a)})
		}
	}
	return pts
}

// strokeShape adds the outline of a polyline of the given width: a quad per
// segment and a disc at every joint (round joins, butt caps).
func strokeShape(sh *shape, pts []point, closed bool, width float64) {
	hw := width / 2
	n := len(pts)
	segs := n - 1
	if closed {
		segs = n
	}
	for i := 0; i < segs; i++ {
		a, b := pts[i], pts[(i+1)%n]
		l := math.Hypot(b.X-a.X, b.Y-a.Y)
		if l == 0 {
			continue
		}
		nx, ny := -(b.Y-a.Y)/l*hw, (b.X-a.X)/l*hw
		sh.add([]point{{a.X + nx, a.Y + ny}, {b.X + nx, b.Y + ny}, {b.X - nx, b.Y - ny}, {a.X - nx, a.Y - ny}}, false)
	}
	for i := 0; i < n; i++ {
		if closed || (i > 0 && i < n-1) {
			sh.add(circlePts(pts[i], hw), false)
		}
	}
}

// dashes cuts a polyline (closed: back to its start) into dashes of length
// on separated by gaps of length off.
func dashes(pts []point, closed bool, on, off float64) [][]point {
	if closed {
		pts = append(append([]point(nil), pts...), pts[0])
	}
	var out [][]point
	var cur []point
	drawing, left := true, on
	cur = append(cur, pts[0])
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		l := math.Hypot(b.X-a.X, b.Y-a.Y)
		pos := 0.0
		for l-pos > left {
			pos += left
			p := lerpPt(a, b, pos/l)
			if drawing {
				out = append(out, append(cur, p))
				cur = nil
			} else {
				cur = []point{p}
			}
			drawing = !drawing
			if drawing {
				left = on
			} else {
				left = off
			}
		}
		left -= l - pos
		if drawing {
			cur = append(cur, b)
		}
	}
	if drawing && len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}

// strokeOutline strokes a closed outline, dashed when dash[0] > 0.
func (c *canvas) strokeOutline(pts []point, width float64, dash [2]float64, col color.NRGBA) {
	if col.A == 0 || width <= 0 {
		return
	}
	sh := &shape{}
	if dash[0] > 0 {
		for _, d := range dashes(pts, true, dash[0], math.Max(dash[1], 0.1)) {
			strokeShape(sh, d, false, width)
		}
	} else {
		strokeShape(sh, pts, true, width)
	}
	c.fill(sh, col)
}

func (c *canvas) item(it item) {
	switch v := it.(type) {
	case circleItem:
		sh := &shape{}
		sh.add(circlePts(v.c, v.r), false)
		c.fill(sh, v.fill)
		if v.stroke.A != 0 && v.dash[0] == 0 {
			ring := &shape{}
			ring.add(circlePts(v.c, v.r+v.width/2), false)
			ring.add(circlePts(v.c, math.Max(v.r-v.width/2, 0)), true)
			c.fill(ring, v.stroke)
		} else {
			c.strokeOutline(circlePts(v.c, v.r), v.width, v.dash, v.stroke)
		}
	case rectItem:
		pts := rrectPts(v.x, v.y, v.w, v.h, v.rx)
		sh := &shape{}
		sh.add(pts, false)
		c.fill(sh, v.fill)
		c.strokeOutline(pts, v.width, v.dash, v.stroke)
	case pathItem:
		if v.closed {
			sh := &shape{}
			sh.add(v.pts, false)
			c.fill(sh, v.fill)
			c.strokeOutline(v.pts, v.width, [2]float64{}, v.stroke)
		} else if v.stroke.A != 0 && len(v.pts) > 1 {
			sh := &shape{}
			strokeShape(sh, v.pts, false, v.width)
			c.fill(sh, v.stroke)
		}
	case textItem:
		c.text(v)
	case groupItem:
		for _, ch := range v.items {
			c.item(ch)
		}
	}
}

func (c *canvas) text(t textItem) {
	fc := c.f.face(t.size, t.bold)
	if fc == nil || t.s == "" {
		return
	}
	x := t.p.X
	switch t.anchor {
	case anchorMiddle:
		x -= fixedToFloat(font.MeasureString(fc, t.s)) / 2
	case anchorEnd:
		x -= fixedToFloat(font.MeasureString(fc, t.s))
	}
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(t.fill), Face: fc,
		Dot: fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(t.p.Y * 64))}}
	d.DrawString(t.s)
}
