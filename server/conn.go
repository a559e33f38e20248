package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// keepBuffer is the largest request buffer, and the largest reply buffer, a
// connection keeps between frames; larger ones are paid for by the
// in-flight budget (budget.go) and dropped after the reply.
const keepBuffer = 256 << 10

// readChunk is how much of a frame body is read (and allocated) at a time,
// so a header that lies about a large length costs nothing until the bytes
// actually arrive.
const readChunk = 64 << 10

// finalWriteTimeout bounds the write of a last error frame to a client
// about to be dropped, so one that does not read cannot hold the goroutine.
const finalWriteTimeout = 250 * time.Millisecond

// testHookFrame, when set by a test, runs after each frame is read and
// before it is served.
var testHookFrame func()

// conn is one client connection: its reader, its reused buffers and the
// handles it owns. Only its own goroutine touches it, except interrupt.
type conn struct {
	srv *Server
	nc  net.Conn
	r   *bufio.Reader
	log *slog.Logger

	hdr [4]byte
	in  []byte // request body
	out []byte // response frame
	id  []byte // raw msgpack id of the request being served (a view into in)
	// held is what the request being served reserved from Server.inflight.
	held int
	// params reads the params of the methods read by hand (eachKeyOf).
	params msgp.Reader
	// resetArgs and stepArgs are reset's and step's params, read into
	// the connection so that the hot path allocates nothing.
	resetArgs wire.ResetArgs
	stepArgs  wire.StepArgs
	// budget is the request's budget from the limits policy, by its
	// method's declared draws (Server.budgets).
	budget *Budget
	// method is the bound method of the request being served.
	method *handler
	// boxes are spare pointers for putting buffers back into bufPools.
	boxes []*[]byte
	// spareIn and spareOut keep the small buffers while large ones serve.
	spareIn, spareOut []byte

	authed     bool
	accepted   time.Time   // when the connection was accepted
	admitted   bool        // counted in Server.admitted (guarded by Server.mu)
	evicted    atomic.Bool // dropped from the handshake budget for a newer one
	handles    map[uint64]*vecenv.Batch
	nextHandle uint64
	envs       int
	requests   uint64
	runs       map[uint64]*selfplayRun // self-play runs (selfplay_methods.go)
	priors     []float32               // selfplay_next's answer buffers
	values     []float32
	stopped    atomic.Bool
	st         *stateConn         // the state methods' games, made on first use
	regions    map[uint64]*region // shared regions by handle (shared.go)
	// passFD, when >= 0, is a descriptor to pass with the reply (share).
	passFD int
	// pollAfter is 1 + the handle whose region to poll after the reply.
	pollAfter uint64
	// peek checks the socket while a region is polled (made on first use).
	peek *peeker
	// faulted is set when serving touched a shared region that faulted
	// (a client shrank it, where regions cannot be sealed): the connection
	// ends after its reply, the other connections go on.
	faulted bool
}

func newConn(s *Server, nc net.Conn) *conn {
	return &conn{
		srv: s, nc: nc, r: newBufReader(nc), accepted: time.Now(),
		// Until hello succeeds, what the client causes is logged rate limited.
		log:     s.hostile.With("remote", remoteName(nc)),
		handles: map[uint64]*vecenv.Batch{},
		passFD:  -1,
	}
}

func remoteName(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil && a.String() != "" && a.String() != "@" {
		return a.String()
	}
	return nc.LocalAddr().Network()
}

// evict drops a connection still in handshake: it wakes its reads and
// writes, and serve then sends limit_exceeded and closes.
func (c *conn) evict() {
	c.evicted.Store(true)
	c.nc.SetDeadline(time.Now())
}

// readDeadline is when the next read gives up: the idle timeout, and before
// hello also the handshake deadline (zero: never).
func (c *conn) readDeadline() time.Time {
	var d time.Time
	if idle := c.srv.cfg.IdleTimeout; idle > 0 {
		d = time.Now().Add(idle)
	}
	if hs := c.srv.cfg.HandshakeTimeout; !c.authed && hs > 0 {
		if by := c.accepted.Add(hs); d.IsZero() || by.Before(d) {
			d = by
		}
	}
	return d
}

