package render

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// position builds a state from a position, failing the test if the engine refuses it.
func position(t testing.TB, p env.Position) env.State {
	t.Helper()
	s, err := env.FromPosition(p, 1)
	require.NoError(t, err)
	return s
}

// apply plays action a (in its string form, "yut@13") and returns the event.
func apply(t testing.TB, s *env.State, action string) env.Event {
	t.Helper()
	a, err := env.ParseAction(action)
	require.NoError(t, err)
	ev, err := s.Apply(a)
	require.NoError(t, err)
	return ev
}

// midGame: two seats, seat 0 to move with yut and gae in the pool; seat 0 has
// a stack of two on C1 (route C1) and one piece on 13, seat 1 one on the
// centre and two stacked on 17, one finished.
func midGame(t testing.TB) env.State {
	return position(t, env.Position{
		Rules:    env.Standard(),
		ToMove:   0,
		Phase:    env.PhaseMove,
		Pool:     [env.NumThrows]int{env.Gae: 1, env.Yut: 1},
		Hand:     [env.MaxPlayers]int{1, 0},
		Finished: [env.MaxPlayers]int{0, 1},
		Stacks: []env.Stack{
			{Seat: 0, Station: 5, Route: env.RouteC1, Height: 2},
			{Seat: 0, Station: 13, Route: env.RouteOuter, Height: 1},
			{Seat: 1, Station: 22, Route: env.RouteCentreC2, Height: 1},
			{Seat: 1, Station: 17, Route: env.RouteOuter, Height: 2},
		},
	})
}

// fourSeats: four seats of two pieces each, play on until ranked; seat 2 has
// finished (1st place); seat 0 to move with gae and do.
func fourSeats(t testing.TB) env.State {
	r := env.Standard()
	r.Players, r.Pieces, r.End = 4, 2, env.EndRank
	return position(t, env.Position{
		Rules:    r,
		ToMove:   0,
		Phase:    env.PhaseMove,
		Pool:     [env.NumThrows]int{env.Do: 1, env.Gae: 1},
		Hand:     [env.MaxPlayers]int{1, 1, 0, 0},
		Finished: [env.MaxPlayers]int{0, 0, 2, 0},
		Place:    [env.MaxPlayers]int{0, 0, 1, 0},
		Stacks: []env.Stack{
			{Seat: 0, Station: 28, Route: env.RouteC2, Height: 1},
			{Seat: 1, Station: 8, Route: env.RouteOuter, Height: 1},
			{Seat: 3, Station: 24, Route: env.RouteC1, Height: 2},
		},
	})
}

// lastPiece: one piece each; seat 1's piece waits on HOME and seat 1 has a do.
func lastPiece(t testing.TB) env.State {
	r := env.Standard()
	r.Pieces = 1
	return position(t, env.Position{
		Rules:  r,
		ToMove: 1,
		Phase:  env.PhaseMove,
		Pool:   [env.NumThrows]int{env.Do: 1},
		Hand:   [env.MaxPlayers]int{0, 0},
		Stacks: []env.Stack{
			{Seat: 0, Station: 26, Route: env.RouteC2, Height: 1},
			{Seat: 1, Station: 0, Route: env.RouteOuter, Height: 1},
		},
	})
}

// playedGame plays a seeded game with the first legal action until it ends
// or n decisions were made, and returns the state and the last event.
func playedGame(t testing.TB, seed uint64, n int) (env.State, env.Event) {
	t.Helper()
	s, err := env.New(env.Standard(), seed, env.AnySeat)
	require.NoError(t, err)
	var ev env.Event
	for i := 0; i < n; i++ {
		s.Advance()
		if s.IsOver() {
			break
		}
		legal := s.LegalActions(nil)
		ev, err = s.Apply(legal[len(legal)-1])
		require.NoError(t, err)
	}
	return s, ev
}

// kataBoard: the kata's line of 15 with obstacles on 4 (skip) and 9 (back 3);
// seat 0 to move with gae, one piece on 0 and one on 6, seat 1 two stacked on 8.
func kataBoard(t testing.TB) env.State {
	r, err := env.ParseRules("kata,obstacles=4:skip+9:back3")
	require.NoError(t, err)
	return position(t, env.Position{
		Rules:  r,
		ToMove: 0,
		Phase:  env.PhaseMove,
		Pool:   [env.NumThrows]int{env.Gae: 1},
		Hand:   [env.MaxPlayers]int{0, 0},
		Stacks: []env.Stack{{Seat: 0, Station: 0, Route: env.RouteLine, Height: 1}, {Seat: 0, Station: 6, Route: env.RouteLine, Height: 1}, {Seat: 1, Station: 8, Route: env.RouteLine, Height: 2}},
	})
}
