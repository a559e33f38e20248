package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// frame wraps a body in a frame header.
func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// readResponse reads one response frame from a raw connection and decodes it.
func readResponse(t *testing.T, nc net.Conn) map[string]any {
	t.Helper()
	var hdr [4]byte
	_, err := io.ReadFull(nc, hdr[:])
	require.NoError(t, err)
	body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	_, err = io.ReadFull(nc, body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(body, &m))
	return m
}

// respCode returns the error code of a decoded response, or "".
func respCode(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return e["code"].(string)
	}
	return ""
}

// assertClosed checks the server closed nc.
func assertClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := nc.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the server closed the connection")
}

// TestMalformedInput sends broken requests on one connection: each gets an
// error response (with the request's id when it could be read) and the
// connection keeps working; a second connection is served throughout.
func TestMalformedInput(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			ts := startServer(t, network, Config{})
			other := ts.client(t)
			nc := ts.rawConn(t)
			c := client.NewClient(nc)
			_, err := c.Hello("")
			require.NoError(t, err)
			tests := []struct {
				name string
				body []byte
				code string
				id   any
			}{
				{"garbage", []byte("hello, server"), "bad_frame", nil},
				{"not a map", msgp.AppendValue(nil, []int{1, 2}), "bad_frame", nil},
				{"trailing bytes", append(msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "ping"}}), 0xc0), "bad_frame", nil},
				{"deep", append([]byte{0x82, 0xa2, 'i', 'd', 0x07, 0xa1, 'x'}, nested(200000)...), "bad_frame", nil},
				{"ext type", []byte{0x81, 0xa2, 'i', 'd', 0xd4, 0, 0}, "bad_frame", nil},
				{"no method", msgp.AppendValue(nil, msgp.Obj{{"id", 2}}), "bad_request", int8(2)},
				{"method not str", msgp.AppendValue(nil, msgp.Obj{{"id", 3}, {"method", 5}}), "bad_request", int8(3)},
				{"id str", msgp.AppendValue(nil, msgp.Obj{{"id", "x"}, {"method", "ping"}}), "bad_request", nil},
				{"params list", msgp.AppendValue(nil, msgp.Obj{{"id", 4}, {"method", "ping"}, {"params", []int{1}}}), "bad_request", int8(4)},
				{"unknown key", msgp.AppendValue(nil, msgp.Obj{{"id", 5}, {"method", "ping"}, {"jsonrpc", "2.0"}}), "bad_request", int8(5)},
				{"unknown method", msgp.AppendValue(nil, msgp.Obj{{"id", 6}, {"method", "shutdown"}}), "unknown_method", int8(6)},
				{"key not str", []byte{0x81, 0x01, 0x02}, "bad_request", nil},
				{"huge id", msgp.AppendValue(nil, msgp.Obj{{"id", uint64(1 << 63)}, {"method", "launch"}}), "unknown_method", uint64(1 << 63)},
				{"negative id", msgp.AppendValue(nil, msgp.Obj{{"id", -7}, {"method", "launch"}}), "unknown_method", int8(-7)},
				{"repeated id", msgp.AppendValue(nil, msgp.Obj{{"id", 9}, {"method", "ping"}, {"id", 10}}), "bad_request", int8(9)},
				{"repeated param", msgp.AppendValue(nil, msgp.Obj{{"id", 11}, {"method", "make"}, {"params", msgp.Obj{{"n", 1}, {"n", 2}}}}), "bad_request", int8(11)},
				{"step wrong types", msgp.AppendValue(nil, msgp.Obj{{"id", 8}, {"method", "step"}, {"params", msgp.Obj{{"handle", 1.5}}}}), "bad_request", int8(8)},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					_, err := nc.Write(frame(tt.body))
					require.NoError(t, err)
					m := readResponse(t, nc)
					assert.Equal(t, tt.code, respCode(m), "%v", m)
					assert.Equal(t, tt.id, m["id"])
					_, err = c.Call("ping", nil)
					assert.NoError(t, err, "the connection still works")
				})
			}
			_, err = other.Call("ping", nil)
			assert.NoError(t, err)
		})
	}
}