// interrupt wakes a connection blocked in a read so it sees the shutdown.
func (c *conn) interrupt() {
	c.stopped.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

// errFrameTooLarge reports a declared frame length out of range.
type errFrameTooLarge struct {
	n, max int
	what   string // which limit: "max_frame", or the one before hello
}

func (e errFrameTooLarge) Error() string {
	return fmt.Sprintf("declared frame length %d is outside 1..%d (%s)", e.n, e.max, e.what)
}

// serve runs the connection until the client leaves, a fatal protocol error
// or the shutdown, then frees its envs.
func (c *conn) serve() {
	defer c.cleanup()
	// A fault in a shared region (memory the client maps too) panics in
	// this goroutine instead of crashing the server: see regionFault.
	debug.SetPanicOnFault(true)
	c.log.Debug("connection opened")
	for {
		// After a shutdown began, a request already received is refused
		// with shutting_down; nothing more is read from the socket.
		refuse := c.srv.closing.Load()
		switch {
		case refuse && c.r.Buffered() == 0:
			return
		case refuse || c.evicted.Load():
			c.nc.SetReadDeadline(time.Now())
		default:
			c.nc.SetReadDeadline(c.readDeadline())
		}
		if c.srv.closing.Load() && !refuse {
			return // the shutdown began while the deadline was being set
		}
		body, err := c.readFrame()
		if errors.Is(err, errBudget) {
			c.log.Warn("no in-flight budget for a frame; dropped it", "err", err)
			c.sendError(protocol.CodeLimitExceeded, err.Error())
			continue
		}
		if err != nil {
			var tl errFrameTooLarge
			switch {
			case errors.As(err, &tl):
				c.log.Warn("frame too large; closing", "declared", tl.n, "max_frame", tl.max)
				c.sendError(protocol.CodeFrameTooLarge, err.Error())
			case errors.Is(err, io.EOF):
				c.log.Debug("connection closed by client")
			case errors.Is(err, io.ErrUnexpectedEOF):
				c.log.Info("client left mid-frame")
			case errors.Is(err, os.ErrDeadlineExceeded) && c.stopped.Load():
				c.log.Debug("connection closed for shutdown")
			case c.evicted.Load():
				c.log.Warn("too many connections in handshake; dropped the oldest", "max_handshakes", c.srv.cfg.MaxHandshakes)
				c.sendFinal(protocol.CodeLimitExceeded, fmt.Sprintf("too many connections in handshake (--max-handshakes %d); this one waited longest and was dropped", c.srv.cfg.MaxHandshakes))
			case errors.Is(err, os.ErrDeadlineExceeded) && !c.authed && c.srv.cfg.HandshakeTimeout > 0 && !time.Now().Before(c.accepted.Add(c.srv.cfg.HandshakeTimeout)):
				c.log.Warn("no hello before the handshake timeout; closing", "handshake_timeout", c.srv.cfg.HandshakeTimeout)
				c.sendFinal(protocol.CodeHandshakeRequired, fmt.Sprintf("no successful hello within %v of connecting (--handshake-timeout); closing", c.srv.cfg.HandshakeTimeout))
			case errors.Is(err, os.ErrDeadlineExceeded):
				c.log.Info("idle timeout; closing", "idle_timeout", c.srv.cfg.IdleTimeout)
			default:
				c.log.Info("read failed; closing", "err", err)
			}
			return
		}
		if testHookFrame != nil {
			testHookFrame()
		}
		start := time.Now()
		mid, closeAfter := c.serveFrame(body, refuse)
		if !c.write() {
			return
		}
		c.releaseBudget()
		if mid >= 0 {
			c.srv.stats.latency[mid].Add(time.Since(start))
		}
		if closeAfter || c.regionFaulted() {
			return
		}
		if h := c.pollAfter; h > 0 {
			c.pollAfter = 0
			c.pollShared(h - 1)
			if c.regionFaulted() {
				return
			}
		}
	}
}

// maxPreAuthFrame bounds the frames of a connection that has not completed
// hello (a hello is a few hundred bytes), so that connections in handshake
// cannot make the server buffer max_frame bytes each.
const maxPreAuthFrame = 64 << 10

// maxFrameIn is the largest frame body the connection may send now, and
// the name of that limit.
func (c *conn) maxFrameIn() (int, string) {
	if !c.authed && maxPreAuthFrame < c.srv.cfg.MaxFrame {
		return maxPreAuthFrame, "the limit before a successful hello"
	}
	return c.srv.cfg.MaxFrame, "max_frame"
}

// readFrame reads one frame and returns its body (valid until the next call).
func (c *conn) readFrame() ([]byte, error) {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(c.hdr[:]))
	if limit, what := c.maxFrameIn(); n == 0 || n > limit {
		return nil, errFrameTooLarge{n, limit, what}
	}
	if cap(c.in) >= n {
		c.in = c.in[:n]
		if _, err := io.ReadFull(c.r, c.in); err != nil {
			return nil, unexpected(err)
		}
		return c.in, nil
	}
	// A frame larger than the kept buffer is paid for by the in-flight
	// budget before anything is allocated for it.
	if err := c.reserve(2 * n); err != nil {
		// Refused: the body is read and dropped (that needs no memory)
		// so the connection can go on after the error.
		c.nc.SetReadDeadline(c.readDeadline())
		if _, derr := io.CopyN(io.Discard, c.r, int64(n)); derr != nil {
			return nil, unexpected(derr)
		}
		return nil, err
	}
	c.nc.SetReadDeadline(c.readDeadline()) // the wait was the server's, not the client's silence
	// Grow as the bytes arrive rather than trusting the header: a frame
	// that lies about its length holds budget, not memory. The growth
	// doubles, so old and new buffers together stay within 1.5 x n; the
	// reservation of 2 x n also pays for one copy of a part of the frame
	// (a bin decoded into its own slice).
	buf := c.in[:0]
	if cap(c.in) <= keepBuffer {
		c.spareIn = c.in[:0] // for the next frame, once this one's buffer is pooled
	}
	if k := bufClass(n, true); k < len(bufPools) {
		if p, ok := bufPools[k].Get().(*[]byte); ok {
			buf = (*p)[:0] // a pooled buffer is memory already there
			*p = nil
			c.boxes = append(c.boxes, p)
		}
	}
	for len(buf) < n {
		k := min(n-len(buf), max(readChunk, len(buf)))
		if cap(buf)-len(buf) < k {
			nb := make([]byte, len(buf), len(buf)+k)
			copy(nb, buf)
			buf = nb
		}
		if _, err := io.ReadFull(c.r, buf[len(buf):len(buf)+k]); err != nil {
			return nil, unexpected(err)
		}
		buf = buf[:len(buf)+k]
	}
	c.in = buf
	return buf, nil
}

