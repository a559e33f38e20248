package agent

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

// small specs of every agent, cheap enough to play whole games under -race.
var smallSpecs = []string{
	"random", "greedy", "mc:3", "mc:3,rollout=greedy,workers=2",
	"mcts:25", "mcts:25,prior=none", "mcts:25,rollout=greedy", "mcts:25,workers=3,temp=1",
}

// position builds a decision state for seat 0 from a position.
func position(t *testing.T, p env.Position) env.State {
	t.Helper()
	if p.Rules.Players == 0 {
		p.Rules = env.Standard()
	}
	p.Phase = env.PhaseMove
	s, err := env.FromPosition(p, 7)
	require.NoError(t, err)
	return s
}

func TestAgentsPlayWholeGames(t *testing.T) {
	ruleSets := []string{"standard", "players=3", "players=4,pieces=2", "players=3,end=rank", "pieces=1,back_do=off", "finish=stop,back_do_enters=on,capture_bonus_yut_mo=on", "kata", "kata,finish=wrap,players=3,obstacles=3:skip+8:back2"}
	if israce.Enabled {
		// The searches' workers are the same under every rule set: the first and the last under -race.
		ruleSets = []string{ruleSets[0], ruleSets[len(ruleSets)-1]}
	}
	for _, rules := range ruleSets {
		for _, spec := range smallSpecs {
			t.Run(rules+"/"+spec, func(t *testing.T) {
				r := envtest.Rules(t, rules)
				seats := make([]Agent, r.Players)
				for i := range seats {
					a, err := New(spec, uint64(i+1))
					require.NoError(t, err)
					seats[i] = a
				}
				res, err := Game{Rules: r, Seed: 3, Start: env.AnySeat, Seats: seats, Record: true}.Play()
				require.NoError(t, err)
				assert.GreaterOrEqual(t, res.Winner, 0)
				assert.Equal(t, 1, res.Places[res.Winner])
				assert.Equal(t, 1.0, res.Outcomes[res.Winner])
				sum := 0
				for _, d := range res.SeatDecisions {
					sum += d
				}
				assert.Equal(t, res.Decisions, sum)
				final, err := res.Record.Replay(nil)
				require.NoError(t, err, "the record replays under the rules")
				assert.Equal(t, res.Winner, final.Winner())
			})
		}
	}
}

func TestActLeavesStateAlone(t *testing.T) {
	for _, spec := range smallSpecs {
		t.Run(spec, func(t *testing.T) {
			a, err := New(spec, 5)
			require.NoError(t, err)
			s, err := env.New(envtest.Rules(t, "players=3"), 11, env.AnySeat)
			require.NoError(t, err)
			for k := 0; k < 30 && !s.IsOver(); k++ {
				s.Advance()
				if s.IsOver() {
					break
				}
				before := s
				act, st, err := a.ActStats(&s)
				require.NoError(t, err)
				require.Equal(t, before, s, "ActStats must not change the state (generator included)")
				require.True(t, s.IsLegal(act), "%v is legal", act)
				checkStats(t, &s, act, st)
				_, err = s.Apply(act)
				require.NoError(t, err)
			}
		})
	}
}

// checkStats checks the invariants of an agent's statistics.
func checkStats(t *testing.T, s *env.State, act env.Action, st Stats) {
	t.Helper()
	assert.True(t, st.Value >= -1 && st.Value <= 1, "value %v in [-1, 1]", st.Value)
	for p, v := range st.Values {
		assert.True(t, v >= -1 && v <= 1, "seat %d value %v", p, v)
		if p >= s.Rules().Players {
			assert.Zero(t, v, "seat %d does not exist", p)
		}
	}
	if st.Policy == nil {
		return
	}
	require.Len(t, st.Policy, env.NumActions)
	sum := 0.0
	for a, p := range st.Policy {
		if p != 0 {
			assert.True(t, s.IsLegal(env.Action(a)), "policy mass %v on illegal action %v", p, env.Action(a))
		}
		assert.GreaterOrEqual(t, p, float32(0))
		sum += float64(p)
	}
	assert.InDelta(t, 1, sum, 1e-5, "policy sums to 1")
	assert.Positive(t, st.Policy[act], "the chosen action has policy mass")
}

