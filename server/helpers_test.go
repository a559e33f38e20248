package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/protocol"
)

// testServer is a real server listening on a real socket.
type testServer struct {
	srv  *Server
	addr string
	done chan error
}

// networks are the two transports every protocol test runs over.
var networks = []string{"unix", "tcp"}

// socketPath returns a short Unix socket path (sun_path holds ~108 bytes,
// more than t.TempDir() names may leave).
func socketPath(t testing.TB) string {
	dir, err := os.MkdirTemp("", "yut")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

// startServer serves cfg on a fresh Unix socket or TCP loopback port and
// stops it when the test ends.
func startServer(t testing.TB, network string, cfg Config) *testServer {
	t.Helper()
	srv, err := New(cfg)
	require.NoError(t, err)
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = "unix:" + socketPath(t)
	}
	l, real, err := Listen(addr)
	require.NoError(t, err)
	ts := &testServer{srv: srv, addr: real, done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		select {
		case err := <-ts.done:
			if !errors.Is(err, ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Serve did not return after Shutdown")
		}
	})
	return ts
}

// dial connects a client without the handshake.
func (ts *testServer) dial(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.Dial(ts.addr, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.Conn().SetDeadline(time.Now().Add(60*time.Second)))
	t.Cleanup(func() { c.Close() })
	return c
}

// client connects and says hello.
func (ts *testServer) client(t testing.TB) *client.Client {
	t.Helper()
	c := ts.dial(t)
	_, err := c.Hello(ts.srv.cfg.Token)
	require.NoError(t, err)
	return c
}

// rawConn dials without a Client, for tests that send broken bytes.
func (ts *testServer) rawConn(t testing.TB) net.Conn {
	t.Helper()
	network, addr := "tcp", ts.addr
	if len(addr) > 5 && addr[:5] == "unix:" {
		network, addr = "unix", addr[5:]
	}
	nc, err := net.DialTimeout(network, addr, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, nc.SetDeadline(time.Now().Add(30*time.Second)))
	t.Cleanup(func() { nc.Close() })
	return nc
}

// makeHandle calls make and returns the handle id.
func makeHandle(t testing.TB, c *client.Client, params map[string]any) uint64 {
	t.Helper()
	res, err := c.Call("make", params)
	require.NoError(t, err)
	h, ok := client.Int(res["handle"])
	require.True(t, ok, "handle %v", res["handle"])
	return uint64(h)
}

// errCode returns the protocol error code of err, or "".
func errCode(err error) protocol.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// readFull reads exactly len(b) bytes.
func readFull(nc net.Conn, b []byte) (int, error) { return io.ReadFull(nc, b) }
