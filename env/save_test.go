package env_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// midGame returns a state some way into a random game under rules spec.
func midGame(t testing.TB, spec string, seed uint64, decisions int) env.State {
	t.Helper()
	s, err := env.New(envtest.Rules(t, spec), seed, env.AnySeat)
	require.NoError(t, err)
	var buf [env.NumActions]env.Action
	for s.Decisions() < decisions && !s.IsOver() {
		if s.IsChance() {
			_, err = s.SampleThrow()
		} else {
			legal := s.LegalActions(buf[:0])
			_, err = s.Apply(legal[(s.Decisions()*7+s.Throws())%len(legal)])
		}
		require.NoError(t, err)
	}
	return s
}

// resave decodes a blob into a generic map, lets edit change it, and encodes it again.
func resave(t *testing.T, blob []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(blob, &m))
	edit(m)
	b, err := msgpack.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestSaveRoundTrip(t *testing.T) {
	for _, spec := range propertyRules {
		for _, d := range []int{0, 5, 30, 1000} {
			s := midGame(t, spec, uint64(d)+3, d)
			b, err := s.MarshalBinary()
			require.NoError(t, err)
			got, err := env.UnmarshalState(b)
			require.NoError(t, err, "%s after %d decisions", spec, d)
			assert.Equal(t, s, got, "%s after %d decisions: the whole state, generator included", spec, d)
		}
	}
}

func TestSaveErrors(t *testing.T) {
	s := midGame(t, "players=3,end=rank", 5, 20)
	blob, err := s.MarshalBinary()
	require.NoError(t, err)

	t.Run("truncated", func(t *testing.T) {
		for n := 0; n < len(blob); n++ {
			_, err := env.UnmarshalState(blob[:n])
			assert.ErrorIs(t, err, env.ErrCorrupt, "blob cut to %d of %d bytes", n, len(blob))
		}
	})
	t.Run("trailing bytes", func(t *testing.T) {
		_, err := env.UnmarshalState(append(append([]byte(nil), blob...), 0))
		assert.ErrorIs(t, err, env.ErrCorrupt)
	})
	t.Run("future version", func(t *testing.T) {
		b := resave(t, blob, func(m map[string]any) { m["version"] = env.StateVersion + 1 })
		_, err := env.UnmarshalState(b)
		assert.ErrorIs(t, err, env.ErrVersion)
		assert.NotErrorIs(t, err, env.ErrCorrupt)
		_, err = env.UnmarshalState(resave(t, blob, func(m map[string]any) { m["version"] = 0 }))
		assert.ErrorIs(t, err, env.ErrVersion)
	})
	corrupt := map[string]func(m map[string]any){
		"format":          func(m map[string]any) { m["format"] = "chess" },
		"unknown field":   func(m map[string]any) { m["colour"] = "red" },
		"generator":       func(m map[string]any) { m["rng"] = []byte{1, 2, 3} },
		"start seat":      func(m map[string]any) { m["start"] = 7 },
		"to_move":         func(m map[string]any) { pos(m)["to_move"] = 9 },
		"phase":           func(m map[string]any) { pos(m)["phase"] = 3 },
		"rules":           func(m map[string]any) { pos(m)["rules"].(map[string]any)["players"] = 9 }, // also ErrInvalidRules
		"pool":            func(m map[string]any) { pos(m)["pool"] = []int{0, 0, 300, 0, 0, 0} },
		"hand":            func(m map[string]any) { pos(m)["hand"] = []int{5, 0, 0, 0} },
		"a missing piece": func(m map[string]any) { pos(m)["stacks"] = []any{} },
		"two stacks on one station": func(m map[string]any) {
			pos(m)["stacks"] = []any{
				map[string]any{"seat": 0, "station": 3, "route": 0, "height": 1},
				map[string]any{"seat": 1, "station": 3, "route": 0, "height": 1},
			}
			pos(m)["hand"] = []int{3, 3, 4, 0}
			pos(m)["finished"] = []int{0, 0, 0, 0}
			pos(m)["place"] = []int{0, 0, 0, 0}
		},
		"a station off its route": func(m map[string]any) {
			pos(m)["stacks"] = []any{map[string]any{"seat": 0, "station": 25, "route": 1, "height": 1}}
			pos(m)["hand"] = []int{3, 4, 4, 0}
			pos(m)["finished"] = []int{0, 0, 0, 0}
			pos(m)["place"] = []int{0, 0, 0, 0}
		},
		// Counters used to wrap: 2^32+5 loaded as 5, -1 as 2^32-1.
		"decisions above 2^32-1": func(m map[string]any) { m["decisions"] = uint64(1)<<32 + 5 },
		"decisions negative":     func(m map[string]any) { m["decisions"] = -1 },
		"throws above 2^32-1":    func(m map[string]any) { m["throws"] = uint64(1) << 63 },
		"throws negative":        func(m map[string]any) { m["throws"] = int64(-1) << 40 },
		"throws as text":         func(m map[string]any) { m["throws"] = "7" },
		"decisions as a float":   func(m map[string]any) { m["decisions"] = 3.5 },
		"not a map":              func(m map[string]any) { m["position"] = "nowhere" },
		"bytes for text":         func(m map[string]any) { m["format"] = []byte{0xff, 0xfe} },
	}
	for name, edit := range corrupt {
		t.Run(name, func(t *testing.T) {
			_, err := env.UnmarshalState(resave(t, blob, edit))
			assert.ErrorIs(t, err, env.ErrCorrupt)
		})
	}
	garbage := map[string][]byte{
		"empty":        nil,
		"nil":          {0xc0},
		"a number":     {0x2a},
		"text":         []byte("yutenv-state"),
		"huge length":  {0xdf, 0xff, 0xff, 0xff, 0xff},
		"huge binary":  {0x81, 0xa3, 'r', 'n', 'g', 0xc6, 0x7f, 0xff, 0xff, 0xff},
		"deep nesting": append(bytes.Repeat([]byte{0x91}, 16<<20), 0xc0),
	}
	for name, b := range garbage {
		t.Run(name, func(t *testing.T) {
			_, err := env.UnmarshalState(b)
			assert.ErrorIs(t, err, env.ErrCorrupt)
		})
	}
	t.Run("every byte changed", func(t *testing.T) {
		// Whatever one changed byte does, the result is an error or a state
		// that saves again, never a panic.
		for i := range blob {
			for _, v := range []byte{0x00, 0x7f, 0xc0, 0xff, blob[i] ^ 0x01} {
				b := append([]byte(nil), blob...)
				b[i] = v
				got, err := env.UnmarshalState(b)
				if err != nil {
					assert.True(t, isSentinel(err, env.ErrCorrupt, env.ErrVersion), "byte %d = %#x: %v", i, v, err)
					continue
				}
				_, err = got.MarshalBinary()
				assert.NoError(t, err)
			}
		}
	})
}