// unexpected turns an EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// write sends the response frame in c.out; false means the connection is
// gone. Before hello the write shares the handshake deadline, so a client
// that sends requests but never reads cannot hold the connection longer;
// once the server cancelled its requests (Close, a Shutdown past its
// deadline) a write gives up after finalWriteTimeout.
func (c *conn) write() bool {
	d := c.readDeadline()
	if c.srv.ctx.Err() != nil {
		if by := time.Now().Add(finalWriteTimeout); d.IsZero() || by.Before(d) {
			d = by
		}
	}
	c.nc.SetWriteDeadline(d)
	if fd := c.passFD; fd >= 0 {
		c.passFD = -1
		if err := writeWithFD(c, c.out, fd); err != nil {
			c.log.Info("write failed; closing", "err", err)
			return false
		}
		return true
	}
	if _, err := c.nc.Write(c.out); err != nil {
		c.log.Info("write failed; closing", "err", err)
		return false
	}
	return true
}

// sendError writes an error frame with no id, best effort.
func (c *conn) sendError(code protocol.Code, msg string) {
	c.out = errorFrame(c.out[:0], nil, code, msg)
	c.srv.stats.errors.Add(1)
	c.write()
}

// sendFinal writes a last error frame with no id to a connection about to
// close, giving up after finalWriteTimeout.
func (c *conn) sendFinal(code protocol.Code, msg string) {
	c.out = errorFrame(c.out[:0], nil, code, msg)
	c.srv.stats.errors.Add(1)
	c.nc.SetWriteDeadline(time.Now().Add(finalWriteTimeout))
	c.nc.Write(c.out)
}