func TestNoDecision(t *testing.T) {
	for _, spec := range smallSpecs {
		t.Run(spec, func(t *testing.T) {
			a, err := New(spec, 1)
			require.NoError(t, err)
			s, err := env.New(env.Standard(), 1, env.AnySeat) // a chance node
			require.NoError(t, err)
			_, err = a.Act(&s)
			assert.ErrorIs(t, err, ErrNoMove)
			_, _, err = a.ActStats(&s)
			assert.ErrorIs(t, err, ErrNoMove)
		})
	}
}

// actions plays one game with every seat taken by spec built from seed and
// returns every action and statistic, to compare runs.
func actions(t *testing.T, spec string, seed uint64, reseed bool) ([]env.Action, []Stats) {
	t.Helper()
	a, err := New(spec, seed)
	require.NoError(t, err)
	if reseed {
		other, err := New(spec, seed+99)
		require.NoError(t, err)
		s, err := env.New(env.Standard(), 1, env.AnySeat)
		require.NoError(t, err)
		s.Advance()
		_, err = other.Act(&s) // dirty the agent's generators and pools
		require.NoError(t, err)
		other.(Reseeder).Reseed(seed)
		a = other
	}
	var acts []env.Action
	var stats []Stats
	_, err = Game{Rules: env.Standard(), Seed: 21, Start: env.AnySeat, Seats: []Agent{a, a},
		OnDecision: func(_ *env.State, act env.Action, st Stats) error {
			acts = append(acts, act)
			st.Policy = append([]float32(nil), st.Policy...)
			stats = append(stats, st)
			return nil
		}}.Play()
	require.NoError(t, err)
	return acts, stats
}

func TestDeterministic(t *testing.T) {
	for _, spec := range smallSpecs {
		t.Run(spec, func(t *testing.T) {
			a1, s1 := actions(t, spec, 42, false)
			a2, s2 := actions(t, spec, 42, false)
			a3, s3 := actions(t, spec, 42, true)
			assert.Equal(t, a1, a2, "same seed, same actions")
			assert.Equal(t, s1, s2, "same seed, same statistics")
			assert.Equal(t, a1, a3, "Reseed behaves like New")
			assert.Equal(t, s1, s3)
		})
	}
}

func TestSeedsDiffer(t *testing.T) {
	for _, spec := range []string{"random", "mc:3", "mcts:25"} {
		a1, _ := actions(t, spec, 1, false)
		a2, _ := actions(t, spec, 2, false)
		assert.NotEqual(t, a1, a2, "%s: different seeds give different games", spec)
	}
}

func TestForcedMoveSkipsSearch(t *testing.T) {
	// Seat 0 has only pieces in hand and a single do in the pool: entering is the only move.
	s := position(t, env.Position{Pool: [6]int{env.Do: 1}, Hand: [4]int{4, 4}})
	require.Equal(t, 1, s.NumLegalActions())
	for _, spec := range []string{"mc:50", "mcts:50"} {
		a, err := New(spec, 1)
		require.NoError(t, err)
		act, st, err := a.ActStats(&s)
		require.NoError(t, err)
		assert.Equal(t, env.EnterAction(env.Do), act)
		assert.Zero(t, st.Simulations)
		assert.Equal(t, float32(1), st.Policy[act])
		assert.Nil(t, st.Q, "a forced decision values no actions")
	}
}

func TestSearchStats(t *testing.T) {
	s := position(t, env.Position{
		Pool:   [6]int{env.Do: 1, env.Gae: 1},
		Hand:   [4]int{2, 3},
		Stacks: []env.Stack{{Seat: 0, Station: 3, Height: 1}, {Seat: 0, Station: 12, Height: 1}, {Seat: 1, Station: 7, Height: 1}},
	})
	k := s.NumLegalActions()
	require.Equal(t, 6, k)
	tests := []struct {
		spec string
		sims int
	}{
		{"mcts:300", 300},
		{"mcts:301,workers=2", 301},
		{"mcts:300,prior=none", 300},
		{"mc:40", 40 * 6},
		{"mc:41,workers=2", 41 * 6},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			a, err := New(tt.spec, 3)
			require.NoError(t, err)
			act, st, err := a.ActStats(&s)
			require.NoError(t, err)
			assert.Equal(t, tt.sims, st.Simulations)
			checkStats(t, &s, act, st)
			assert.InDelta(t, 0, st.Values[0]+st.Values[1], 1e-9, "two seats: the outcomes sum to zero")
			if tt.spec[:4] == "mcts" {
				nonzero := 0
				for _, p := range st.Policy {
					if p > 0 {
						nonzero++
					}
				}
				assert.Equal(t, k, nonzero, "every legal action was visited")
			} else {
				assert.Equal(t, float32(1), st.Policy[act], "mc's policy is one-hot")
			}
			checkQ(t, &s, st)
			if tt.spec[:2] == "mc" && tt.spec[:4] != "mcts" {
				assert.Equal(t, st.Value, st.Q[act], "mc plays its best mean outcome")
				for x := range env.NumActions {
					assert.LessOrEqual(t, st.Q[x], st.Q[act])
				}
			}
		})
	}
}

