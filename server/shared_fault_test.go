//go:build linux

package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/yutenv/yutenv/vecenv"
)

// A client holds its region's descriptor: the seals keep it from changing
// the region's size, which would make the server's next write a SIGBUS.
func TestSharedRegionCannotBeResized(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 4, "opponent": "random"})
	res, fd, err := c.Share(h, 0)
	require.NoError(t, err)
	defer unix.Close(fd)

	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	require.NoError(t, err)
	want := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL
	assert.Equal(t, want, seals&want, "the region is sealed against shrinking, growing and new seals")
	for _, size := range []int64{0, int64(res.Size) / 2, int64(res.Size) * 2} {
		assert.ErrorIs(t, unix.Ftruncate(fd, size), unix.EPERM, "ftruncate to %d", size)
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE)
	assert.ErrorIs(t, err, unix.EPERM, "no seal can be added (F_SEAL_SEAL)")

	_, err = c.Call("reset", map[string]any{"handle": h, "seed": 1, "shared": true})
	require.NoError(t, err, "the server goes on using the region")
}

// Where a region cannot be sealed (a plain file on macOS, or here with the
// seals turned off), a client that shrinks its region loses its own
// connection at the server's next write into it, and no one else's: the
// other client's batch keeps stepping on the same server. Batches small
// enough to step in the connection's goroutine and large enough to be
// split over the pool's workers fault in different goroutines.
func TestShrunkRegionEndsOnlyItsConnection(t *testing.T) {
	sealRegions = false
	t.Cleanup(func() { sealRegions = true })
	ts := startServer(t, "unix", Config{Workers: 4})
	for _, tc := range []struct {
		name   string
		n      int
		method string // the request after the shrink: its first touch of the region faults
	}{
		{"a reset in the connection's goroutine", 3, "reset"},
		{"a reset in the pool's workers", 1024, "reset"},
		{"a step reading the region's doorbell", 3, "step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			bad, good := ts.client(t), ts.client(t)
			params := map[string]any{"n": n, "opponent": "greedy"}
			hb, hg := makeHandle(t, bad, params), makeHandle(t, good, params)
			_, fd, err := bad.Share(hb, 0)
			require.NoError(t, err)
			defer unix.Close(fd)
			reply, err := good.Call("reset", map[string]any{"handle": hg, "seed": 5})
			require.NoError(t, err)
			shrunk := map[string]any{"handle": hb, "seed": 5, "shared": true}
			if tc.method == "step" {
				_, err = bad.Call("reset", shrunk)
				require.NoError(t, err)
				shrunk = map[string]any{"handle": hb, "shared": true, "seq": 1}
			}

			require.NoError(t, unix.Ftruncate(fd, 0), "without seals the client can shrink its region")
			_, err = bad.Call(tc.method, shrunk)
			require.Error(t, err, "a touch of the shrunk region fails the request")
			assert.Contains(t, err.Error(), "memory fault")
			_, err = bad.Call("ping", nil)
			assert.Error(t, err, "the faulting connection is closed")

			acts := make([]int32, n)
			for step := range 30 {
				vecenv.FirstLegal(reply["mask"].([]byte), acts)
				reply, err = good.Call("step", map[string]any{"handle": hg, "actions": acts})
				require.NoError(t, err, "step %d of the other connection", step)
			}
			_, err = ts.client(t).Call("ping", nil)
			assert.NoError(t, err, "the server still takes new connections")
		})
	}
}
