package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// fuzzRequests are seed request bodies for every method.
func fuzzRequests() [][]byte {
	reqs := []obj{
		{{"id", 1}, {"method", "hello"}, {"params", obj{{"protocol", 1}, {"client", "fuzz"}}}},
		{{"id", 2}, {"method", "ping"}},
		{{"id", 3}, {"method", "make"}, {"params", obj{{"n", 2}, {"rules", "players=3"}, {"tier", "planes"}, {"info", true}}}},
		{{"id", 4}, {"method", "make"}, {"params", obj{{"mode", "multi"}, {"rules", obj{{"players", 4}, {"back_do", false}}}, {"autoreset", "same_step"}}}},
		{{"id", 5}, {"method", "reset"}, {"params", obj{{"handle", 1}, {"seed", []uint64{1, 2}}, {"options", obj{{"start", 1}}}}}},
		{{"id", 6}, {"method", "step"}, {"params", obj{{"handle", 1}, {"actions", i32bin(59, 89)}, {"info", true}}}},
		{{"id", 7}, {"method", "step"}, {"params", obj{{"handle", 1}, {"actions", []int{59, 89}}}}},
		{{"id", 8}, {"method", "save"}, {"params", obj{{"handle", 1}, {"index", 1}}}},
		{{"id", 9}, {"method", "load"}, {"params", obj{{"handle", 1}, {"index", 0}, {"state", []byte{0x80}}}}},
		{{"id", 10}, {"method", "render"}, {"params", obj{{"handle", 1}, {"index", 0}}}},
		{{"id", 11}, {"method", "stats"}},
		{{"id", 12}, {"method", "close"}, {"params", obj{{"handle", 1}}}},
		{{"id", 13}, {"method", "observe"}, {"params", obj{{"handle", 1}, {"seat", 1}}}},
		{{"id", 14}, {"method", "reset"}, {"params", obj{{"handle", 1}, {"options", obj{{"start", 0}, {"start", 1}}}}}},
		{{"id", 15}, {"method", "make"}, {"params", obj{{"rules", obj{{"players", 3}, {"players", 2}}}}}},
	}
	var out [][]byte
	for _, r := range reqs {
		out = append(out, appendValue(nil, r))
	}
	return out
}

// FuzzFrameDecoder checks the allocation-free body checker against the
// msgpack library: what it accepts the library's Skip accepts and the reader
// steps over exactly; what it refuses while the library would accept is
// refused for a documented reason (depth, ext types, not a map). Nothing
// panics.
func FuzzFrameDecoder(f *testing.F) {
	for _, b := range fuzzRequests() {
		f.Add(b)
	}
	f.Add([]byte{0x81, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add(append([]byte{0x81, 0xa1, 'x'}, nested(40)...))
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkBody(body)
		if err == nil {
			r := reader{b: body}
			got, err := r.skip()
			require.NoError(t, err)
			require.Equal(t, body, got)
			require.Equal(t, byte('m'), readHeadKind(body))
			lr := bytes.NewReader(body)
			require.NoError(t, msgpack.NewDecoder(lr).Skip(), "checkBody accepted what the library refuses")
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
		t.Fatalf("checkBody refused %x (%v), the library accepts it", body, err)
	})
}

func readHeadKind(b []byte) byte {
	h, _ := readHead(b)
	return h.kind
}

// newFuzzConn returns an authenticated connection with handle 1 (2 envs,
// single mode, info on) reset, served in memory.
func newFuzzConn(t testing.TB, srv *Server) *conn {
	a, _ := net.Pipe()
	c := newConn(srv, a)
	c.authed = true
	for _, req := range fuzzRequests()[2:5] {
		c.serveFrame(req, false)
	}
	require.Len(t, c.handles, 2)
	require.True(t, c.handles[1].Started())
	return c
}

// checkResponse checks that out is one well-formed response frame and
// returns its error code ("" for a result).
func checkResponse(t *testing.T, out []byte) string {
	require.GreaterOrEqual(t, len(out), 4)
	require.Equal(t, len(out)-4, int(binary.BigEndian.Uint32(out)), "frame length")
	var resp struct {
		ID     any            `msgpack:"id"`
		Result any            `msgpack:"result"`
		Error  map[string]any `msgpack:"error"`
	}
	require.NoError(t, checkBody(out[4:]))
	require.NoError(t, msgpack.Unmarshal(out[4:], &resp))
	if resp.Error != nil {
		require.Nil(t, resp.Result)
		code, _ := resp.Error["code"].(string)
		require.NotEmpty(t, code)
		return code
	}
	return ""
}

// FuzzDispatch serves arbitrary request bodies on a connection that holds a
// live handle: every body gets exactly one well-formed response frame, and
// none makes the server fail internally.
func FuzzDispatch(f *testing.F) {
	for _, b := range fuzzRequests() {
		f.Add(b)
	}
	f.Add(appendValue(nil, obj{{"id", 1}, {"method", "step"}, {"params", obj{{"handle", 1}, {"actions", i32bin(-5, 1<<30)}}}}))
	f.Add(appendValue(nil, obj{{"method", "reset"}, {"params", obj{{"handle", 2}, {"options", obj{{"seat", "random"}}}}}}))
	srv, err := New(Config{MaxEnvsPerConn: 64, MaxFrame: 1 << 20})
	require.NoError(f, err)
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, body []byte) {
		c := newFuzzConn(t, srv)
		defer c.cleanup()
		c.serveFrame(body, false)
		code := checkResponse(t, c.out)
		if code == string(CodeInternal) {
			t.Fatalf("internal error for %x: %s", body, c.out)
		}
		// The connection still serves a valid request afterwards.
		c.serveFrame(fuzzRequests()[1], false)
		require.Equal(t, "", checkResponse(t, c.out))
	})
}

// FuzzFrames feeds an arbitrary byte stream to a connection's read loop
// over an in-memory pipe: it answers or drops the stream and always ends.
func FuzzFrames(f *testing.F) {
	hello := frame(fuzzRequests()[0])
	f.Add(hello)
	f.Add(append(append([]byte{}, hello...), frame(fuzzRequests()[2])...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 5, 0x81})
	f.Add(append(append([]byte{}, hello...), 0, 0, 0, 0))
	srv, err := New(Config{MaxEnvsPerConn: 64, MaxFrame: 1 << 20, IdleTimeout: 5 * time.Second})
	require.NoError(f, err)
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, stream []byte) {
		a, b := net.Pipe()
		c := newConn(srv, a)
		served := make(chan struct{})
		go func() {
			c.serve()
			close(served)
		}()
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, b)
			close(drained)
		}()
		b.SetWriteDeadline(time.Now().Add(5 * time.Second))
		b.Write(stream)
		b.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatalf("the connection did not end for stream %x", stream)
		}
		<-drained
	})
}
