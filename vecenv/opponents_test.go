package vecenv

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
)

// TestOpponentDrawGolden pins the draw of the seed scheme: the same game
// seed draws the same entry on every machine and in every version.
func TestOpponentDrawGolden(t *testing.T) {
	cum := cumulative([]Opponent{{"a", 1}, {"b", 2}, {"c", 0.5}})
	var got []int
	for x := range uint64(16) {
		got = append(got, OpponentDraw(x, cum))
	}
	assert.Equal(t, []int{1, 0, 2, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 1}, got)
	assert.Equal(t, 0, OpponentDraw(12345, cumulative([]Opponent{{"only", 3}})), "one entry draws nothing")
}

// TestOpponentDrawFollowsWeights: over many seeds each entry is drawn in
// proportion to its weight (a fixed sample: the frequencies are exact
// numbers, within 1% of the weights).
func TestOpponentDrawFollowsWeights(t *testing.T) {
	opps := []Opponent{{"a", 1}, {"b", 2}, {"c", 0.5}, {"d", 6.5}}
	cum := cumulative(opps)
	const n = 200000
	counts := make([]int, len(opps))
	for x := range uint64(n) {
		counts[OpponentDraw(Seed(x, 9), cum)]++
	}
	for k, o := range opps {
		assert.InDelta(t, o.Weight/10, float64(counts[k])/n, 0.01, "entry %d", k)
	}
}

// TestMixtureRefusals: every bad mixture is refused with ErrMixture.
func TestMixtureRefusals(t *testing.T) {
	many := make([]Opponent, MaxOpponents+1)
	for i := range many {
		many[i] = Opponent{"random", 1}
	}
	for _, tc := range []struct {
		name string
		opps []Opponent
	}{
		{"empty spec", []Opponent{{"", 1}}},
		{"zero weight", []Opponent{{"random", 0}}},
		{"negative weight", []Opponent{{"random", 1}, {"greedy", -1}}},
		{"NaN weight", []Opponent{{"random", math.NaN()}}},
		{"infinite weight", []Opponent{{"random", math.Inf(1)}}},
		{"overflowing sum", []Opponent{{"random", math.MaxFloat64}, {"greedy", math.MaxFloat64}}},
		{"too many", many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Rules: env.Standard(), Tier: obs.Compact, N: 1, Opponents: tc.opps})
			assert.ErrorIs(t, err, ErrMixture)
		})
	}
	_, err := New(Config{Rules: env.Standard(), Tier: obs.Compact, N: 1, Opponents: []Opponent{{"nosuchagent", 1}}})
	assert.ErrorContains(t, err, "nosuchagent")
}

// TestMixtureDrawsPerEpisode: each env's running episode plays the entry
// OpponentDraw gives its game seed, reported in Rows.Opponent and the info,
// and an episode of a mixture is the very game a batch of that entry alone
// plays from the same seed.
func TestMixtureDrawsPerEpisode(t *testing.T) {
	specs := []string{"greedy", "random", "mcts:1"}
	mix := Config{Rules: env.Standard(), Tier: obs.Compact, N: 12, Opponents: []Opponent{{specs[0], 1}, {specs[1], 1}, {specs[2], 2}}, Autoreset: SameStep}
	b := newStarted(t, nil, mix)
	alone := make([]*Batch, len(specs))
	for k, s := range specs {
		alone[k] = newStarted(t, nil, Config{Rules: mix.Rules, Tier: mix.Tier, N: mix.N, Opponent: s, Autoreset: SameStep})
	}
	seen := map[uint8]int{}
	for step := range 200 {
		rows := b.Rows()
		for i := range b.N() {
			cur, _, _, _ := b.Info(i)
			k := OpponentDraw(cur.Seed, b.opps.cum)
			if uint8(k) != rows.Opponent[i] || int8(k) != cur.Opponent {
				require.Failf(t, "wrong entry", "step %d env %d: drew %d, row %d, info %d", step, i, k, rows.Opponent[i], cur.Opponent)
			}
			seen[rows.Opponent[i]]++
			if cur.Episode == 0 { // the first episodes share their seed with the lone batches
				o, m, _ := alone[k].Row(i)
				require.True(t, slices.Equal(o, rows.Obs[i*b.d:(i+1)*b.d]), "step %d env %d", step, i)
				require.True(t, slices.Equal(m, rows.Mask[i*env.NumActions:(i+1)*env.NumActions]), "step %d env %d", step, i)
			}
		}
		FirstLegal(rows.Mask, b.Actions())
		require.NoError(t, b.Step(nil, false))
		for _, a := range alone {
			FirstLegal(a.Rows().Mask, a.Actions())
			require.NoError(t, a.Step(nil, false))
		}
	}
	assert.Len(t, seen, 3, "every entry was drawn")
}

