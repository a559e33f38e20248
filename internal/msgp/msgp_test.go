package msgp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// TestWriterMatchesLibrary decodes what the append writers produce with the
// msgpack library, at every length and width boundary.
func TestWriterMatchesLibrary(t *testing.T) {
	ints := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	for _, v := range ints {
		var got int64
		require.NoError(t, msgpack.Unmarshal(AppendInt(nil, v), &got), "int %d", v)
		assert.Equal(t, v, got)
	}
	var u uint64
	require.NoError(t, msgpack.Unmarshal(AppendUint(nil, math.MaxUint64), &u))
	assert.Equal(t, uint64(math.MaxUint64), u)
	for _, n := range []int{0, 31, 32, 255, 256, 65535, 65536} {
		s := strings.Repeat("x", n)
		var got string
		require.NoError(t, msgpack.Unmarshal(AppendStr(nil, s), &got), "str of %d", n)
		assert.Equal(t, s, got)
		var gb []byte
		require.NoError(t, msgpack.Unmarshal(AppendBin(nil, []byte(s)), &gb), "bin of %d", n)
		assert.Equal(t, n, len(gb))
		arr := make([]int, n)
		var ga []int
		require.NoError(t, msgpack.Unmarshal(AppendValue(nil, arr), &ga), "array of %d", n)
		assert.Equal(t, n, len(ga))
	}
	var f64 float64
	require.NoError(t, msgpack.Unmarshal(AppendFloat64(nil, 0.6), &f64))
	assert.Equal(t, 0.6, f64)
	var f32 float32
	require.NoError(t, msgpack.Unmarshal(AppendFloat32(nil, 1.5), &f32))
	assert.Equal(t, float32(1.5), f32)
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(AppendValue(nil, Obj{{"a", true}, {"b", nil}, {"c", []string{"x"}}, {"d", Obj{}}}), &m))
	assert.Equal(t, map[string]any{"a": true, "b": nil, "c": []any{"x"}, "d": map[string]any{}}, m)
	assert.Panics(t, func() { AppendValue(nil, struct{}{}) }, "an unsupported type is a bug")
}

