package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
)

// observeCheck calls observe for every seat and checks each env's rows
// against the engine: the observation is the encoder's view of that seat of
// the saved game, and the mask is the game's mask exactly when that seat is
// to move at a decision and the env's row is not terminal, else all zero.
// It returns how many (env, seat) rows were for a seat that cannot act.
func observeCheck(t *testing.T, c *client.Client, h uint64, n int, rules env.Rules, tier obs.Tier, ended []bool) int {
	t.Helper()
	enc, err := obs.NewEncoder(rules, tier)
	require.NoError(t, err)
	d := enc.Size()
	want := make([]float32, d)
	var wantMask [env.NumActions]uint8
	waiting := 0
	for seat := range rules.Players {
		res := do(t, c, "observe", map[string]any{"handle": h, "seat": seat})
		o, m := f32s(res["obs"].([]byte)), res["mask"].([]byte)
		require.Len(t, o, n*d)
		require.Len(t, m, n*env.NumActions)
		for i := range n {
			blob := do(t, c, "save", map[string]any{"handle": h, "index": i})["state"].([]byte)
			s, err := env.UnmarshalState(blob)
			require.NoError(t, err)
			enc.Encode(&s, seat, want)
			assert.Equal(t, want, o[i*d:(i+1)*d], "env %d seat %d", i, seat)
			clear(wantMask[:])
			canAct := !ended[i] && s.Phase() == env.PhaseMove && s.ToMove() == seat
			if canAct {
				s.Mask(wantMask[:])
			} else {
				waiting++
			}
			assert.Equal(t, wantMask[:], m[i*env.NumActions:(i+1)*env.NumActions], "env %d seat %d", i, seat)
			var any bool
			for _, v := range m[i*env.NumActions : (i+1)*env.NumActions] {
				any = any || v != 0
			}
			assert.Equal(t, canAct, any, "env %d seat %d: mask all zero exactly when the seat cannot act", i, seat)
		}
	}
	return waiting
}

func TestObserve(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	for _, tc := range []struct {
		name   string
		params map[string]any
	}{
		{"multi 3 players", map[string]any{"n": 5, "mode": "multi", "rules": "players=3", "tier": "tactical"}},
		{"single", map[string]any{"n": 4, "seat": 1, "opponent": "greedy", "tier": "planes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := makeHandle(t, c, tc.params)
			info := do(t, c, "make", tc.params) // the same config, for its rules and tier
			rules, err := env.ParseRules(info["rules"].(string))
			require.NoError(t, err)
			tier, err := obs.ParseTier(info["tier"].(string))
			require.NoError(t, err)
			n, ok := client.Int(info["n"])
			require.True(t, ok)
			res := do(t, c, "reset", map[string]any{"handle": h, "seed": 3})
			mask := append([]byte(nil), res["mask"].([]byte)...) // the client reuses its buffers
			ended := make([]bool, n)
			waiting := 0
			for range 12 {
				waiting += observeCheck(t, c, h, n, rules, tier, ended)
				r, err := c.Step(h, legalFrom(mask, n), 0)
				require.NoError(t, err)
				mask = append(mask[:0], r.Mask...)
				for i := range n {
					ended[i] = r.Terminated[i] == 1 || r.Truncated[i] == 1
				}
			}
			assert.Positive(t, waiting, "some rows were for seats that could not act")
		})
	}
}

func TestObserveErrors(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 2})
	_, err := c.Call("observe", map[string]any{"handle": h, "seat": 0})
	assert.Equal(t, protocol.CodeNeedsReset, errCode(err))
	do(t, c, "reset", map[string]any{"handle": h, "seed": 1})
	for _, tc := range []struct {
		params map[string]any
		code   protocol.Code
	}{
		{map[string]any{"handle": h}, protocol.CodeBadRequest},
		{map[string]any{"handle": h, "seat": 2}, protocol.CodeBadRequest},
		{map[string]any{"handle": h, "seat": -1}, protocol.CodeBadRequest},
		{map[string]any{"handle": h, "seat": "0"}, protocol.CodeBadRequest},
		{map[string]any{"handle": h + 1, "seat": 0}, protocol.CodeUnknownHandle},
		{map[string]any{"handle": h, "seat": 0, "index": 0}, protocol.CodeBadRequest},
	} {
		_, err := c.Call("observe", tc.params)
		assert.Equal(t, tc.code, errCode(err), "%v", tc.params)
	}
	res := do(t, c, "observe", map[string]any{"handle": h, "seat": 1})
	assert.Len(t, res["mask"], 2*env.NumActions, "the connection still works")
}