// clientPlays answers every env of b that waits for a client-played
// opponent with ag, reseeded as the batch reseeds its own opponents, until
// none waits; it returns the number of OpponentStep calls.
func clientPlays(t *testing.T, b *Batch, ag agent.Agent) int {
	t.Helper()
	calls := 0
	for b.Pending() {
		for i := range b.N() {
			if !b.PendingAt(i) {
				b.Actions()[i] = -1 // ignored
				continue
			}
			cur, _, _, _ := b.Info(i)
			s := *b.State(i)
			require.Equal(t, int8(s.ToMove()), b.Rows().ToMove[i], "a pending row is the opponent's")
			ag.(agent.Reseeder).Reseed(AgentSeed(cur.Seed, s.ToMove(), s.Decisions()))
			a, err := ag.Act(&s)
			require.NoError(t, err)
			b.Actions()[i] = int32(a)
		}
		require.NoError(t, b.CheckOpponentActions())
		require.NoError(t, b.OpponentStep(nil, true))
		calls++
	}
	return calls
}

// TestClientOpponentIsTheSameGame: a client that plays the opponent's
// decisions with the agent the batch would have used, reseeded the same
// way, gets the very rows, rewards, flags and infos of a batch that plays
// that agent itself, in every autoreset mode and reward scheme, with a
// drawn learner seat and three players.
func TestClientOpponentIsTheSameGame(t *testing.T) {
	r3, err := env.ParseRules("players=3")
	require.NoError(t, err)
	for _, tc := range []struct {
		rules     env.Rules
		autoreset Autoreset
		reward    Reward
	}{
		{env.Standard(), NextStep, RewardWin},
		{env.Standard(), SameStep, RewardProgress},
		{r3, SameStep, RewardWin},
		{r3, NextStep, RewardProgress},
	} {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.rules.String(), tc.autoreset, tc.reward), func(t *testing.T) {
			base := Config{Rules: tc.rules, Tier: obs.Tactical, N: 6, Seat: RandomSeat, Autoreset: tc.autoreset, Reward: tc.reward, MaxDecisions: 40}
			want := base
			want.Opponent = "greedy"
			got := base
			got.Opponents = []Opponent{{Client, 1}}
			wb, err := New(want)
			require.NoError(t, err)
			gb, err := New(got)
			require.NoError(t, err)
			ag, err := agent.New("greedy", 0)
			require.NoError(t, err)
			wb.SeedAll(7)
			gb.SeedAll(7)
			require.NoError(t, wb.Reset(nil, ResetOptions{Start: env.AnySeat, Record: true}))
			require.NoError(t, gb.Reset(nil, ResetOptions{Start: env.AnySeat, Record: true}))
			calls := clientPlays(t, gb, ag)
			steps := israce.Scale(400, 100) // in one goroutine: a quarter under -race, still several episodes of 40 decisions
			for step := range steps {
				requireSameRows(t, wb, gb, step)
				FirstLegal(wb.Rows().Mask, wb.Actions())
				copy(gb.Actions(), wb.Actions())
				require.NoError(t, wb.CheckActions())
				require.NoError(t, gb.CheckActions())
				require.NoError(t, wb.Step(nil, true))
				require.NoError(t, gb.Step(nil, true))
				calls += clientPlays(t, gb, ag)
			}
			requireSameRows(t, wb, gb, steps)
			assert.Positive(t, calls)
		})
	}
}

