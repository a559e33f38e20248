package vecenv

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

// The derived seeds are part of the datasets' and evaluations'
// reproducibility: they must not change. AgentSeed, EpisodeSeed and
// LearnerSeat are Seed with their stream as the first index.
func TestSchemeSeeds(t *testing.T) {
	for _, x := range []uint64{0, 1, 42, 1<<64 - 1} {
		for _, seat := range []int{0, 3} {
			for _, d := range []int{0, 1, 700} {
				assert.Equal(t, Seed(x, 1, uint64(seat), uint64(d)), AgentSeed(x, seat, d))
			}
		}
		for _, k := range []uint64{1, 2, 99} {
			assert.Equal(t, Seed(x, 2, k), EpisodeSeed(x, k))
		}
		for _, p := range []int{2, 3, 4} {
			s := LearnerSeat(x, p)
			assert.True(t, s >= 0 && s < p, "seat %d of %d", s, p)
		}
	}
	assert.Equal(t, uint64(0), GameSeed(1<<64-2, 2), "game seeds wrap at 2^64")
	assert.Equal(t, uint64(0x413124e35c27eed6), AgentSeed(1, 0, 0), "golden (docs/PROTOCOL.md's formula, computed in Python)")
	assert.Equal(t, uint64(0x8150ade8f77f32bd), EpisodeSeed(1, 1), "golden")
	assert.Equal(t, 1, LearnerSeat(1, 2), "golden")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = AgentSeed(7, 1, 2) }), "reseeding allocates nothing")
}

// episodes drives b (single mode, reset already) until every env has ended
// its first want episodes. The learner of every env is moved by one agent
// of spec, reseeded by AgentSeed before each decision as the command
// line's runner does. It returns each env's episodes as game records
// (throws and moves, with the result) and their infos.
func episodes(t *testing.T, p *Pool, b *Batch, spec string, want int) ([][]*env.Record, [][]EpisodeInfo) {
	t.Helper()
	learner, err := agent.New(spec, 0)
	require.NoError(t, err)
	n := b.N()
	recs := make([][]*env.Record, n)
	infos := make([][]EpisodeInfo, n)
	collect := func() {
		for i := range n {
			cur, events, _, _ := b.Info(i)
			if int(cur.Episode) >= want {
				continue
			}
			k := int(cur.Episode)
			for len(recs[i]) <= k {
				recs[i] = append(recs[i], nil)
				infos[i] = append(infos[i], EpisodeInfo{})
			}
			if recs[i][k] == nil {
				recs[i][k] = env.NewRecord(b.Config().Rules, cur.Seed, env.AnySeat)
			}
			for _, ev := range events {
				recs[i][k].Add(ev, b.State(i))
			}
			infos[i][k] = cur
		}
	}
	collect()
	for step := 0; ; step++ {
		require.Less(t, step, 5000, "episodes never ended")
		done := true
		for i := range n {
			cur, _, _, _ := b.Info(i)
			done = done && (int(cur.Episode) >= want || int(cur.Episode) == want-1 && b.State(i).IsOver())
			b.Actions()[i] = 0 // a terminal row: the next step resets
			s := b.State(i)
			if s.IsOver() || s.Phase() != env.PhaseMove {
				continue
			}
			learner.(agent.Reseeder).Reseed(AgentSeed(cur.Seed, s.ToMove(), s.Decisions()))
			a, err := learner.Act(s)
			require.NoError(t, err)
			b.Actions()[i] = int32(a)
		}
		if done {
			return recs, infos
		}
		require.NoError(t, b.CheckActions())
		require.NoError(t, b.Step(p, true))
		collect()
	}
}

