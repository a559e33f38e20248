package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Log lines a client can cause before it has said hello (refused and
// evicted connections, wrong tokens, handshake timeouts) pass through one
// rate limiter per server, so a flood of hostile connections cannot flood
// the log: a burst of hostileLogBurst lines, then one every hostileLogEvery.
// The next line let through after some were dropped carries their number in
// a "suppressed" attribute.
const (
	hostileLogEvery = time.Second
	hostileLogBurst = 10
)

// limitedHandler passes records to an inner handler while its shared
// limiter allows, and counts the ones it drops.
type limitedHandler struct {
	inner      slog.Handler
	lim        *rate.Limiter
	suppressed *atomic.Int64
}

// newLimitedLogger wraps l's handler in a limiter of every/burst.
func newLimitedLogger(l *slog.Logger, every time.Duration, burst int) *slog.Logger {
	return slog.New(&limitedHandler{inner: l.Handler(), lim: rate.NewLimiter(rate.Every(every), burst), suppressed: new(atomic.Int64)})
}

// Enabled implements slog.Handler.
func (h *limitedHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return h.inner.Enabled(ctx, lv)
}

// Handle implements slog.Handler: it drops the record when the limiter says so.
func (h *limitedHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.lim.Allow() {
		h.suppressed.Add(1)
		return nil
	}
	if n := h.suppressed.Swap(0); n > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int64("suppressed", n))
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs implements slog.Handler; the result shares the limiter.
func (h *limitedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &limitedHandler{inner: h.inner.WithAttrs(as), lim: h.lim, suppressed: h.suppressed}
}

// WithGroup implements slog.Handler; the result shares the limiter.
func (h *limitedHandler) WithGroup(name string) slog.Handler {
	return &limitedHandler{inner: h.inner.WithGroup(name), lim: h.lim, suppressed: h.suppressed}
}

// lingerTimeout is how long a refused connection is kept half-closed,
// reading and discarding what the client sends, before it is closed.
const lingerTimeout = 500 * time.Millisecond

// refuse sends a refused connection its error frame and closes it with a
// lingering close: the server shuts its side for writing, then reads and
// discards what the client sends for up to lingerTimeout before closing.
// Closing at once would make a client that writes its hello just after the
// refusal see a broken pipe or a reset instead of the error frame waiting
// for it. At most MaxHandshakes refused connections linger at once; past
// that they are closed at once, so a flood of them costs no more than that.
func (s *Server) refuse(nc net.Conn, frame []byte) {
	s.connWG.Add(1)
	go func() {
		defer s.connWG.Done()
		defer nc.Close()
		nc.SetWriteDeadline(time.Now().Add(finalWriteTimeout))
		if _, err := nc.Write(frame); err != nil {
			return
		}
		cw, ok := nc.(interface{ CloseWrite() error })
		if !ok || s.lingering.Add(1) > int64(s.cfg.MaxHandshakes) {
			if ok {
				s.lingering.Add(-1)
			}
			return
		}
		defer s.lingering.Add(-1)
		cw.CloseWrite()
		nc.SetReadDeadline(time.Now().Add(lingerTimeout))
		io.Copy(io.Discard, io.LimitReader(nc, 1<<20))
	}()
}
