package env_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

func TestPositionDescRoundTrip(t *testing.T) {
	for _, spec := range propertyRules {
		t.Run(spec, func(t *testing.T) {
			for _, d := range []int{0, 9, 33, 500} {
				s := midGame(t, spec, uint64(d), d)
				desc := env.Describe(s.Position())
				b, err := json.Marshal(desc)
				require.NoError(t, err)
				var back env.PositionDesc
				require.NoError(t, json.Unmarshal(b, &back))
				p, err := back.Position(s.Rules())
				require.NoError(t, err)
				assert.Equal(t, s.Position(), p)
				// Without hands, they are worked out.
				back.Hand = nil
				p, err = back.Position(s.Rules())
				require.NoError(t, err)
				assert.Equal(t, s.Position(), p)
			}
		})
	}
}

func TestPositionDescRefuses(t *testing.T) {
	r := env.Standard()
	for _, c := range []struct {
		name string
		d    env.PositionDesc
		want string
	}{
		{"phase", env.PositionDesc{Phase: "later"}, "phase"},
		{"hand length", env.PositionDesc{Phase: "throw", Hand: []int{4}}, "one per seat"},
		{"route", env.PositionDesc{Phase: "throw", Stacks: []env.StackDesc{{Route: "DIAG"}}}, "route"},
		{"station", env.PositionDesc{Phase: "throw", Stacks: []env.StackDesc{{Station: 29, Route: "OUTER"}}}, "station 29"},
		{"seat", env.PositionDesc{Phase: "throw", Stacks: []env.StackDesc{{Seat: 2, Route: "OUTER"}}}, "seat 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.d.Position(r)
			require.ErrorIs(t, err, env.ErrCorrupt)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
