package render

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

var pngDir = flag.String("png", "", "also write the golden positions as PNG files into this directory, to look at")

// at returns the colour of pixel (x, y), rounded to the nearest pixel.
func at(img *image.RGBA, x, y float64) color.NRGBA {
	return color.NRGBA(img.RGBAAt(int(x), int(y))) // opaque pixels: premultiplied is straight
}

// stackProbe is a point inside a stack's disc, clear of its letter and badge.
func stackProbe(st env.Station) (float64, float64) {
	x, y, _ := StationPoint(st)
	return x - 8, y + 6
}

func TestImageSize(t *testing.T) {
	s := midGame(t)
	img := Image(&s, Options{})
	assert.Equal(t, image.Rect(0, 0, Width, Height), img.Bounds())
	for _, px := range [][2]int{{0, 0}, {Width - 1, Height - 1}} {
		assert.Equal(t, uint8(0xff), img.RGBAAt(px[0], px[1]).A, "the image is opaque")
	}
}

func TestImagePixels(t *testing.T) {
	s := midGame(t)
	img := Image(&s, Options{})
	red, _ := SeatColor(0)
	blue, _ := SeatColor(1)
	tests := []struct {
		name string
		x, y float64
		want color.NRGBA
	}{
		{"page background in the corner", 5, 5, colBackground},
		{"board between the lines", 100, 200, BackgroundColor()},
		{"board between the lines, lower right", 330, 250, BackgroundColor()},
		{"empty station 7", stationPts[7].X, stationPts[7].Y, colStation},
		{"empty centre is not a stack", stationPts[env.Centre].X + 8, stationPts[env.Centre].Y + 8, colStation},
		{"an outer line between 1 and 2", boardRight, (stationPts[1].Y + stationPts[2].Y) / 2, colLine},
	}
	x, y := stackProbe(5)
	tests = append(tests, struct {
		name string
		x, y float64
		want color.NRGBA
	}{"seat 0's stack of two on C1", x, y, red})
	x, y = stackProbe(13)
	tests = append(tests, struct {
		name string
		x, y float64
		want color.NRGBA
	}{"seat 0's piece on 13", x, y, red})
	x, y = stackProbe(17)
	tests = append(tests, struct {
		name string
		x, y float64
		want color.NRGBA
	}{"seat 1's stack on 17", x, y, blue})
	x, y = stackProbe(22)
	tests[4].want = blue // seat 1 stands on the centre in midGame
	tests[4].x, tests[4].y = x, y
	tests[4].name = "seat 1 on the centre"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, at(img, tc.x, tc.y), "pixel (%g,%g)", tc.x, tc.y)
		})
	}
}

func TestImageEmptyBoard(t *testing.T) {
	s, err := env.New(env.Standard(), 1, 0)
	require.NoError(t, err)
	img := Image(&s, Options{})
	for st := env.Station(0); st < env.NumStations; st++ {
		p := stationPts[st]
		assert.Equal(t, colStation, at(img, p.X, p.Y), "station %d is empty", st)
	}
	// The hand pips of both seats are drawn in their colours.
	for seat := 0; seat < 2; seat++ {
		col, _ := SeatColor(seat)
		for k := 0; k < 4; k++ {
			px := handPipX + float64(k)*pipStep
			py := panelSeatTop + float64(seat)*panelSeatH + 20
			assert.Equal(t, col, at(img, px, py), "seat %d hand pip %d", seat, k)
		}
	}
}

func TestImageHighlights(t *testing.T) {
	s := midGame(t)
	plain := Image(&s, Options{})
	lit := Image(&s, Options{Legal: true})
	gold := colHighlight
	ring := stackR + 5
	for _, st := range []env.Station{5, 13} {
		p := stationPts[st]
		assert.Equal(t, gold, at(lit, p.X-ring, p.Y), "source ring on %d", st)
		assert.NotEqual(t, gold, at(plain, p.X-ring, p.Y), "no ring without Legal on %d", st)
	}
	// A destination: station 21 is reached by gae from C1; its inside is tinted.
	p := stationPts[21]
	assert.NotEqual(t, at(plain, p.X, p.Y), at(lit, p.X, p.Y), "destination 21 is marked")
	// No highlight where nothing goes.
	p = stationPts[9]
	assert.Equal(t, at(plain, p.X, p.Y), at(lit, p.X, p.Y))
}

func TestImageArrow(t *testing.T) {
	s := midGame(t)
	ev := apply(t, &s, "yut@13") // 13 -> 14 -> 15 -> 16 -> 17
	plain := Image(&s, Options{})
	arrow := Image(&s, Options{LastMove: &ev})
	mid := lerpPt(stationPts[15], stationPts[16], 0.5)
	assert.Equal(t, colLine, at(plain, mid.X, mid.Y), "the board line between 15 and 16")
	red, _ := SeatColor(0)
	got := at(arrow, mid.X, mid.Y)
	assert.Greater(t, int(got.R), int(colLine.R)+50, "the red arrow covers the line between 15 and 16: %v", got)
	assert.Less(t, int(got.B), int(red.B)+30, "mostly red: %v", got)
	far := lerpPt(stationPts[2], stationPts[3], 0.5)
	assert.Equal(t, at(plain, far.X, far.Y), at(arrow, far.X, far.Y), "and nowhere near 2 and 3")
}

