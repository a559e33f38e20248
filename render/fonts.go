package render

import (
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The Go fonts (BSD licensed, shipped inside golang.org/x/image) draw the
// raster's text and measure the SVG's, so wrapping is the same in both.
var (
	fontsOnce sync.Once
	fontReg   *opentype.Font
	fontBold  *opentype.Font
	fontErr   error
)

func loadFonts() error {
	fontsOnce.Do(func() {
		fontReg, fontErr = opentype.Parse(goregular.TTF)
		if fontErr == nil {
			fontBold, fontErr = opentype.Parse(gobold.TTF)
		}
	})
	return fontErr
}

// faces holds the font faces of one rendering. A font.Face is not safe for
// concurrent use, so each rendering makes its own (cheaply, from the fonts
// parsed once).
type faces struct {
	m map[faceKey]font.Face
}

type faceKey struct {
	size float64
	bold bool
}

func newFaces() *faces { return &faces{m: map[faceKey]font.Face{}} }

// face returns the face of the given pixel size, or nil if the fonts could
// not be loaded (they are compiled in, so that does not happen in practice).
func (f *faces) face(size float64, bold bool) font.Face {
	k := faceKey{size, bold}
	if fc, ok := f.m[k]; ok {
		return fc
	}
	if loadFonts() != nil {
		return nil
	}
	src := fontReg
	if bold {
		src = fontBold
	}
	fc, err := opentype.NewFace(src, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil
	}
	f.m[k] = fc
	return fc
}

// measure returns the advance width of s in pixels.
func (f *faces) measure(s string, size float64, bold bool) float64 {
	fc := f.face(size, bold)
	if fc == nil {
		return 0.6 * size * float64(len([]rune(s)))
	}
	return fixedToFloat(font.MeasureString(fc, s))
}

// close releases the faces.
func (f *faces) close() {
	for _, fc := range f.m {
		_ = fc.Close()
	}
}

func fixedToFloat(x fixed.Int26_6) float64 { return float64(x) / 64 }
