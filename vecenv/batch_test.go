package vecenv

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
)

// newStarted returns a batch of cfg reset with seeds 0..N-1.
func newStarted(t testing.TB, p *Pool, cfg Config) *Batch {
	t.Helper()
	b, err := New(cfg)
	require.NoError(t, err)
	b.SeedAll(0)
	require.NoError(t, b.Reset(p, ResetOptions{Start: env.AnySeat}))
	return b
}

// TestInternalErrorIsContained makes every range of a batch panic, inline
// and on a worker, and checks the panic becomes an env error, not a crash,
// and the pool keeps working.
func TestInternalErrorIsContained(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	b, err := New(Config{Rules: env.Standard(), Tier: obs.Compact, N: minSplit, Opponent: "random"})
	require.NoError(t, err)
	p.run(panicker{b}, minSplit, &b.wg)
	assert.ErrorContains(t, b.firstError(), "panic: boom")
	require.NoError(t, b.Reset(p, ResetOptions{Start: env.AnySeat}), "the pool survived")
}

// panicker panics in every range.
type panicker struct{ *Batch }

func (p panicker) runRange(lo, hi int) { panic(errors.New("boom")) }

// The same seeds and actions give the same rows, whether the envs run on a
// pool's workers or in the caller's goroutine.
func TestPoolDoesNotChangeGames(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	cfg := Config{Rules: env.Standard(), Tier: obs.Tactical, N: minSplit + 2, Opponent: "greedy", Reward: RewardProgress, Autoreset: SameStep}
	a, b := newStarted(t, p, cfg), newStarted(t, nil, cfg)
	for step := range israce.Scale(80, 20) { // a batch large enough to split: fewer steps under -race
		requireSameRows(t, a, b, step) // not require.Equal: its reflection was nearly all the test's time, 24 s under -race
		FirstLegal(a.Rows().Mask, a.Actions())
		copy(b.Actions(), a.Actions())
		require.NoError(t, a.CheckActions())
		require.NoError(t, a.Step(p, false))
		require.NoError(t, b.Step(nil, false))
	}
}

func TestCheckActions(t *testing.T) {
	b := newStarted(t, nil, Config{Rules: env.Standard(), Tier: obs.Compact, N: 2, Mode: Multi})
	FirstLegal(b.Rows().Mask, b.Actions())
	require.NoError(t, b.CheckActions())
	b.Actions()[1] = env.NumActions
	assert.ErrorIs(t, b.CheckActions(), ErrActionRange)
	FirstLegal(b.Rows().Mask, b.Actions())
	for a := range int32(env.NumActions) {
		if b.Rows().Mask[a] == 0 {
			b.Actions()[0] = a
			break
		}
	}
	assert.ErrorIs(t, b.CheckActions(), ErrIllegalAction)
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Rules: env.Standard(), N: 0},
		{Rules: env.Standard(), N: 1, Seat: 2},
		{Rules: env.Standard(), N: 1, Tier: obs.Tier(9)},
		{Rules: env.Rules{}, N: 1},
	} {
		_, err := New(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	b, err := New(Config{Rules: env.Standard(), N: 1, Opponent: "random"})
	require.NoError(t, err)
	assert.ErrorIs(t, b.Step(nil, false), ErrNeedsReset)
	assert.ErrorIs(t, b.Observe(0, make([]float32, b.ObsSize()), make([]uint8, env.NumActions)), ErrNeedsReset)
}

var benchSizes = []int{1, 64, 256, 1024}

// BenchmarkBatchStep measures stepping a batch in process, without the
// socket: Apply, opponents' replies, throws, observation and mask of N
// envs, parallel over a worker pool. Allocations are per op (N env steps).
func BenchmarkBatchStep(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			p2 := NewPool(runtime.GOMAXPROCS(0))
			defer p2.Close()
			bt := newStarted(b, p2, ReferenceConfig(n))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				FirstLegal(bt.Rows().Mask, bt.Actions())
				if err := bt.Step(p2, false); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "envsteps/s")
		})
	}
}
