package render

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/yutenv/yutenv/env"
)

// Options says what to draw besides the position itself. The zero value draws
// the bare position: board, stacks, hands, finished pieces, pool and the seat
// to move.
type Options struct {
	// LastMove, if not nil and a move event, is drawn as an arrow along the
	// path the stack took (from HOME for an entered piece, off the board past
	// HOME for a finished one), with a ring at a capture. A throw event
	// draws nothing: the thrown result is in the pool.
	LastMove *env.Event
	// Legal highlights the legal moves of the seat to move: a gold ring on
	// each stack that may move, a dashed disc on each station a legal move
	// reaches, and gold boxes around the hand (a piece may enter) and the
	// finished pieces (a stack may finish).
	Legal bool
	// Numbers writes the station ids 0..28 inside the empty stations.
	Numbers bool
	// Caption is a line of text (an event in words, say) written at the
	// bottom of the panel, wrapped to at most three lines.
	Caption string
	// Names, if not nil, names the seats in the panel: Names[seat] beside
	// the seat's letter in place of "Seat N", and in the status line
	// ("To move: greedy (B)", "Winner: You"), for each seat it has a
	// non-empty name for. A name too wide for the panel is cut short with
	// "...".
	Names []string
}

// seatName returns the name Names gives seat, if any.
func (o *Options) seatName(seat int) (string, bool) {
	if seat < 0 || seat >= len(o.Names) || o.Names[seat] == "" {
		return "", false
	}
	return o.Names[seat], true
}

// anchor is how a text is placed relative to its point.
type anchor uint8

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

// The drawing is a list of items that both the SVG writer and the rasterizer
// walk, so the two always show the same thing.
type item interface{ isItem() }

// circleItem is a disc (fill) and/or a ring (stroke); dash[0] > 0 dashes the ring.
type circleItem struct {
	c      point
	r      float64
	fill   color.NRGBA
	stroke color.NRGBA
	width  float64
	dash   [2]float64
}

// pathItem is a polyline (open, stroked) or a polygon (closed, filled).
type pathItem struct {
	pts    []point
	closed bool
	fill   color.NRGBA
	stroke color.NRGBA
	width  float64
}

// rectItem is a rectangle with rounded corners of radius rx.
type rectItem struct {
	x, y, w, h, rx float64
	fill           color.NRGBA
	stroke         color.NRGBA
	width          float64
	dash           [2]float64
}

// textItem is one line of text; p is on the baseline.
type textItem struct {
	p      point
	s      string
	size   float64
	bold   bool
	anchor anchor
	fill   color.NRGBA
}

// groupItem groups items under a class and data-* attributes, so the SVG can
// be inspected by a program (the viewer's browser test reads them).
type groupItem struct {
	class string
	data  [][2]string
	items []item
}

func (circleItem) isItem() {}
func (pathItem) isItem()   {}
func (rectItem) isItem()   {}
func (textItem) isItem()   {}
func (groupItem) isItem()  {}

// scene collects items in drawing order.
type scene struct {
	items []item
	fonts *faces
}

func (sc *scene) add(it ...item) { sc.items = append(sc.items, it...) }

// build draws state s with opts into two lists of items: the empty board,
// which depends on opts.Numbers only (the rasterizer caches it), and what
// stands on it. It never panics on a zero or inconsistent state: it draws
// what the accessors report.
func build(s *env.State, opts Options, f *faces) (board, overlay []item) {
	g := geomOf(s.Rules())
	board = boardItems(g, opts.Numbers)
	sc := &scene{fonts: f}
	players := s.Rules().Players
	if players < 0 || players > env.MaxPlayers {
		players = 0
	}
	hl := legalHighlights(s, opts.Legal, players)
	sc.destinations(g, hl)
	sc.obstacles(g, s.Rules().Obstacles)
	if opts.LastMove != nil {
		sc.lastMove(g, s, *opts.LastMove)
	}
	sc.stacks(g, s, players, hl)
	sc.panel(s, players, hl, &opts)
	return board, sc.items
}

