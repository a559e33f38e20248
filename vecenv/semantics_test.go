package vecenv

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
)

// run steps b with the first legal actions until every env has ended at
// least one episode (or steps run out), calling visit after every step.
func run(t *testing.T, b *Batch, steps int, visit func()) {
	t.Helper()
	ended := make([]bool, b.N())
	for range steps {
		FirstLegal(b.Rows().Mask, b.Actions())
		require.NoError(t, b.CheckActions())
		require.NoError(t, b.Step(nil, false))
		visit()
		all := true
		for i := range ended {
			ended[i] = ended[i] || b.Rows().Terminated[i] == 1 || b.Rows().Truncated[i] == 1
			all = all && ended[i]
		}
		if all {
			return
		}
	}
}

// Observe's rows for the seat of each step row are that row, and every
// other seat's mask is all zero.
func TestObserveMatchesRows(t *testing.T) {
	for _, mode := range []Mode{Single, Multi} {
		t.Run(mode.String(), func(t *testing.T) {
			r, err := env.ParseRules("players=3")
			require.NoError(t, err)
			b := newStarted(t, nil, Config{Rules: r, Tier: obs.Tactical, N: 6, Mode: mode, Seat: RandomSeat, Opponent: "random"})
			o := make([]float32, b.N()*b.ObsSize())
			m := make([]uint8, b.N()*env.NumActions)
			d := b.ObsSize()
			check := func() {
				rows := b.Rows()
				for seat := range r.Players {
					require.NoError(t, b.Observe(seat, o, m))
					for i := range b.N() {
						mr := m[i*env.NumActions : (i+1)*env.NumActions]
						if int(rows.ToMove[i]) == seat {
							assert.Equal(t, rows.Obs[i*d:(i+1)*d], o[i*d:(i+1)*d], "env %d seat %d", i, seat)
							assert.Equal(t, rows.Mask[i*env.NumActions:(i+1)*env.NumActions], mr, "env %d seat %d", i, seat)
						} else {
							assert.Equal(t, make([]uint8, env.NumActions), mr, "env %d seat %d cannot act", i, seat)
						}
					}
				}
			}
			check()
			run(t, b, 2000, check)
		})
	}
}

// Progress shaping telescopes: over an episode that starts with every piece
// in hand, the shaped return equals the win return.
func TestProgressTelescopes(t *testing.T) {
	cfg := Config{Rules: env.Standard(), Tier: obs.Compact, N: 8, Mode: Multi, Reward: RewardProgress}
	b := newStarted(t, nil, cfg)
	sum := make([][]float64, b.N())
	done := make([]bool, b.N())
	for i := range sum {
		sum[i] = make([]float64, 2)
	}
	run(t, b, 5000, func() {
		rows := b.Rows()
		for i := range b.N() {
			if done[i] {
				continue
			}
			for p := range 2 {
				sum[i][p] += float64(rows.Reward[i*2+p])
			}
			done[i] = rows.Terminated[i] == 1
		}
	})
	for i := range sum {
		require.True(t, done[i])
		assert.InDelta(t, 0, sum[i][0]+sum[i][1], 1e-4, "zero-sum")
		assert.InDelta(t, 1, math.Abs(sum[i][0]), 1e-4, "env %d: the return is the outcome", i)
	}
}

// In mode single, with the learner's seat starting (every piece in hand:
// potential 0), the shaped return equals the win return of the same
// episode, every step's reward is bounded, and shaped rewards arrive
// before the end.
func TestProgressTelescopesForTheLearner(t *testing.T) {
	returns := func(reward Reward) (sums []float64, steps []int, dense int) {
		b, err := New(Config{Rules: env.Standard(), Tier: obs.Compact, N: 8, Seat: 0, Opponent: "random", Reward: reward})
		require.NoError(t, err)
		b.SeedAll(7)
		require.NoError(t, b.Reset(nil, ResetOptions{Start: 0}))
		sums, steps = make([]float64, b.N()), make([]int, b.N())
		done := make([]bool, b.N())
		run(t, b, 5000, func() {
			rows := b.Rows()
			for i := range b.N() {
				if done[i] {
					continue
				}
				r := float64(rows.Reward[i])
				assert.LessOrEqual(t, math.Abs(r), 2.0, "a step's reward is bounded")
				sums[i] += r
				steps[i]++
				done[i] = rows.Terminated[i] == 1 || rows.Truncated[i] == 1
				if r != 0 && !done[i] {
					dense++
				}
			}
		})
		for i := range done {
			require.True(t, done[i], "env %d ended", i)
		}
		return sums, steps, dense
	}
	win, winSteps, _ := returns(RewardWin)
	progress, progressSteps, dense := returns(RewardProgress)
	assert.Equal(t, winSteps, progressSteps, "same seeds and actions, same episodes")
	for i := range win {
		assert.InDelta(t, win[i], progress[i], 1e-4, "env %d", i)
	}
	assert.Positive(t, dense, "progress rewards arrive before the end")
}

