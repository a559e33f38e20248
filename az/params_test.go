package az_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// TestParamKeysAreDeclared: selfplay_new's declared params are the keys
// SetParam reads, no more and no fewer.
func TestParamKeysAreDeclared(t *testing.T) {
	got, want := slices.Clone(az.ParamKeys()), slices.Clone([]string(protocol.SelfplayNewKeys))
	slices.Sort(got)
	slices.Sort(want)
	assert.Equal(t, want, got)
	c := az.DefaultConfig()
	for _, k := range az.ParamKeys() {
		r := msgp.NewReader(pack(t, []any{1}))
		err := c.SetParam(k, &r)
		assert.Error(t, err, "%s reads its value (an array is no param's)", k)
		assert.NotErrorIs(t, err, az.ErrConfig, "%s is a param", k)
	}
}

// pack encodes v in msgpack.
func pack(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestSetParam(t *testing.T) {
	cases := []struct {
		name  string
		key   string
		value any
		check func(t *testing.T, c az.Config)
		err   string
	}{
		{"rules as a string", "rules", "players=3", func(t *testing.T, c az.Config) { assert.Equal(t, 3, c.Rules.Players) }, ""},
		{"rules as a map", "rules", map[string]any{"players": 4}, func(t *testing.T, c az.Config) { assert.Equal(t, 4, c.Rules.Players) }, ""},
		{"tier", "tier", "tactical", func(t *testing.T, c az.Config) { assert.Equal(t, obs.Tactical, c.Tier) }, ""},
		{"gumbel", "gumbel", true, func(t *testing.T, c az.Config) { assert.True(t, c.Gumbel) }, ""},
		{"seed", "seed", 7, func(t *testing.T, c az.Config) { assert.Equal(t, uint64(7), c.Seed) }, ""},
		{"out", "out", "/tmp/x", func(t *testing.T, c az.Config) { assert.Equal(t, "/tmp/x", c.Out) }, ""},
		{"an int setting", "sims", 9, func(t *testing.T, c az.Config) { assert.Equal(t, 9, c.Sims) }, ""},
		{"a float setting", "c", 2.5, func(t *testing.T, c az.Config) { assert.InDelta(t, 2.5, c.C, 0) }, ""},
		{"an int out of range", "sims", 0, nil, "out of range"},
		{"a float out of range", "dirichlet_frac", 1.5, nil, "1.5 is not a number in 0..1"},
		{"bad tier", "tier", "huge", nil, "tier"},
		{"bad rules", "rules", "players=9", nil, "players must be 2 to 4"},
		{"an unknown key", "resign", 1, nil, "no param"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := az.DefaultConfig()
			r := msgp.NewReader(pack(t, tc.value))
			err := c.SetParam(tc.key, &r)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
	c := az.DefaultConfig()
	r := msgp.NewReader(pack(t, "players=9"))
	var re wire.RulesError
	assert.ErrorAs(t, c.SetParam("rules", &r), &re, "refused rules are a wire.RulesError (invalid_rules)")
	assert.ErrorIs(t, re, env.ErrInvalidRules)
}
