package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cvCase is a case of testdata/control_variate.json, which the Python
// package's control_variate is held to as well.
type cvCase struct {
	Name     string    `json:"name"`
	Outcomes []float64 `json:"outcomes"`
	Luck     []float64 `json:"luck"`
	Folds    []int     `json:"folds"`
	Want     *struct {
		Mean, Low, High float64
		Coef            []float64
		VarianceRatio   *float64 `json:"variance_ratio"`
		MeanLuck        float64  `json:"mean_luck"`
		Adjusted        bool
	} `json:"want"`
}

func TestControlVariateTable(t *testing.T) {
	b, err := os.ReadFile("testdata/control_variate.json")
	require.NoError(t, err)
	var table struct{ Cases []cvCase }
	require.NoError(t, json.Unmarshal(b, &table))
	require.NotEmpty(t, table.Cases)
	for _, c := range table.Cases {
		t.Run(c.Name, func(t *testing.T) {
			require.Len(t, c.Luck, len(c.Outcomes))
			require.Len(t, c.Folds, len(c.Outcomes))
			var cv ControlVariate
			for i, o := range c.Outcomes {
				cv.Add(c.Folds[i], o, c.Luck[i])
			}
			e, ok := cv.Estimate(Z95)
			if c.Want == nil {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			w := c.Want
			assert.InDelta(t, w.Mean, e.Mean, 1e-9)
			assert.InDelta(t, w.Low, e.Low, 1e-9)
			assert.InDelta(t, w.High, e.High, 1e-9)
			assert.InDeltaSlice(t, w.Coef, e.Coef[:], 1e-9)
			if w.VarianceRatio == nil {
				assert.True(t, math.IsInf(e.VarianceRatio, 1), "no variance left: %v", e.VarianceRatio)
			} else {
				assert.InDelta(t, *w.VarianceRatio, e.VarianceRatio, 1e-9)
			}
			assert.InDelta(t, w.MeanLuck, e.MeanControl, 1e-9)
			assert.Equal(t, w.Adjusted, e.Adjusted)
		})
	}
}

// cvMatch draws n synthetic games (folds by pairs of games, as a match's
// seed groups) whose luck l is -1, -0.5, 0.5 or 1 (mean 0) and whose
// outcome is o = l + l² - 0.625 + noise, of mean exactly 0: the luck
// explains most of the outcome, partly nonlinearly, so that a coefficient
// fitted on the games it adjusts correlates with their mean luck.
func cvMatch(r *rand.Rand, n int, add func(fold int, o, l float64)) {
	for i := range n {
		l := [...]float64{-1, -0.5, 0.5, 1}[r.IntN(4)]
		add(i/2%2, l+l*l-0.625+r.NormFloat64()*0.3, l)
	}
}

// TestControlVariateUnbiased: over many small synthetic matches of known
// mean outcome 0, the mean of the cross-fitted estimates is 0 within its
// standard error, where the same coefficient fitted in-sample (on all the
// games it adjusts) is biased by many standard errors: the test fails if
// the folds are dropped.
func TestControlVariateUnbiased(t *testing.T) {
	const matches, games = 20000, 32
	r := rand.New(rand.NewPCG(1, 2))
	var cross, inSample, crossSq, inSq float64
	for range matches {
		var cv ControlVariate
		var so, sl, sol, sll float64
		cvMatch(r, games, func(k int, o, l float64) {
			cv.Add(k, o, l)
			so, sl, sol, sll = so+o, sl+l, sol+o*l, sll+l*l
		})
		e, ok := cv.Estimate(Z95)
		require.True(t, ok)
		m := e.Mean
		cross += m
		crossSq += m * m
		b := 0.0
		if sll > 0 {
			b = sol / sll
		}
		x := (so - b*sl) / games
		inSample += x
		inSq += x * x
		assert.LessOrEqual(t, e.High-e.Low, 2*Z95*math.Sqrt(rawVariance(&cv)/games)+1e-12, "never wider than raw")
	}
	se := func(sum, sq float64) float64 { m := sum / matches; return math.Sqrt((sq/matches - m*m) / matches) }
	crossMean, inMean := cross/matches, inSample/matches
	t.Logf("cross-fitted %.5f ± %.5f, in-sample %.5f ± %.5f", crossMean, se(cross, crossSq), inMean, se(inSample, inSq))
	assert.Less(t, math.Abs(crossMean), 3*se(cross, crossSq), "cross-fitted mean %.4f", crossMean)
	assert.Greater(t, math.Abs(inMean), 6*se(inSample, inSq), "the in-sample fit is biased: %.4f", inMean)
}

func rawVariance(cv *ControlVariate) float64 {
	n := float64(cv.Games())
	s := cv.folds[0].o.float() + cv.folds[1].o.float()
	s2 := cv.folds[0].oo.float() + cv.folds[1].oo.float()
	return (s2 - s*s/n) / (n - 1)
}

// TestControlVariateNeverWorse: luck unrelated to the outcomes leaves the
// raw result, with ratio 1, where subtracting it (coefficient 1) would widen
// the interval.
func TestControlVariateNeverWorse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var cv ControlVariate
	var raw, naive []float64
	for i := range 400 {
		o, l := float64(2*r.IntN(2)-1), r.NormFloat64()*0.5
		cv.Add(i/2%2, o, l)
		raw, naive = append(raw, o), append(naive, o-l)
	}
	e, ok := cv.Estimate(Z95)
	require.True(t, ok)
	require.Greater(t, sampleVar(naive), sampleVar(raw), "coefficient 1 adds variance here")
	assert.LessOrEqual(t, e.High-e.Low, 2*Z95*math.Sqrt(sampleVar(raw)/400)+1e-12)
	assert.GreaterOrEqual(t, e.VarianceRatio, 1.0)
	if !e.Adjusted {
		assert.Equal(t, [Folds]float64{}, e.Coef)
		assert.Equal(t, 1.0, e.VarianceRatio)
		assert.InDelta(t, mean(raw), e.Mean, 1e-12)
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func sampleVar(x []float64) float64 {
	m, s := mean(x), 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}

// TestControlVariateOrderFree: the estimate is the same bits whatever order
// the games are added in (eval's games end in any order).
func TestControlVariateOrderFree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	type game struct {
		k    int
		o, l float64
	}
	var gs []game
	cvMatch(r, 1000, func(k int, o, l float64) { gs = append(gs, game{k, o, l * (1 + r.Float64()*1e-3)}) })
	var a, b ControlVariate
	for _, g := range gs {
		a.Add(g.k, g.o, g.l)
	}
	for _, i := range r.Perm(len(gs)) {
		b.Add(gs[i].k, gs[i].o, gs[i].l)
	}
	ea, _ := a.Estimate(Z95)
	eb, _ := b.Estimate(Z95)
	assert.Equal(t, ea, eb)
}

func TestFixedSum(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"small negative", []float64{-5.25}, -5.25},
		{"through zero", []float64{0.5, -1.75, 0.25}, -1},
		{"large", []float64{1 << 29, 1 << 29, 1 << 29, -0.5}, 3*(1<<29) - 0.5},
		{"clamped", []float64{1e300, math.Inf(-1)}, 0},
		{"NaN counts as 0", []float64{math.NaN(), 2}, 2},
		{"the grid", []float64{0x1p-33, 0x1p-31}, 0x1p-31 + 0x1p-32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s fixedSum
			for _, x := range tt.in {
				s.add(x)
			}
			assert.Equal(t, tt.want, s.float())
		})
	}
}
