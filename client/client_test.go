package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/server"
)

// dial serves a real server on a Unix socket for the test and returns a
// client that said hello to it.
func dial(t *testing.T) *client.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "yutc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := server.New(server.Config{})
	require.NoError(t, err)
	l, addr, err := server.Listen("unix:" + filepath.Join(dir, "s.sock"))
	require.NoError(t, err)
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	c, err := client.Dial(addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.Conn().SetDeadline(time.Now().Add(60*time.Second)))
	hello, err := c.Hello("")
	require.NoError(t, err)
	v, ok := client.Int(hello["protocol"])
	require.True(t, ok)
	assert.Equal(t, protocol.Version, v)
	return c
}

// TestCallsByDeclaration: the client names a method by its declaration in
// package protocol (Do), never by a string of its own, and a server error
// comes back as a *protocol.Error.
func TestCallsByDeclaration(t *testing.T) {
	c := dial(t)
	_, err := client.Do(c, protocol.Ping, &protocol.None{})
	require.NoError(t, err)
	g, err := client.Do(c, protocol.Game, &protocol.GameParams{})
	require.NoError(t, err)
	n := 3
	st, err := client.Do(c, protocol.Initial, &protocol.InitialParams{Game: &g.Game, N: &n, Seed: 7})
	require.NoError(t, err)
	assert.Len(t, st.States, 3*env.PackedSize)
	one, err := client.Do(c, protocol.Describe, &protocol.StateParams{Game: &g.Game, State: st.States[:env.PackedSize]})
	require.NoError(t, err)
	assert.Equal(t, "throw", one.Position.Phase)
	_, err = client.Do(c, protocol.Describe, &protocol.StateParams{Game: &g.Game})
	var e *protocol.Error
	require.True(t, errors.As(err, &e), "a server error is a *protocol.Error: %v", err)
	assert.Equal(t, protocol.CodeBadRequest, e.Code)
	res, err := c.Call("ping", nil)
	require.NoError(t, err)
	assert.Empty(t, res)
}

// TestStep: Step sends int32 actions and reads the raw arrays of the
// result; an illegal action comes back as the server's error.
func TestStep(t *testing.T) {
	c := dial(t)
	n := 2
	h, err := client.Do(c, protocol.Make, &protocol.MakeParams{N: &n})
	require.NoError(t, err)
	res, err := c.Call("reset", map[string]any{"handle": h.Handle, "seed": 1})
	require.NoError(t, err)
	mask := res["mask"].([]byte)
	actions := make([]int32, n)
	_, err = c.Step(h.Handle, actions, 0)
	assert.ErrorIs(t, err, &protocol.Error{Code: protocol.CodeIllegalAction})
	for i := range actions {
		for a := range env.NumActions {
			if mask[i*env.NumActions+a] == 1 {
				actions[i] = int32(a)
				break
			}
		}
	}
	r, err := c.Step(h.Handle, actions, 1)
	require.NoError(t, err)
	assert.Len(t, r.ObsF32(), n*h.ObsSize)
	assert.Len(t, r.RewardF32(), n)
	assert.Len(t, r.Mask, n*env.NumActions)
	assert.NotNil(t, r.Info, "info asked for")
}
