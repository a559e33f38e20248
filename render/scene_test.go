package render

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

func TestStationPoint(t *testing.T) {
	seen := map[[2]float64]env.Station{}
	for st := env.Station(0); st < env.NumStations; st++ {
		x, y, ok := StationPoint(st)
		require.True(t, ok, "station %d", st)
		assert.True(t, x >= boardLeft && x <= boardRight && y >= boardTop && y <= boardBottom, "station %d at (%g,%g) is off the board", st, x, y)
		k := [2]float64{math.Round(x), math.Round(y)}
		prev, dup := seen[k]
		assert.False(t, dup, "stations %d and %d share a point", prev, st)
		seen[k] = st
	}
	tests := []struct {
		name string
		st   env.Station
		x, y float64
	}{
		{"HOME bottom right", env.Home, boardRight, boardBottom},
		{"C1 top right", env.CornerC1, boardRight, boardTop},
		{"C2 top left", env.CornerC2, boardLeft, boardTop},
		{"C3 bottom left", env.CornerC3, boardLeft, boardBottom},
		{"centre", env.Centre, (boardLeft + boardRight) / 2, (boardTop + boardBottom) / 2},
		{"1 above HOME", 1, boardRight, boardBottom - boardSide/5},
		{"16 right of C3", 16, boardLeft + boardSide/5, boardBottom},
		{"20 first after C1", 20, boardRight - boardSide/6, boardTop + boardSide/6},
		{"28 last before HOME", 28, boardRight - boardSide/6, boardBottom - boardSide/6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, y, ok := StationPoint(tc.st)
			require.True(t, ok)
			assert.InDelta(t, tc.x, x, 1e-9)
			assert.InDelta(t, tc.y, y, 1e-9)
		})
	}
	_, _, ok := StationPoint(env.NumStations)
	assert.False(t, ok, "station 29 does not exist")
}

// TestStationPointsOnLines checks that every edge of every route joins two
// stations along a drawn line: the square's sides or a diagonal.
func TestStationPointsOnLines(t *testing.T) {
	onLine := func(p point) bool {
		const eps = 1e-6
		return math.Abs(p.X-boardLeft) < eps || math.Abs(p.X-boardRight) < eps ||
			math.Abs(p.Y-boardTop) < eps || math.Abs(p.Y-boardBottom) < eps ||
			math.Abs((p.X-boardLeft)-(p.Y-boardTop)) < eps || math.Abs((p.X-boardLeft)+(p.Y-boardTop)-boardSide) < eps
	}
	for _, e := range env.Edges() {
		mid := lerpPt(stationPts[e.From], stationPts[e.To], 0.5)
		assert.True(t, onLine(mid), "edge %v->%v on %v is not along a board line", e.From, e.To, e.Route)
	}
}

func TestSeatColor(t *testing.T) {
	for seat := 0; seat < env.MaxPlayers; seat++ {
		c, ok := SeatColor(seat)
		require.True(t, ok)
		assert.Equal(t, uint8(0xff), c.A)
		for other := 0; other < seat; other++ {
			o, _ := SeatColor(other)
			assert.NotEqual(t, o, c, "seats %d and %d share a colour", other, seat)
		}
	}
	for _, bad := range []int{-1, env.MaxPlayers, 99} {
		_, ok := SeatColor(bad)
		assert.False(t, ok, "seat %d", bad)
	}
}

func TestMovePath(t *testing.T) {
	type want struct {
		path     []env.Station
		finished bool
	}
	outer := func(stacks ...env.Stack) env.State {
		hand := [env.MaxPlayers]int{4, 4}
		for i := range stacks {
			if stacks[i].Height == 0 {
				stacks[i].Height = 1
			}
			hand[stacks[i].Seat] -= stacks[i].Height
		}
		return position(t, env.Position{Rules: env.Standard(), Phase: env.PhaseMove,
			Pool: [env.NumThrows]int{1, 1, 1, 1, 1, 1}, Hand: hand, Stacks: stacks})
	}
	tests := []struct {
		name   string
		state  env.State
		action string
		want   want
	}{
		{"enter with gae", outer(), "gae@enter", want{[]env.Station{0, 1, 2}, false}},
		{"enter with mo stops on C1", outer(), "mo@enter", want{[]env.Station{0, 1, 2, 3, 4, 5}, false}},
		{"geol passes C1", outer(env.Stack{Station: 3}), "geol@3", want{[]env.Station{3, 4, 5, 6}, false}},
		{"gae down the C1 diagonal", outer(env.Stack{Station: 5, Route: env.RouteC1}), "gae@5", want{[]env.Station{5, 20, 21}, false}},
		{"yut through the centre on C1", outer(env.Stack{Station: 20, Route: env.RouteC1}), "yut@20", want{[]env.Station{20, 21, 22, 23, 24}, false}},
		{"geol from 28 finishes", outer(env.Stack{Station: 28, Route: env.RouteC2}), "geol@28", want{[]env.Station{28, 0}, true}},
		{"do from HOME finishes", outer(env.Stack{Station: 0, Route: env.RouteOuter}), "do@0", want{[]env.Station{0}, true}},
		{"back-do from 1 to HOME", outer(env.Stack{Station: 1}), "back-do@1", want{[]env.Station{1, 0}, false}},
		{"back-do from C2 to 9", outer(env.Stack{Station: 10, Route: env.RouteC2}), "back-do@10", want{[]env.Station{10, 9}, false}},
		{"back-do from centre", outer(env.Stack{Station: 22, Route: env.RouteCentreC2}), "back-do@22", want{[]env.Station{22, 26}, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state
			ev := apply(t, &s, tc.action)
			path, finished, ok := movePath(ev)
			require.True(t, ok)
			assert.Equal(t, tc.want.path, path)
			assert.Equal(t, tc.want.finished, finished)
			if !finished {
				assert.Equal(t, ev.To, path[len(path)-1], "a path ends where the stack stopped")
			}
		})
	}
}

