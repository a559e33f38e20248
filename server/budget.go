package server

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/yutenv/yutenv/protocol"
)

// The in-flight budget bounds the memory of frames being served, server
// wide: a request whose frame body or reply needs more than keepBuffer
// bytes reserves them from Server.inflight (a weighted semaphore of
// Config.MaxInflightBytes) before they are allocated, and gives them back
// once the reply is written, when the connection drops the large buffers.
// A connection keeps at most keepBuffer bytes of request buffer and
// keepBuffer of reply buffer between requests, outside the budget, so the
// server's frame memory is at most
//
//	max_inflight_bytes + max_conns x 2 x keepBuffer
//
// (connections in handshake read frames of at most maxPreAuthFrame).

// errBudget marks a reservation the budget cannot give.
var errBudget = errors.New("in-flight memory budget")

// reserve takes n bytes from the in-flight budget for the request being
// served (n <= keepBuffer: nothing to take). It waits for them until the
// connection's read deadline or the shutdown; a connection that already
// holds a reservation (a large request waiting for its large reply) does
// not wait, so two of them cannot hold each other up.
func (c *conn) reserve(n int) error {
	if n <= keepBuffer {
		return nil
	}
	total := c.srv.cfg.MaxInflightBytes
	if int64(n) > total-int64(c.held) {
		return fmt.Errorf("%w: this request needs %d bytes in flight, more than --max-inflight-bytes %d allows", errBudget, int64(c.held)+int64(n), total)
	}
	if c.srv.inflight.TryAcquire(int64(n)) {
		c.held += n
		return nil
	}
	if c.held > 0 {
		return fmt.Errorf("%w: %d bytes are not free now (--max-inflight-bytes %d); retry", errBudget, n, total)
	}
	ctx := c.srv.ctx
	if d := c.readDeadline(); !d.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	start := time.Now()
	if err := c.srv.inflight.Acquire(ctx, int64(n)); err != nil {
		return fmt.Errorf("%w: waited %v for %d bytes (--max-inflight-bytes %d): %v", errBudget, time.Since(start).Round(time.Millisecond), n, total, err)
	}
	c.held += n
	return nil
}

// reserveReply reserves room for a reply of about size bytes (plus the
// temporaries of building it: factor times size in all) and grows c.out to
// hold size bytes, so the appends that build the reply do not double it
// past what was reserved.
func (c *conn) reserveReply(size, factor int) *Error {
	if size <= keepBuffer {
		if cap(c.out) < size {
			// Within what the connection keeps: grow to all of it at once,
			// so that appends never double the buffer past it.
			c.out = append(make([]byte, 0, keepBuffer), c.out...)
		}
		return nil
	}
	if c.budget.Reply == 0 {
		return errorf(protocol.CodeInternal, "a reply of about %d bytes, but the method does not declare DrawReply (protocol.Desc.Draws)", size)
	}
	if err := c.reserve(factor * size); err != nil {
		return errorf(protocol.CodeLimitExceeded, "a reply of about %d bytes: %v", size, err)
	}
	if cap(c.out) < size {
		b := c.getBuf(size)
		if cap(c.out) <= keepBuffer {
			c.spareOut = c.out[:0]
		}
		c.out = append(b[:0], c.out...)
	}
	return nil
}

// Buffers larger than keepBuffer are not kept by their connection: they go
// back to one of these pools (by power of two of their capacity) when the
// reservation that paid for them is returned, so that a connection stepping
// a large batch again and again reuses them instead of allocating, and the
// garbage collector frees them (as it frees any garbage: the soft memory
// limit of MemoryBound) when nobody does.
var bufPools [40]sync.Pool

// bufClass is the pool of buffers of capacity at least n (for getBuf) or
// of capacity c (for putBuf, rounding down).
func bufClass(n int, up bool) int {
	k := bits.Len(uint(n))
	if up && n&(n-1) != 0 {
		return k
	}
	return k - 1
}

// getBuf returns an empty buffer of capacity at least n; the box it came
// in is kept for putBuf, so that the round trip allocates nothing.
func (c *conn) getBuf(n int) []byte {
	k := bufClass(n, true)
	if k < len(bufPools) {
		if p, ok := bufPools[k].Get().(*[]byte); ok {
			b := (*p)[:0]
			*p = nil
			c.boxes = append(c.boxes, p)
			return b
		}
	}
	return make([]byte, 0, 1<<k)
}

// putBuf gives a buffer back to its pool.
func (c *conn) putBuf(b []byte) {
	k := bufClass(cap(b), false)
	if k >= len(bufPools) {
		return
	}
	var p *[]byte
	if n := len(c.boxes); n > 0 {
		p, c.boxes = c.boxes[n-1], c.boxes[:n-1]
	} else {
		p = new([]byte)
	}
	*p = b
	bufPools[k].Put(p)
}

// releaseBudget gives back what the request reserved and drops buffers
// larger than keepBuffer, which the reservation paid for.
func (c *conn) releaseBudget() {
	if cap(c.in) > keepBuffer {
		c.putBuf(c.in)
		c.in, c.spareIn = c.spareIn, nil
	}
	if cap(c.out) > keepBuffer {
		c.putBuf(c.out)
		c.out, c.spareOut = c.spareOut, nil
	}
	if c.held > 0 {
		c.srv.inflight.Release(int64(c.held))
		c.held = 0
	}
}

// Terms of Config.MemoryBound that no limit sets: the Go runtime, the
// program and per-connection fixed costs (goroutine stack, bufio reader,
// decoder: about 80 KiB), and one opponent agent per worker (an mcts:2000
// agent holds about 0.4 MB).
const (
	runtimeBytes  = 24 << 20
	perConnBytes  = 80 << 10
	perAgentBytes = 1 << 20
)

// MemoryBound is the documented bound of the server's memory (docs/PROTOCOL.md,
// Limits) under the limits of c, whatever the clients send:
//
//	max_env_bytes + max_inflight_bytes + max_conns x (2 x 256 KiB + 80 KiB)
//	  + max_handshakes x (2 x 64 KiB + 80 KiB) + workers x 1 MiB + 24 MiB
//	  + max_net_cache_bytes + 3 x max_net_bytes
//	  + max_selfplay_bytes + analyse_workers x (search of max_opponent_sims)
//
// The last four terms come from the limits policy: the networks clients
// name (Limits.NetBytes: those kept loaded, and the one file read at a
// time), Limits.SelfplayBytes and Limits.AnalyseBytes: self-play runs reserve their estimated memory
// (az.Config.MemoryBytes) when they start, and analyse searches only on the cores it
// holds, one agent a core.
//
// Freed buffers are memory until the garbage collector runs: a process
// serving untrusted clients sets this as its soft memory limit
// (runtime/debug.SetMemoryLimit), as yutenv serve does, so that garbage is
// collected before the total passes it.
func (c Config) MemoryBound() int64 {
	c, err := c.withDefaults()
	if err != nil {
		return 0
	}
	return c.MaxEnvBytes + c.MaxInflightBytes +
		int64(c.MaxConns)*(2*keepBuffer+perConnBytes) +
		int64(c.MaxHandshakes)*(2*maxPreAuthFrame+perConnBytes) +
		int64(c.Workers)*perAgentBytes + runtimeBytes +
		c.limits().NetBytes() + c.limits().SelfplayBytes + c.limits().AnalyseBytes()
}
