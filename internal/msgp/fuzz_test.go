package msgp

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// FuzzCheckMap checks the allocation-free checker against the msgpack
// library: what it accepts the library's Skip accepts and the Reader steps
// over exactly; what it refuses while the library would accept is refused
// for a documented reason (depth, ext types, not a map). Nothing panics.
// (Its corpus was FuzzFrameDecoder's, when this codec lived in server/.)
func FuzzCheckMap(f *testing.F) {
	seeds := []Obj{
		{{"id", 1}, {"method", "hello"}, {"params", Obj{{"protocol", 1}, {"client", "fuzz"}}}},
		{{"id", 2}, {"method", "ping"}},
		{{"id", 4}, {"method", "make"}, {"params", Obj{{"mode", "multi"}, {"rules", Obj{{"players", 4}, {"back_do", false}}}}}},
		{{"id", 5}, {"method", "reset"}, {"params", Obj{{"handle", 1}, {"seed", []uint64{1, 2}}, {"options", Obj{{"start", 1}}}}}},
		{{"id", 6}, {"method", "step"}, {"params", Obj{{"handle", 1}, {"actions", []byte{59, 0, 0, 0}}, {"info", true}}}},
		{{"f", 0.5}, {"g", float32(-1)}, {"i", int64(-1 << 40)}, {"n", nil}, {"a", []any{"x", []int{1}}}},
	}
	for _, s := range seeds {
		f.Add(AppendValue(nil, s))
	}
	f.Add([]byte{0x81, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add(append([]byte{0x81, 0xa1, 'x'}, nested(40)...))
	f.Fuzz(func(t *testing.T, body []byte) {
		err := CheckMap(body)
		if err == nil {
			r := NewReader(body)
			got, err := r.Skip()
			require.NoError(t, err)
			require.Equal(t, body, got)
			require.Equal(t, byte('m'), kindOf(body))
			lr := bytes.NewReader(body)
			require.NoError(t, msgpack.NewDecoder(lr).Skip(), "CheckMap accepted what the library refuses")
			require.Zero(t, lr.Len())
			return
		}
		if len(body) > 1<<16 {
			return // keep the library's recursive Skip away from deep inputs
		}
		lr := bytes.NewReader(body)
		if msgpack.NewDecoder(lr).Skip() != nil || lr.Len() != 0 {
			return // both refuse
		}
		msg := err.Error()
		for _, reason := range []string{"nesting deeper than", "unsupported type code", "want a map"} {
			if bytes.Contains([]byte(msg), []byte(reason)) {
				return
			}
		}
		t.Fatalf("CheckMap refused %x (%v), the library accepts it", body, err)
	})
}

func kindOf(b []byte) byte {
	r := NewReader(b)
	return r.PeekKind()
}
