// Package render draws a Yut Nori position: as SVG (deterministic bytes, for
// files, golden tests and the replay viewer) and as a raster image of the
// same drawing (an image.RGBA, an RGB byte frame for gymnasium's rgb_array
// render mode, or PNG).
//
// Every rendering is Width x Height pixels. The board fills the left
// square: the outer ring of 20 stations, both diagonals crossing at the
// centre (22), the corners C1 (5, top right), C2 (10, top left), C3 (15,
// bottom left) and HOME (0, bottom right) drawn large, as in RULES.md, with
// "start & finish at" before HOME's label and an arrow beside the ring
// pointing up from HOME, the way the pieces go (counter-clockwise). Each
// stack is a disc in its owner's colour (SeatColor) with the seat's letter
// and, above one piece, its height. The panel on the right shows the seat to
// move, each seat's pieces in hand and finished (and its place once ranked),
// the pool of throws and an optional caption; seats are "Seat N" unless
// Options.Names names them. Options add the last move as an arrow along the
// path it took and highlight the legal moves.
//
// SVG and raster are built from one list of shapes, so they show the same
// thing; the raster fills them with golang.org/x/image/vector and writes
// text with the Go fonts of golang.org/x/image.
//
//	s, err := env.New(env.Standard(), 42, env.AnySeat)
//	if err != nil { ... }
//	s.Advance()
//	legal := s.LegalActions(nil)
//	ev, err := s.Apply(legal[0])
//	if err != nil { ... }
//	svg := render.SVG(&s, render.Options{LastMove: &ev, Legal: true, Caption: ev.String()})
//	_ = os.WriteFile("move.svg", svg, 0o644)
//
//	frame := make([]byte, render.RGBSize)        // reuse across steps
//	frame = render.RGB(&s, render.Options{}, frame) // Height x Width x 3, row-major
//
//	f, err := os.Create("move.png")
//	if err != nil { ... }
//	defer f.Close()
//	err = render.PNG(f, &s, render.Options{LastMove: &ev})
//
// The functions only read the state and are safe to call from many
// goroutines at once.
package render
