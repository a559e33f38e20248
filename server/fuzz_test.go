package server

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// fuzzRequests are seed request bodies for every method.
func fuzzRequests() [][]byte {
	reqs := []msgp.Obj{
		{{"id", 1}, {"method", "hello"}, {"params", msgp.Obj{{"protocol", 1}, {"client", "fuzz"}}}},
		{{"id", 2}, {"method", "ping"}},
		{{"id", 3}, {"method", "make"}, {"params", msgp.Obj{{"n", 2}, {"rules", "players=3"}, {"tier", "planes"}, {"info", true}}}},
		{{"id", 4}, {"method", "make"}, {"params", msgp.Obj{{"mode", "multi"}, {"rules", msgp.Obj{{"players", 4}, {"back_do", false}}}, {"autoreset", "same_step"}}}},
		{{"id", 5}, {"method", "reset"}, {"params", msgp.Obj{{"handle", 1}, {"seed", []uint64{1, 2}}, {"options", msgp.Obj{{"start", 1}}}}}},
		{{"id", 6}, {"method", "step"}, {"params", msgp.Obj{{"handle", 1}, {"actions", i32bin(59, 89)}, {"info", true}}}},
		{{"id", 7}, {"method", "step"}, {"params", msgp.Obj{{"handle", 1}, {"actions", []int{59, 89}}}}},
		{{"id", 8}, {"method", "save"}, {"params", msgp.Obj{{"handle", 1}, {"index", 1}}}},
		{{"id", 9}, {"method", "load"}, {"params", msgp.Obj{{"handle", 1}, {"index", 0}, {"state", []byte{0x80}}}}},
		{{"id", 10}, {"method", "render"}, {"params", msgp.Obj{{"handle", 1}, {"index", 0}}}},
		{{"id", 11}, {"method", "stats"}},
		{{"id", 12}, {"method", "close"}, {"params", msgp.Obj{{"handle", 1}}}},
		{{"id", 13}, {"method", "observe"}, {"params", msgp.Obj{{"handle", 1}, {"seat", 1}}}},
		{{"id", 14}, {"method", "reset"}, {"params", msgp.Obj{{"handle", 1}, {"options", msgp.Obj{{"start", 0}, {"start", 1}}}}}},
		{{"id", 15}, {"method", "make"}, {"params", msgp.Obj{{"rules", msgp.Obj{{"players", 3}, {"players", 2}}}}}},
	}
	var out [][]byte
	for _, r := range reqs {
		out = append(out, msgp.AppendValue(nil, r))
	}
	return out
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
	require.NoError(t, msgp.CheckMap(out[4:]))
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
	f.Add(msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "step"}, {"params", msgp.Obj{{"handle", 1}, {"actions", i32bin(-5, 1<<30)}}}}))
	f.Add(msgp.AppendValue(nil, msgp.Obj{{"method", "reset"}, {"params", msgp.Obj{{"handle", 2}, {"options", msgp.Obj{{"seat", "random"}}}}}}))
	srv, err := New(Config{MaxEnvsPerConn: 64, MaxFrame: 1 << 20})
	require.NoError(f, err)
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, body []byte) {
		c := newFuzzConn(t, srv)
		defer c.cleanup()
		c.serveFrame(body, false)
		code := checkResponse(t, c.out)
		if code == string(protocol.CodeInternal) {
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