// A batch in single mode, whose learner is moved by agent A reseeded by
// AgentSeed and whose opponents are B, plays in env i exactly the game the
// command line's runner (Game) plays with the game seed S+i between A in
// the learner's seat and B in the others; the env's second episode is the
// runner's game with the seed EpisodeSeed(S+i, 1). The batch borrows one
// opponent per worker, the runner holds one agent per seat (or one for
// every B seat): neither changes a move.
func TestBatchPlaysTheCommandLinesGames(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	for _, tc := range []struct {
		rules, a, b string
		seat, n     int
	}{
		{"standard", "greedy", "mc:8", 0, 4},
		{"standard", "mc:8", "mcts:16", 1, 3},
		{"standard", "random", "greedy", RandomSeat, 130}, // two ranges on the pool's workers
		{"players=3", "random", "mc:4", RandomSeat, 4},
		{"players=4,end=rank", "greedy", "random", 2, 4},
	} {
		t.Run(fmt.Sprintf("%s/%s-vs-%s/seat%d", tc.rules, tc.a, tc.b, tc.seat), func(t *testing.T) {
			rules, err := env.ParseRules(tc.rules)
			require.NoError(t, err)
			b, err := New(Config{Rules: rules, Tier: obs.Compact, N: tc.n, Mode: Single, Seat: tc.seat, Opponent: tc.b})
			require.NoError(t, err)
			const base = 1<<64 - 2 // env 2 wraps to game seed 0
			b.SeedAll(base)
			require.NoError(t, b.Reset(p, ResetOptions{Start: env.AnySeat, Record: true}))
			recs, infos := episodes(t, p, b, tc.a, 2)

			a, err := agent.New(tc.a, 12345) // any seed: the runner reseeds
			require.NoError(t, err)
			opp, err := agent.New(tc.b, 999)
			require.NoError(t, err)
			for i := range tc.n {
				for k, info := range infos[i] {
					want := GameSeed(base, i)
					if k > 0 {
						want = EpisodeSeed(want, uint64(k))
					}
					require.Equal(t, want, info.Seed, "env %d episode %d", i, k)
					if tc.seat == RandomSeat {
						assert.Equal(t, LearnerSeat(info.Seed, rules.Players), int(info.Learner))
					}
					seats := make([]agent.Agent, rules.Players)
					for j := range seats {
						seats[j] = opp
					}
					seats[info.Learner] = a
					g := Game(rules, info.Seed, env.AnySeat, seats)
					g.Record = true
					res, err := g.Play()
					require.NoError(t, err)
					res.Record.Players = nil
					require.Equal(t, res.Record, recs[i][k], "env %d episode %d (seed %d, learner %d)", i, k, info.Seed, info.Learner)
				}
			}
		})
	}
}

// Game's agents play the same moves whatever they played before: a game
// played by agents that just played other games equals the game played by
// fresh agents.
func TestGameIgnoresHistory(t *testing.T) {
	rules := env.Standard()
	play := func(seats []agent.Agent, x uint64) *env.Record {
		g := Game(rules, x, env.AnySeat, seats)
		g.Record = true
		res, err := g.Play()
		require.NoError(t, err)
		return res.Record
	}
	fresh := func() []agent.Agent {
		a, err := agent.New("mc:6", 1)
		require.NoError(t, err)
		b, err := agent.New("mcts:12", 2)
		require.NoError(t, err)
		return []agent.Agent{a, b}
	}
	used := fresh()
	play(used, 77)
	play(used, 78)
	assert.Equal(t, play(fresh(), 5), play(used, 5))

	g := Game(rules, 1, env.AnySeat, []agent.Agent{notReseeder{}, notReseeder{}})
	_, err := g.Play()
	assert.ErrorIs(t, err, agent.ErrNotReseeder)
	var pl Players
	_, err = pl.Get(0, "random")
	assert.NoError(t, err)
}

// notReseeder is an agent that cannot be reseeded.
type notReseeder struct{}

func (notReseeder) Name() string { return "fixed" }
func (notReseeder) Act(s *env.State) (env.Action, error) {
	a, _, err := notReseeder{}.ActStats(s)
	return a, err
}
func (notReseeder) ActStats(s *env.State) (env.Action, agent.Stats, error) {
	return s.LegalActions(nil)[0], agent.Stats{}, nil
}
