package render

import (
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
