package env_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// The Rules fields' json and msgpack tags (what Marshal writes) name the
// declared options, one field per option, in the same order.
func TestRulesFieldsMatchTheOptions(t *testing.T) {
	typ := reflect.TypeFor[env.Rules]()
	opts := env.Options()
	require.Equal(t, len(opts), typ.NumField(), "one Rules field per option")
	for i, o := range opts {
		f := typ.Field(i)
		for _, tag := range []string{"json", "msgpack"} {
			name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
			assert.Equal(t, o.Key, name, "%s tag of Rules.%s", tag, f.Name)
		}
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
