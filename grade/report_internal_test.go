package grade

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// someLosses returns n losses like a grade's: a third exactly 0, the rest
// spread over five orders of magnitude up to 2.
func someLosses(n int, seed uint64) []Graded {
	rng := rand.New(rand.NewPCG(seed, 1))
	gs := make([]Graded, n)
	for i := range gs {
		gs[i].Game, gs[i].Decision = i/40, i%40
		switch rng.IntN(3) {
		case 0:
		case 1:
			gs[i].Loss = rng.Float64() * 0.05
		default:
			gs[i].Loss = 2 * rng.Float64() * rng.Float64() * rng.Float64() * rng.Float64()
		}
		if i%17 == 0 {
			gs[i].Forced, gs[i].Loss = true, 0
		}
	}
	return gs
}

// Past maxExact decisions the report keeps no loss: its figures are the
// exact report's, but for the median and the 90th percentile, which are
// within QuantileAccuracy of them and say so.
func TestSummerBoundsItsMemory(t *testing.T) {
	for _, n := range []int{1200, 5000, 40_000} {
		gs := someLosses(n, uint64(n))
		exact := newSummer("mc:5", 20)
		bounded := newSummer("mc:5", 20)
		bounded.maxExact = 1000
		for i := 0; i < len(gs); i += 40 {
			exact.add(gs[i:min(i+40, len(gs))])
			bounded.add(gs[i:min(i+40, len(gs))])
		}
		want, got := exact.report(n/40), bounded.report(n/40)
		require.Zero(t, want.QuantileError, "exact")
		assert.Equal(t, QuantileAccuracy, got.QuantileError)
		assert.Nil(t, bounded.losses, "no loss kept")
		assert.Len(t, bounded.sk.counts, sketchBins)
		assert.InEpsilon(t, want.Median, got.Median, QuantileAccuracy)
		assert.InEpsilon(t, want.P90, got.P90, QuantileAccuracy)
		assert.InEpsilon(t, want.Mean, got.Mean, 1e-12)
		require.NotNil(t, got.MeanLow)
		assert.InEpsilon(t, *want.MeanLow, *got.MeanLow, 1e-12, "the interval around the mean")
		assert.InEpsilon(t, *want.MeanHigh, *got.MeanHigh, 1e-12)
		got.Median, got.P90, got.Mean, got.QuantileError = want.Median, want.P90, want.Mean, 0
		got.MeanLow, got.MeanHigh = want.MeanLow, want.MeanHigh
		assert.Equal(t, want, got, "every other figure exact")
	}
}

// A report of MaxExactLosses decisions is exact; one more and it holds the
// sketch's fixed bins, whatever comes after.
func TestSummerSwitchesAtMaxExactLosses(t *testing.T) {
	s := newSummer("mc:5", 0)
	one := []Graded{{Loss: 0.25}}
	for range MaxExactLosses {
		s.add(one)
	}
	require.False(t, s.sketched)
	assert.Zero(t, s.report(1).QuantileError)
	s.add(one)
	require.True(t, s.sketched)
	for range MaxExactLosses {
		s.add(one)
	}
	assert.Nil(t, s.losses)
	r := s.report(1)
	assert.Equal(t, 2*MaxExactLosses+1, r.Decisions)
	assert.InEpsilon(t, 0.25, r.Median, QuantileAccuracy)
	assert.Equal(t, 0.25, r.Max)
}

// Every loss of a bin reads back within QuantileAccuracy.
func TestSketchAccuracy(t *testing.T) {
	var sk sketch
	for _, l := range []float64{2e-9, 1e-6, 0.001, 0.0199, 0.02, 0.1, 0.5, 1, 1.999, 2} {
		k := sk.bin(l)
		assert.InEpsilon(t, l, sk.value(k), QuantileAccuracy*1.0001, "loss %g", l)
	}
	assert.Equal(t, 0, sk.bin(1e-12), "below sketchMin: the first bin")
	assert.Equal(t, sketchBins-1, sk.bin(100), "above the range: the last bin")
}

// The interval's streamed sums give the clustered standard error that the
// games' (loss, decisions) pairs give in two passes, whether the games come
// one at a time (as Run adds them), in chunks, or all at once.
func TestIntervalStreamingIsBatch(t *testing.T) {
	gs := someLosses(4000, 3) // 100 games of 40 decisions, some forced
	// The batch formula: the mean first, then the residuals.
	type game struct{ l, d float64 }
	byGame := make([]game, 100)
	for _, g := range gs {
		if !g.Forced {
			byGame[g.Game].l += g.Loss
			byGame[g.Game].d++
		}
	}
	var sl, sd float64
	for _, g := range byGame {
		sl, sd = sl+g.l, sd+g.d
	}
	m, resid := sl/sd, 0.0
	for _, g := range byGame {
		resid += (g.l - m*g.d) * (g.l - m*g.d)
	}
	want := math.Sqrt(100.0 / 99 * resid / (sd * sd))

	for _, chunk := range []int{40, 120, 4000} {
		t.Run(fmt.Sprintf("%d decisions at a time", chunk), func(t *testing.T) {
			s := newSummer("x", 0)
			for i := 0; i < len(gs); i += chunk {
				s.add(gs[i:min(i+chunk, len(gs))])
			}
			assert.Equal(t, 100, s.games)
			r := s.report(100)
			require.NotNil(t, r.MeanSE)
			assert.InEpsilon(t, want, *r.MeanSE, 1e-12)
			assert.InEpsilon(t, m, r.Mean, 1e-12)
		})
	}
	t.Run("past MaxExactLosses", func(t *testing.T) { // the sketch does not touch the interval
		exact, bounded := newSummer("x", 0), newSummer("x", 0)
		bounded.maxExact = 100
		for i := 0; i < len(gs); i += 40 {
			exact.add(gs[i : i+40])
			bounded.add(gs[i : i+40])
		}
		e, b := exact.report(100), bounded.report(100)
		require.Equal(t, QuantileAccuracy, b.QuantileError)
		assert.InEpsilon(t, *e.MeanSE, *b.MeanSE, 1e-12)
		assert.InEpsilon(t, *e.MeanHigh, *b.MeanHigh, 1e-12)
	})
}
