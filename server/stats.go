package server

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/yutenv/yutenv/internal/msgp"
)

// Latency histograms: bucket k holds durations in [2^(k/4), 2^((k+1)/4))
// microseconds (bucket 0 also everything below 1 µs), so percentiles are
// within 19% of the truth. The last bucket is open ended (over ~3 hours).
const histBuckets = 4 * 34

// histogram counts durations without locks or allocation.
type histogram struct {
	count   atomic.Uint64
	maxNs   atomic.Int64
	buckets [histBuckets]atomic.Uint64
}

// bucketOf returns the bucket of a duration in nanoseconds.
func bucketOf(ns int64) int {
	us := float64(ns) / 1e3
	if us < 1 {
		return 0
	}
	k := int(4 * math.Log2(us))
	return min(k, histBuckets-1)
}

// add records one duration.
func (h *histogram) add(d time.Duration) {
	ns := int64(d)
	h.count.Add(1)
	h.buckets[bucketOf(ns)].Add(1)
	for {
		m := h.maxNs.Load()
		if ns <= m || h.maxNs.CompareAndSwap(m, ns) {
			break
		}
	}
}

// quantile returns the upper edge, in microseconds, of the bucket holding
// the q-quantile, capped at the largest duration seen.
func (h *histogram) quantile(q float64) float64 {
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

// summary returns {count, p50, p90, p99, max} in microseconds.
func (h *histogram) summary() msgp.Obj {
	return msgp.Obj{
		{"count", h.count.Load()},
		{"p50", round2(h.quantile(0.50))},
		{"p90", round2(h.quantile(0.90))},
		{"p99", round2(h.quantile(0.99))},
		{"max", round2(float64(h.maxNs.Load()) / 1e3)},
	}
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// counters are the server-wide statistics.
type counters struct {
	connections      atomic.Int64
	connectionsTotal atomic.Uint64
	envs             atomic.Int64
	handles          atomic.Int64
	steps            atomic.Uint64
	requests         atomic.Uint64
	errors           atomic.Uint64
	latency          []histogram // by method id, made by New
}
