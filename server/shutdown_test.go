package server

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/internal/msgp"
)

// serveOn starts a server on a Unix socket without the test cleanup of
// startServer, for tests that shut it down themselves.
func serveOn(t *testing.T, cfg Config) (*Server, string, chan error) {
	srv, err := New(cfg)
	require.NoError(t, err)
	l, addr, err := Listen("unix:" + socketPath(t))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	return srv, addr, done
}

// TestGracefulShutdown shuts the server down while a step is being served:
// the step's response arrives whole, then the connection closes, the idle
// connection closes, Serve returns ErrServerClosed and the socket file is gone.
// holdNextFrame makes the server stop inside the next frame it serves: inFlight
// closes when it gets there, and it goes on once release is closed.
func holdNextFrame(t *testing.T) (inFlight, release chan struct{}) {
	inFlight, release = make(chan struct{}), make(chan struct{})
	testHookFrame = func() {
		close(inFlight)
		<-release
	}
	t.Cleanup(func() { testHookFrame = nil })
	return inFlight, release
}

// dialHello connects to addr and says hello; the connection closes with the test.
func dialHello(t *testing.T, addr string) *client.Client {
	c, err := client.Dial(addr, time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Hello("")
	require.NoError(t, err)
	return c
}

func TestGracefulShutdown(t *testing.T) {
	srv, addr, done := serveOn(t, Config{})
	busy, idle := dialHello(t, addr), dialHello(t, addr)
	h := makeHandle(t, busy, map[string]any{"n": 512})
	res, err := busy.Call("reset", map[string]any{"handle": h, "seed": 1})
	require.NoError(t, err)
	actions := legalFrom(res["mask"].([]byte), 512)

	inFlight, release := holdNextFrame(t)
	require.NoError(t, busy.SendStep(h, actions, -1))
	<-inFlight
	testHookFrame = nil
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	time.Sleep(50 * time.Millisecond) // let Shutdown close the listener and interrupt the reads
	close(release)

	r, err := busy.RecvStep()
	require.NoError(t, err, "the request in flight was answered")
	assert.Len(t, r.Terminated, 512)
	_, err = busy.ReadFrame()
	assert.Error(t, err, "then the connection closed")
	_, err = idle.Call("ping", nil)
	assert.Error(t, err, "the idle connection was closed")
	require.NoError(t, <-shut)
	assert.ErrorIs(t, <-done, ErrServerClosed)
	_, err = os.Stat(strings.TrimPrefix(addr, "unix:"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket file was removed")
	_, err = client.Dial(addr, time.Second)
	assert.Error(t, err, "nothing accepts any more")
}

// TestShutdownDeadline: a request that does not finish in time is cut off.
func TestShutdownDeadline(t *testing.T) {
	srv, addr, done := serveOn(t, Config{})
	c := dialHello(t, addr)
	inFlight, release := holdNextFrame(t)
	require.NoError(t, c.WriteFrame(msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "ping"}})))
	<-inFlight
	testHookFrame = nil
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	time.Sleep(300 * time.Millisecond)
	close(release)
	assert.True(t, errors.Is(<-shut, context.DeadlineExceeded))
	assert.ErrorIs(t, <-done, ErrServerClosed)
	assert.ErrorIs(t, srv.Serve(nil), ErrServerClosed, "a closed server serves nothing")
}

// TestShutdownRefusesQueued: a request queued behind the one in flight is
// answered shutting_down, with its id, and the connection closes.
func TestShutdownRefusesQueued(t *testing.T) {
	srv, addr, done := serveOn(t, Config{})
	c := dialHello(t, addr)
	inFlight, release := holdNextFrame(t)
	two := append(frame(msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "ping"}})), frame(msgp.AppendValue(nil, msgp.Obj{{"id", 2}, {"method", "ping"}}))...)
	_, err := c.Conn().Write(two)
	require.NoError(t, err)
	<-inFlight
	testHookFrame = nil
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	time.Sleep(50 * time.Millisecond)
	close(release)
	m := readResponse(t, c.Conn())
	assert.EqualValues(t, 1, m["id"])
	assert.Equal(t, map[string]any{}, m["result"])
	m = readResponse(t, c.Conn())
	assert.EqualValues(t, 2, m["id"])
	assert.Equal(t, "shutting_down", respCode(m))
	assertClosed(t, c.Conn())
	require.NoError(t, <-shut)
	assert.ErrorIs(t, <-done, ErrServerClosed)
}

// TestShutdownAnswersCancelledAnalyse: an analyse still searching at the
// shutdown's deadline is cancelled, and its client reads the promised
// answer, shutting_down with the request's id, before the connection
// closes (not an end of file instead of it).
func TestShutdownAnswersCancelledAnalyse(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			ts := startServer(t, network, Config{})
			c := ts.client(t)
			g := declareGame(t, c, "standard")
			require.NoError(t, c.WriteFrame(bigAnalyse(t, g)))
			time.Sleep(200 * time.Millisecond) // searching
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			shut := make(chan error, 1)
			go func() { shut <- ts.srv.Shutdown(ctx) }()

			require.NoError(t, c.Conn().SetReadDeadline(time.Now().Add(5*time.Second)))
			m := readResponse(t, c.Conn())
			assert.EqualValues(t, 7, m["id"], "the answer is the analyse's")
			assert.Equal(t, "shutting_down", respCode(m))
			assert.Contains(t, m["error"].(map[string]any)["message"], "the server is shutting down")
			assertClosed(t, c.Conn())
			err := <-shut
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotErrorIs(t, err, ErrAbandoned)
		})
	}
}