// SameStep puts the terminal row in the final rows and starts the next
// episode in the same step; MaxDecisions truncates.
func TestSameStepAndTruncation(t *testing.T) {
	b := newStarted(t, nil, Config{Rules: env.Standard(), Tier: obs.Compact, N: 4, Opponent: "random", Autoreset: SameStep, MaxDecisions: 5})
	finals := 0
	run(t, b, 200, func() {
		rows := b.Rows()
		for i := range b.N() {
			ended := rows.Terminated[i] == 1 || rows.Truncated[i] == 1
			assert.Equal(t, ended, rows.FinalToMove[i] >= 0, "env %d", i)
			cur, _, final, _ := b.Info(i)
			d := b.ObsSize()
			if !ended {
				assert.Nil(t, final)
				assert.Equal(t, make([]float32, d), rows.FinalObs[i*d:(i+1)*d], "final rows of running envs are zero")
				continue
			}
			assert.NotContains(t, rows.FinalMask[i*env.NumActions:(i+1)*env.NumActions], uint8(1), "the final row's mask")
			if rows.Truncated[i] == 1 {
				assert.Equal(t, uint32(5), final.Steps, "truncated after MaxDecisions")
				assert.Zero(t, rows.Reward[i], "truncation pays nothing")
			}
			finals++
			require.NotNil(t, final)
			assert.Equal(t, final.Episode+1, cur.Episode, "the next episode began")
			assert.LessOrEqual(t, final.Steps, uint32(5))
			assert.NotZero(t, rows.Mask[i*env.NumActions:(i+1)*env.NumActions], "the new episode's row")
		}
	})
	assert.Positive(t, finals)
}

// An env owns no opponent agent: a batch with a searching opponent holds
// its agents per worker, so its memory does not grow with the opponent's
// search size times the envs (an mcts:200 agent alone holds about 80 KB).
func TestOpponentMemoryPerWorker(t *testing.T) {
	if israce.Enabled {
		t.Skip("measures the heap of a batch stepped in one goroutine, with mcts:200 searches tenfold slower under -race")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b := newStarted(t, nil, Config{Rules: env.Standard(), Tier: obs.Compact, N: 128, Opponent: "mcts:200"})
	for range 3 {
		FirstLegal(b.Rows().Mask, b.Actions())
		require.NoError(t, b.Step(nil, false))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEnv := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(b.N())
	assert.Less(t, perEnv, int64(8<<10), "heap bytes per env")
	runtime.KeepAlive(b)
}

// Config.Bytes, what the server budgets, is within a factor of two of what
// a batch really holds.
func TestBytesEstimate(t *testing.T) {
	for _, tier := range obs.Tiers() {
		t.Run(tier.String(), func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC() // a sync.Pool's objects outlive one collection (in its victim cache)
			runtime.ReadMemStats(&before)
			b := newStarted(t, nil, Config{Rules: env.Standard(), Tier: tier, N: 512, Opponent: "random", Autoreset: SameStep, Info: true})
			for range 3 {
				FirstLegal(b.Rows().Mask, b.Actions())
				require.NoError(t, b.Step(nil, true))
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			assert.Less(t, held, 2*b.Bytes(), "held %d, estimated %d", held, b.Bytes())
			assert.Greater(t, held, b.Bytes()/2, "held %d, estimated %d", held, b.Bytes())
			runtime.KeepAlive(b)
		})
	}
}

// TestRowBytesAreTheRows checks RowBytes against the columns a step
// writes, in every mode and autoreset: the server sizes step replies by it.
func TestRowBytesAreTheRows(t *testing.T) {
	for _, cfg := range []Config{
		{Rules: env.Standard(), Tier: obs.Compact, N: 3, Opponent: "random"},
		{Rules: env.Standard(), Tier: obs.Tactical, N: 3, Mode: Multi},
		{Rules: env.Standard(), Tier: obs.Compact, N: 3, Opponent: "random", Autoreset: SameStep},
		{Rules: env.Standard(), Tier: obs.Planes, N: 2, Mode: Multi, Autoreset: SameStep},
	} {
		t.Run(cfg.Mode.String()+"/"+cfg.Autoreset.String(), func(t *testing.T) {
			b := newStarted(t, nil, cfg)
			FirstLegal(b.Rows().Mask, b.Actions())
			require.NoError(t, b.Step(nil, false))
			r := b.Rows()
			got := 4*len(r.Obs) + len(r.Mask) + 4*len(r.Reward) + len(r.Terminated) + len(r.Truncated) + len(r.ToMove)
			if cfg.Autoreset == SameStep {
				got += 4*len(r.FinalObs) + len(r.FinalMask) + len(r.FinalToMove)
			}
			assert.Equal(t, got, cfg.N*cfg.RowBytes(b.ObsSize()))
		})
	}
}

// TestIllegalPenalty: under Illegal penalty an illegal action ends its
// env's episode with -1 for the seat that played it and marks the info;
// the other envs play on, and the ended env ignores its next action.
func TestIllegalPenalty(t *testing.T) {
	for _, mode := range []Mode{Single, Multi} {
		t.Run(mode.String(), func(t *testing.T) {
			b := newStarted(t, nil, Config{Rules: env.Standard(), Tier: obs.Compact, N: 2, Opponent: "random", Mode: mode, Illegal: IllegalPenalty, Info: true})
			rows := b.Rows()
			actor := int(rows.ToMove[0])
			FirstLegal(rows.Mask, b.Actions())
			for a := range env.NumActions {
				if rows.Mask[a] == 0 {
					b.Actions()[0] = int32(a)
					break
				}
			}
			require.NoError(t, b.CheckActions(), "penalised, not refused")
			require.NoError(t, b.Step(nil, true))
			assert.Equal(t, []uint8{1, 0}, rows.Terminated)
			cur, _, _, _ := b.Info(0)
			assert.True(t, cur.Illegal)
			cur, _, _, _ = b.Info(1)
			assert.False(t, cur.Illegal)
			want := make([]float32, 2*b.Config().RewardWidth())
			if mode == Single {
				want[0] = -1
			} else {
				want[actor] = -1
			}
			assert.Equal(t, want, rows.Reward)
			FirstLegal(rows.Mask, b.Actions())
			b.Actions()[0] = 0
			require.NoError(t, b.CheckActions())
			require.NoError(t, b.Step(nil, false), "the ended env ignores its action")
			assert.Equal(t, uint8(0), rows.Terminated[0])
		})
	}
}