// TestFatalFrames covers what closes a connection: a declared length out of
// range, and a client that vanishes mid-frame. Other connections go on.
func TestFatalFrames(t *testing.T) {
	ts := startServer(t, "tcp", Config{MaxFrame: 1 << 20})
	other := ts.client(t)
	h := makeHandle(t, other, map[string]any{"n": 4})
	do(t, other, "reset", map[string]any{"handle": h, "seed": 1})
	t.Run("huge length", func(t *testing.T) {
		nc := ts.rawConn(t)
		_, err := nc.Write([]byte{0xff, 0xff, 0xff, 0xff})
		require.NoError(t, err)
		m := readResponse(t, nc)
		assert.Equal(t, "frame_too_large", respCode(m))
		assert.Contains(t, m["error"].(map[string]any)["message"], "4294967295")
		assertClosed(t, nc)
	})
	t.Run("just over", func(t *testing.T) {
		nc := ts.rawConn(t)
		_, err := nc.Write(binary.BigEndian.AppendUint32(nil, 1<<20+1))
		require.NoError(t, err)
		assert.Equal(t, "frame_too_large", respCode(readResponse(t, nc)))
		assertClosed(t, nc)
	})
	t.Run("zero length", func(t *testing.T) {
		nc := ts.rawConn(t)
		_, err := nc.Write([]byte{0, 0, 0, 0})
		require.NoError(t, err)
		assert.Equal(t, "frame_too_large", respCode(readResponse(t, nc)))
		assertClosed(t, nc)
	})
	t.Run("vanish mid-frame", func(t *testing.T) {
		for _, cut := range []int{2, 4, 10} {
			nc := ts.rawConn(t)
			body := msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "hello"}})
			_, err := nc.Write(frame(body)[:cut])
			require.NoError(t, err)
			nc.Close()
		}
		nc := ts.rawConn(t)
		_, err := nc.Write(binary.BigEndian.AppendUint32(nil, 1<<20)) // promises 1 MiB, sends nothing
		require.NoError(t, err)
		nc.Close()
	})
	r, err := other.Step(h, make([]int32, 4), -1)
	if err == nil {
		t.Fatalf("step with action 0 everywhere should be illegal somewhere, got %v", r.Terminated)
	}
	assert.Equal(t, protocol.CodeIllegalAction, errCode(err))
	res := do(t, other, "reset", map[string]any{"handle": h, "seed": 1})
	_, err = other.Step(h, legalFrom(res["mask"].([]byte), 4), -1)
	assert.NoError(t, err, "the other connection was served throughout")
	require.Eventually(t, func() bool {
		st := do(t, other, "stats", nil)
		return toI(st["connections"]) == 1
	}, 5*time.Second, 10*time.Millisecond, "the dropped connections are gone")
}

func TestIdleTimeout(t *testing.T) {
	ts := startServer(t, "unix", Config{IdleTimeout: 100 * time.Millisecond})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 10})
	assertClosed(t, c.Conn())
	c2 := ts.client(t)
	require.Eventually(t, func() bool {
		st, err := c2.Call("stats", nil)
		return err == nil && toI(st["envs"]) == 0
	}, 5*time.Second, 20*time.Millisecond, "the idle connection's envs were freed")
	_ = h
}

