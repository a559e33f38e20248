package env_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// TestApplyToMatchesApply plays random games of every property rule set twice
// in lock step, once with Apply/ApplyThrow and once with ApplyTo/ApplyThrowTo
// reusing one Event, and checks that the states and events stay equal, and
// that illegal input through the To forms leaves the state and *ev unchanged.
func TestApplyToMatchesApply(t *testing.T) {
	games := uint64(20)
	if trimmed() {
		games = 5
	}
	for _, spec := range propertyRules {
		t.Run(spec, func(t *testing.T) {
			r, err := env.ParseRules(spec)
			require.NoError(t, err)
			for g := range games {
				a, err := env.New(r, g, 0)
				require.NoError(t, err)
				b := a
				rng := rand.New(rand.NewPCG(g, 7))
				var ev env.Event
				var buf [env.NumActions]env.Action
				for step := 0; step < 4*maxDecisions && !a.IsOver(); step++ {
					// Illegal input first: nothing may change.
					before, evBefore := b, ev
					if a.IsChance() {
						require.Error(t, b.ApplyTo(0, &ev))
						require.Error(t, b.ApplyThrowTo(env.NumThrows, &ev))
					} else {
						require.Error(t, b.ApplyThrowTo(env.Do, &ev))
						require.Error(t, b.ApplyTo(env.NumActions, &ev))
					}
					// Plain comparisons, testify only to report: its reflection
					// was most of the test's time.
					if b != before || ev != evBefore {
						require.Equal(t, before, b)
						require.Equal(t, evBefore, ev)
					}

					var want env.Event
					if a.IsChance() {
						outs := a.ChanceOutcomes(nil)
						th := outs[rng.IntN(len(outs))].Throw
						want, err = a.ApplyThrow(th)
						require.NoError(t, err)
						require.NoError(t, b.ApplyThrowTo(th, &ev))
					} else {
						legal := a.LegalActions(buf[:0])
						act := legal[rng.IntN(len(legal))]
						want, err = a.Apply(act)
						require.NoError(t, err)
						require.NoError(t, b.ApplyTo(act, &ev))
					}
					if ev != want || a != b {
						assert.Equal(t, want, ev)
						require.Equal(t, a, b)
					}
				}
			}
		})
	}
}