// requireSameRows checks that two batches wrote the same learner rows and
// infos (compared cheaply first: the test runs under the race detector too).
func requireSameRows(t *testing.T, want, got *Batch, step int) {
	t.Helper()
	w, g := want.Rows(), got.Rows()
	same := slices.Equal(w.Obs, g.Obs) && slices.Equal(w.Mask, g.Mask) && slices.Equal(w.Reward, g.Reward) &&
		slices.Equal(w.Terminated, g.Terminated) && slices.Equal(w.Truncated, g.Truncated) && slices.Equal(w.ToMove, g.ToMove) &&
		slices.Equal(w.FinalObs, g.FinalObs) && slices.Equal(w.FinalMask, g.FinalMask) && slices.Equal(w.FinalToMove, g.FinalToMove)
	if !same {
		require.Equal(t, w, g, "step %d", step)
	}
	for i := range want.N() {
		wc, wev, wf, wfev := want.Info(i)
		gc, gev, gf, gfev := got.Info(i)
		if wc != gc || !slices.Equal(wev, gev) || (wf == nil) != (gf == nil) || (wf != nil && *wf != *gf) || !slices.Equal(wfev, gfev) {
			require.Equal(t, []any{wc, wev, wf, wfev}, []any{gc, gev, gf, gfev}, "step %d env %d", step, i)
		}
	}
}

// TestClientOpponentRefusals: Step while an env waits, OpponentStep while
// none does, and an illegal or out-of-range opponent action are refused
// with their sentinels, and change nothing: the env can still be answered.
func TestClientOpponentRefusals(t *testing.T) {
	b, err := New(Config{Rules: env.Standard(), Tier: obs.Compact, N: 4, Seat: 1, Opponents: []Opponent{{Client, 1}}})
	require.NoError(t, err)
	b.SeedAll(3)
	require.NoError(t, b.Reset(nil, ResetOptions{Start: 0}))
	require.True(t, b.Pending(), "seat 0 begins: every env waits for the opponent")
	FirstLegal(b.Rows().Mask, b.Actions())
	assert.ErrorIs(t, b.CheckActions(), ErrPending)

	before := *b.State(2)
	b.Actions()[2] = int32(env.NumActions)
	assert.ErrorIs(t, b.CheckOpponentActions(), ErrActionRange)
	for a := range int32(env.NumActions) {
		if !before.IsLegal(env.Action(a)) {
			b.Actions()[2] = a
			break
		}
	}
	assert.ErrorIs(t, b.CheckOpponentActions(), ErrIllegalAction)
	assert.Equal(t, before, *b.State(2), "a refused action changes nothing")

	FirstLegal(b.Rows().Mask, b.Actions())
	require.NoError(t, b.CheckOpponentActions())
	require.NoError(t, b.OpponentStep(nil, false))
	for b.Pending() { // bonus throws: the opponent may move again
		FirstLegal(b.Rows().Mask, b.Actions())
		require.NoError(t, b.OpponentStep(nil, false))
	}
	assert.ErrorIs(t, b.CheckOpponentActions(), ErrNotPending)
	for i := range b.N() {
		assert.Equal(t, int8(1), b.Rows().ToMove[i], "the learner's rows again")
	}
}

// TestSetOpponents: a new mixture applies from the next episode; a batch
// made with one opponent, and a mixture too short for a running episode,
// are refused.
func TestSetOpponents(t *testing.T) {
	b := newStarted(t, nil, Config{Rules: env.Standard(), Tier: obs.Compact, N: 8, Opponents: []Opponent{{"random", 1}, {"greedy", 1}}, Autoreset: SameStep})
	one := newStarted(t, nil, Config{Rules: env.Standard(), Tier: obs.Compact, N: 1, Opponent: "random"})
	assert.ErrorIs(t, one.SetOpponents([]Opponent{{"greedy", 1}}), ErrMixture)
	assert.ErrorIs(t, b.SetOpponents([]Opponent{{"random", 0}}), ErrMixture)
	old := b.opps
	require.NoError(t, b.SetOpponents([]Opponent{{"mc:2", 1}, {"greedy", 1}, {"random", 5}}))
	assert.Equal(t, []Opponent{{"mc:2", 1}, {"greedy", 1}, {"random", 5}}, b.Opponents())
	run(t, b, 3000, func() {
		for i := range b.N() {
			cur, _, _, _ := b.Info(i)
			sl := &b.slots[i]
			if cur.Episode > 0 {
				assert.Same(t, b.opps, sl.oset, "env %d: a new episode draws from the new mixture", i)
				assert.Equal(t, uint8(OpponentDraw(cur.Seed, b.opps.cum)), b.Rows().Opponent[i])
			} else {
				assert.Same(t, old, sl.oset, "env %d: the running episode keeps its mixture", i)
			}
		}
	})
}