// checkQ checks the per-action values of a search: every legal action
// valued in [-1, 1], the others 0.
func checkQ(t *testing.T, s *env.State, st Stats) {
	t.Helper()
	require.Len(t, st.Q, env.NumActions)
	for x, q := range st.Q {
		if s.IsLegal(env.Action(x)) {
			assert.True(t, q >= -1 && q <= 1, "action %v: Q %v in [-1, 1]", env.Action(x), q)
		} else {
			assert.Zero(t, q, "action %v is not legal", env.Action(x))
		}
	}
}

func TestSearchFindsTheWin(t *testing.T) {
	// Seat 0 has one piece left, on 19: gae finishes it and wins; back-do
	// first would leave gae only enough to reach HOME, where it waits.
	s := position(t, env.Position{
		Pool:     [6]int{env.BackDo: 1, env.Gae: 1},
		Hand:     [4]int{0, 1},
		Finished: [4]int{3, 0},
		Stacks:   []env.Stack{{Seat: 0, Station: 19, Height: 1}, {Seat: 1, Station: 17, Height: 3}},
	})
	win := env.NewAction(env.Gae, 19)
	for _, spec := range []string{"greedy", "mc:20", "mcts:50", "mcts:50,prior=none", "mcts:50,workers=2"} {
		a, err := New(spec, 1)
		require.NoError(t, err)
		act, st, err := a.ActStats(&s)
		require.NoError(t, err)
		assert.Equal(t, win, act, spec)
		switch {
		case spec == "mc:20":
			assert.Equal(t, 1.0, st.Value, "the winning move's value is exact")
		case st.Policy != nil:
			assert.Greater(t, st.Value, 0.5, "%s: the root value leans to the win", spec)
			assert.Greater(t, st.Policy[win], float32(0.5), "%s: most visits go to the win", spec)
		}
	}
}

func TestGreedyScoring(t *testing.T) {
	// Seat 0: stacks on 3 and 12, two in hand, a do to play. Seat 1: all four
	// pieces stacked on 2, which reaches 3 with do and 4 with gae.
	s := position(t, env.Position{
		Pool:   [6]int{env.Do: 1},
		Hand:   [4]int{2, 0},
		Stacks: []env.Stack{{Seat: 0, Station: 3, Height: 1}, {Seat: 0, Station: 12, Height: 1}, {Seat: 1, Station: 2, Height: 4}},
	})
	pr := env.Standard().Probabilities()
	score := func(a env.Action) float64 {
		v, err := GreedyScore(&s, a)
		require.NoError(t, err)
		return v
	}
	safe, enter, exposed := env.NewAction(env.Do, 12), env.EnterAction(env.Do), env.NewAction(env.Do, 3)
	assert.InDelta(t, GreedyAdvance, score(safe), 1e-9, "one step, nothing in reach")
	assert.InDelta(t, GreedyAdvance-pr[env.BackDo]*(GreedyExposureBase+1), score(enter), 1e-9, "lands on 1, which back-do from 2 reaches")
	assert.InDelta(t, GreedyAdvance+pr[env.Do]*(GreedyExposureBase+3)-pr[env.Gae]*(GreedyExposureBase+4), score(exposed), 1e-9,
		"leaves 3 (do from 2) for 4 (gae from 2)")
	g, err := New("greedy", 1)
	require.NoError(t, err)
	act, err := g.Act(&s)
	require.NoError(t, err)
	assert.Equal(t, safe, act)

	_, err = GreedyScore(&s, env.NewAction(env.Gae, 12))
	assert.ErrorIs(t, err, env.ErrIllegalAction)
}

