package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/protocol"
)

// TestAZOpponent: the shipped agent az needs no network folder; under rules
// its network was not trained for, make refuses it (bad_request, naming the
// rules it knows) instead of failing at its first move.
func TestAZOpponent(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	for _, spec := range []string{"az", "az,sims=4"} {
		h := makeHandle(t, c, map[string]any{"n": 2, "opponent": spec})
		_, err := c.Call("reset", map[string]any{"handle": h, "seed": 1})
		require.NoError(t, err, spec)
	}
	tests := []struct{ rules, opponent string }{
		{"players=3", "az"},
		{"kata", "az,sims=8"},
	}
	for _, tt := range tests {
		t.Run(tt.rules, func(t *testing.T) {
			_, err := c.Call("make", map[string]any{"n": 1, "rules": tt.rules, "opponent": tt.opponent})
			require.Error(t, err)
			assert.Equal(t, protocol.CodeBadRequest, errCode(err))
			assert.Contains(t, err.Error(), `make: params.opponent: `)
			assert.Contains(t, err.Error(), `trained for, "standard"`)
		})
	}
	_, err := c.Call("make", map[string]any{"n": 1, "rules": "players=3", "opponent": "mcts:8"})
	assert.NoError(t, err, "other agents play any rules")
}
