package grade_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/grade"
	"github.com/yutenv/yutenv/stats"
)

// games returns the graded decisions of games whose losses are given, a
// game a slice; a negative loss stands for a forced decision.
func games(losses ...[]float64) []grade.Graded {
	var gs []grade.Graded
	for g, ls := range losses {
		for _, l := range ls {
			gs = append(gs, grade.Graded{Game: g, Loss: max(l, 0), Forced: l < 0})
		}
	}
	return gs
}

// The clustered standard error of hand-computed examples: with game sums
// (L_g, D_g), m = ΣL/ΣD and se² = G/(G−1)·Σ(L_g − m·D_g)²/(ΣD)².
func TestMeanLossIntervalByHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gs     []grade.Graded
		games  int
		mean   float64
		se     float64 // NaN: no interval
		lowCut bool    // the interval's low end raised to 0
	}{
		// (0.4, 2), (0.6, 3): m = 1/5, residuals 0 and 0.
		{"proportional games", games([]float64{0.1, 0.3}, []float64{0.2, 0.2, 0.2}), 2, 0.2, 0, false},
		// (0.1, 1), (0.4, 2): m = 1/6, residuals ∓1/15, se² = 2·(2/225)/9.
		{"two games", games([]float64{0.1}, []float64{0.3, 0.1}), 2, 1.0 / 6, 2.0 / 45, false},
		// (0.4, 2), (0, 1), (0.6, 3): m = 1/6, residuals 1/15, −1/6, 1/10,
		// Σ = 38/900, se² = 3/2·(38/900)/36 = 57/32400.
		{"three games", games([]float64{0.1, 0.3}, []float64{0}, []float64{0.2, 0.2, 0.2}), 3, 1.0 / 6, math.Sqrt(57) / 180, false},
		// Forced decisions are left out, and a game of forced ones only
		// counts as a game of no graded decision: G = 3, se² = 3/2·(2/225)/9.
		{"forced left out", games([]float64{0.1, -1}, []float64{-1, 0.3, 0.1}, []float64{-1}), 3, 1.0 / 6, 1 / math.Sqrt(675), false},
		// Games past those of the decisions have no graded decision.
		{"games without decisions", games([]float64{0.1}, []float64{0.3, 0.1}), 3, 1.0 / 6, 1 / math.Sqrt(675), false},
		// (1, 1), (0, 9): m = 0.1, residuals ±0.9, se² = 2·1.62/100.
		{"low end at 0", games([]float64{1}, []float64{0, 0, 0, 0, 0, 0, 0, 0, 0}), 2, 0.1, 0.18, true},
		{"every loss 0", games([]float64{0, 0}, []float64{0}), 2, 0, 0, false},
		{"one game", games([]float64{0.1, 0.3}), 1, 0.2, math.NaN(), false},
		{"one game with decisions", games([]float64{0.1, 0.3}, []float64{-1}), 2, 0.2, math.NaN(), false},
		{"no decisions", nil, 4, 0, math.NaN(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := grade.Summarize(tc.gs, "x", tc.games, 0)
			assert.InDelta(t, tc.mean, r.Mean, 1e-15)
			if math.IsNaN(tc.se) {
				assert.Nil(t, r.MeanSE)
				assert.Nil(t, r.MeanLow)
				assert.Nil(t, r.MeanHigh)
				return
			}
			require.NotNil(t, r.MeanSE)
			require.NotNil(t, r.MeanLow)
			require.NotNil(t, r.MeanHigh)
			assert.InDelta(t, tc.se, *r.MeanSE, 1e-15)
			assert.InDelta(t, r.Mean+stats.Z95*tc.se, *r.MeanHigh, 1e-15)
			if tc.lowCut {
				assert.Zero(t, *r.MeanLow)
			} else {
				assert.InDelta(t, r.Mean-stats.Z95*tc.se, *r.MeanLow, 1e-15)
			}
		})
	}
}

// syntheticGames draws games whose decisions are correlated within a game:
// game g's losses scale with its own factor u_g (uniform in [0.1, 1.9]),
// its decisions number 5 to 34, and a decision loses 0 with probability
// 0.4, else u_g·0.05·E (E exponential, mean 1): the true mean loss is 0.03.
func syntheticGames(rng *rand.Rand, n int) []grade.Graded {
	var gs []grade.Graded
	for g := range n {
		u := 0.1 + 1.8*rng.Float64()
		for range 5 + rng.IntN(30) {
			l := 0.0
			if rng.Float64() >= 0.4 {
				l = u * 0.05 * rng.ExpFloat64()
			}
			gs = append(gs, grade.Graded{Game: g, Loss: l})
		}
	}
	return gs
}

