package env

import (
	"fmt"
	"strings"
)

// stationXY places each station on a character grid for text rendering:
// column (in characters) and row, following the layout of RULES.md.
var stationXY = [NumStations][2]int{
	0: {30, 6}, 1: {30, 5}, 2: {30, 4}, 3: {30, 2}, 4: {30, 1},
	5: {30, 0}, 6: {24, 0}, 7: {18, 0}, 8: {12, 0}, 9: {6, 0},
	10: {0, 0}, 11: {0, 1}, 12: {0, 2}, 13: {0, 4}, 14: {0, 5},
	15: {0, 6}, 16: {6, 6}, 17: {12, 6}, 18: {18, 6}, 19: {24, 6},
	20: {25, 1}, 21: {20, 2}, 22: {15, 3}, 23: {10, 4}, 24: {5, 5},
	25: {5, 1}, 26: {10, 2}, 27: {20, 4}, 28: {25, 5},
}

// SeatGlyph returns the letter that stands for seat in text renderings: A, B, C, D.
func SeatGlyph(seat int) string { return string(rune('A' + seat)) }

func drawBoard(label func(st Station) string) []string {
	const w, h = 34, 7
	grid := make([][]byte, h)
	for i := range grid {
		grid[i] = []byte(strings.Repeat(" ", w))
	}
	for st := Station(0); st < NumStations; st++ {
		xy := stationXY[st]
		copy(grid[xy[1]][xy[0]:], label(st))
	}
	out := make([]string, h)
	for i, row := range grid {
		out[i] = strings.TrimRight(string(row), " ")
	}
	return out
}

// KataBoard draws a line board in the kata's notation, one bracket per
// space from space 0: "[[A1],[],[],[B1,B2],...]". Pieces are interchangeable
// in the engine, so their numbers say only how many there are and where: a
// seat's finished pieces take the first numbers, then its pieces on the board
// from space 0 onwards, then those in hand (which are not drawn). On the cross
// board it draws the 29 stations in id order the same way.
func (s *State) KataBoard() string {
	var next [MaxPlayers]int
	for seat := range next {
		next[seat] = int(s.finished[seat]) + 1
	}
	var b strings.Builder
	b.WriteByte('[')
	for st := 0; st < s.rules.NumPlaces(); st++ {
		if st > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		c := s.cells[st]
		for k := 0; k < int(c.height); k++ {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s%d", SeatGlyph(int(c.owner)), next[c.owner])
			next[c.owner]++
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.String()
}

// Render draws the position as text: a key of station numbers beside the
// board with every stack shown as its owner's letter and height (A2 = two
// pieces of seat 0), then each seat's hand and finished pieces, the pool and
// the seat to move. A line board is drawn as KataBoard, above a ruler of
// space numbers, with obstacles listed under it.
func (s *State) Render() string {
	var b strings.Builder
	b.WriteString(s.RenderBoard())
	b.WriteByte('\n')
	for seat := 0; seat < s.rules.Players; seat++ {
		var stacks []string
		for st := Station(0); st < NumStations; st++ {
			if c := s.cells[st]; c.height > 0 && int(c.owner) == seat {
				stacks = append(stacks, fmt.Sprintf("%dx%d(%s)", c.height, st, c.route))
			}
		}
		mark := "  "
		if seat == int(s.seat) && s.phase != PhaseOver {
			mark = "> "
		}
		fmt.Fprintf(&b, "%sseat %d (%s): hand %d, finished %d, board [%s]", mark, seat, SeatGlyph(seat),
			s.hand[seat], s.finished[seat], strings.Join(stacks, " "))
		if s.place[seat] > 0 {
			fmt.Fprintf(&b, ", place %d", s.place[seat])
		}
		if s.missed[seat] > 0 {
			fmt.Fprintf(&b, ", misses %d turn(s)", s.missed[seat])
		}
		b.WriteByte('\n')
	}
	var pool []string
	for t := Throw(0); t < NumThrows; t++ {
		for k := 0; k < int(s.pool[t]); k++ {
			pool = append(pool, t.String())
		}
	}
	switch s.phase {
	case PhaseOver:
		fmt.Fprintf(&b, "game over: seat %d (%s) wins after %d decisions\n", s.Winner(), SeatGlyph(s.Winner()), s.decisions)
	case PhaseThrow:
		fmt.Fprintf(&b, "seat %d (%s) to throw; pool [%s]\n", s.seat, SeatGlyph(int(s.seat)), strings.Join(pool, " "))
	default:
		fmt.Fprintf(&b, "seat %d (%s) to move; pool [%s]\n", s.seat, SeatGlyph(int(s.seat)), strings.Join(pool, " "))
	}
	return b.String()
}

// RenderBoard draws the board as Render does, without what Render writes
// under it: the cross as a key of station numbers beside the stacks, or a
// line board as KataBoard above its ruler, then the obstacles if the rules
// have any.
func (s *State) RenderBoard() string {
	var b strings.Builder
	if s.rules.Board == BoardLine {
		b.WriteString(s.KataBoard())
		b.WriteString("\nspaces 0..")
		fmt.Fprintf(&b, "%d; pieces enter before space 0 and finish on space %d (finish=%s)\n", s.rules.Spaces-1, s.rules.Spaces-1, s.rules.Finish)
	} else {
		s.renderCross(&b)
	}
	if !s.rules.Obstacles.IsZero() {
		fmt.Fprintf(&b, "obstacles: %s\n", s.rules.Obstacles)
	}
	return b.String()
}

// renderCross draws the cross board: the key of station numbers beside the
// stacks (x marks an empty obstacle).
func (s *State) renderCross(b *strings.Builder) {
	key := drawBoard(func(st Station) string { return fmt.Sprintf("%-3d", st) })
	board := drawBoard(func(st Station) string {
		if s.rules.Obstacles[st] != 0 && s.cells[st].height == 0 {
			return "x"
		}
		c := s.cells[st]
		switch {
		case c.height > 1:
			return fmt.Sprintf("%s%d", SeatGlyph(int(c.owner)), c.height)
		case c.height == 1:
			return SeatGlyph(int(c.owner))
		case st == Home || st == CornerC1 || st == CornerC2 || st == CornerC3 || st == Centre:
			return "o"
		}
		return "."
	})
	fmt.Fprintf(b, "%-36s%s\n", "stations", "board")
	for i := range key {
		fmt.Fprintf(b, "%-36s%s\n", key[i], board[i])
	}
}

// String returns Render().
func (s State) String() string { return s.Render() }
