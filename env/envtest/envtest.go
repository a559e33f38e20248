// Package envtest holds the helpers the engine's tests and its callers'
// tests share, so each states a test's rules in one line:
//
//	func TestTwoPieces(t *testing.T) {
//		r := envtest.Rules(t, "pieces=2")
//		s, err := env.New(r, 1, 0)
//		...
//	}
package envtest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// Rules parses rules written as env.ParseRules takes them ("standard",
// "pieces=2,players=3", ...), failing the test on an error.
func Rules(t testing.TB, spec string) env.Rules {
	t.Helper()
	r, err := env.ParseRules(spec)
	require.NoError(t, err, spec)
	return r
}

// Positions plays games of the standard rules from seeds 1, 2, ..., act
// choosing every move, and returns n of their decision states with two or
// more legal actions (the fourth decision of a game and every seventh after
// it), so a benchmark measures typical positions, not only the opening.
func Positions(t testing.TB, n int, act func(*env.State) (env.Action, error)) []env.State {
	t.Helper()
	var out []env.State
	for seed := uint64(1); len(out) < n; seed++ {
		s, err := env.New(env.Standard(), seed, env.AnySeat)
		require.NoError(t, err)
		for k := 0; !s.IsOver() && len(out) < n; k++ {
			s.Advance()
			if s.IsOver() {
				break
			}
			if k%7 == 3 && s.NumLegalActions() > 1 {
				out = append(out, s)
			}
			a, err := act(&s)
			require.NoError(t, err)
			_, err = s.Apply(a)
			require.NoError(t, err)
		}
	}
	return out
}
