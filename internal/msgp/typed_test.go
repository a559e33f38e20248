package msgp

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// stack and game are a nested params struct of every kind Check handles.
type stack struct {
	Seat   int   `msgpack:"seat" range:"0,3"`
	Height uint8 `msgpack:"height"`
}

type game struct {
	ID     *int               `msgpack:"id"`
	Name   string             `msgpack:"name"`
	P      float64            `msgpack:"p"`
	On     bool               `msgpack:"on"`
	Seed   uint64             `msgpack:"seed"`
	Blob   []byte             `msgpack:"blob"`
	Pool   [3]int             `msgpack:"pool"`
	Stacks []stack            `msgpack:"stacks"`
	Raw    msgpack.RawMessage `msgpack:"raw"`
	Skip   int                `msgpack:"-"`
}

// TestSpecOf reads the keys of a struct from its tags, in order, with
// their ranges; a "-" field is not a key.
func TestSpecOf(t *testing.T) {
	sp := SpecOf(reflect.TypeFor[game]())
	assert.Equal(t, "id, name, p, on, seed, blob, pool, stacks, raw", sp.Keys)
	assert.Same(t, sp, SpecOf(reflect.TypeFor[game]()), "cached")
	require.NotNil(t, sp.Field([]byte("seed")))
	assert.Nil(t, sp.Field([]byte("Skip")))
	st := SpecOf(reflect.TypeFor[stack]()).Field([]byte("seat"))
	assert.Equal(t, [2]int64{0, 3}, [2]int64{st.Lo, st.Hi})
	type bad struct {
		N int `msgpack:"n" range:"1,x"`
	}
	assert.PanicsWithValue(t, `msgp: bad range tag "1,x" on msgp.bad.N`, func() { SpecOf(reflect.TypeFor[bad]()) })
}

// TestFieldCheck checks values against every kind of field: what it
// accepts the library decodes, what it refuses it names.
func TestFieldCheck(t *testing.T) {
	many := make([]any, MaxArray+1)
	for i := range many {
		many[i] = Obj{}
	}
	tests := []struct {
		name string
		key  string
		v    any
		want string // "" = accepted
	}{
		{"pointer nil", "id", nil, ""},
		{"pointer int", "id", -5, ""},
		{"str", "name", "x", ""},
		{"float from int", "p", 1, ""},
		{"bool", "on", true, ""},
		{"uint64 max", "seed", uint64(1<<64 - 1), ""},
		{"bin", "blob", []byte{1, 2}, ""},
		{"array", "pool", []int{1, 2}, ""},
		{"nested", "stacks", []any{Obj{{"seat", 3}, {"height", 255}}}, ""},
		{"raw anything", "raw", Obj{{"x", []any{nil}}}, ""},
		{"wrong type", "name", 1, "want str, got int"},
		{"bool for int", "id", true, "want int, got bool"},
		{"negative uint", "seed", -1, "-1 is negative, want 0..2^64-1"},
		{"str for bin", "blob", "ab", "want bin, got str"},
		{"fixed array too long", "pool", []int{1, 2, 3, 4}, "4 items, at most 3"},
		{"array too long", "stacks", many, "65 items, at most 64"},
		{"range tag", "stacks", []any{Obj{{"seat", 4}}}, "[0]: seat: 4 is out of range 0..3"},
		{"go type range", "stacks", []any{Obj{{"height", 256}}}, "[0]: height: 256 is out of range 0..255"},
		{"unknown nested key", "stacks", []any{Obj{{"sat", 1}}}, `[0]: unknown key "sat" (keys: seat, height)`},
		{"repeated nested key", "stacks", []any{Obj{{"seat", 1}, {"seat", 2}}}, `[0]: key "seat" appears twice`},
	}
	sp := SpecOf(reflect.TypeFor[game]())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := AppendValue(nil, tt.v)
			r := NewReader(body)
			err := sp.Field([]byte(tt.key)).Check(&r)
			if tt.want != "" {
				assert.EqualError(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(body), r.Offset(), "stepped over the whole value")
			var g game
			require.NoError(t, msgpack.Unmarshal(AppendValue(nil, Obj{{tt.key, tt.v}}), &g), "the library decodes what Check accepts")
		})
	}
	r := NewReader(AppendValue(nil, 1))
	assert.PanicsWithValue(t, "msgp: Field.Check: unsupported field type map[string]int", func() {
		_ = (&Field{Name: "m", Type: reflect.TypeFor[map[string]int](), Lo: 1}).Check(&r)
	})
}

// TestFieldCheckAllocatesNothing: the key pass of a params map is free.
func TestFieldCheckAllocatesNothing(t *testing.T) {
	body := AppendValue(nil, []any{Obj{{"seat", 1}, {"height", 2}}, Obj{{"seat", 0}}})
	f := SpecOf(reflect.TypeFor[game]()).Field([]byte("stacks"))
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		r := NewReader(body)
		_ = f.Check(&r)
	}))
}
