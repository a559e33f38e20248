package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// TestNew checks the limiter's bookkeeping: lines past the burst are
// dropped and counted, the next line let through says how many, and the
// logger's children share the limiter.
func TestNew(t *testing.T) {
	var buf bytes.Buffer
	log := New(slog.New(slog.NewTextHandler(&buf, nil)), time.Hour, 3)
	child := log.With("remote", "x").WithGroup("g")
	for i := range 10 {
		if i%2 == 0 {
			log.Warn("refused")
		} else {
			child.Warn("refused")
		}
	}
	require.Equal(t, 3, strings.Count(buf.String(), "msg=refused"), "the burst")
	assert.NotContains(t, buf.String(), "suppressed")
	log.Handler().(*handler).lim.SetLimit(rate.Inf) // as if the hour had passed
	log.Warn("after")
	assert.Contains(t, buf.String(), "msg=after suppressed=7")
	assert.True(t, log.Enabled(t.Context(), slog.LevelInfo))
	assert.False(t, log.Enabled(t.Context(), slog.LevelDebug), "the inner handler's level")
}
