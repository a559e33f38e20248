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