// cleanup frees the connection's envs and closes the socket.
func (c *conn) cleanup() {
	c.releaseBudget()
	for id, b := range c.handles {
		c.srv.releaseEnvs(b.N(), b.Bytes())
		c.srv.stats.handles.Add(-1)
		delete(c.handles, id)
		c.dropRegion(id)
	}
	if c.passFD >= 0 {
		closeFD(c.passFD)
		c.passFD = -1
	}
	c.envs = 0
	c.closeRuns()
	c.nc.Close()
	c.log.Debug("connection done")
}

// serveFrame answers one request into c.out (with shutting_down if refuse).
// It returns the method id (or -1) and whether the connection must close
// after the response.
func (c *conn) serveFrame(body []byte, refuse bool) (mid int, closeAfter bool) {
	c.id = nil
	c.requests++
	c.srv.stats.requests.Add(1)
	mid = -1
	var e *Error
	defer func() {
		if v := recover(); v != nil {
			e = c.regionFault(v)
			c.fail(e)
		}
	}()
	if err := msgp.CheckMap(body); err != nil {
		c.fail(errorf(protocol.CodeBadFrame, "%v", err))
		return -1, false
	}
	method, params, e := c.envelope(body)
	if e != nil {
		c.fail(e)
		return -1, false
	}
	mid = methodID(method)
	switch {
	case mid < 0:
		c.fail(errorf(protocol.CodeUnknownMethod, "unknown method %q (methods: %s)", msgp.Clip(method), methodList))
		return -1, false
	case refuse:
		c.fail(errorf(protocol.CodeShuttingDown, "the server is shutting down"))
		return mid, true
	case !c.authed && !methods[mid].Handshake:
		c.fail(errorf(protocol.CodeHandshakeRequired, "%s before hello: the first request on a connection must be hello", methodNames[mid]))
		return mid, false
	}
	c.begin()
	m := &methods[mid]
	c.method = m
	c.budget = &c.srv.budgets[mid]
	wasAuthed := c.authed
	e = m.handle(c, params)
	if m.Handshake {
		if e == nil && !wasAuthed {
			if e = c.srv.admit(c); e != nil {
				c.authed = false
			} else {
				c.log = c.srv.log.With("remote", remoteName(c.nc))
			}
		}
		if e != nil && (e.Code == protocol.CodeUnauthorized || e.Code == protocol.CodeLimitExceeded) {
			closeAfter = true
		}
	}
	if e != nil {
		c.fail(e)
		return mid, closeAfter
	}
	c.finish()
	return mid, closeAfter
}

// envelope reads {id, method, params}; params is nil when absent or nil.
// envelopeKey numbers the keys of a request map: id 0, method 1, params 2, else -1.
func envelopeKey(k []byte) int {
	switch string(k) {
	case "id":
		return 0
	case "method":
		return 1
	case "params":
		return 2
	}
	return -1
}