// TestReaderReadsLibrary reads every integer encoding the library writes.
func TestReaderReadsLibrary(t *testing.T) {
	tests := []any{int8(-5), int8(-100), int16(-300), int32(-70000), int64(math.MinInt64), uint8(200), uint16(60000),
		uint32(4000000000), uint64(math.MaxUint64), 3, -3}
	for _, v := range tests {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		r := NewReader(b)
		x, neg, err := r.Int()
		require.NoError(t, err, "%T %v", v, v)
		if neg {
			assert.Equal(t, toI64(v), int64(x), "%T %v", v, v)
		} else {
			assert.Equal(t, toU64(v), x, "%T %v", v, v)
		}
		assert.Equal(t, len(b), r.off)
	}
	b, _ := msgpack.Marshal(float32(0.25))
	r := NewReader(b)
	f, err := r.Float()
	require.NoError(t, err)
	assert.Equal(t, 0.25, f)
	r = NewReader([]byte{0xa1, 'x'})
	_, _, err = r.Int()
	assert.EqualError(t, err, "want int, got str")
	r = NewReader([]byte{0x05})
	_, err = r.IntIn(0, 4)
	assert.EqualError(t, err, "5 is out of range 0..4")
	r = NewReader([]byte{0xff})
	_, err = r.Uint64()
	assert.EqualError(t, err, "-1 is negative, want 0..2^64-1")
	r = NewReader([]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	_, err = r.IntIn(0, math.MaxInt64)
	assert.Error(t, err, "2^64-1 does not fit int64")
	r = NewReader([]byte{0xc5, 0xff})
	_, err = r.Bin()
	assert.ErrorIs(t, err, ErrMalformed, "truncated header")
}

func toI64(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	panic("not signed")
}

func toU64(v any) uint64 {
	switch x := v.(type) {
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	case int:
		return uint64(x)
	}
	panic("not unsigned")
}

// nested returns depth one-element arrays around a nil.
func nested(depth int) []byte {
	return append(bytes.Repeat([]byte{0x91}, depth), 0xc0)
}

func TestCheckBody(t *testing.T) {
	ok := AppendValue(nil, Obj{{"id", 1}, {"method", "ping"}})
	tests := []struct {
		name string
		body []byte
		want string // "" = accepted
	}{
		{"request", ok, ""},
		{"empty map", []byte{0x80}, ""},
		{"empty", []byte{}, "empty body"},
		{"not a map", []byte{0x01}, "the body is a int, want a map"},
		{"array", []byte{0x90}, "the body is a array, want a map"},
		{"trailing", append(append([]byte{}, ok...), 0x00), "1 trailing bytes"},
		{"truncated", ok[:len(ok)-1], "str of 4 bytes at byte 12 exceeds the frame"},
		{"truncated header", []byte{0x81, 0xa1, 'x', 0xdb, 0x00}, "truncated at byte 3"},
		{"reserved code", []byte{0x81, 0xa1, 'x', 0xc1}, "unsupported type code 0xc1"},
		{"ext", []byte{0x81, 0xa1, 'x', 0xd4, 0x01, 0x02}, "unsupported type code 0xd4"},
		{"lying str", []byte{0x81, 0xa1, 'x', 0xdb, 0xff, 0xff, 0xff, 0xff}, "str of 4294967295 bytes"},
		{"lying bin", []byte{0x81, 0xa1, 'x', 0xc6, 0x7f, 0xff, 0xff, 0xff, 0x00}, "bin of 2147483647 bytes"},
		{"lying array", []byte{0x81, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}, "array of 4294967295 items"},
		{"lying map", []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0}, "map of 4294967295 pairs"},
		{"depth 32", append([]byte{0x81, 0xa1, 'x'}, nested(31)...), ""},
		{"depth 33", append([]byte{0x81, 0xa1, 'x'}, nested(32)...), "nesting deeper than 32"},
		{"deep 1 MiB", append([]byte{0x81, 0xa1, 'x'}, nested(1<<20)...), "nesting deeper than 32"},
		{"truncated uint64", []byte{0x81, 0xa1, 'x', 0xcf, 0x00}, "int of 8 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckMap(tt.body)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMalformed)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestBinHeaderExample checks the bin of docs/PROTOCOL.md's step example:
// actions 61 and 29 as a bin of int32, and a bin header always of the bin
// forms.
func TestBinHeaderExample(t *testing.T) {
	actions := AppendBinHeader(nil, 8)
	actions = append(actions, 0x3d, 0, 0, 0, 0x1d, 0, 0, 0)
	assert.Equal(t, mustHex(t, "c4 08 3d 00 00 00 1d 00 00 00"), actions)
	assert.Equal(t, mustHex(t, "c5 03 20"), AppendBinHeader(nil, 800))
}

func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// TestEachKey reads maps key by key: every key once, in order; a repeated
// key, a key that is not a str, a map of more than MaxKeys keys and fn's
// own error are refused, the last one as fn returned it.
func TestEachKey(t *testing.T) {
	many := make(Obj, MaxKeys+1)
	for i := range many {
		many[i] = KV{strings.Repeat("k", i+1), i}
	}
	errFn := errors.New("fn refused")
	tests := []struct {
		name string
		body []byte
		want string // "" = accepted
		is   error
	}{
		{"two keys", AppendValue(nil, Obj{{"a", 1}, {"b", "x"}}), "", nil},
		{"empty", AppendValue(nil, Obj{}), "", nil},
		{"max keys", AppendValue(nil, many[:MaxKeys]), "", nil},
		{"too many keys", AppendValue(nil, many), "33 keys, more than any map of the protocol has (32)", nil},
		{"repeated", AppendValue(nil, Obj{{"a", 1}, {"b", 2}, {"a", 3}}), `key "a" appears twice`, nil},
		{"int key", []byte{0x81, 0x01, 0x02}, "keys must be strings: want str, got int", nil},
		{"not a map", AppendValue(nil, []int{1}), "want map, got array", nil},
		{"fn fails", AppendValue(nil, Obj{{"stop", 1}}), "fn refused", errFn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(tt.body)
			var keys []string
			err := EachKey(&r, func(k []byte) error {
				if string(k) == "stop" {
					return errFn
				}
				keys = append(keys, string(k))
				_, err := r.Skip()
				return err
			})
			if tt.want != "" {
				require.Error(t, err)
				assert.EqualError(t, err, tt.want)
				if tt.is != nil {
					assert.ErrorIs(t, err, tt.is)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(tt.body), r.Offset(), "the whole map is read")
			var m map[string]any
			require.NoError(t, msgpack.Unmarshal(tt.body, &m))
			assert.Len(t, keys, len(m))
		})
	}
	var rk RepeatedKeyError
	r := NewReader(AppendValue(nil, Obj{{strings.Repeat("x", 100), 1}, {strings.Repeat("x", 100), 2}}))
	err := EachKey(&r, func([]byte) error { _, err := r.Skip(); return err })
	require.ErrorAs(t, err, &rk)
	assert.Len(t, rk.Key, 100)
	assert.Equal(t, `key "`+strings.Repeat("x", 64)+`..." appears twice`, err.Error(), "a long key is clipped")
}

// TestEachKeyAllocatesNothing: reading a map of params costs nothing.
func TestEachKeyAllocatesNothing(t *testing.T) {
	body := AppendValue(nil, Obj{{"handle", 1}, {"actions", []byte{1, 0, 0, 0}}, {"info", true}})
	allocs := testing.AllocsPerRun(100, func() {
		r := NewReader(body)
		_ = EachKey(&r, func([]byte) error { _, err := r.Skip(); return err })
	})
	assert.Zero(t, allocs)
}

// TestSkipN steps over n values and reports how many it stepped over
// before a failure.
func TestSkipN(t *testing.T) {
	r := NewReader(AppendValue(nil, []any{1, "x", Obj{{"a", nil}}}))
	n, err := r.ArrayLen()
	require.NoError(t, err)
	got, err := r.SkipN(n)
	require.NoError(t, err)
	assert.Equal(t, 3, got)
	r = NewReader([]byte{0x01, 0x02, 0xc1})
	got, err = r.SkipN(3)
	assert.ErrorIs(t, err, ErrMalformed)
	assert.Equal(t, 2, got)
}

// TestAppendEncodedIsAppendValue: a struct encoded by the library (compact
// ints, tag order) is byte for byte the ordered map AppendValue writes,
// appended after what dst held.
func TestAppendEncodedIsAppendValue(t *testing.T) {
	type inner struct {
		N uint64 `msgpack:"n"`
	}
	v := struct {
		A int     `msgpack:"a"`
		B string  `msgpack:"b"`
		C []int   `msgpack:"c"`
		D inner   `msgpack:"d"`
		E float64 `msgpack:"e"`
		F Obj     `msgpack:"f"`
	}{A: -300, B: "x", C: []int{1, 70000}, D: inner{N: 200}, E: 0.5, F: Obj{{"z", true}, {"y", nil}}}
	got, err := AppendEncoded([]byte{0xc0}, v)
	require.NoError(t, err)
	want := AppendValue([]byte{0xc0}, Obj{{"a", -300}, {"b", "x"}, {"c", []int{1, 70000}}, {"d", Obj{{"n", uint64(200)}}}, {"e", 0.5}, {"f", Obj{{"z", true}, {"y", nil}}}})
	assert.Equal(t, want, got)
	_, err = AppendEncoded(nil, make(chan int))
	assert.Error(t, err)
}

func TestCheckOne(t *testing.T) {
	one := AppendValue(nil, Obj{{"a", 1}})
	cases := []struct {
		name string
		b    []byte
		err  string
	}{
		{"one value", one, ""},
		{"trailing bytes", append(one, 0xc0, 0xc0), "2 trailing bytes"},
		{"truncated", one[:len(one)-1], "truncated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOne(tc.b)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

func TestF32Bin(t *testing.T) {
	in := []float32{1.5, -2, 0}
	r := NewReader(AppendF32Bin(nil, in))
	dst := make([]float32, 0, 8)
	got, err := r.F32Bin(dst)
	require.NoError(t, err)
	assert.Equal(t, in, got)
	assert.Same(t, &dst[:1][0], &got[0], "dst reused")
	r = NewReader(AppendBin(nil, []byte{1, 2, 3}))
	_, err = r.F32Bin(nil)
	assert.ErrorContains(t, err, "3 bytes is not a whole number of float32")
	r = NewReader(AppendStr(nil, "x"))
	_, err = r.F32Bin(nil)
	assert.Error(t, err)
}
