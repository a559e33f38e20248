package env_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// Every golden count in this file was computed by the engine and, separately,
// by the pure-Python reference python/tests/reference.py (written from
// RULES.md, not from this code): `python3 reference.py perft` gave the same
// numbers for every row. TestCrossCheckPerft repeats part of that comparison
// whenever python3 is installed.

// perftGolden is one rule set or position with its counts by depth (index 0 is depth 1).
type perftGolden struct {
	name   string
	rules  string // for the initial state, start seat 0
	pos    *setup // or a position
	counts []uint64
}

var perftPositions = []setup{
	// Standard rules, a crowded board: stacks waiting on HOME, on the centre, on corners.
	{pool: []env.Throw{backDo, gae, yut}, stacks: []env.Stack{
		stack(0, 0, c1, 1), stack(0, 22, cc2, 1), stack(0, 5, outer, 1),
		stack(1, 1, outer, 2), stack(1, 21, c1, 1), stack(1, 28, cc1, 1)}},
	// Three seats ranked, back-do enters, seat 1 already first; seat 2 must throw with nothing on the board.
	{rules: "players=3,end=rank,back_do_enters=on", seat: 2, fin: [4]int{1, 4, 2}, place: [4]int{0, 1, 0},
		stacks: []env.Stack{stack(0, 0, outer, 1), stack(0, 19, c1, 2)}},
	// Four seats, finish=stop, capture bonus after yut/mo, a bonus throw pending with a pool.
	{rules: "players=4,pieces=2,finish=stop,capture_bonus_yut_mo=on", seat: 3, pool: []env.Throw{mo, do}, throwing: true,
		stacks: []env.Stack{stack(3, 10, c2, 1), stack(3, 27, c2, 1), stack(0, 28, cc2, 2), stack(1, 15, outer, 1), stack(2, 0, outer, 1)}},
}

var perftGoldens = []perftGolden{
	{name: "standard", rules: "standard",
		counts: []uint64{6, 21, 77, 250, 933, 3286, 13271, 50265, 215838, 864586}},
	{name: "4 seats, 5 pieces, back-do enters, ranked", rules: "players=4,pieces=5,back_do_enters=on,end=rank",
		counts: []uint64{6, 16, 64, 182, 758, 2314, 10170, 32624, 149590}},
	{name: "3 seats, no back-do, finish on HOME, bonus after yut/mo", rules: "players=3,back_do=off,finish=stop,capture_bonus_yut_mo=on",
		counts: []uint64{5, 13, 47, 133, 515, 1588, 6584, 21606, 94027}},
	{name: "crowded standard position", pos: &perftPositions[0], counts: []uint64{11, 75, 297, 1861, 8147}},
	{name: "ranked position, back-do enters", pos: &perftPositions[1], counts: []uint64{6, 16, 64, 205, 952}},
	{name: "four seats, bonus throw pending", pos: &perftPositions[2], counts: []uint64{6, 34, 167, 735, 3237}},
	// The rule sets below use the line board and the kata's options; the
	// reference gives the same counts since it implements them (the exact
	// finish's last two depths were wrong until a stack on HOME could finish
	// under exact), and the first four depths of the kata were checked by
	// hand (5 throws; one enter each; 3 plain throws pass the turn and 2
	// bonus ones do not, so 15 + 5*5 = 25 nodes at depth 3; at depth 4 the
	// 10 bonus paths have two moves).
	{name: "kata", rules: "kata", counts: []uint64{5, 5, 25, 35, 175, 265, 1325, 2272, 11355}},
	{name: "kata, wrap, obstacles", rules: "kata,finish=wrap,obstacles=2:skip+6:back3",
		counts: []uint64{5, 5, 25, 35, 175, 265, 1325, 2275, 11370}},
	{name: "cross, exact finish, no pool, no capture bonus", rules: "finish=exact,pool=off,capture_bonus=off",
		counts: []uint64{6, 11, 41, 96, 351, 968, 3490, 10502, 39097}},
	{name: "cross, wrap, obstacles", rules: "finish=wrap,obstacles=3:skip+8:back4",
		counts: []uint64{6, 21, 77, 250, 935, 3267, 13182, 49487, 212243}},
}

func (g perftGolden) state(t *testing.T) env.State {
	t.Helper()
	if g.pos != nil {
		return g.pos.state(t)
	}
	s, err := env.New(envtest.Rules(t, g.rules), 1, 0)
	require.NoError(t, err)
	return s
}

func TestPerft(t *testing.T) {
	for _, g := range perftGoldens {
		t.Run(g.name, func(t *testing.T) {
			s := g.state(t)
			before := s
			for i, want := range g.counts {
				depth := i + 1
				if trimmed() && want > 100000 {
					break
				}
				assert.Equal(t, want, env.Perft(s, depth), "perft(%d)", depth)
			}
			assert.Equal(t, before, s, "perft leaves its argument alone")
			assert.Equal(t, uint64(1), env.Perft(s, 0))
		})
	}
}

func TestPerftOfAFinishedGame(t *testing.T) {
	s := setup{rules: "pieces=1", pool: []env.Throw{do}, stacks: []env.Stack{stack(0, 0, outer, 1)}}.state(t)
	_, err := s.Apply(act(do, 0))
	require.NoError(t, err)
	require.True(t, s.IsOver())
	assert.Equal(t, uint64(1), env.Perft(s, 0))
	assert.Equal(t, uint64(0), env.Perft(s, 3), "a game that ends before the depth contributes no path")
	assert.Empty(t, env.Divide(s, 2))
}

func TestDivide(t *testing.T) {
	s, err := env.New(env.Standard(), 1, 0)
	require.NoError(t, err)
	// At a chance node: one entry per throw, in throw order (counts from the reference's divide).
	got := env.Divide(s, 5)
	want := []env.DivideEntry{
		{Chance: true, Throw: backDo, Count: 250}, {Chance: true, Throw: do, Count: 75},
		{Chance: true, Throw: gae, Count: 75}, {Chance: true, Throw: geol, Count: 75},
		{Chance: true, Throw: yut, Count: 229}, {Chance: true, Throw: mo, Count: 229},
	}
	assert.Equal(t, want, got)
	var sum uint64
	for _, e := range got {
		sum += e.Count
	}
	assert.Equal(t, env.Perft(s, 5), sum)

	// At a decision: one entry per legal action, in action order.
	for _, th := range []env.Throw{yut, gae} {
		_, err = s.ApplyThrow(th)
		require.NoError(t, err)
	}
	assert.Equal(t, []env.DivideEntry{{Action: act(gae, 29), Count: 42}, {Action: act(yut, 29), Count: 42}}, env.Divide(s, 4))
	assert.Empty(t, env.Divide(s, 0))

	// Divide sums to Perft on the busy positions too.
	for i, u := range perftPositions {
		p := u.state(t)
		sum = 0
		for _, e := range env.Divide(p, 4) {
			sum += e.Count
		}
		assert.Equal(t, env.Perft(p, 4), sum, "position %d", i)
	}
}