func TestLimits(t *testing.T) {
	ts := startServer(t, "unix", Config{MaxConns: 2, MaxEnvsPerConn: 10, MaxEnvs: 15})
	a := ts.client(t)
	b := ts.client(t)
	t.Run("connections", func(t *testing.T) {
		nc := ts.rawConn(t)
		m := readResponse(t, nc)
		assert.Equal(t, "limit_exceeded", respCode(m))
		assert.Nil(t, m["id"])
		assertClosed(t, nc)
	})
	t.Run("envs per connection", func(t *testing.T) {
		makeHandle(t, a, map[string]any{"n": 6})
		_, err := a.Call("make", map[string]any{"n": 5})
		assert.Equal(t, protocol.CodeLimitExceeded, errCode(err))
		makeHandle(t, a, map[string]any{"n": 4})
	})
	t.Run("envs in total", func(t *testing.T) {
		_, err := b.Call("make", map[string]any{"n": 6})
		assert.Equal(t, protocol.CodeLimitExceeded, errCode(err), "10 held by a, 15 allowed")
		makeHandle(t, b, map[string]any{"n": 5})
	})
	t.Run("closing frees", func(t *testing.T) {
		a.Close()
		require.Eventually(t, func() bool {
			_, err := b.Call("make", map[string]any{"n": 5})
			return err == nil
		}, 5*time.Second, 10*time.Millisecond, "a's envs are freed")
		// The connection's slot is given back when its goroutine ends, which
		// may be a moment after its envs: a new client gets in once it is.
		require.Eventually(t, func() bool {
			c, err := client.Dial(ts.addr, 5*time.Second)
			if err != nil {
				return false
			}
			defer c.Close()
			if _, err := c.Hello(ts.srv.cfg.Token); err != nil {
				return false
			}
			_, err = c.Call("ping", nil)
			return err == nil
		}, 5*time.Second, 10*time.Millisecond, "a's connection slot is freed")
	})
}

// TestPipelining sends several requests before reading: answers come in order.
func TestPipelining(t *testing.T) {
	ts := startServer(t, "tcp", Config{})
	nc := ts.rawConn(t)
	c := client.NewClient(nc)
	_, err := c.Hello("")
	require.NoError(t, err)
	var burst []byte
	for id := 10; id < 20; id++ {
		method := "ping"
		if id%3 == 0 {
			method = "nope"
		}
		burst = append(burst, frame(msgp.AppendValue(nil, msgp.Obj{{"id", id}, {"method", method}}))...)
	}
	_, err = nc.Write(burst)
	require.NoError(t, err)
	for id := 10; id < 20; id++ {
		m := readResponse(t, nc)
		assert.EqualValues(t, id, m["id"])
		if id%3 == 0 {
			assert.Equal(t, "unknown_method", respCode(m))
		} else {
			assert.Equal(t, map[string]any{}, m["result"])
		}
	}
}

func TestListen(t *testing.T) {
	path := socketPath(t)
	l, addr, err := Listen("unix:" + path)
	require.NoError(t, err)
	assert.Equal(t, "unix:"+path, addr)
	_, _, err = Listen("unix:" + path)
	assert.ErrorContains(t, err, "another server is listening")
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	l, _, err = Listen("unix:" + path)
	require.NoError(t, err, "a stale socket file is replaced")
	l.Close()
	_, _, err = Listen("localhost")
	assert.ErrorIs(t, err, ErrConfig)
	_, _, err = Listen("unix:")
	assert.ErrorIs(t, err, ErrConfig)
	tests := map[string]bool{
		"127.0.0.1:7777": false, "127.0.0.2:1": false, "[::1]:7777": false, "localhost:7777": false,
		"unix:/tmp/x.sock": false, "0.0.0.0:7777": true, ":7777": true, "192.168.1.4:7777": true,
		"example.com:80": true, "garbage": true,
	}
	for addr, want := range tests {
		assert.Equal(t, want, NeedsToken(addr), addr)
	}
}

func TestConfig(t *testing.T) {
	_, err := New(Config{MaxFrame: 10})
	assert.ErrorIs(t, err, ErrConfig)
	_, err = New(Config{MaxConns: -1})
	assert.ErrorIs(t, err, ErrConfig)
	assert.True(t, bytes.HasPrefix(errorFrame(nil, nil, protocol.CodeInternal, string(make([]byte, 9000)))[4:], []byte{0x82}))
}