// boardItems draws the backdrop, the lines, the stations and the corner
// labels of the cross, or the path of a line with its START and END.
func boardItems(b *geom, numbers bool) []item {
	sc := &scene{}
	sc.add(rectItem{x: 0, y: 0, w: Width, h: Height, fill: colBackground})
	sc.add(rectItem{x: backdropMin, y: backdropMin, w: backdropSize, h: backdropSize, rx: 14,
		fill: colBoard, stroke: colBoardEdge, width: 2})
	p := b.pts
	var lines []item
	if b.line {
		lines = append(lines, pathItem{pts: append([]point(nil), p[:b.n]...), stroke: colLine, width: 3})
	} else {
		lines = append(lines,
			pathItem{pts: []point{p[0], p[5], p[10], p[15]}, closed: true, stroke: colLine, width: 3},
			pathItem{pts: []point{p[5], p[22], p[15]}, stroke: colLine, width: 3},
			pathItem{pts: []point{p[10], p[22], p[0]}, stroke: colLine, width: 3},
		)
	}
	sc.add(groupItem{class: "lines", items: lines})
	var st []item
	for i := env.Station(0); int(i) < b.n; i++ {
		c := p[i]
		var g []item
		if b.big(i) {
			g = append(g, circleItem{c: c, r: cornerR, fill: colStation, stroke: colLine, width: 2},
				circleItem{c: c, r: cornerR - 5, stroke: colLine, width: 1.2})
		} else {
			g = append(g, circleItem{c: c, r: stationR, fill: colStation, stroke: colLine, width: 2})
		}
		if numbers {
			g = append(g, textItem{p: point{c.X, c.Y + 3.3}, s: strconv.Itoa(int(i)), size: 9.5, anchor: anchorMiddle, fill: colMuted})
		}
		st = append(st, groupItem{class: "station", data: [][2]string{{"station", strconv.Itoa(int(i))}}, items: g})
	}
	sc.add(groupItem{class: "stations", items: st})
	label := func(s env.Station, dy float64, text string) item {
		return textItem{p: point{p[s].X, p[s].Y + dy}, s: text, size: 11, bold: true, anchor: anchorMiddle, fill: colText}
	}
	if b.line {
		sc.add(groupItem{class: "labels", items: []item{label(0, -23, "START"), label(env.Station(b.n-1), 33, "END")}})
		return sc.items
	}
	sc.add(groupItem{class: "labels", items: []item{
		label(env.Home, 33, "HOME"), label(env.CornerC1, -23, "C1"),
		label(env.CornerC2, -23, "C2"), label(env.CornerC3, 33, "C3"),
	}})
	sc.add(homeMarker(p[env.Home]))
	return sc.items
}

// homeMarker says where the pieces start and finish and which way they go:
// "start & finish at" before the HOME label, and an arrow beside the ring
// from HOME up towards station 1 (counter-clockwise).
func homeMarker(home point) item {
	x := home.X + cornerR + 10
	g := []item{textItem{p: point{home.X - 24, home.Y + 33}, s: "start & finish at", size: 10, anchor: anchorEnd, fill: colMuted}}
	g = append(g, arrow([]point{{x, home.Y - 14}, {x, home.Y - 54}}, colMuted, 2)...)
	return groupItem{class: "direction", items: g}
}

// highlights are the legal moves of the seat to move, by where they start and end.
type highlights struct {
	on      bool
	seat    int
	actions []env.Action
	source  [env.NumStations]bool
	dest    [env.NumStations]bool
	enter   bool
	finish  bool
}

