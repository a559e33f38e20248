package render

import (
	"image/color"

	"github.com/yutenv/yutenv/env"
)

// Width and Height are the size of every rendering in pixels: the SVG's
// viewBox and the raster image. The board fills the left square, the panel
// of seats, hands, finished pieces, pool and caption the right.
const (
	Width  = 720
	Height = 480
)

// Board geometry: the outer square of the board in image coordinates
// (y grows downwards). HOME is its bottom-right corner, C1 top-right,
// C2 top-left and C3 bottom-left, as in RULES.md.
const (
	boardLeft   = 62.0
	boardTop    = 62.0
	boardSide   = 340.0
	boardRight  = boardLeft + boardSide
	boardBottom = boardTop + boardSide

	backdropMin  = 20.0 // the wooden board square behind the lines
	backdropSize = 424.0

	panelX = 466.0 // left edge of the information panel
	panelW = 242.0

	stationR = 10.0 // an ordinary station
	cornerR  = 16.0 // a corner or the centre (drawn with an inner ring)
	stackR   = 13.0 // a stack's disc
)

// point is a position in image coordinates.
type point struct{ X, Y float64 }

func lerpPt(a, b point, t float64) point {
	return point{a.X + (b.X-a.X)*t, a.Y + (b.Y-a.Y)*t}
}

// stationPts holds the centre of every station, computed once from the board
// square: the outer ring counter-clockwise from HOME with five steps a side,
// each diagonal cut into thirds on either side of the centre.
var stationPts = func() [env.NumStations]point {
	var p [env.NumStations]point
	home := point{boardRight, boardBottom}
	c1 := point{boardRight, boardTop}
	c2 := point{boardLeft, boardTop}
	c3 := point{boardLeft, boardBottom}
	corners := [5]point{home, c1, c2, c3, home}
	for i := 0; i < 20; i++ {
		side, k := i/5, i%5
		p[i] = lerpPt(corners[side], corners[side+1], float64(k)/5)
	}
	centre := lerpPt(c1, c3, 0.5)
	p[20] = lerpPt(c1, centre, 1.0/3)
	p[21] = lerpPt(c1, centre, 2.0/3)
	p[22] = centre
	p[23] = lerpPt(centre, c3, 1.0/3)
	p[24] = lerpPt(centre, c3, 2.0/3)
	p[25] = lerpPt(c2, centre, 1.0/3)
	p[26] = lerpPt(c2, centre, 2.0/3)
	p[27] = lerpPt(centre, home, 1.0/3)
	p[28] = lerpPt(centre, home, 2.0/3)
	return p
}()

// StationPoint returns the centre of station st of the cross board in image coordinates (pixels
// from the top-left corner of a Width x Height rendering). ok is false for a
// station id outside 0..28.
func StationPoint(st env.Station) (x, y float64, ok bool) {
	if int(st) >= env.NumStations {
		return 0, 0, false
	}
	p := stationPts[st]
	return p.X, p.Y, true
}

// isBig reports whether st is drawn large: HOME, a corner or the centre.
func isBig(st env.Station) bool {
	switch st {
	case env.Home, env.CornerC1, env.CornerC2, env.CornerC3, env.Centre:
		return true
	}
	return false
}

// The palette. Colours are opaque unless said otherwise.
var (
	colBackground = color.NRGBA{0xf7, 0xf1, 0xe3, 0xff} // the page around the board
	colBoard      = color.NRGBA{0xe9, 0xd3, 0xa4, 0xff} // the board square
	colBoardEdge  = color.NRGBA{0xb8, 0x8f, 0x5a, 0xff}
	colLine       = color.NRGBA{0x7a, 0x4f, 0x2a, 0xff} // board lines and station rims
	colStation    = color.NRGBA{0xff, 0xfa, 0xef, 0xff} // an empty station's inside
	colText       = color.NRGBA{0x2b, 0x21, 0x18, 0xff}
	colMuted      = color.NRGBA{0x7d, 0x6b, 0x58, 0xff}
	colWhite      = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	colHighlight  = color.NRGBA{0xf2, 0xb7, 0x05, 0xff} // legal sources, enter and finish
)

// seatColours are the owners' colours: red, blue, green, amber.
var seatColours = [env.MaxPlayers]color.NRGBA{
	{0xd6, 0x27, 0x28, 0xff},
	{0x1f, 0x5f, 0xbf, 0xff},
	{0x2a, 0x9d, 0x3a, 0xff},
	{0xe0, 0x8a, 0x00, 0xff},
}

// SeatColor returns the colour that seat's stacks, pips and arrows are drawn
// in (seats 0..3: red, blue, green, amber), and ok = false for any other seat.
func SeatColor(seat int) (c color.NRGBA, ok bool) {
	if seat < 0 || seat >= env.MaxPlayers {
		return colMuted, false
	}
	return seatColours[seat], true
}

// BackgroundColor returns the colour of the board square where nothing is
// drawn (between the lines).
func BackgroundColor() color.NRGBA { return colBoard }

// withAlpha returns c with alpha a (straight, not premultiplied).
func withAlpha(c color.NRGBA, a uint8) color.NRGBA {
	c.A = a
	return c
}

// geom is the drawing of one board: where its stations are and how many.
type geom struct {
	pts  [env.NumStations]point
	n    int  // stations 0..n-1
	line bool // a line board (drawn as a snake of rows), not the cross
	key  int  // 0 for the cross, n for a line of n spaces: the board layer's cache key
}

// lineCols is the number of spaces per row of a line board.
const lineCols = 5

// crossGeom is the standard board; lineGeoms[n] the line of n spaces.
var (
	crossGeom = geom{pts: stationPts, n: env.NumStations}
	lineGeoms = func() (g [env.MaxSpaces + 1]geom) {
		for n := env.MinSpaces; n <= env.MaxSpaces; n++ {
			g[n] = newLineGeom(n)
		}
		return g
	}()
)

// newLineGeom lays a line of n spaces out in the board square as one path:
// rows of lineCols spaces from the top, left to right, then right to left,
// and so on (a snake), so that neighbours on the line are neighbours on the
// image.
func newLineGeom(n int) geom {
	g := geom{n: n, line: true, key: n}
	cols := min(n, lineCols)
	rows := (n + cols - 1) / cols
	dx := boardSide / float64(max(cols-1, 1))
	dy := 0.0
	top := boardTop + boardSide/2
	if rows > 1 {
		dy = boardSide / float64(rows-1)
		top = boardTop
	}
	for i := 0; i < n; i++ {
		r, c := i/cols, i%cols
		if r%2 == 1 {
			c = cols - 1 - c
		}
		x := boardLeft + float64(c)*dx
		if cols == 1 {
			x = boardLeft + boardSide/2
		}
		g.pts[i] = point{x, top + float64(r)*dy}
	}
	return g
}

// geomOf returns the drawing of the rules' board (the cross for rules that
// name no valid line).
func geomOf(r env.Rules) *geom {
	if r.Board == env.BoardLine && r.Spaces >= env.MinSpaces && r.Spaces <= env.MaxSpaces {
		return &lineGeoms[r.Spaces]
	}
	return &crossGeom
}

// big reports whether station st is drawn large: HOME, a corner or the
// centre of the cross; the first and last space of a line.
func (g *geom) big(st env.Station) bool {
	if g.line {
		return st == 0 || int(st) == g.n-1
	}
	return isBig(st)
}
