package server

import (
	"errors"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// errShareUnsupported is share's refusal where no region can be made or
// passed (a TCP connection, an OS without the calls).
var errShareUnsupported = errors.New("shared memory needs a Unix-socket connection on Linux or macOS")

// region is a handle's shared region (share): the batch's rows live in
// mem, the client writes the actions and rings through the header's
// doorbell words (vecenv.SharedReq and the rest).
type region struct {
	mem    []byte
	layout vecenv.SharedLayout
	spin   time.Duration // the longest the server polls req after serving a request
	last   uint32        // the last request counter served
	// servedAt is when the last request was served, gap the moving
	// average of the time from then to the next request: the poll lasts
	// about twice the client's usual gap, and not at all when that is
	// longer than spin (a slow client rings; polling would only burn a core).
	servedAt time.Time
	gap      time.Duration
	// failed is the error of a request the poll took but could not serve
	// (its actions were refused): the doorbell of that request reports it.
	failed *Error
	unmap  func() error
}

func (rg *region) word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&rg.mem[off])) }

// share moves a handle's rows into a new shared region and passes it with
// the reply.
func (c *conn) share(pr *protocol.ShareParams) *Error {
	b, e := c.lookupPtr(pr.Handle)
	if e != nil {
		return e
	}
	h := *pr.Handle
	if c.regions[h] != nil {
		return errorf(protocol.CodeBadRequest, "handle %d is already shared", h)
	}
	if pr.SpinUs < 0 || pr.SpinUs > protocol.MaxShareSpinUs {
		return errorf(protocol.CodeBadRequest, "params.spin_us: %d is out of range 0..%d", pr.SpinUs, protocol.MaxShareSpinUs)
	}
	if !canPassFD(c) {
		return errorf(protocol.CodeUnsupported, "%v; this connection is %s (use the socket path: transport=\"socket\")", errShareUnsupported, c.nc.LocalAddr().Network())
	}
	l := vecenv.SharedLayoutOf(b.Config(), b.ObsSize())
	mem, fd, unmap, err := newRegion(l.Size)
	if err != nil {
		return errorf(protocol.CodeInternal, "cannot make a shared region of %d bytes: %v", l.Size, err)
	}
	if _, err := b.Share(mem); err != nil {
		unmap()
		closeFD(fd)
		return errorf(protocol.CodeUnsupported, "%v", err)
	}
	if c.regions == nil {
		c.regions = map[uint64]*region{}
	}
	c.regions[h] = &region{mem: mem, layout: l, spin: time.Duration(pr.SpinUs) * time.Microsecond, unmap: unmap}
	c.passFD = fd
	res := protocol.ShareResult{Version: l.Version, Size: l.Size, SpinUs: pr.SpinUs}
	for _, f := range l.Fields {
		res.Fields = append(res.Fields, protocol.ShareField{Name: f.Name, Offset: f.Offset, Type: f.Type, Shape: f.Shape})
	}
	return c.result(res)
}

// dropRegion unmaps handle h's region, if it has one, once its batch is
// gone from the handles.
func (c *conn) dropRegion(h uint64) {
	if rg := c.regions[h]; rg != nil {
		delete(c.regions, h)
		if err := rg.unmap(); err != nil {
			c.log.Warn("unmapping a shared region failed", "err", err)
		}
	}
}

// sharedStep serves a step or opponent_step rung over the socket for a
// shared handle: request a.Seq, unless the poll served it already.
func (c *conn) sharedStep(h uint64, b *vecenv.Batch, a *wire.StepArgs, record bool, k *stepKind) *Error {
	rg := c.regions[h]
	switch {
	case rg == nil:
		return errorf(protocol.CodeBadRequest, "params.shared: handle %d has no shared region (call share first)", h)
	case a.HasActions():
		return errorf(protocol.CodeBadRequest, "params.actions: a shared step takes its actions from the region")
	}
	req := atomic.LoadUint32(rg.word(vecenv.SharedReq))
	if a.Seq != req {
		return errorf(protocol.CodeBadRequest, "params.seq: %d, but the region's req is %d (write the actions, then req, then ring)", a.Seq, req)
	}
	if e := rg.failed; e != nil && rg.last+1 == req {
		rg.failed = nil
		return e
	}
	switch {
	case req != rg.last:
		if e := c.runShared(rg, b, record, k); e != nil {
			return e
		}
	case record:
		// Served by the poll, which records no info: a client that wants
		// info rings without letting the poll take the request.
		return errorf(protocol.CodeBadRequest, "params.seq: request %d was already served", req)
	}
	keys := 1
	if record {
		keys++
	}
	c.out = msgp.AppendMapHeader(c.out, keys)
	c.out = msgp.AppendStr(c.out, "seq")
	c.out = msgp.AppendUint(c.out, uint64(req))
	if record {
		c.out = wire.AppendInfo(c.out, b, c.srv.cfg.MaxFrame)
	}
	return nil
}

