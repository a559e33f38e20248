// Package latency keeps latency histograms without locks or allocation
// (the server's per-method latencies, reported by its stats method):
//
//	var h latency.Histogram
//	h.Add(time.Since(start))
//	p99 := h.Quantile(0.99) // µs, within 19%
//	summary := h.Summary()  // {count, p50, p90, p99, max}
package latency

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/yutenv/yutenv/internal/msgp"
)

// Latency histograms: bucket k holds durations in [2^(k/4), 2^((k+1)/4))
// microseconds (bucket 0 also everything below 1 µs), so percentiles are
// within 19% of the truth. The last bucket is open ended (over ~3 hours).
const Buckets = 4 * 34

// Histogram counts durations without locks or allocation; its zero value
// is empty and ready.
type Histogram struct {
	count   atomic.Uint64
	maxNs   atomic.Int64
	buckets [Buckets]atomic.Uint64
}

// BucketOf returns the bucket of a duration in nanoseconds.
func BucketOf(ns int64) int {
	us := float64(ns) / 1e3
	if us < 1 {
		return 0
	}
	k := int(4 * math.Log2(us))
	return min(k, Buckets-1)
}

// Add records one duration.
func (h *Histogram) Add(d time.Duration) {
	ns := int64(d)
	h.count.Add(1)
	h.buckets[BucketOf(ns)].Add(1)
	for {
		m := h.maxNs.Load()
		if ns <= m || h.maxNs.CompareAndSwap(m, ns) {
			break
		}
	}
}

// Quantile returns the upper edge, in microseconds, of the bucket holding
// the q-quantile, capped at the largest duration seen.
func (h *Histogram) Quantile(q float64) float64 {
	n := h.count.Load()
	if n == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(n)))
	want = max(want, 1)
	var seen uint64
	maxUs := float64(h.maxNs.Load()) / 1e3
	for k := range h.buckets {
		seen += h.buckets[k].Load()
		if seen >= want {
			return math.Min(math.Exp2(float64(k+1)/4), maxUs)
		}
	}
	return maxUs
}

// Summary returns {count, p50, p90, p99, max} in microseconds.
func (h *Histogram) Summary() msgp.Obj {
	return msgp.Obj{
		{"count", h.count.Load()},
		{"p50", Round2(h.Quantile(0.50))},
		{"p90", Round2(h.Quantile(0.90))},
		{"p99", Round2(h.Quantile(0.99))},
		{"max", Round2(float64(h.maxNs.Load()) / 1e3)},
	}
}

// Round2 rounds x to two decimals, as the summaries report.
func Round2(x float64) float64 { return math.Round(x*100) / 100 }

// Count is how many durations were recorded.
func (h *Histogram) Count() uint64 { return h.count.Load() }