func TestGreedyPrefersCaptureAndWin(t *testing.T) {
	tests := []struct {
		name string
		pos  env.Position
		want env.Action
	}{
		{"capture", env.Position{
			Pool: [6]int{env.Gae: 1}, Hand: [4]int{3, 3},
			Stacks: []env.Stack{{Seat: 0, Station: 3, Height: 1}, {Seat: 1, Station: 5, Route: env.RouteC1, Height: 1}},
		}, env.NewAction(env.Gae, 3)},
		{"win beats capture", env.Position{
			Pool: [6]int{env.Gae: 1, env.Yut: 1}, Hand: [4]int{0, 3}, Finished: [4]int{3, 0},
			Stacks: []env.Stack{{Seat: 0, Station: 17, Height: 1}, {Seat: 1, Station: 19, Height: 1}},
		}, env.NewAction(env.Yut, 17)},
		{"stack", env.Position{
			Pool: [6]int{env.Do: 1}, Hand: [4]int{2, 4},
			Stacks: []env.Stack{{Seat: 0, Station: 14, Height: 1}, {Seat: 0, Station: 13, Height: 1}},
		}, env.NewAction(env.Do, 13)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := position(t, tt.pos)
			g, err := New("greedy", 1)
			require.NoError(t, err)
			act, err := g.Act(&s)
			require.NoError(t, err)
			assert.Equal(t, tt.want, act)
		})
	}
}

func TestTimeBudget(t *testing.T) {
	s, err := env.New(env.Standard(), 3, env.AnySeat)
	require.NoError(t, err)
	for s.Advance(); s.NumLegalActions() < 2; s.Advance() {
		a, _ := New("random", 1)
		act, err := a.Act(&s)
		require.NoError(t, err)
		_, err = s.Apply(act)
		require.NoError(t, err)
	}
	for _, spec := range []string{"mcts:100000,time=30ms", "mc:100000,time=30ms", "mcts:100000,time=30ms,workers=2"} {
		a, err := New(spec, 1)
		require.NoError(t, err)
		t0 := time.Now()
		_, st, err := a.ActStats(&s)
		require.NoError(t, err)
		// The search stops at the first check after the deadline: far sooner than
		// 100,000 simulations would take, whatever the machine.
		assert.Less(t, time.Since(t0), 5*time.Second, spec)
		assert.Less(t, st.Simulations, 100000, spec)
		assert.Positive(t, st.Simulations, spec)
	}
}

func TestStrength(t *testing.T) {
	// Fixed seeds make these deterministic; the margins are wide (measured
	// rates are in docs/BASELINES.md), so they fail only if an agent breaks.
	tests := []struct {
		a, b  string
		games int
		min   float64
	}{
		{"greedy", "random", 200, 0.70},
		{"mc:10", "random", 60, 0.70},
		{"mcts:40", "random", 60, 0.70},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_vs_"+tt.b, func(t *testing.T) {
			wins := 0
			games := israce.Scale(tt.games, tt.games/4) // win rates at scale, in one goroutine: a quarter under -race
			for g := 0; g < games; g++ {
				a, err := New(tt.a, uint64(2*g))
				require.NoError(t, err)
				b, err := New(tt.b, uint64(2*g+1))
				require.NoError(t, err)
				seats, mine := []Agent{a, b}, 0
				if g%2 == 1 {
					seats, mine = []Agent{b, a}, 1
				}
				res, err := Game{Rules: env.Standard(), Seed: uint64(g / 2), Start: env.AnySeat, Seats: seats}.Play()
				require.NoError(t, err)
				if res.Winner == mine {
					wins++
				}
			}
			rate := float64(wins) / float64(games)
			assert.GreaterOrEqual(t, rate, tt.min, "%s won %d of %d against %s", tt.a, wins, games, tt.b)
		})
	}
}

