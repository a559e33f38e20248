package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/protocol"
)

// TestAZOpponent: every shipped agent (az, ...) needs no network folder;
// under rules its network was not trained for, make refuses it
// (bad_request, naming the rules it knows) instead of failing at its first
// move.
func TestAZOpponent(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	for _, name := range nnet.ShippedNames() {
		t.Run(name, func(t *testing.T) {
			s, err := nnet.ShippedNet(name)
			require.NoError(t, err)
			trained := s.Rules.String()
			for _, spec := range []string{name, name + ",sims=4"} {
				h := makeHandle(t, c, map[string]any{"n": 2, "rules": trained, "opponent": spec})
				_, err := c.Call("reset", map[string]any{"handle": h, "seed": 1})
				require.NoError(t, err, spec)
			}
			for _, rules := range []string{"players=3", "kata", "standard"} {
				if rules == trained {
					continue
				}
				for _, spec := range []string{name, name + ",sims=8"} {
					_, err := c.Call("make", map[string]any{"n": 1, "rules": rules, "opponent": spec})
					require.Error(t, err, "%s under %s", spec, rules)
					assert.Equal(t, protocol.CodeBadRequest, errCode(err))
					assert.Contains(t, err.Error(), `make: params.opponent: `)
					assert.Contains(t, err.Error(), `agent `+name+` plays only the rules its network was trained for, "`+trained+`"`)
				}
			}
		})
	}
	_, err := c.Call("make", map[string]any{"n": 1, "rules": "players=3", "opponent": "mcts:8"})
	assert.NoError(t, err, "other agents play any rules")
}