// The 95% interval covers the true mean about 95% of the time, where an
// interval that took the decisions as independent would cover it far less.
func TestMeanLossIntervalCoverage(t *testing.T) {
	const runs, games, truth = 600, 100, 0.03
	rng := rand.New(rand.NewPCG(7, 11))
	covered, naive := 0, 0
	for range runs {
		gs := syntheticGames(rng, games)
		r := grade.Summarize(gs, "x", games, 0)
		require.NotNil(t, r.MeanSE)
		if *r.MeanLow <= truth && truth <= *r.MeanHigh {
			covered++
		}
		v := 0.0 // the decisions' variance, as if independent
		for _, g := range gs {
			v += (g.Loss - r.Mean) * (g.Loss - r.Mean)
		}
		se := math.Sqrt(v / float64(len(gs)-1) / float64(len(gs)))
		if math.Abs(r.Mean-truth) <= stats.Z95*se {
			naive++
		}
	}
	rate := float64(covered) / runs
	t.Logf("coverage %.3f clustered by game, %.3f taking decisions as independent", rate, float64(naive)/runs)
	assert.InDelta(t, 0.95, rate, 0.03, "clustered by game") // 3.4 binomial standard deviations of 600 runs
	assert.Less(t, float64(naive)/runs, 0.85, "decisions taken as independent")
}

// A constructed pair: 0.0253 ± se 0.0012 and 0.0274 ± se 0.0015 over 200
// games each differ by 0.0021 ± 1.96·√(0.0012² + 0.0015²) = ± 0.00377: not
// separated; it takes n = ⌈1.96²·200·(0.0012² + 0.0015²)/0.0021²⌉ = 643
// games each.
func TestSeparate(t *testing.T) {
	report := func(mean, se float64, games int) *grade.Report {
		return &grade.Report{Mean: mean, MeanSE: &se, Games: games, Decisions: 20 * games}
	}
	for _, tc := range []struct {
		name      string
		a, b      *grade.Report
		separated bool
		games     int // 0: none
	}{
		{"close", report(0.0253, 0.0012, 200), report(0.0274, 0.0015, 200), false, 643},
		{"swapped", report(0.0274, 0.0015, 200), report(0.0253, 0.0012, 200), false, 643},
		// Per-game variances 0.0012²·200 and 0.0015²·800 (the same agent
		// over four times the games has half the se).
		{"unequal games", report(0.0253, 0.0012, 200), report(0.0274, 0.00075, 800), false, 643},
		// 0.0147 and 0.0210, se 0.001 each: 0.0063 > 1.96·0.001414.
		{"separated", report(0.0147, 0.001, 200), report(0.0210, 0.001, 200), true, 39},
		{"tie", report(0.02, 0.001, 200), report(0.02, 0.002, 200), false, 0},
		{"past MaxInt32 games", report(0.02, 0.001, 200), report(0.02+1e-9, 0.001, 200), false, 0},
		{"no spread", report(0.01, 0, 10), report(0.02, 0, 10), true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := grade.Separate(tc.a, tc.b)
			require.NoError(t, err)
			d := tc.b.Mean - tc.a.Mean
			half := stats.Z95 * math.Hypot(*tc.a.MeanSE, *tc.b.MeanSE)
			assert.InDelta(t, d, s.Difference, 1e-15)
			assert.InDelta(t, d-half, s.Low, 1e-15)
			assert.InDelta(t, d+half, s.High, 1e-15)
			assert.Equal(t, tc.separated, s.Separated)
			if tc.games == 0 {
				assert.Nil(t, s.GamesToSeparate)
				return
			}
			require.NotNil(t, s.GamesToSeparate)
			n := *s.GamesToSeparate
			assert.Equal(t, tc.games, n)
			// n is the least number of games (at least 2) whose se separates d.
			perGame := *tc.a.MeanSE**tc.a.MeanSE*float64(tc.a.Games) + *tc.b.MeanSE**tc.b.MeanSE*float64(tc.b.Games)
			assert.LessOrEqual(t, stats.Z95*math.Sqrt(perGame/float64(n)), math.Abs(d)*(1+1e-12))
			if n > 2 {
				assert.Greater(t, stats.Z95*math.Sqrt(perGame/float64(n-1)), math.Abs(d))
			}
		})
	}
	t.Run("no interval", func(t *testing.T) {
		one := grade.Summarize(games([]float64{0.1, 0.2}), "x", 1, 0)
		_, err := grade.Separate(one, one)
		require.ErrorIs(t, err, grade.ErrNoInterval)
		assert.Equal(t, "no interval of the mean loss: 1 games, 2 graded decisions (it takes two games with a graded decision each)", err.Error())
	})
}
