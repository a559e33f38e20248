package env_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// Every value an option declares (env.Option.Points) and every preset is
// exercised by at least one variant: declaring an option value without a
// variant that plays it fails here.
func TestVariantsCoverEveryOption(t *testing.T) {
	vs := env.Variants()
	names := map[string]bool{}
	for _, v := range vs {
		require.NoError(t, v.Rules.Validate(), v.Name)
		assert.False(t, names[v.Name], "variant %q twice", v.Name)
		names[v.Name] = true
	}
	for _, o := range env.Options() {
		t.Run(o.Key, func(t *testing.T) {
			seen := map[string]bool{}
			for _, v := range vs {
				for _, c := range o.Covers(v.Rules) {
					seen[c] = true
				}
			}
			require.NotEmpty(t, o.Points())
			for _, p := range o.Points() {
				assert.True(t, seen[p], "no variant has %s=%s", o.Key, p)
			}
		})
	}
	for _, p := range env.Presets() {
		assert.True(t, slices.ContainsFunc(vs, func(v env.Variant) bool { return v.Rules == p.Rules() }), "no variant is the %s preset", p.Name)
	}
}

// The check above can fail: an option value no variant plays is reported.
func TestVariantsCoverageCatchesAGap(t *testing.T) {
	var finish env.Option
	for _, o := range env.Options() {
		if o.Key == "finish" {
			finish = o
		}
	}
	seen := map[string]bool{}
	for _, v := range env.Variants() {
		if v.Rules.Finish != env.FinishWrap {
			for _, c := range finish.Covers(v.Rules) {
				seen[c] = true
			}
		}
	}
	assert.False(t, seen["wrap"])
	assert.Contains(t, finish.Points(), "wrap")
}

// Every variant survives its rules string, its JSON and a rules map with
// every key given (the server's and Python's map form), and a position of
// it survives JSON.
func TestVariantsRoundTrip(t *testing.T) {
	for _, v := range env.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			back, err := env.ParseRules(v.Rules.String())
			require.NoError(t, err)
			assert.Equal(t, v.Rules, back, "rules string %q", v.Rules.String())

			b, err := json.Marshal(v.Rules)
			require.NoError(t, err)
			var viaJSON env.Rules
			require.NoError(t, json.Unmarshal(b, &viaJSON))
			assert.Equal(t, v.Rules, viaJSON, "JSON %s", b)

			m := map[string]any{}
			for _, o := range env.Options() {
				if val := o.Value(v.Rules); val != "" {
					m[o.Key] = val
				}
			}
			b, err = json.Marshal(m)
			require.NoError(t, err)
			var viaMap env.Rules
			require.NoError(t, json.Unmarshal(b, &viaMap))
			assert.Equal(t, v.Rules, viaMap, "map %s", b)

			for _, d := range []int{0, 7, 40} {
				s := midGame(t, v.Name, uint64(d)+11, d)
				b, err := json.Marshal(s.Position())
				require.NoError(t, err)
				var p env.Position
				require.NoError(t, json.Unmarshal(b, &p))
				assert.Equal(t, s.Position(), p, "position JSON %s", b)
			}
		})
	}
}

// Rules JSON reads keys the way a rules string does: aliases, board=line
// alone, and a refused repeat.
func TestRulesJSONReadsLikeTheString(t *testing.T) {
	tests := []struct {
		json, spec string
	}{
		{`{"board":"line"}`, "board=line"},
		{`{"p":0.5,"backdo":false}`, "p=0.5,backdo=off"},
		{`{"players":3,"end":"rank"}`, "players=3,end=rank"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			var r env.Rules
			require.NoError(t, json.Unmarshal([]byte(tt.json), &r))
			assert.Equal(t, envtest.Rules(t, tt.spec), r)
		})
	}
	var r env.Rules
	err := json.Unmarshal([]byte(`{"p":0.5,"flat_prob":0.55}`), &r)
	require.ErrorIs(t, err, env.ErrInvalidRules)
	assert.Contains(t, err.Error(), `"flat_prob" given more than once`)
	err = json.Unmarshal([]byte(`{"players":[3]}`), &r)
	require.ErrorIs(t, err, env.ErrInvalidRules)
}