func TestGameErrors(t *testing.T) {
	r, _ := New("random", 1)
	_, err := Game{Rules: env.Standard(), Seats: []Agent{r}}.Play()
	assert.ErrorIs(t, err, ErrSeats)
	_, err = Game{Rules: env.Rules{}, Seats: nil}.Play()
	assert.ErrorIs(t, err, env.ErrInvalidRules)
	stop := errors.New("stop")
	_, err = Game{Rules: env.Standard(), Seed: 1, Start: 0, Seats: []Agent{r, r},
		OnDecision: func(*env.State, env.Action, Stats) error { return stop }}.Play()
	assert.ErrorIs(t, err, stop)
	_, err = Game{Rules: env.Standard(), Seed: 1, Start: 0, Seats: []Agent{r, r},
		OnEnd: func(*env.State) error { return stop }}.Play()
	assert.ErrorIs(t, err, stop, "OnEnd's error fails the game")
}

// OnEnd is called once, with the final state: over, with the result's
// winner and decisions.
func TestGameOnEnd(t *testing.T) {
	r, err := New("random", 1)
	require.NoError(t, err)
	var final []env.State
	res, err := Game{Rules: env.Standard(), Seed: 3, Start: env.AnySeat, Seats: []Agent{r, r},
		OnEnd: func(s *env.State) error { final = append(final, *s); return nil }}.Play()
	require.NoError(t, err)
	require.Len(t, final, 1)
	assert.True(t, final[0].IsOver())
	assert.Equal(t, res.Winner, final[0].Winner())
	assert.Equal(t, res.Decisions, final[0].Decisions())
}

func TestNoAllocations(t *testing.T) {
	if israce.Enabled {
		t.Skip("counts the allocations of searches in one goroutine; the run without -race counts them")
	}
	s, err := env.New(envtest.Rules(t, "players=3"), 5, env.AnySeat)
	require.NoError(t, err)
	for s.Advance(); s.NumLegalActions() < 2; s.Advance() {
		a, _ := New("random", 1)
		act, _ := a.Act(&s)
		_, err = s.Apply(act)
		require.NoError(t, err)
	}
	for _, spec := range []string{"random", "greedy", "mc:20", "mc:20,rollout=greedy", "mcts:200", "mcts:200,prior=none,rollout=greedy,temp=1", "mcts:200,fast=20,full_prob=0.5"} {
		a, err := New(spec, 1)
		require.NoError(t, err)
		for range 8 { // the first decisions size the pools (of both searches of a fast=N agent)
			_, err = a.Act(&s)
			require.NoError(t, err)
		}
		allocs := testing.AllocsPerRun(5, func() {
			if _, _, err := a.ActStats(&s); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "%s allocates %v times per decision", spec, allocs)
	}
}

func TestValuesMultiSeat(t *testing.T) {
	s, err := env.New(envtest.Rules(t, "players=4,end=rank"), 9, env.AnySeat)
	require.NoError(t, err)
	for s.Advance(); s.NumLegalActions() < 2; s.Advance() {
		a, _ := New("random", 1)
		act, _ := a.Act(&s)
		_, err = s.Apply(act)
		require.NoError(t, err)
	}
	a, err := New("mcts:200", 1)
	require.NoError(t, err)
	act, st, err := a.ActStats(&s)
	require.NoError(t, err)
	checkStats(t, &s, act, st)
	// Under end=rank the places are 1..4 and the outcomes +1, 1/3, -1/3, -1: they sum to 0.
	assert.InDelta(t, 0, st.Values[0]+st.Values[1]+st.Values[2]+st.Values[3], 1e-9)
	assert.False(t, math.IsNaN(st.Value))
}

// TestGameOnThrow: OnThrow sees every throw, at the chance node before it,
// and leaves the game as it plays without the hook.
func TestGameOnThrow(t *testing.T) {
	newSeats := func() []Agent {
		x, err := New("greedy", 1)
		require.NoError(t, err)
		y, err := New("random", 2)
		require.NoError(t, err)
		return []Agent{x, y}
	}
	g := Game{Rules: env.Standard(), Seed: 9, Start: env.AnySeat, Seats: newSeats(), Record: true}
	plain, err := g.Play()
	require.NoError(t, err)
	n := 0
	g.Seats = newSeats()
	g.OnThrow = func(s *env.State, th env.Throw) error {
		require.True(t, s.IsChance())
		require.Equal(t, n, s.Throws())
		n++
		return nil
	}
	g.OnEnd = func(s *env.State) error {
		assert.Equal(t, n, s.Throws())
		return nil
	}
	hooked, err := g.Play()
	require.NoError(t, err)
	assert.Equal(t, plain.Record, hooked.Record)
	assert.Positive(t, n)
}
