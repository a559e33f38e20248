//go:build linux

package server

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
)

// sharedRegion is a test client's map of a handle's region.
type sharedRegion struct {
	mem    []byte
	fields map[string]protocol.ShareField
	seq    uint32
}

func (r *sharedRegion) word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }

func (r *sharedRegion) field(name string) []byte {
	f := r.fields[name]
	n := 1
	for _, d := range f.Shape {
		n *= d
	}
	if f.Type == "f32" || f.Type == "i32" || f.Type == "u32" {
		n *= 4
	}
	return r.mem[f.Offset : f.Offset+n]
}

// setActions writes the actions and the next request counter (not yet
// visible as req: ring or publish does that).
func (r *sharedRegion) setActions(acts []int32, op uint32) uint32 {
	a := r.field("actions")
	for i, v := range acts {
		binary.LittleEndian.PutUint32(a[4*i:], uint32(v))
	}
	atomic.StoreUint32(r.word(vecenv.SharedOp), op)
	r.seq++
	atomic.StoreUint32(r.word(vecenv.SharedReq), r.seq)
	return r.seq
}

// share calls share over c and maps the region passed with the reply.
func share(t *testing.T, c *client.Client, h uint64, spinUs int) *sharedRegion {
	t.Helper()
	res, fd, err := c.Share(h, spinUs)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.Equal(t, vecenv.SharedVersion, res.Version)
	mem, err := unix.Mmap(fd, 0, res.Size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Munmap(mem) })
	require.Equal(t, vecenv.SharedMagic, string(mem[:8]))
	r := &sharedRegion{mem: mem, fields: map[string]protocol.ShareField{}}
	for _, f := range res.Fields {
		r.fields[f.Name] = f
	}
	return r
}

// mappedRegions counts this process's mappings of shared regions.
func mappedRegions(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	return strings.Count(string(b), "yutenv-shared")
}

func TestSharedStepsGiveTheSocketsRows(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	for _, tc := range []struct {
		name   string
		spinUs int
		poll   bool // publish req and wait for done, without ringing
	}{
		{"rung over the socket", 0, false},
		{"served by the poll", 2000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The twin plays on its own connection: a request on the shared
			// handle's connection ends its poll.
			c, twin := ts.client(t), ts.client(t)
			make2 := map[string]any{"n": 3, "opponent": "greedy", "autoreset": "same_step"}
			plain, shared := makeHandle(t, twin, make2), makeHandle(t, c, make2)
			r := share(t, c, shared, tc.spinUs)
			want, err := twin.Call("reset", map[string]any{"handle": plain, "seed": 9})
			require.NoError(t, err)
			got, err := c.Call("reset", map[string]any{"handle": shared, "seed": 9, "shared": true})
			require.NoError(t, err)
			assert.Equal(t, want["seeds"], got["seeds"])
			assert.NotContains(t, got, "obs", "a shared reset leaves the rows in the region")
			acts := make([]int32, 3)
			polled := 0
			for step := range 60 {
				for _, k := range []string{"obs", "mask", "to_move"} {
					require.Equal(t, want[k], r.field(k), "step %d: %s", step, k)
				}
				vecenv.FirstLegal(want["mask"].([]byte), acts)
				want, err = twin.Call("step", map[string]any{"handle": plain, "actions": acts})
				require.NoError(t, err)
				seq := r.setActions(acts, vecenv.SharedOpStep)
				if tc.poll && atomic.LoadUint32(r.word(vecenv.SharedAwake)) == 1 {
					deadline := time.Now().Add(5 * time.Second)
					for atomic.LoadUint32(r.word(vecenv.SharedDone)) != seq && atomic.LoadUint32(r.word(vecenv.SharedAwake)) == 1 && time.Now().Before(deadline) {
					}
				}
				if atomic.LoadUint32(r.word(vecenv.SharedDone)) == seq {
					polled++
				} else {
					res, err := c.Call("step", map[string]any{"handle": shared, "shared": true, "seq": seq})
					require.NoError(t, err)
					assert.EqualValues(t, seq, res["seq"])
				}
				for _, k := range []string{"reward", "terminated", "truncated", "final_obs", "final_mask", "final_to_move"} {
					require.Equal(t, want[k], r.field(k), "step %d: %s", step, k)
				}
			}
			if tc.poll {
				assert.Positive(t, polled, "the poll served steps without a ring")
			} else {
				assert.Zero(t, polled)
			}
		})
	}
}

