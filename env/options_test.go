package env_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// The JSON and msgpack forms of Rules are the declared options: one Rules
// field per option, every key an option's key in table order, every option
// written by some variant (those that play its other values), and each form
// reads back to the same rules.
func TestRulesFormsAreTheOptions(t *testing.T) {
	opts := env.Options()
	require.Equal(t, len(opts), reflect.TypeFor[env.Rules]().NumField(), "one Rules field per option")
	var keys []string
	for _, o := range opts {
		keys = append(keys, o.Key)
	}
	written := map[string]bool{}
	for _, v := range env.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			j, err := json.Marshal(v.Rules)
			require.NoError(t, err)
			m, err := msgpack.Marshal(v.Rules)
			require.NoError(t, err)
			var fromJSON map[string]any
			require.NoError(t, json.Unmarshal(j, &fromJSON))
			var fromMsgpack map[string]any
			require.NoError(t, msgpack.Unmarshal(m, &fromMsgpack))
			var got []string
			for _, k := range keys {
				if _, ok := fromJSON[k]; ok {
					got = append(got, k)
				}
			}
			assert.Len(t, fromJSON, len(got), "only option keys in %s", j)
			assert.Len(t, fromMsgpack, len(got), "the same keys in msgpack")
			for _, k := range got {
				written[k] = true
			}
			assert.True(t, strings.HasPrefix(string(j), `{"`+got[0]+`":`), "table order: %s", j)
			var r1, r2 env.Rules
			require.NoError(t, json.Unmarshal(j, &r1))
			require.NoError(t, msgpack.Unmarshal(m, &r2))
			assert.Equal(t, v.Rules, r1)
			assert.Equal(t, v.Rules, r2)
		})
	}
	for _, k := range keys {
		assert.True(t, written[k], "no variant writes option %q: its values are not all tested", k)
	}
}

// A rules map in msgpack keeps the standard value of an option it leaves
// out, as a JSON object does; a strict decoder (saved states) refuses an
// unknown key; a value of the wrong type is invalid rules.
func TestRulesMsgpackDecoding(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]any
		want    string
		wantErr bool
	}{
		{"empty is standard", map[string]any{}, "standard", false},
		{"missing keys keep standard", map[string]any{"players": 3, "end": "rank", "pool": "off"}, "players=3,end=rank,pool=off", false},
		{"unknown key", map[string]any{"colour": "red"}, "", true},
		{"bad value", map[string]any{"finish": "somewhere"}, "", true},
		{"wrong type", map[string]any{"players": []int{1}}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := msgpack.Marshal(tc.in)
			require.NoError(t, err)
			var r env.Rules
			d := msgpack.NewDecoder(bytes.NewReader(b))
			d.DisallowUnknownFields(true)
			err = d.Decode(&r)
			if tc.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, envtest.Rules(t, tc.want), r)
		})
	}
}

// Each option reads what it writes, and Set takes aliases.
func TestOptionSetAndValue(t *testing.T) {
	for _, o := range env.Options() {
		t.Run(o.Key, func(t *testing.T) {
			for _, p := range o.Points() {
				r := env.Standard()
				if o.Key == "spaces" || o.Key == "obstacles" {
					r = env.Kata()
				}
				if o.Kind == env.OptionText {
					continue // Points of a text option are coverage labels, not values
				}
				require.NoError(t, r.Set(o.Key, p))
				assert.Equal(t, p, o.Value(r))
				for _, a := range o.Aliases {
					r2 := env.Standard()
					require.NoError(t, r2.Set(a, p))
					assert.Equal(t, p, o.Value(r2))
				}
			}
		})
	}
	r := env.Standard()
	err := r.Set("playerz", "2")
	require.ErrorIs(t, err, env.ErrInvalidRules)
	assert.Contains(t, err.Error(), `unknown rules key "playerz"`)
}

// A value outside an option's declared range or values is refused by Validate, naming the key.
func TestValidateUsesTheDeclarations(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *env.Rules)
		msg  string
	}{
		{"players low", func(r *env.Rules) { r.Players = 1 }, "players must be 2 to 4, got 1"},
		{"pieces high", func(r *env.Rules) { r.Pieces = 6 }, "pieces must be 1 to 5, got 6"},
		{"flat_prob", func(r *env.Rules) { r.FlatProb = 0.7 }, "flat_prob must be 0.5 to 0.65, got 0.7"},
		{"finish", func(r *env.Rules) { r.Finish = 9 }, "finish must be one of pass, stop, exact, wrap"},
		{"end", func(r *env.Rules) { r.End = 2 }, "end must be one of first, rank"},
		{"pool", func(r *env.Rules) { r.Pool = 2 }, "pool must be one of on, off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.Standard()
			tt.edit(&r)
			err := r.Validate()
			require.ErrorIs(t, err, env.ErrInvalidRules)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}
