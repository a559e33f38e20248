package env_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

func TestThrowTable(t *testing.T) {
	// The probability column of RULES.md at p = 0.6.
	on, off := env.ThrowProbabilities(0.6, true), env.ThrowProbabilities(0.6, false)
	assert.InDeltaSlice(t, []float64{0.0384, 0.1152, 0.3456, 0.3456, 0.1296, 0.0256}, on[:], 1e-15)
	// Without back-do the marked stick counts as do: 0.0384 + 0.1152.
	assert.InDeltaSlice(t, []float64{0, 0.1536, 0.3456, 0.3456, 0.1296, 0.0256}, off[:], 1e-15)
	for _, p := range []float64{env.MinFlatP, 0.6, env.MaxFlatP} {
		for _, backDo := range []bool{true, false} {
			var sum float64
			for _, x := range env.ThrowProbabilities(p, backDo) {
				sum += x
			}
			assert.InDelta(t, 1, sum, 1e-15, "p=%v back_do=%v", p, backDo)
		}
	}
	assert.Equal(t, env.ThrowProbabilities(0.55, false), envtest.Rules(t, "flat_prob=0.55,back_do=off").Probabilities())

	for th, want := range []struct {
		name  string
		steps int
		bonus bool
	}{{"back-do", -1, false}, {"do", 1, false}, {"gae", 2, false}, {"geol", 3, false}, {"yut", 4, true}, {"mo", 5, true}} {
		tt := env.Throw(th)
		assert.Equal(t, want.name, tt.String())
		assert.Equal(t, want.steps, tt.Steps())
		assert.Equal(t, want.bonus, tt.Bonus())
		parsed, err := env.ParseThrow(want.name)
		require.NoError(t, err)
		assert.Equal(t, tt, parsed)
	}
	_, err := env.ParseThrow("seven")
	assert.ErrorIs(t, err, env.ErrBadInput)
}

// sampledThrows plays seeded games with the state's own generator and counts
// every throw until n have been made.
func sampledThrows(t *testing.T, spec string, n int) [env.NumThrows]float64 {
	t.Helper()
	var counts [env.NumThrows]float64
	var buf [env.NumActions]env.Action
	total := 0
	for seed := uint64(1); total < n; seed++ {
		s, err := env.New(envtest.Rules(t, spec), seed, env.AnySeat)
		require.NoError(t, err)
		for !s.IsOver() && total < n {
			if s.IsChance() {
				ev, err := s.SampleThrow()
				require.NoError(t, err)
				counts[ev.Throw]++
				total++
				continue
			}
			legal := s.LegalActions(buf[:0])
			_, err := s.Apply(legal[total%len(legal)])
			require.NoError(t, err)
		}
	}
	return counts
}

func TestThrowSampling(t *testing.T) {
	// 0.1% critical values of chi-square for 5 and 4 degrees of freedom. The
	// seeds are fixed, so the statistic is the same on every run and machine.
	const crit5, crit4 = 20.52, 18.47
	n := 200000
	switch {
	case israce.Enabled:
		n = 20000 // frequencies of throws in one goroutine: a tenth under -race
	case testing.Short():
		n = 50000
	}
	for _, tc := range []struct {
		spec string
		crit float64
	}{{"standard", crit5}, {"back_do=off", crit4}, {"flat_prob=0.5", crit5}, {"flat_prob=0.65,back_do=off", crit4}} {
		t.Run(tc.spec, func(t *testing.T) {
			r := envtest.Rules(t, tc.spec)
			counts := sampledThrows(t, tc.spec, n)
			chi2 := 0.0
			for th, p := range r.Probabilities() {
				if p == 0 {
					assert.Zero(t, counts[th], "%v has probability 0 but was thrown", env.Throw(th))
					continue
				}
				e := p * float64(n)
				chi2 += (counts[th] - e) * (counts[th] - e) / e
			}
			t.Logf("chi-square %.2f over %d throws", chi2, n)
			assert.Less(t, chi2, tc.crit, "counts %v", counts)
		})
	}
}

func TestChanceOutcomes(t *testing.T) {
	s, err := env.New(env.Standard(), 1, 0)
	require.NoError(t, err)
	got := s.ChanceOutcomes(nil)
	require.Len(t, got, env.NumThrows)
	for i, o := range got {
		assert.Equal(t, env.Throw(i), o.Throw)
		assert.Equal(t, env.ThrowProbabilities(0.6, true)[i], o.Prob)
	}
	_, err = s.ApplyThrow(gae)
	require.NoError(t, err)
	assert.Empty(t, s.ChanceOutcomes(nil), "no chance outcomes at a decision")
}
