package server

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
)

// The hostile-params suite: lying lengths, oversized arrays and repeated keys
// in every method's params.

// req encodes a request {id, method, params} whose params map is given as
// raw msgpack bytes.
func req(id int, method string, params []byte) []byte {
	b := msgp.AppendValue(nil, msgp.Obj{{"id", id}, {"method", method}})
	b[0]++ // one more key: params
	b = msgp.AppendStr(b, "params")
	return append(b, params...)
}

// rawMap encodes a map header of n entries followed by body (keys and values).
func rawMap(n int, body ...[]byte) []byte {
	b := []byte{0xdf, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(n))
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

// str encodes a msgpack str; arr32 an array32 header claiming n elements.
func str(s string) []byte { return msgp.AppendStr(nil, s) }
func arr32(n uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0xdd}, n)
}
func fixints(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 1
	}
	return b
}

// TestHostileLengths sends params whose arrays, maps and strings are far
// longer than anything they may hold, or claim lengths the frame does not
// have. Each must be answered with bad_request, the connection must keep
// working, and the server must allocate no more than a small multiple of
// the frame for it (docs/PROTOCOL.md, Limits).
func TestHostileLengths(t *testing.T) {
	ts := startServer(t, "unix", Config{MaxFrame: 4 << 20})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 2})
	do(t, c, "reset", map[string]any{"handle": h, "seed": 1})
	nc := c.Conn()
	handle := append(str("handle"), msgp.AppendUint(nil, h)...)
	const many = 1 << 20
	tests := []struct {
		name   string
		method string
		params []byte
	}{
		{"seed array far longer than the envs", "reset", rawMap(2, handle, str("seed"), arr32(many), fixints(many))},
		{"seed array claiming 2^31 elements", "reset", rawMap(2, handle, str("seed"), arr32(1<<31), fixints(16))},
		{"seed array before the handle", "reset", rawMap(2, str("seed"), arr32(many), fixints(many), handle)},
		{"actions claiming 2^31 elements", "step", rawMap(2, handle, str("actions"), arr32(1<<31), fixints(16))},
		{"actions far longer than the envs", "step", rawMap(2, handle, str("actions"), arr32(many), fixints(many))},
		{"rules map claiming 2^31 keys", "make", rawMap(1, str("rules"), rawMap(1<<31, str("players"), []byte{2}))},
		{"rules map of a million keys", "make", rawMap(1, str("rules"), rawMap(many/10, func() []byte {
			var b []byte
			for range many / 10 {
				b = append(b, 0xa0, 1) // "" = 1
			}
			return b
		}()))},
		{"params claiming 2^31 keys", "make", rawMap(1<<31, str("n"), []byte{1})},
		{"options claiming 2^31 keys", "reset", rawMap(2, handle, str("options"), rawMap(1<<31, str("start"), []byte{0}))},
		{"str claiming 2^31 bytes", "hello", rawMap(1, str("client"), binary.BigEndian.AppendUint32([]byte{0xdb}, 1<<31))},
		{"bin claiming 2^31 bytes", "load", rawMap(3, handle, str("index"), []byte{0}, str("state"), binary.BigEndian.AppendUint32([]byte{0xc6}, 1<<31))},
		{"observe seat as a huge str", "observe", rawMap(2, handle, str("seat"), binary.BigEndian.AppendUint32([]byte{0xdb}, 1<<31))},
	}
	var before, after runtime.MemStats
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := req(100+i, tt.method, tt.params)
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := nc.Write(frame(body))
			require.NoError(t, err)
			m := readResponse(t, nc)
			runtime.ReadMemStats(&after)
			assert.Contains(t, []string{"bad_request", "bad_frame"}, respCode(m), "%v", m["error"])
			// The frame is read into a buffer that grows as bytes arrive
			// (at most twice the frame); nothing else may be in proportion
			// to what the params claim.
			bound := 3*uint64(len(body)) + 1<<20
			assert.LessOrEqual(t, after.TotalAlloc-before.TotalAlloc, bound, "bytes allocated for a %d-byte frame", len(body))
			_, err = c.Call("ping", nil)
			assert.NoError(t, err, "the connection still works")
		})
	}
}

// TestRepeatedKeys sends a key twice in every map the server reads: each is
// refused with bad_request and the connection keeps working.
func TestRepeatedKeys(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 2})
	do(t, c, "reset", map[string]any{"handle": h, "seed": 1})
	nc := c.Conn()
	hv := msgp.AppendUint(nil, h)
	handle := append(str("handle"), hv...)
	acts := append(str("actions"), 0xc4, 8, 0, 0, 0, 0, 0, 0, 0, 0)
	tests := []struct {
		name   string
		method string
		params []byte
	}{
		{"hello params", "hello", rawMap(2, str("client"), str("a"), str("client"), str("b"))},
		{"make params", "make", rawMap(2, str("n"), []byte{1}, str("n"), []byte{2})},
		{"rules map", "make", rawMap(1, str("rules"), rawMap(2, str("players"), []byte{2}, str("players"), []byte{3}))},
		{"reset params", "reset", rawMap(2, handle, handle)},
		{"reset options", "reset", rawMap(2, handle, str("options"), rawMap(2, str("start"), []byte{0}, str("start"), []byte{1}))},
		{"step handle", "step", rawMap(3, handle, handle, acts)},
		{"step actions", "step", rawMap(3, handle, acts, acts)},
		{"step info", "step", rawMap(4, handle, acts, str("info"), []byte{0xc2}, str("info"), []byte{0xc3})},
		{"observe", "observe", rawMap(3, handle, str("seat"), []byte{0}, str("seat"), []byte{1})},
		{"save", "save", rawMap(3, handle, str("index"), []byte{0}, str("index"), []byte{1})},
		{"render", "render", rawMap(4, handle, str("index"), []byte{0}, str("format"), str("text"), str("format"), str("svg"))},
		{"close", "close", rawMap(2, handle, handle)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := nc.Write(frame(req(200+i, tt.method, tt.params)))
			require.NoError(t, err)
			m := readResponse(t, nc)
			assert.Equal(t, "bad_request", respCode(m), "%v", m)
			e, _ := m["error"].(map[string]any)
			assert.Contains(t, e["message"], "appears twice")
			_, err = c.Call("ping", nil)
			assert.NoError(t, err, "the connection still works")
		})
	}
	_, err := c.Call("save", map[string]any{"handle": h, "index": 1})
	assert.NoError(t, err, "the handle is still there")
}

// TestEnvBytesLimit: the envs' memory is budgeted in bytes as well as in
// count, so a tier with large rows cannot hold more than MaxEnvBytes
// however many envs the count allows; closing a handle returns its bytes.
func TestEnvBytesLimit(t *testing.T) {
	per := vecenv.Config{N: 1, Rules: env.Standard()}.Bytes(2042) // one tactical env
	ts := startServer(t, "unix", Config{MaxEnvBytes: 100 * per})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 60, "tier": "tactical"})
	_, err := c.Call("make", map[string]any{"n": 60, "tier": "tactical"})
	assert.Equal(t, protocol.CodeLimitExceeded, errCode(err))
	assert.ErrorContains(t, err, "bytes")
	makeHandle(t, c, map[string]any{"n": 60, "tier": "compact"}) // smaller rows fit
	do(t, c, "close", map[string]any{"handle": h})
	makeHandle(t, c, map[string]any{"n": 60, "tier": "tactical"})
}
