package env_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// TestForwardFromHome checks RULES.md ("Finishing"): a stack that stands on
// HOME because a back-do put it there leaves by going past it, so any forward
// move finishes it under pass, stop and exact ("an exact move from HOME is
// any forward move"), and takes it round again under wrap. The cross-check
// with python/tests/reference.py found the engine refusing every such move
// under exact.
func TestForwardFromHome(t *testing.T) {
	tests := []struct {
		finish   string
		throw    env.Throw
		finished bool
		to       env.Station // where it lands when it does not finish
	}{
		{"pass", env.Do, true, 0},
		{"stop", env.Mo, true, 0},
		{"exact", env.Do, true, 0},
		{"exact", env.Geol, true, 0},
		{"exact", env.Mo, true, 0},
		{"wrap", env.Geol, false, 3},
		{"wrap", env.Mo, false, 5},
	}
	for _, tc := range tests {
		t.Run(tc.finish+"/"+tc.throw.String(), func(t *testing.T) {
			r := envtest.Rules(t, "finish="+tc.finish)
			var pool [env.NumThrows]int
			pool[tc.throw] = 1
			d := env.PositionDesc{Phase: "move", Pool: pool,
				Finished: []int{3, 0},
				Stacks:   []env.StackDesc{{Seat: 0, Station: 0, Route: "C2", Height: 1}, {Seat: 1, Station: 12, Route: "OUTER", Height: 1}}}
			p, err := d.Position(r)
			require.NoError(t, err)
			s, err := env.FromPosition(p, 1)
			require.NoError(t, err)
			a := env.Action(int(tc.throw)*30 + 0)
			require.True(t, s.IsLegal(a), "%s from HOME must be legal under finish=%s", tc.throw, tc.finish)
			ev, err := s.Apply(a)
			require.NoError(t, err)
			if tc.finished {
				assert.Equal(t, uint8(1), ev.Finished)
				assert.True(t, s.IsOver(), "the seat's last piece finished")
				return
			}
			assert.Zero(t, ev.Finished)
			assert.Equal(t, tc.to, ev.To)
		})
	}
}
