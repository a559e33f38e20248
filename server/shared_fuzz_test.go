//go:build unix

package server

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
)

// FuzzSharedRegion writes arbitrary bytes where a client writes in a
// shared region (the actions, op and req) and rings, and polls: whatever a
// client puts there gets a well-formed answer that is never an internal
// error, and the handle then serves a legal step.
func FuzzSharedRegion(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, uint32(1), uint32(1), true)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x40}, uint32(1), uint32(1), false)
	f.Add([]byte{7, 0, 0, 0, 200, 0, 0, 0}, uint32(2), uint32(1), true)
	f.Add([]byte{1, 2, 3}, uint32(99), uint32(5), false)
	srv, err := New(Config{MaxEnvsPerConn: 64, MaxFrame: 1 << 20})
	require.NoError(f, err)
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, actions []byte, op, req uint32, poll bool) {
		c := newFuzzConn(t, srv)
		defer c.cleanup()
		b := c.handles[1]
		l := vecenv.SharedLayoutOf(b.Config(), b.ObsSize())
		mem, fd, unmap, err := newRegion(l.Size)
		require.NoError(t, err)
		closeFD(fd)
		_, err = b.Share(mem)
		require.NoError(t, err)
		rg := &region{mem: mem, layout: l, spin: time.Millisecond, unmap: unmap}
		c.regions = map[uint64]*region{1: rg}
		act, _ := l.Field("actions")
		copy(mem[act.Offset:act.Offset+act.Bytes()], actions)
		binary.LittleEndian.PutUint32(mem[vecenv.SharedOp:], op)
		binary.LittleEndian.PutUint32(mem[vecenv.SharedReq:], req)
		if poll {
			rg.gap = 0
			c.pollShared(1) // serves or refuses the request, then gives up
		}
		ring := func(seq uint32) string {
			c.serveFrame(msgp.AppendValue(nil, msgp.Obj{{"id", 9}, {"method", "step"}, {"params", msgp.Obj{{"handle", 1}, {"shared", true}, {"seq", int(seq)}}}}), false)
			return checkResponse(t, c.out)
		}
		if code := ring(req); code == string(protocol.CodeInternal) {
			t.Fatalf("internal error for actions %x op %d req %d: %s", actions, op, req, c.out)
		}
		// A legal step is then served.
		vecenv.FirstLegal(b.Rows().Mask, b.Actions())
		for i, a := range b.Actions() {
			binary.LittleEndian.PutUint32(mem[act.Offset+4*i:], uint32(a))
		}
		binary.LittleEndian.PutUint32(mem[vecenv.SharedOp:], vecenv.SharedOpStep)
		binary.LittleEndian.PutUint32(mem[vecenv.SharedReq:], req+1)
		require.Equal(t, "", ring(req+1), "%s", c.out)
	})
}