func TestSharedRefusals(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 2})
	_, err := c.Call("reset", map[string]any{"handle": h, "seed": 1})
	require.NoError(t, err)
	_, err = c.Call("step", map[string]any{"handle": h, "shared": true, "seq": 1})
	assert.ErrorContains(t, err, "has no shared region (call share first)")
	_, err = c.Call("reset", map[string]any{"handle": h, "shared": true})
	assert.ErrorContains(t, err, "has no shared region")
	before := mappedRegions(t)
	r := share(t, c, h, 2000)
	assert.Equal(t, before+2, mappedRegions(t), "the server's map and the test's")
	_, err = c.Call("share", map[string]any{"handle": h})
	assert.ErrorContains(t, err, "share: handle")
	assert.ErrorContains(t, err, "is already shared")
	_, err = c.Call("reset", map[string]any{"handle": h, "seed": 1, "shared": true})
	require.NoError(t, err)

	cases := []struct {
		name    string
		actions []int32
		op      uint32
		want    string
	}{
		{"an action out of range", []int32{0, -5}, vecenv.SharedOpStep, "actions[1] = -5 is out of range"},
		{"a huge action", []int32{1 << 30, 0}, vecenv.SharedOpStep, "actions[0] = 1073741824 is out of range"},
		{"an unknown op", []int32{0, 0}, 99, "the region's op is 99"},
		{"an opponent_step with none pending", []int32{0, 0}, vecenv.SharedOpOpponent, "no env"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seq := r.setActions(tc.actions, tc.op)
			method := "step"
			if tc.op == vecenv.SharedOpOpponent {
				method = "opponent_step"
			}
			// Whether the poll or the ring meets the request first, the
			// ring's reply is its error.
			_, err := c.Call(method, map[string]any{"handle": h, "shared": true, "seq": seq})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 1, strings.Count(err.Error(), method+": "), "one method prefix")
			// The handle goes on: a legal step is served.
			m := r.field("mask")
			acts := make([]int32, 2)
			vecenv.FirstLegal(m, acts)
			seq = r.setActions(acts, vecenv.SharedOpStep)
			_, err = c.Call("step", map[string]any{"handle": h, "shared": true, "seq": seq})
			require.NoError(t, err)
		})
	}
	_, err = c.Call("step", map[string]any{"handle": h, "shared": true, "seq": r.seq + 7})
	assert.ErrorContains(t, err, "params.seq")
	_, err = c.Call("step", map[string]any{"handle": h, "shared": true, "seq": r.seq, "actions": []int32{0, 0}})
	assert.ErrorContains(t, err, "takes its actions from the region")

	// Another connection cannot share this one's handle.
	other := ts.client(t)
	_, err = other.Call("share", map[string]any{"handle": h})
	assert.Equal(t, protocol.CodeUnknownHandle, errCode(err))

	// Closing the handle unmaps the server's side.
	_, err = c.Call("close", map[string]any{"handle": h})
	require.NoError(t, err)
	assert.Equal(t, before+1, mappedRegions(t), "only the test's own map is left")
	assert.True(t, bytes.Equal(r.mem[:8], []byte(vecenv.SharedMagic)), "the client's map outlives the server's")
}

func TestShareNeedsAUnixSocket(t *testing.T) {
	ts := startServer(t, "tcp", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 1})
	_, err := c.Call("share", map[string]any{"handle": h})
	assert.Equal(t, protocol.CodeUnsupported, errCode(err))
	assert.ErrorContains(t, err, "Unix-socket connection")
}

func TestSharedRegionsGoWithTheirConnection(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	before := mappedRegions(t)
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 4, "rules": "players=3", "mode": "multi"})
	r := share(t, c, h, 0)
	assert.Len(t, r.field("reward"), 4*3*4, "multi mode: one reward per seat")
	assert.Equal(t, before+2, mappedRegions(t))
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for mappedRegions(t) != before+1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, before+1, mappedRegions(t), "the server unmapped the region of a connection that left")
}

// TestPeekAllocatesNothing: a polled region checks its socket many times a
// millisecond. After the first check (which sets the peeker up) a check
// allocates nothing, finds no bytes on a quiet socket, and finds them (or
// the peer's end) once they come.
func TestPeekAllocatesNothing(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	f := os.NewFile(uintptr(fds[0]), "server end")
	nc, err := net.FileConn(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	defer nc.Close()
	peer := os.NewFile(uintptr(fds[1]), "client end")
	srv, err := New(DefaultConfig())
	require.NoError(t, err)
	c := newConn(srv, nc)

	assert.False(t, c.readable(), "a quiet socket")
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.readable() }), "allocations per check")
	_, err = peer.Write([]byte{1})
	require.NoError(t, err)
	assert.True(t, c.readable(), "a byte waits")
	assert.True(t, c.readable(), "a peek reads nothing: it still waits")
	var b [1]byte
	_, err = c.r.Read(b[:])
	require.NoError(t, err)
	assert.False(t, c.readable(), "read")
	require.NoError(t, peer.Close())
	assert.True(t, c.readable(), "the peer's end is readable too: the read reports it")
}
