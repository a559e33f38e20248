package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/yutenv/yutenv/env"
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

// Panel layout.
const (
	panelSeatTop = 86.0 // baseline row of the first seat
	panelSeatH   = 64.0
	pipStep      = 15.0
	handPipX     = panelX + 112
)