// TestSetOpponentsKeepsRunningGames: an episode that began before a change
// of mixture plays on against the entry it drew, move for move as if the
// mixture had not changed, even while an env waits for the client.
func TestSetOpponentsKeepsRunningGames(t *testing.T) {
	cfg := Config{Rules: env.Standard(), Tier: obs.Compact, N: 8, Opponents: []Opponent{{"greedy", 1}, {Client, 1}}, Seat: 1}
	a, err := New(cfg)
	require.NoError(t, err)
	b, err := New(cfg)
	require.NoError(t, err)
	ag, err := agent.New("mcts:1", 0)
	require.NoError(t, err)
	for _, x := range []*Batch{a, b} {
		x.SeedAll(11)
		require.NoError(t, x.Reset(nil, ResetOptions{Start: 0}))
		clientPlays(t, x, ag)
	}
	require.NoError(t, b.SetOpponents([]Opponent{{"random", 1}, {"random", 1}, {"mc:2", 1}}))
	for step := range 15 { // first episodes only: they last longer than 15 learner steps
		requireSameRows(t, a, b, step)
		FirstLegal(a.Rows().Mask, a.Actions())
		copy(b.Actions(), a.Actions())
		require.NoError(t, a.Step(nil, false))
		require.NoError(t, b.Step(nil, false))
		clientPlays(t, a, ag)
		clientPlays(t, b, ag)
	}
}

// TestOpponentStepAllocatesNothing: answering a client-played opponent is
// on the hot path too.
func TestOpponentStepAllocatesNothing(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector's sync.Pool drops workers on purpose")
	}
	b, err := New(Config{Rules: env.Standard(), Tier: obs.Tactical, N: 16, Seat: 1, Opponents: []Opponent{{Client, 1}, {"greedy", 1}}, Autoreset: SameStep})
	require.NoError(t, err)
	b.SeedAll(1)
	require.NoError(t, b.Reset(nil, ResetOptions{Start: env.AnySeat}))
	step := func() {
		for b.Pending() {
			FirstLegal(b.Rows().Mask, b.Actions())
			if err := b.OpponentStep(nil, false); err != nil {
				t.Fatal(err)
			}
		}
		FirstLegal(b.Rows().Mask, b.Actions())
		if err := b.Step(nil, false); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 { // warm the agents and event buffers
		step()
	}
	assert.Zero(t, testing.AllocsPerRun(100, step))
}

// TestResetForgetsAnUnansweredOpponent: a reset of envs that wait for a
// client-played opponent (the client's policy failed and never answered)
// leaves the pending column 1 exactly where the new games wait for that
// opponent, and 0 where they wait for the learner, so that a client
// answering by the column answers only envs that wait.
func TestResetForgetsAnUnansweredOpponent(t *testing.T) {
	b, err := New(Config{Rules: env.Standard(), Tier: obs.Compact, N: 8, Seat: 1, Opponents: []Opponent{{Client, 1}}})
	require.NoError(t, err)
	sawBoth := [2]bool{}
	for round := range 4 {
		b.SeedAll(uint64(10 + round))
		require.NoError(t, b.Reset(nil, ResetOptions{Start: env.AnySeat}), "round %d", round)
		for i := range b.N() {
			waits := b.Rows().ToMove[i] != 1
			assert.Equal(t, waits, b.Rows().Pending[i] == 1, "round %d env %d: the column says whether the opponent is to move", round, i)
			sawBoth[b.Rows().Pending[i]] = true
		}
	}
	assert.Equal(t, [2]bool{true, true}, sawBoth, "the seeds give games of both starts")
}
