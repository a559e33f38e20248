package server

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// TestDecodeParams checks the one params path on every kind of field,
// nested maps and arrays included: what it refuses and how it says so.
func TestDecodeParams(t *testing.T) {
	type pos struct {
		Game     *int              `msgpack:"game"`
		Position *env.PositionDesc `msgpack:"position"`
		Seed     uint64            `msgpack:"seed"`
	}
	stack := msgp.Obj{{"seat", 0}, {"station", 1}, {"route", "OUTER"}, {"height", 1}}
	many := make([]any, msgp.MaxArray+1)
	for i := range many {
		many[i] = stack
	}
	tests := []struct {
		name   string
		params []byte
		msg    string // "" means accepted
	}{
		{"ok", msgp.AppendValue(nil, msgp.Obj{{"game", 0}, {"position", msgp.Obj{{"to_move", 1}, {"stacks", []any{stack}}}}, {"seed", 3}}), ""},
		{"nil pointer", msgp.AppendValue(nil, msgp.Obj{{"game", nil}}), ""},
		{"unknown key", msgp.AppendValue(nil, msgp.Obj{{"gaem", 0}}), `position: unknown parameter "gaem" (parameters: game, position, seed)`},
		{"repeated key", rawMap(2, str("seed"), []byte{1}, str("seed"), []byte{2}), `position: parameter "seed" appears twice`},
		{"repeated nested key", msgp.AppendValue(nil, msgp.Obj{{"position", msgp.Raw(rawMap(2, str("phase"), str("move"), str("phase"), str("throw")))}}), `key "phase" appears twice`},
		{"repeated key in an array's map", msgp.AppendValue(nil, msgp.Obj{{"position", msgp.Obj{{"stacks", []any{msgp.Raw(rawMap(2, str("seat"), []byte{0}, str("seat"), []byte{1}))}}}}}), `params.position: stacks: [0]: key "seat" appears twice`},
		{"unknown nested key", msgp.AppendValue(nil, msgp.Obj{{"position", msgp.Obj{{"tomove", 1}}}}), `params.position: unknown key "tomove" (keys: to_move, phase, pool, hand, finished, place, stacks, missed)`},
		{"wrong type", msgp.AppendValue(nil, msgp.Obj{{"seed", "1"}}), "position: params.seed: want int, got str"},
		{"negative uint", msgp.AppendValue(nil, msgp.Obj{{"seed", -1}}), "params.seed: -1 is negative"},
		{"nested wrong type", msgp.AppendValue(nil, msgp.Obj{{"position", msgp.Obj{{"stacks", []any{msgp.Obj{{"height", 1.5}}}}}}}), "params.position: stacks: [0]: height: want int, got float"},
		{"array too long", msgp.AppendValue(nil, msgp.Obj{{"position", msgp.Obj{{"stacks", many}}}}), "stacks: 65 items, at most 64"},
		{"fixed array too long", msgp.AppendValue(nil, msgp.Obj{{"position", msgp.Obj{{"pool", []int{0, 0, 0, 0, 0, 0, 0}}}}}), "pool: 7 items, at most 6"},
		{"long array", msgp.AppendValue(nil, msgp.Obj{{"position", msgp.Obj{{"hand", msgp.Raw(append(arr32(100000), fixints(100000)...))}}}}), "hand: 100000 items, at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, msgp.CheckMap(tt.params))
			var pr pos
			e := decodeAs("position", tt.params, &pr)
			if tt.msg == "" {
				assert.Nil(t, e)
				return
			}
			require.NotNil(t, e)
			assert.Equal(t, protocol.CodeBadRequest, e.Code)
			assert.Contains(t, e.Message, tt.msg)
		})
	}
}

// TestDecodeParamsRanges checks range tags and Go types' own ranges.
func TestDecodeParamsRanges(t *testing.T) {
	var mp protocol.MakeParams
	e := decodeAs("make", msgp.AppendValue(nil, msgp.Obj{{"n", 0}}), &mp)
	require.NotNil(t, e)
	assert.Equal(t, "make: params.n: 0 is out of range 1..2147483647", e.Message)
	e = decodeAs("make", msgp.AppendValue(nil, msgp.Obj{{"max_decisions", uint64(1) << 32}}), &mp)
	require.NotNil(t, e)
	assert.Equal(t, "make: params.max_decisions: 4294967296 is out of range 0..4294967295", e.Message)
	require.Nil(t, decodeAs("make", msgp.AppendValue(nil, msgp.Obj{{"n", 7}, {"max_decisions", uint64(1)<<32 - 1}}), &mp))
	assert.Equal(t, 7, *mp.N)
	assert.Equal(t, uint32(1<<32-1), mp.MaxDecisions)
}

// decodeAs decodes params p into v as the binder of a method named name
// decodes them (decoded): its errors are the ones the client sees, prefix
// included.
func decodeAs[P any](name string, p []byte, v *P) *Error {
	m := protocol.Method[P, protocol.None]{Desc: protocol.Desc{Name: name, Params: reflect.TypeFor[P]()}}
	return decoded(m, func(_ *conn, pr *P) *Error {
		*v = *pr
		return nil
	}).handle(nil, p)
}

// stepLike has the keys of step's params, read the typed way.
type stepLike struct {
	Handle  *uint64 `msgpack:"handle"`
	Actions []byte  `msgpack:"actions"`
	Info    *bool   `msgpack:"info"`
}

// BenchmarkParams compares the typed params path with the hand-written
// reader step keeps, on step's params for 256 envs: the typed path
// allocates (the decoder, the actions copy), which step's 0 allocs per env
// step would not survive, so step and reset keep reading by hand.
func BenchmarkParams(b *testing.B) {
	p := msgp.AppendValue(nil, msgp.Obj{{"handle", 1}, {"actions", make([]byte, 4*256)}})
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var pr stepLike
			if e := decodeParams(p, &pr); e != nil {
				b.Fatal(e)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var actions []byte
			r := msgp.NewReader(p)
			err := msgp.EachKey(&r, func(k []byte) error {
				var err error
				switch string(k) {
				case "handle":
					_, err = r.Uint64()
				case "actions":
					actions, err = r.Bin()
				default:
					err = msgp.ErrUnknownKey
				}
				return err
			})
			if err != nil || len(actions) != 1024 {
				b.Fatal(err)
			}
		}
	})
}