func (c *conn) envelope(body []byte) (method, params []byte, e *Error) {
	r := msgp.NewReader(body)
	n, err := r.MapLen()
	if err != nil {
		return nil, nil, errorf(protocol.CodeBadRequest, "request: %v", err)
	}
	seen := false
	var got [3]bool // id, method, params: a repeated key is ambiguous, so it is refused
	for range n {
		k, err := r.Str()
		if err != nil {
			return nil, nil, errorf(protocol.CodeBadRequest, "request: keys must be strings: %v", err)
		}
		if i := envelopeKey(k); i >= 0 {
			if got[i] {
				return nil, nil, errorf(protocol.CodeBadRequest, "request: key %q appears twice", msgp.Clip(k))
			}
			got[i] = true
		}
		switch string(k) {
		case "id":
			kind := r.PeekKind()
			v, err := r.Skip()
			if err != nil {
				return nil, nil, errorf(protocol.CodeBadRequest, "request: id: %v", err)
			}
			if kind != 'i' && kind != 'n' {
				return nil, nil, errorf(protocol.CodeBadRequest, "request: id: want int or nil, got %s", msgp.KindName(kind))
			}
			c.id = v
		case "method":
			if method, err = r.Str(); err != nil {
				return nil, nil, errorf(protocol.CodeBadRequest, "request: method: %v", err)
			}
			seen = true
		case "params":
			if r.IsNil() {
				params = nil
				continue
			}
			if kind := r.PeekKind(); kind != 'm' {
				return nil, nil, errorf(protocol.CodeBadRequest, "request: params: want map, got %s", msgp.KindName(kind))
			}
			if params, err = r.Skip(); err != nil {
				return nil, nil, errorf(protocol.CodeBadRequest, "request: params: %v", err)
			}
		default:
			return nil, nil, errorf(protocol.CodeBadRequest, "request: unknown key %q (keys: id, method, params)", msgp.Clip(k))
		}
	}
	if !seen {
		return nil, nil, errorf(protocol.CodeBadRequest, "request: missing method")
	}
	return method, params, nil
}

// begin starts a result frame in c.out: length placeholder, {id, result: ...
func (c *conn) begin() {
	b := append(c.out[:0], 0, 0, 0, 0)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendStr(b, "id")
	b = appendID(b, c.id)
	c.out = msgp.AppendStr(b, "result")
}

// finish patches the frame length, or replaces an oversized result with an error.
func (c *conn) finish() {
	n := len(c.out) - 4
	if n > c.srv.cfg.MaxFrame {
		c.fail(errorf(protocol.CodeLimitExceeded, "the result (%d bytes) exceeds max_frame %d; the request was carried out. Use a smaller batch or turn info off", n, c.srv.cfg.MaxFrame))
		return
	}
	binary.BigEndian.PutUint32(c.out, uint32(n))
}

// fail replaces c.out with an error response to the current request.
func (c *conn) fail(e *Error) {
	c.srv.stats.errors.Add(1)
	if e.Code == protocol.CodeInternal {
		c.log.Error("internal error", "message", e.Message)
	} else {
		c.log.Debug("error response", "code", string(e.Code), "message", e.Message)
	}
	c.out = errorFrame(c.out[:0], c.id, e.Code, e.Message)
}

func appendID(b, id []byte) []byte {
	if id == nil {
		return msgp.AppendNil(b)
	}
	return append(b, id...)
}

// errorFrame appends a whole error frame {id, error: {code, message}} to dst.
func errorFrame(dst, id []byte, code protocol.Code, msg string) []byte {
	if len(msg) > 4096 {
		msg = msg[:4096] + "..."
	}
	start := len(dst)
	b := append(dst, 0, 0, 0, 0)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendStr(b, "id")
	b = appendID(b, id)
	b = msgp.AppendStr(b, "error")
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendStr(b, "code")
	b = msgp.AppendStr(b, string(code))
	b = msgp.AppendStr(b, "message")
	b = msgp.AppendStr(b, msg)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// result appends v, the result of the request being served, to the reply
// being built: the results off the hot path are typed structs (package
// protocol) encoded by msgpack/v5, integers in their smallest form
// (msgp.AppendEncoded), as the hand-written writers of the hot path (step,
// reset) write them.
func (c *conn) result(v any) *Error {
	out, err := msgp.AppendEncoded(c.out, v)
	if err != nil {
		return errorf(protocol.CodeInternal, "encoding the result: %v", err)
	}
	c.out = out
	return nil
}