// runShared checks and runs the request under the region's req, which
// must be of kind k (its op), then marks it done.
func (c *conn) runShared(rg *region, b *vecenv.Batch, record bool, k *stepKind) *Error {
	if !b.Started() {
		return errorf(protocol.CodeNeedsReset, "the handle was never reset")
	}
	if op := atomic.LoadUint32(rg.word(vecenv.SharedOp)); op != k.op {
		return badOp(op)
	}
	start := time.Now()
	req := atomic.LoadUint32(rg.word(vecenv.SharedReq))
	b.SharedActions(rg.mem)
	if e := checked(b, k.check); e != nil {
		return e
	}
	if err := k.run(b, c.srv.pool, record); err != nil {
		return errorf(netCode(err, protocol.CodeInternal), "%v", err)
	}
	if k.count {
		c.srv.stats.steps.Add(uint64(b.N()))
	}
	rg.last = req
	atomic.StoreUint32(rg.word(vecenv.SharedDone), req)
	now := time.Now()
	if !rg.servedAt.IsZero() {
		rg.gap = (3*rg.gap + start.Sub(rg.servedAt)) / 4
	}
	rg.servedAt = now
	return nil
}

// peekEvery is how often a poll looks at the socket for a frame (a system
// call): a frame sent while the server polls (a ring, another method) waits
// at most this long more.
const peekEvery = 20 * time.Microsecond

// pollWindow is how long to poll after a request: twice the client's
// usual gap and some, within spin; 0 when the gap is longer than spin.
func (rg *region) pollWindow() time.Duration {
	if rg.spin <= 0 || rg.gap > rg.spin {
		return 0
	}
	return min(rg.spin, 2*rg.gap+50*time.Microsecond)
}

// willPoll marks handle h's region awake before the reply that precedes
// its poll is written (a client reading that reply then polls too,
// instead of ringing again), and has serve poll it after the reply.
func (c *conn) willPoll(h uint64) {
	rg, b := c.regions[h], c.handles[h]
	if rg == nil || b == nil || rg.pollWindow() <= 0 || b.Config().Info {
		return // a handle that records info by default answers every step by the socket
	}
	atomic.StoreUint32(rg.word(vecenv.SharedAwake), 1)
	c.pollAfter = h + 1
}

// pollShared polls handle h's region after a shared request was served:
// for up to the region's spin after the last request, each new request
// (req changed) is served at once, without the socket; the poll ends when
// the time is up, a frame arrives on the socket, a request cannot be
// served (its doorbell then gets the error), or the server shuts down.
// awake tells the client which way to ring.
func (c *conn) pollShared(h uint64) {
	rg, b := c.regions[h], c.handles[h]
	if rg == nil || b == nil {
		return
	}
	awake, req, op := rg.word(vecenv.SharedAwake), rg.word(vecenv.SharedReq), rg.word(vecenv.SharedOp)
	defer func() {
		// A panic here (a fault in the region) ends this connection only:
		// the poll runs outside serveFrame's recovery.
		if v := recover(); v != nil {
			c.faulted = true
			c.regionFault(v)
			return
		}
		atomic.StoreUint32(awake, 0)
	}()
	until := time.Now().Add(rg.pollWindow())
	var peekAt time.Time // when to look at the socket next
	for polls := 1; ; polls++ {
		if r := atomic.LoadUint32(req); r != rg.last {
			k := stepPlain
			if atomic.LoadUint32(op) == vecenv.SharedOpOpponent {
				k = stepOpponent
			}
			e := c.runShared(rg, b, false, k) // an op of neither kind is refused as not step's
			if e != nil {
				rg.failed = e
				return
			}
			until = time.Now().Add(rg.pollWindow())
			continue
		}
		if polls%64 == 0 {
			now := time.Now()
			if now.After(until) || c.srv.closing.Load() {
				return
			}
			if !now.Before(peekAt) {
				if c.readable() {
					return
				}
				peekAt = now.Add(peekEvery)
			}
			runtime.Gosched() // other connections' goroutines first, if any wait
		}
	}
}

// badOp refuses a request whose region's op is not the one rung (or no op).
func badOp(op uint32) *Error {
	return errorf(protocol.CodeBadRequest, "the region's op is %d: want %d for step, %d for opponent_step, written before req", op, vecenv.SharedOpStep, vecenv.SharedOpOpponent)
}

// regionFaulted reports whether serving this connection met a memory fault
// in one of its shared regions, in its own goroutine (faulted) or in the
// pool's workers (the batch's Faulted): its regions can no longer be
// trusted, so the connection ends (and frees them); no other is touched.
func (c *conn) regionFaulted() bool {
	if !c.faulted {
		for h := range c.regions {
			if b := c.handles[h]; b != nil && b.Faulted() {
				c.faulted = true
				break
			}
		}
		if !c.faulted {
			return false
		}
	}
	c.log.Warn("a shared region faulted (shrunk by the client?) or its poll failed; closing the connection")
	return true
}

// regionFault is the recovered panic v of serving a request or polling a
// region: a memory fault marks the connection to close (regionFaulted) and
// is answered as an error; any other panic is a bug, logged with its stack.
func (c *conn) regionFault(v any) *Error {
	if vecenv.IsFault(v) {
		c.faulted = true
		return errorf(protocol.CodeInternal, "a memory fault in this connection's shared region (was it shrunk?): %v; closing the connection", v)
	}
	c.log.Error("panic serving a request", "panic", v, "stack", string(debug.Stack()))
	return errorf(protocol.CodeInternal, "the server failed serving this request (a bug; it was logged): %v", v)
}
