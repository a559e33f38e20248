package server

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/internal/msgp"
)

// pingFrame is a whole ping frame whose params pad it to n body bytes.
func pingFrame(n int) []byte {
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendStr(msgp.AppendStr(b, "method"), "ping")
	b = msgp.AppendMapHeader(msgp.AppendStr(b, "params"), 1)
	b = msgp.AppendStr(b, "pad")
	pad := n - len(b) - 5
	b = append(msgp.AppendBinHeader(b, pad), make([]byte, pad)...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// TestInflightBudget checks the in-flight budget's refusals against a real
// socket: a frame that can never fit, a wait that outlives the idle
// deadline, and the budget given back once a large request is answered.
func TestInflightBudget(t *testing.T) {
	t.Run("never fits", func(t *testing.T) {
		ts := startServer(t, "unix", Config{MaxFrame: 4 << 20, MaxInflightBytes: 1 << 20})
		c := ts.client(t)
		assert.Equal(t, int64(1<<20), helloLimit(t, c, "max_inflight_bytes"))
		_, err := c.Conn().Write(pingFrame(1 << 20))
		require.NoError(t, err)
		body, err := c.ReadFrame()
		require.NoError(t, err)
		m, err := c.DecodeResponse(body)
		require.Nil(t, m)
		require.ErrorContains(t, err, "limit_exceeded")
		require.ErrorContains(t, err, "more than --max-inflight-bytes 1048576 allows")
		do(t, c, "ping", nil) // the connection goes on
	})
	t.Run("waits for a stalled frame", func(t *testing.T) {
		ts := startServer(t, "unix", Config{MaxFrame: 4 << 20, MaxInflightBytes: 3 << 20, IdleTimeout: 1500 * time.Millisecond})
		hog := ts.client(t)
		c := ts.client(t)
		// The hog declares a 1 MiB frame (2 MiB reserved) and stalls
		// until its idle deadline; c's frame waits for it, then is served.
		// c's wait ends at its own deadline, 700 ms after the hog's: a
		// margin that -race on a busy machine does not eat (20 ms did, and
		// 100 ms did once, after a network search's test).
		_, err := hog.Conn().Write(pingFrame(1 << 20)[:1000])
		require.NoError(t, err)
		time.Sleep(700 * time.Millisecond)
		_, err = c.Conn().Write(pingFrame(1 << 20))
		require.NoError(t, err)
		body, err := c.ReadFrame()
		require.NoError(t, err)
		_, err = c.DecodeResponse(body)
		require.ErrorContains(t, err, "unknown parameter \"pad\"")
	})
	t.Run("wait times out", func(t *testing.T) {
		ts := startServer(t, "unix", Config{MaxFrame: 4 << 20, MaxInflightBytes: 3 << 20, IdleTimeout: 300 * time.Millisecond})
		c := ts.client(t)
		// The budget stays busy longer than the idle timeout.
		require.True(t, ts.srv.inflight.TryAcquire(2<<20))
		defer ts.srv.inflight.Release(2 << 20)
		start := time.Now()
		_, err := c.Conn().Write(pingFrame(1 << 20))
		require.NoError(t, err)
		body, err := c.ReadFrame()
		require.NoError(t, err)
		_, err = c.DecodeResponse(body)
		require.ErrorContains(t, err, "limit_exceeded")
		require.ErrorContains(t, err, "waited")
		assert.Less(t, time.Since(start), 5*time.Second)
		do(t, c, "ping", nil)
	})
	t.Run("given back", func(t *testing.T) {
		ts := startServer(t, "unix", Config{MaxFrame: 4 << 20, MaxInflightBytes: 3 << 20})
		c := ts.client(t)
		for range 5 { // each needs 2 of the 3 MiB: only if the last gave them back
			_, err := c.Conn().Write(pingFrame(1 << 20))
			require.NoError(t, err)
			body, err := c.ReadFrame()
			require.NoError(t, err)
			_, err = c.DecodeResponse(body)
			require.ErrorContains(t, err, "unknown parameter")
		}
	})
}

// helloLimit returns one of the limits hello reported.
func helloLimit(t *testing.T, c *client.Client, key string) int64 {
	t.Helper()
	res, err := c.Hello("")
	require.NoError(t, err)
	v, ok := client.Int(res["limits"].(map[string]any)[key])
	require.True(t, ok, "limits.%s", key)
	return int64(v)
}
