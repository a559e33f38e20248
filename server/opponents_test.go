package server

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/protocol"
)

// TestMixtureRefusals: every bad opponent mixture a client can send to make
// and set_opponents is refused with one clear error naming the param, and
// the connection keeps working.
func TestMixtureRefusals(t *testing.T) {
	ts := startServer(t, "unix", Config{MaxOpponentSims: 100})
	c := ts.client(t)
	many := make([]any, 65)
	for i := range many {
		many[i] = "random"
	}
	for _, tc := range []struct {
		name   string
		params map[string]any
		code   protocol.Code
		want   string
	}{
		{"not an array", map[string]any{"opponents": "greedy"}, protocol.CodeBadRequest, "params.opponents: want an array of agent specs"},
		{"empty", map[string]any{"opponents": []any{}}, protocol.CodeBadRequest, "params.opponents: 0 entries, want 1..64"},
		{"too many", map[string]any{"opponents": many}, protocol.CodeBadRequest, "params.opponents: 65 entries, want 1..64"},
		{"not a spec", map[string]any{"opponents": []any{"greedy", 3}}, protocol.CodeBadRequest, "params.opponents[1]: want an agent spec"},
		{"unknown agent", map[string]any{"opponents": []any{"greedy", "nosuch"}}, protocol.CodeBadRequest, "params.opponents[1]"},
		{"both forms", map[string]any{"opponent": "greedy", "opponents": []any{"greedy"}}, protocol.CodeBadRequest, "not both"},
		{"weights alone", map[string]any{"weights": []any{1}}, protocol.CodeBadRequest, "params.weights: weights apply to an opponents mixture"},
		{"weights too few", map[string]any{"opponents": []any{"greedy", "random"}, "weights": []any{1}}, protocol.CodeBadRequest, "params.weights: 1 weights for 2 opponents"},
		{"a zero weight", map[string]any{"opponents": []any{"greedy", "random"}, "weights": []any{1, 0}}, protocol.CodeBadRequest, "params.weights[1]: 0: want a finite number > 0"},
		{"a NaN weight", map[string]any{"opponents": []any{"greedy"}, "weights": []any{math.NaN()}}, protocol.CodeBadRequest, "params.weights[0]: NaN"},
		{"an infinite weight", map[string]any{"opponents": []any{"greedy"}, "weights": []any{math.Inf(1)}}, protocol.CodeBadRequest, "params.weights[0]: +Inf"},
		{"a weight not a number", map[string]any{"opponents": []any{"greedy"}, "weights": []any{"x"}}, protocol.CodeBadRequest, "params.weights[0]"},
		{"a search above the limit", map[string]any{"opponents": []any{"greedy", "mcts:400"}}, protocol.CodeLimitExceeded, "opponents[1]"},
		{"a net outside the net folders", map[string]any{"opponents": []any{"net:/etc/passwd"}}, protocol.CodeBadNet, "params.opponents[0]"},
		{"multi mode", map[string]any{"mode": "multi", "opponents": []any{"greedy"}}, protocol.CodeBadRequest, "mode single only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call("make", tc.params)
			require.Error(t, err)
			assert.Equal(t, tc.code, errCode(err), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 1, strings.Count(err.Error(), "\n")+1, "one line")
		})
	}
	one := makeHandle(t, c, map[string]any{"opponent": "greedy"})
	_, err := c.Call("set_opponents", map[string]any{"handle": one, "opponents": []any{"random"}})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err), "a handle made with one opponent keeps it: %v", err)
	mixed := makeHandle(t, c, map[string]any{"opponents": []any{"greedy", "random"}})
	_, err = c.Call("set_opponents", map[string]any{"handle": mixed})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err), "%v", err)
	_, err = c.Call("set_opponents", map[string]any{"handle": mixed, "opponents": []any{"mcts:5000"}})
	assert.Equal(t, protocol.CodeLimitExceeded, errCode(err), "%v", err)
	_, err = c.Call("ping", nil)
	assert.NoError(t, err, "the connection works on")
}

// TestClientOpponentOverTheSocket: a handle whose opponent the client
// plays waits at the opponent's decisions with the opponent's own rows,
// refuses step until answered, refuses an illegal answer without a change,
// and resumes with opponent_step.
func TestClientOpponentOverTheSocket(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 3, "seat": 1, "opponents": []any{"client"}})
	res := do(t, c, "reset", map[string]any{"handle": h, "seed": 5, "options": map[string]any{"start": 0}})
	assert.Equal(t, []byte{1, 1, 1}, res["pending"])
	assert.Equal(t, []byte{0, 0, 0}, res["opponent"])
	assert.Equal(t, []byte{0, 0, 0}, res["to_move"], "the rows are seat 0's, the opponent's")

	_, err := c.Call("step", map[string]any{"handle": h, "actions": []any{0, 0, 0}})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	assert.Contains(t, err.Error(), "waits for its client-played opponent")

	mask := res["mask"].([]byte)
	illegal := []any{0, 0, 0}
	_, err = c.Call("opponent_step", map[string]any{"handle": h, "actions": illegal})
	assert.Equal(t, protocol.CodeIllegalAction, errCode(err), "%v", err)
	again := do(t, c, "observe", map[string]any{"handle": h, "seat": 0})
	assert.Equal(t, mask, again["mask"], "a refused answer changes nothing")

	for range 50 {
		if bytes.IndexByte(res["pending"].([]byte), 1) < 0 {
			break
		}
		mask := res["mask"].([]byte)
		acts := make([]any, 3)
		for i := range acts {
			acts[i] = max(0, bytes.IndexByte(mask[i*180:(i+1)*180], 1))
		}
		res = do(t, c, "opponent_step", map[string]any{"handle": h, "actions": acts})
	}
	assert.Equal(t, []byte{0, 0, 0}, res["pending"])
	assert.Equal(t, []byte{1, 1, 1}, res["to_move"], "the learner's rows again")
	_, err = c.Call("opponent_step", map[string]any{"handle": h, "actions": []any{0, 0, 0}})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	assert.Contains(t, err.Error(), "no env waits")
}