func TestImageDeterministic(t *testing.T) {
	for _, tc := range goldenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			a := Image(&tc.state, tc.opts)
			b := Image(&tc.state, tc.opts)
			assert.Equal(t, a.Pix, b.Pix)
		})
	}
}

func TestRGB(t *testing.T) {
	s, ev := playedGame(t, 5, 25)
	opts := Options{LastMove: &ev, Legal: true}
	img := Image(&s, opts)

	tests := []struct {
		name  string
		dst   []byte
		reuse bool
	}{
		{"nil allocates", nil, false},
		{"too small allocates", make([]byte, 10), false},
		{"exact size is reused", make([]byte, RGBSize), true},
		{"bigger is reused", make([]byte, 5, RGBSize+7), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RGB(&s, opts, tc.dst)
			require.Len(t, got, Height*Width*3)
			if tc.reuse {
				assert.Same(t, &tc.dst[:1][0], &got[0], "writes into dst")
			}
			for _, px := range [][2]int{{0, 0}, {100, 200}, {Width - 1, Height - 1}, {int(stationPts[0].X), int(stationPts[0].Y)}, {500, 90}} {
				c := img.RGBAAt(px[0], px[1])
				i := (px[1]*Width + px[0]) * 3
				assert.Equal(t, []byte{c.R, c.G, c.B}, got[i:i+3], "pixel %v", px)
			}
		})
	}
	full := RGB(&s, opts, nil)
	for i, j := 0, 0; i < len(img.Pix); i, j = i+4, j+3 {
		if !bytes.Equal(img.Pix[i:i+3], full[j:j+3]) {
			t.Fatalf("RGB differs from Image at pixel %d", i/4)
		}
	}
}

func TestDraw(t *testing.T) {
	s := midGame(t)
	want := Image(&s, Options{})
	tests := []struct {
		name string
		dst  *image.RGBA
		err  string
	}{
		{"right size", image.NewRGBA(image.Rect(0, 0, Width, Height)), ""},
		{"offset origin", image.NewRGBA(image.Rect(10, 20, 10+Width, 20+Height)), ""},
		{"sub-image of a bigger frame", image.NewRGBA(image.Rect(0, 0, 2*Width, Height)).SubImage(image.Rect(Width, 0, 2*Width, Height)).(*image.RGBA), ""},
		{"too small", image.NewRGBA(image.Rect(0, 0, 100, 100)), "needs a 720x480 image, got 100x100"},
		{"nil", nil, "nil image"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Draw(tc.dst, &s, Options{})
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			min := tc.dst.Bounds().Min
			for _, px := range [][2]int{{0, 0}, {100, 200}, {int(stationPts[5].X) - 8, int(stationPts[5].Y) + 6}, {Width - 1, Height - 1}} {
				assert.Equal(t, want.RGBAAt(px[0], px[1]), tc.dst.RGBAAt(min.X+px[0], min.Y+px[1]), "pixel %v", px)
			}
		})
	}
}

func TestPNG(t *testing.T) {
	s := midGame(t)
	var b bytes.Buffer
	require.NoError(t, PNG(&b, &s, Options{Legal: true}))
	dec, err := png.Decode(&b)
	require.NoError(t, err)
	want := Image(&s, Options{Legal: true})
	require.Equal(t, want.Bounds(), dec.Bounds())
	for _, px := range [][2]int{{0, 0}, {100, 200}, {300, 300}, {600, 100}} {
		r, g, bl, a := dec.At(px[0], px[1]).RGBA()
		c := want.RGBAAt(px[0], px[1])
		assert.Equal(t, [4]uint8{c.R, c.G, c.B, c.A}, [4]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}, "pixel %v", px)
	}
	assert.Error(t, PNG(failWriter{}, &s, Options{}), "a failing writer is an error")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestImageOfNothing(t *testing.T) {
	for _, s := range []*env.State{nil, {}} {
		img := Image(s, Options{Legal: true, LastMove: &env.Event{Kind: env.EventMove, From: 200, To: 201}})
		assert.Equal(t, BackgroundColor(), at(img, 100, 200))
	}
}

// TestWritePNGs writes the golden positions as PNGs when -png DIR is given.
func TestWritePNGs(t *testing.T) {
	if *pngDir == "" {
		t.Skip("no -png DIR given")
	}
	require.NoError(t, os.MkdirAll(*pngDir, 0o755))
	for _, tc := range goldenCases(t) {
		f, err := os.Create(filepath.Join(*pngDir, tc.name+".png"))
		require.NoError(t, err)
		require.NoError(t, PNG(f, &tc.state, tc.opts))
		require.NoError(t, f.Close())
	}
}

func BenchmarkRGB(b *testing.B) {
	s, ev := playedGame(b, 3, 30)
	buf := make([]byte, RGBSize)
	b.ReportAllocs()
	for b.Loop() {
		buf = RGB(&s, Options{LastMove: &ev}, buf)
	}
}
