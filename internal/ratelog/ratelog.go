// Package ratelog limits the rate of a slog.Logger's lines, for the lines
// that hostile clients can cause (the server's refused connections, wrong
// tokens, handshake timeouts):
//
//	log := ratelog.New(slog.Default(), time.Second, 10) // 10 lines, then one a second
//	log.Warn("unauthorized")
package ratelog

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// handler passes records to an inner handler while its shared limiter
// allows, and counts the ones it drops.
type handler struct {
	inner      slog.Handler
	lim        *rate.Limiter
	suppressed *atomic.Int64
}

// New returns a logger that passes l's records while a limiter of one
// line every every, after a burst of burst, allows, and drops the others;
// the next line let through after some were dropped carries their number
// in a "suppressed" attribute. Its children (With, WithGroup) share the
// limiter.
func New(l *slog.Logger, every time.Duration, burst int) *slog.Logger {
	return slog.New(&handler{inner: l.Handler(), lim: rate.NewLimiter(rate.Every(every), burst), suppressed: new(atomic.Int64)})
}

// Enabled implements slog.Handler.
func (h *handler) Enabled(ctx context.Context, lv slog.Level) bool {
	return h.inner.Enabled(ctx, lv)
}

// Handle implements slog.Handler: it drops the record when the limiter says so.
func (h *handler) Handle(ctx context.Context, r slog.Record) error {
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
func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(as), lim: h.lim, suppressed: h.suppressed}
}

// WithGroup implements slog.Handler; the result shares the limiter.
func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), lim: h.lim, suppressed: h.suppressed}
}