func legalHighlights(s *env.State, on bool, players int) highlights {
	h := highlights{seat: s.ToMove()}
	if !on || s.Phase() != env.PhaseMove || h.seat < 0 || h.seat >= players {
		return h
	}
	h.on = true
	rules := s.Rules()
	h.actions = s.LegalActions(nil)
	for _, a := range h.actions {
		t := a.Throw()
		var to env.Station
		var finished, ok bool
		if a.IsEnter() {
			h.enter = true
			to, _, finished, ok = env.EntryDestination(rules, t)
			if t == env.BackDo && rules.BackDoEnters {
				to, finished, ok = env.Home, false, true // back-do enters onto HOME
			}
		} else {
			h.source[a.Station()] = true
			_, _, route, have := s.StackAt(a.Station())
			if !have {
				continue
			}
			to, _, finished, ok = env.Destination(rules, a.Station(), route, t)
		}
		switch {
		case !ok:
		case finished:
			h.finish = true
		case int(to) < env.NumStations:
			h.dest[to] = true
		}
	}
	return h
}

// obstacles marks the obstacles of a board: "skip" or "-k" beside the station.
func (sc *scene) obstacles(b *geom, o env.Obstacles) {
	var g []item
	for _, st := range o.Stations() {
		if int(st) >= b.n {
			continue
		}
		text := "skip"
		if o[st] > 0 {
			text = "-" + strconv.Itoa(int(o[st]))
		}
		c := b.pts[st]
		g = append(g, circleItem{c: c, r: cornerR + 3, stroke: colMuted, width: 2, dash: [2]float64{2, 2}},
			textItem{p: point{c.X, c.Y + 30}, s: text, size: 10, bold: true, anchor: anchorMiddle, fill: colMuted})
	}
	if len(g) > 0 {
		sc.add(groupItem{class: "obstacles", items: g})
	}
}

// destinations marks the stations the legal moves reach.
func (sc *scene) destinations(b *geom, hl highlights) {
	if !hl.on {
		return
	}
	col, _ := SeatColor(hl.seat)
	var g []item
	for st := env.Station(0); st < env.NumStations; st++ {
		if hl.dest[st] {
			g = append(g, circleItem{c: b.pts[st], r: 15, fill: withAlpha(col, 0x40), stroke: col, width: 2, dash: [2]float64{4, 3}})
		}
	}
	for st := env.Station(0); st < env.NumStations; st++ {
		if hl.source[st] {
			g = append(g, circleItem{c: b.pts[st], r: stackR + 5, stroke: colHighlight, width: 3.5})
		}
	}
	ids := make([]string, len(hl.actions))
	for i, a := range hl.actions {
		ids[i] = strconv.Itoa(int(a))
	}
	sc.add(groupItem{class: "legal", data: [][2]string{{"actions", strings.Join(ids, ",")}}, items: g})
}