func TestMovePathRejectsNonMoves(t *testing.T) {
	tests := []struct {
		name string
		ev   env.Event
	}{
		{"a throw", env.Event{Kind: env.EventThrow, Throw: env.Gae}},
		{"station out of range", env.Event{Kind: env.EventMove, Throw: env.Gae, From: 200, To: 2}},
		{"route out of range", env.Event{Kind: env.EventMove, Throw: env.Gae, From: 3, To: 5, FromRoute: 9}},
		{"throw out of range", env.Event{Kind: env.EventMove, Throw: 17, From: 3, To: 5}},
		{"station not on its route", env.Event{Kind: env.EventMove, Throw: env.Do, From: 3, To: 4, FromRoute: env.RouteC2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, ok := movePath(tc.ev)
			assert.False(t, ok)
		})
	}
	// A move whose fields disagree with the route is drawn straight, not along the route.
	path, _, ok := movePath(env.Event{Kind: env.EventMove, Throw: env.Do, From: 3, To: 9})
	require.True(t, ok)
	assert.Equal(t, []env.Station{3, 9}, path)
}

func TestWrapText(t *testing.T) {
	measure := func(s string) float64 { return float64(len(s)) } // one unit a byte
	tests := []struct {
		name     string
		text     string
		width    float64
		maxLines int
		want     []string
	}{
		{"fits", "seat 0 throws gae", 40, 3, []string{"seat 0 throws gae"}},
		{"wraps at spaces", "aaa bbb ccc", 7, 3, []string{"aaa bbb", "ccc"}},
		{"cut with dots", "aaa bbb ccc ddd eee", 7, 2, []string{"aaa bbb", "ccc..."}},
		{"long word alone", "abcdefghij x", 5, 3, []string{"abcdefghij", "x"}},
		{"empty", "   ", 10, 3, nil},
		{"multi-byte runes cut whole", "ééé ééé ééé", 7, 1, []string{"éé..."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wrapText(tc.text, tc.width, tc.maxLines, measure)
			assert.Equal(t, tc.want, got)
			for _, l := range got {
				assert.True(t, strings.ToValidUTF8(l, "?") == l, "line %q is not valid UTF-8", l)
			}
		})
	}
}

func TestLegalHighlights(t *testing.T) {
	s := midGame(t)
	hl := legalHighlights(&s, true, 2)
	require.True(t, hl.on)
	assert.Equal(t, s.LegalActions(nil), hl.actions)
	assert.True(t, hl.source[5] && hl.source[13], "both of seat 0's stacks may move")
	assert.True(t, hl.enter, "seat 0 has a piece in hand")
	assert.False(t, hl.finish)
	// C1 stack: gae -> 21, yut -> 23; 13: gae -> 15, yut -> 17; enter: gae -> 2, yut -> 4.
	for _, st := range []env.Station{21, 23, 15, 17, 2, 4} {
		assert.True(t, hl.dest[st], "station %d is reachable", st)
	}
	n := 0
	for _, d := range hl.dest {
		if d {
			n++
		}
	}
	assert.Equal(t, 6, n)

	off := legalHighlights(&s, false, 2)
	assert.False(t, off.on)
	throwing, err := env.New(env.Standard(), 1, 0)
	require.NoError(t, err)
	assert.False(t, legalHighlights(&throwing, true, 2).on, "nothing is legal at a chance node")

	fin := lastPiece(t)
	assert.True(t, legalHighlights(&fin, true, 2).finish, "do from HOME finishes")
}
