package grade

import (
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
		got.Median, got.P90, got.Mean, got.QuantileError = want.Median, want.P90, want.Mean, 0
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
