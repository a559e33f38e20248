package latency

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHistogram(t *testing.T) {
	var h Histogram
	assert.Zero(t, h.Quantile(0.5))
	for us := 1; us <= 1000; us++ {
		h.Add(time.Duration(us) * time.Microsecond)
	}
	tests := []struct{ q, want float64 }{{0.5, 500}, {0.9, 900}, {0.99, 990}}
	for _, tt := range tests {
		got := h.Quantile(tt.q)
		assert.InEpsilon(t, tt.want, got, 0.2, "q=%v", tt.q)
		assert.GreaterOrEqual(t, got, tt.want, "the upper bucket edge")
	}
	assert.Equal(t, 1000.0, h.Quantile(1))
	s := h.Summary()
	assert.Equal(t, "count", s[0].K)
	assert.EqualValues(t, 1000, s[0].V)
	assert.Equal(t, 0, BucketOf(10))
	assert.Equal(t, Buckets-1, BucketOf(1<<62))
}

func TestRound2(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{{1.234, 1.23}, {1.235001, 1.24}, {-0.004, 0}} {
		assert.InDelta(t, tc.want, Round2(tc.in), 1e-12, "%v", tc.in)
	}
}

// TestAddAllocatesNothing: recording a latency is on every request's path.
func TestAddAllocatesNothing(t *testing.T) {
	var h Histogram
	assert.Zero(t, testing.AllocsPerRun(100, func() { h.Add(time.Millisecond) }))
	assert.Equal(t, uint64(101), h.Count())
}