// movePath returns the stations a move event passed through, from where the
// stack stood to where it stopped (to HOME when it finished), or ok = false
// for a throw or an event whose fields do not describe a move on this board.
func movePath(ev env.Event) (path []env.Station, finished, ok bool) {
	if ev.Kind != env.EventMove || ev.Throw >= env.NumThrows || int(ev.From) >= env.NumStations ||
		int(ev.To) >= env.NumStations || int(ev.FromRoute) >= env.NumRoutes {
		return nil, false, false
	}
	finished = ev.Finished > 0
	if ev.Throw == env.BackDo {
		if ev.Entered {
			return []env.Station{env.Home}, false, true
		}
		return []env.Station{ev.From, ev.To}, false, true
	}
	route, idx := ev.FromRoute, -1
	seq := env.RouteStations(route)
	if ev.Entered {
		route, seq, idx = env.RouteOuter, env.RouteStations(env.RouteOuter), 0
	} else {
		for i, st := range seq {
			if st == ev.From && !(route == env.RouteOuter && i == 0) {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		return nil, false, false
	}
	end := idx + ev.Throw.Steps()
	if end > len(seq)-1 {
		end = len(seq) - 1
	}
	path = seq[idx : end+1]
	if !finished && path[len(path)-1] != ev.To {
		return []env.Station{ev.From, ev.To}, false, true // not along the route: draw it straight
	}
	return path, finished, true
}

// lineMovePath is movePath on a line of n spaces: forward one space at a
// time from the space before the first (entering), round to space 0 after
// the last under finish=wrap, then, after a push obstacle, back to where the
// stack ended.
func lineMovePath(ev env.Event, n int) (path []env.Station, finished, ok bool) {
	if ev.Kind != env.EventMove || ev.Throw >= env.NumThrows || int(ev.From) >= n || int(ev.To) >= n {
		return nil, false, false
	}
	finished = ev.Finished > 0
	if ev.Throw == env.BackDo {
		return []env.Station{ev.From, ev.To}, false, true
	}
	pos := int(ev.From)
	if ev.Entered {
		pos = -1
	} else {
		path = append(path, ev.From)
	}
	for k := 0; k < ev.Throw.Steps(); k++ {
		pos++
		if pos == n {
			pos = 0
		}
		path = append(path, env.Station(pos))
		if finished && pos == n-1 {
			break
		}
	}
	if ev.Pushed > 0 && !finished {
		path = append(path, ev.To)
	}
	return path, finished, true
}

// lastMove draws a move event as an arrow along its path.
func (sc *scene) lastMove(b *geom, s *env.State, ev env.Event) {
	path, finished, ok := movePath(ev)
	if b.line {
		path, finished, ok = lineMovePath(ev, b.n)
	}
	if !ok {
		return
	}
	col, _ := SeatColor(int(ev.Seat))
	data := [][2]string{{"seat", strconv.Itoa(int(ev.Seat))}, {"from", strconv.Itoa(int(ev.From))}, {"to", strconv.Itoa(int(ev.To))}}
	if ev.Entered {
		data[1][1] = "enter"
	}
	if finished {
		data[2][1] = "finish"
	}
	pts := make([]point, 0, len(path)+1)
	for _, st := range path {
		pts = append(pts, b.pts[st])
	}
	var g []item
	switch {
	case finished: // on past HOME, off the board
		last := pts[len(pts)-1]
		pts = append(pts, point{last.X + 28, last.Y + 28})
		g = append(g, arrow(pts, withAlpha(col, 0xd8), 4.5)...)
	case len(pts) == 1: // back-do entering onto HOME, or entering onto a line's first space: a ring, no arrow
		g = append(g, circleItem{c: pts[0], r: 20, stroke: withAlpha(col, 0xd8), width: 3})
	default:
		if _, _, _, there := s.StackAt(path[len(path)-1]); there {
			pts = shorten(pts, stackR+2)
		}
		g = append(g, arrow(pts, withAlpha(col, 0xd8), 4.5)...)
	}
	if ev.Captured > 0 && !finished {
		cc, _ := SeatColor(int(ev.CapturedSeat))
		g = append(g, circleItem{c: b.pts[path[len(path)-1]], r: 20, stroke: cc, width: 2.5, dash: [2]float64{3, 3}})
	}
	sc.add(groupItem{class: "last-move", data: data, items: g})
}

// shorten cuts d off the end of a polyline.
func shorten(pts []point, d float64) []point {
	n := len(pts)
	a, b := pts[n-2], pts[n-1]
	l := math.Hypot(b.X-a.X, b.Y-a.Y)
	if l <= d+1 {
		return pts
	}
	out := append([]point(nil), pts...)
	out[n-1] = lerpPt(a, b, (l-d)/l)
	return out
}

// arrow returns a stroked polyline ending in a filled head at its last point.
func arrow(pts []point, col color.NRGBA, width float64) []item {
	const headLen, headHalf = 14.0, 7.5
	n := len(pts)
	a, tip := pts[n-2], pts[n-1]
	l := math.Hypot(tip.X-a.X, tip.Y-a.Y)
	if l == 0 {
		return nil
	}
	ux, uy := (tip.X-a.X)/l, (tip.Y-a.Y)/l
	base := point{tip.X - ux*headLen, tip.Y - uy*headLen}
	shaft := append(append([]point(nil), pts[:n-1]...), base)
	if l < headLen {
		shaft = pts[:n-1]
	}
	head := []point{tip, {base.X - uy*headHalf, base.Y + ux*headHalf}, {base.X + uy*headHalf, base.Y - ux*headHalf}}
	var out []item
	if len(shaft) > 1 {
		out = append(out, pathItem{pts: shaft, stroke: col, width: width})
	}
	return append(out, pathItem{pts: head, closed: true, fill: col})
}

// stacks draws every stack in its owner's colour with its height.
func (sc *scene) stacks(b *geom, s *env.State, players int, hl highlights) {
	var all []item
	for st := env.Station(0); int(st) < b.n; st++ {
		seat, height, route, ok := s.StackAt(st)
		if !ok || seat < 0 || seat >= players {
			continue
		}
		col, _ := SeatColor(seat)
		c := b.pts[st]
		g := []item{
			circleItem{c: c, r: stackR, fill: col, stroke: colWhite, width: 2},
			textItem{p: point{c.X, c.Y + 4.6}, s: env.SeatGlyph(seat), size: 13, bold: true, anchor: anchorMiddle, fill: colWhite},
		}
		if height > 1 {
			b := point{c.X + 11, c.Y - 11}
			g = append(g, circleItem{c: b, r: 7.5, fill: colWhite, stroke: col, width: 1.8},
				textItem{p: point{b.X, b.Y + 3.6}, s: strconv.Itoa(height), size: 10, bold: true, anchor: anchorMiddle, fill: col})
		}
		all = append(all, groupItem{class: "stack", data: [][2]string{
			{"seat", strconv.Itoa(seat)}, {"station", strconv.Itoa(int(st))},
			{"height", strconv.Itoa(height)}, {"route", route.String()},
		}, items: g})
	}
	sc.add(groupItem{class: "stacks", items: all})
}

// Panel layout.
const (
	panelSeatTop = 86.0 // baseline row of the first seat
	panelSeatH   = 64.0
	pipStep      = 15.0
	handPipX     = panelX + 112
)

// plural returns "1 throw", "2 throws".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Ordinal returns "1st", "2nd", "3rd", "4th": a place in a game, for the
// board's panel and the terminal game.
func Ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return strconv.Itoa(n) + "th"
}

// panel draws the status line, one block per seat, the pool and the caption.
func (sc *scene) panel(s *env.State, players int, hl highlights, opts *Options) {
	toMove := s.ToMove()
	phase := s.Phase()
	var status string
	winner, wNamed := opts.seatName(s.Winner())
	mover, mNamed := opts.seatName(toMove)
	switch {
	case players == 0:
		status = "No game"
	case phase == env.PhaseOver && s.Winner() >= 0 && wNamed:
		status = "Winner: " + winner
	case phase == env.PhaseOver && s.Winner() >= 0:
		status = fmt.Sprintf("Seat %d (%s) wins", s.Winner(), env.SeatGlyph(s.Winner()))
	case phase == env.PhaseOver:
		status = "Game over"
	case phase == env.PhaseThrow && mNamed:
		status = "To throw: " + mover
	case phase == env.PhaseThrow:
		status = fmt.Sprintf("Seat %d (%s) to throw", toMove, env.SeatGlyph(toMove))
	case mNamed:
		status = "To move: " + mover
	default:
		status = fmt.Sprintf("Seat %d (%s) to move", toMove, env.SeatGlyph(toMove))
	}
	if wNamed || mNamed {
		status = sc.fit(status, panelW-8, 17, true) // a name may be long
	}
	sc.add(groupItem{class: "status", data: [][2]string{{"phase", phase.String()}, {"to-move", strconv.Itoa(toMove)}}, items: []item{
		textItem{p: point{panelX + 4, 40}, s: status, size: 17, bold: true, fill: colText},
		textItem{p: point{panelX + 4, 58}, s: plural(s.Decisions(), "decision") + ", " + plural(s.Throws(), "throw"), size: 11.5, fill: colMuted},
	}})
	pieces := s.Rules().Pieces
	if pieces < 0 || pieces > env.MaxPieces {
		pieces = env.MaxPieces
	}
	for seat := 0; seat < players; seat++ {
		name, named := opts.seatName(seat)
		if !named {
			name = fmt.Sprintf("Seat %d", seat)
		}
		sc.seatBlock(s, seat, name, named, pieces, seat == toMove && phase != env.PhaseOver, hl)
	}
	yp := panelSeatTop + float64(players)*panelSeatH + 4
	rows := sc.pool(s, players, yp)
	if opts.Caption != "" {
		sc.caption(opts.Caption, yp+10+float64(rows)*26+20)
	}
}

// fit returns text, cut short with "..." if it is wider than width at
// size (and weight bold).
func (sc *scene) fit(text string, width, size float64, bold bool) string {
	if sc.fonts == nil || sc.fonts.measure(text, size, bold) <= width {
		return text
	}
	r := []rune(text)
	for len(r) > 0 && sc.fonts.measure(string(r)+"...", size, bold) > width {
		r = r[:len(r)-1]
	}
	return strings.TrimRight(string(r), " ") + "..."
}

// seatBlock draws a seat's part of the panel: its letter and name (cut to
// fit when named is true), hand, finished pieces and place.
func (sc *scene) seatBlock(s *env.State, seat int, name string, named bool, pieces int, active bool, hl highlights) {
	col, _ := SeatColor(seat)
	y := panelSeatTop + float64(seat)*panelSeatH
	hand, fin, place := s.Hand(seat), s.Finished(seat), s.Place(seat)
	var g []item
	if active {
		g = append(g,
			rectItem{x: panelX, y: y - 18, w: panelW, h: panelSeatH - 2, rx: 8, fill: withAlpha(col, 0x1c), stroke: withAlpha(col, 0x80), width: 1.5},
			pathItem{pts: []point{{panelX - 13, y - 7}, {panelX - 4, y}, {panelX - 13, y + 7}}, closed: true, fill: col})
	}
	g = append(g,
		circleItem{c: point{panelX + 17, y}, r: 10, fill: col},
		textItem{p: point{panelX + 17, y + 4.2}, s: env.SeatGlyph(seat), size: 12, bold: true, anchor: anchorMiddle, fill: colWhite},
	)
	if named {
		nameW := panelW - 42.0
		if place > 0 {
			nameW -= 80 // room for "1st place"
		}
		name = sc.fit(name, nameW, 14, true)
	}
	g = append(g, textItem{p: point{panelX + 34, y + 5}, s: name, size: 14, bold: true, fill: colText})
	if place > 0 {
		g = append(g, textItem{p: point{panelX + panelW - 8, y + 5}, s: Ordinal(place) + " place", size: 13, bold: true, anchor: anchorEnd, fill: colText})
	}
	rowHand, rowFin := y+20, y+36
	g = append(g,
		textItem{p: point{panelX + 34, rowHand + 4}, s: fmt.Sprintf("hand %d", hand), size: 12, fill: colMuted},
		textItem{p: point{panelX + 34, rowFin + 4}, s: fmt.Sprintf("finished %d", fin), size: 12, fill: colMuted},
	)
	boxW := float64(pieces)*pipStep + 5
	if active && hl.on && hl.enter {
		g = append(g, rectItem{x: handPipX - 9, y: rowHand - 8, w: boxW, h: 16, rx: 8, stroke: colHighlight, width: 2.5})
	}
	if active && hl.on && hl.finish {
		g = append(g, rectItem{x: handPipX - 9, y: rowFin - 8, w: boxW, h: 16, rx: 8, stroke: colHighlight, width: 2.5, dash: [2]float64{4, 3}})
	}
	for k := 0; k < hand && k < env.MaxPieces; k++ {
		g = append(g, circleItem{c: point{handPipX + float64(k)*pipStep, rowHand}, r: 5.5, fill: col})
	}
	for k := 0; k < fin && k < env.MaxPieces; k++ {
		g = append(g, circleItem{c: point{handPipX + float64(k)*pipStep, rowFin}, r: 5, fill: colWhite, stroke: col, width: 2})
	}
	sc.add(groupItem{class: "seat", data: [][2]string{
		{"seat", strconv.Itoa(seat)}, {"hand", strconv.Itoa(hand)}, {"finished", strconv.Itoa(fin)},
		{"board", strconv.Itoa(onBoard(s, seat))}, {"place", strconv.Itoa(place)},
	}, items: g})
}

// onBoard counts seat's pieces on the board.
func onBoard(s *env.State, seat int) int {
	n := 0
	for st := env.Station(0); st < env.NumStations; st++ {
		if who, h, _, ok := s.StackAt(st); ok && who == seat {
			n += h
		}
	}
	return n
}

// maxPoolBoxes is how many results the pool shows before summing up the rest.
const maxPoolBoxes = 10

// pool draws the results waiting in the pool of the seat to move and returns
// how many rows of boxes it used.
func (sc *scene) pool(s *env.State, players int, y float64) int {
	pool := s.Pool()
	counts := make([]string, len(pool))
	var names []string
	for t, n := range pool {
		counts[t] = strconv.Itoa(int(n))
		for k := 0; k < int(n); k++ {
			names = append(names, env.Throw(t).String())
		}
	}
	col := colMuted
	if players > 0 {
		col, _ = SeatColor(s.ToMove())
	}
	g := []item{textItem{p: point{panelX + 4, y}, s: "Pool", size: 13, bold: true, fill: colText}}
	if len(names) == 0 {
		g = append(g, textItem{p: point{panelX + 44, y}, s: "empty", size: 12, fill: colMuted})
	}
	if len(names) > maxPoolBoxes {
		rest := len(names) - (maxPoolBoxes - 1)
		names = append(names[:maxPoolBoxes-1], fmt.Sprintf("+%d", rest))
	}
	const bw, bh, gap = 44.0, 22.0, 4.0
	for i, n := range names {
		bx := panelX + 4 + float64(i%5)*(bw+gap)
		by := y + 10 + float64(i/5)*(bh+gap)
		g = append(g, rectItem{x: bx, y: by, w: bw, h: bh, rx: 5, fill: colWhite, stroke: col, width: 1.5},
			textItem{p: point{bx + bw/2, by + 15}, s: n, size: 12, bold: true, anchor: anchorMiddle, fill: colText})
	}
	sc.add(groupItem{class: "pool", data: [][2]string{{"pool", strings.Join(counts, ",")}}, items: g})
	rows := (len(names) + 4) / 5
	if rows == 0 {
		rows = 1
	}
	return rows
}

// caption writes text wrapped to the panel's width from baseline y down.
func (sc *scene) caption(text string, y float64) {
	const size, lineH = 12.0, 15.0
	maxLines := int((Height-10-y)/lineH) + 1
	if maxLines > 3 {
		maxLines = 3
	}
	if maxLines < 1 {
		return
	}
	lines := wrapText(text, panelW-8, maxLines, func(s string) float64 { return sc.fonts.measure(s, size, false) })
	g := make([]item, len(lines))
	for i, l := range lines {
		g[i] = textItem{p: point{panelX + 4, y + float64(i)*lineH}, s: l, size: size, fill: colText}
	}
	sc.add(groupItem{class: "caption", items: g})
}

// wrapText breaks text into at most maxLines lines no wider than width
// (measured by measure), breaking at spaces and ending a cut text with "...".
func wrapText(text string, width float64, maxLines int, measure func(string) float64) []string {
	words := strings.Fields(text)
	var lines []string
	cur := ""
	for i := 0; i < len(words); i++ {
		w := words[i]
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur == "" || measure(next) <= width {
			cur = next
			continue
		}
		lines = append(lines, cur)
		cur = w
		if len(lines) == maxLines {
			cur = ""
			last := []rune(lines[maxLines-1])
			for len(last) > 0 && measure(string(last)+"...") > width {
				last = []rune(strings.TrimRight(string(last[:len(last)-1]), " "))
			}
			lines[maxLines-1] = string(last) + "..."
			break
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