// pos returns the position map inside a decoded blob.
func pos(m map[string]any) map[string]any { return m["position"].(map[string]any) }

// isSentinel reports whether err wraps one of the sentinels.
func isSentinel(err error, sentinels ...error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// TestFromPositionRefusesAFinishedRanking is a regression test: under
// end=rank a game is over as soon as all seats but one are ranked. A position
// with all but one ranked and the game still on used to be accepted, and the
// last seat finishing then looped for ever looking for a seat to play next.
func TestFromPositionRefusesAFinishedRanking(t *testing.T) {
	u := setup{rules: "players=3,end=rank", seat: 2, pool: []env.Throw{do}, fin: [4]int{4, 4, 3}, place: [4]int{1, 2, 0},
		stacks: []env.Stack{stack(2, 0, outer, 1)}}
	_, err := env.FromPosition(u.position(t), 1)
	require.ErrorIs(t, err, env.ErrCorrupt)

	// The same position one step earlier is fine, and finishing ends the game.
	u.fin, u.place = [4]int{4, 3, 3}, [4]int{1, 0, 0}
	u.stacks = []env.Stack{stack(2, 0, outer, 1), stack(1, 19, outer, 1)}
	s := u.state(t)
	ev, err := s.Apply(act(do, 0))
	require.NoError(t, err)
	assert.True(t, ev.Placed)
	assert.True(t, ev.GameOver)
	assert.Equal(t, []int{1, 3, 2}, []int{s.Place(0), s.Place(1), s.Place(2)})
}
