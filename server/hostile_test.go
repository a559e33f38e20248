package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/protocol"
)

// The hostile-client suite: clients that connect and never say hello, send
// half a frame and stall, or knock with wrong tokens, beside an
// authenticated client that must keep being served. Every test here is
// bounded by the handshake timeouts it configures (a few hundred ms to 2 s).

// captureHandler is a slog handler that keeps every record, for tests that
// assert on what the server logs.
type captureHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	return nil
}

func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

// count returns how many records have a message containing sub.
func (h *captureHandler) count(sub string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.records {
		if strings.Contains(r.Message, sub) {
			n++
		}
	}
	return n
}

// halfFrame is the start of a frame that declares 100 bytes and sends 10.
func halfFrame() []byte {
	return append(binary.BigEndian.AppendUint32(nil, 100), make([]byte, 10)...)
}

// stall opens n raw connections that each send half a frame and stop.
func stall(t *testing.T, ts *testServer, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = ts.rawConn(t)
		_, err := conns[i].Write(halfFrame())
		require.NoError(t, err)
	}
	return conns
}

// lastWord reads what the server sends a stalled connection before it
// closes it: the code of its one error frame ("" if it sent none), and
// whether the connection then closed.
func lastWord(t *testing.T, nc net.Conn, within time.Duration) (code string, closed bool) {
	t.Helper()
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(within)))
	var hdr [4]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		return "", isClosed(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	_, err := io.ReadFull(nc, body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(body, &m))
	_, err = nc.Read(make([]byte, 1))
	return respCode(m), isClosed(err)
}

// isClosed reports whether a read error means the peer closed the
// connection: EOF, or a reset when it closed with bytes of ours unread.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// pendingLen is the number of connections the server holds in handshake.
func pendingLen(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// stepOnce resets and steps a one-env handle, failing the test on any error.
func stepOnce(t *testing.T, c *client.Client, h uint64, seed int) {
	t.Helper()
	res, err := c.Call("reset", map[string]any{"handle": h, "seed": seed})
	require.NoError(t, err)
	_, err = c.Step(h, legalFrom(res["mask"].([]byte), 1), 0)
	require.NoError(t, err)
}

// TestHalfOpenFlood is the pre-auth lockout: three times
// --max-conns connections send half a frame and stall. The authenticated
// client keeps being served, a new client still gets in (the flood only
// evicts its own oldest), every stalled connection is told why and closed,
// and the handshake budget empties. Over TCP the server wants a token.
func TestHalfOpenFlood(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			t.Parallel() // each waits out the handshake timeout, on its own server
			cfg := Config{MaxConns: 4, MaxHandshakes: 8, HandshakeTimeout: 2 * time.Second}
			if network == "tcp" {
				cfg.Token = "s3cret"
			}
			ts := startServer(t, network, cfg)
			a := ts.client(t)
			h := makeHandle(t, a, map[string]any{"n": 1})

			flood := stall(t, ts, 3*cfg.MaxConns)
			for i := range 5 {
				stepOnce(t, a, h, i)
			}
			// New clients get in while the flood goes on, and fill --max-conns.
			for range cfg.MaxConns - 1 {
				b := ts.client(t)
				stepOnce(t, b, makeHandle(t, b, map[string]any{"n": 1}), 7)
			}
			assert.LessOrEqual(t, pendingLen(ts.srv), cfg.MaxHandshakes)

			codes := map[string]int{}
			for _, nc := range flood {
				code, closed := lastWord(t, nc, 5*time.Second)
				assert.True(t, closed, "a stalled connection is closed")
				codes[code]++
			}
			assert.Equal(t, len(flood), codes["limit_exceeded"]+codes["handshake_required"],
				"each stalled connection is told why it is dropped: %v", codes)
			assert.Positive(t, codes["limit_exceeded"], "the oldest were evicted for newer ones: %v", codes)
			assert.Positive(t, codes["handshake_required"], "the rest timed out: %v", codes)
			require.Eventually(t, func() bool { return pendingLen(ts.srv) == 0 }, 5*time.Second, 10*time.Millisecond)
			stepOnce(t, a, h, 99)
		})
	}
}

// TestHandshakeTimeout checks a connection is dropped when it has not said
// hello within the handshake timeout, whatever it did meanwhile, while an
// authenticated one is not bound by it.
func TestHandshakeTimeout(t *testing.T) {
	const timeout = time.Second
	ts := startServer(t, "unix", Config{HandshakeTimeout: timeout})
	a := ts.dial(t)
	res, err := a.Hello("")
	require.NoError(t, err)
	lim := res["limits"].(map[string]any)
	assert.InDelta(t, timeout.Seconds(), toF(lim["handshake_timeout_s"]), 1e-9, "hello tells the deadline")
	assert.EqualValues(t, DefaultMaxConns, toI(lim["max_conns"]))
	ping := msgpackBody(t, map[string]any{"id": 1, "method": "ping"})
	badHello := msgpackBody(t, map[string]any{"id": 2, "method": "hello", "params": map[string]any{"protocol": 99}})
	cases := map[string]func(nc net.Conn){
		"silent":     func(net.Conn) {},
		"half frame": func(nc net.Conn) { nc.Write(halfFrame()) },
		"pings before hello": func(nc net.Conn) {
			for range 3 {
				nc.Write(frame(ping))
				assert.Equal(t, "handshake_required", respCode(readResponse(t, nc)))
			}
		},
		"a failed hello": func(nc net.Conn) {
			nc.Write(frame(badHello))
			assert.Equal(t, "version_mismatch", respCode(readResponse(t, nc)))
		},
	}
	for name, act := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nc := ts.rawConn(t)
			act(nc)
			code, closed := lastWord(t, nc, 10*timeout)
			assert.Equal(t, "handshake_required", code)
			assert.True(t, closed)
		})
	}
	t.Run("authenticated outlives it", func(t *testing.T) {
		t.Parallel()
		time.Sleep(2 * timeout)
		_, err := a.Call("ping", nil)
		assert.NoError(t, err)
	})
}

// msgpackBody encodes v as a frame body.
func msgpackBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestHostileLogsAreRateLimited knocks with wrong tokens and at a full
// --max-conns many times: every attempt is refused with its code, the
// authenticated client is served, and the log gets at most a burst of lines
// about it (refused-connection and bad-token lines once flooded the log).
func TestHostileLogsAreRateLimited(t *testing.T) {
	const attempts = 60
	logs := &captureHandler{}
	ts := startServer(t, "tcp", Config{Token: "s3cret", MaxConns: 2, Logger: slog.New(logs)})
	a := ts.client(t)
	start := time.Now()
	for range attempts {
		c := ts.dial(t)
		_, err := c.Hello("wrong")
		assert.Equal(t, protocol.CodeUnauthorized, errCode(err))
		assertClosed(t, c.Conn())
	}
	ts.client(t) // the second and last allowed connection
	for range attempts {
		nc := ts.rawConn(t)
		m := readResponse(t, nc)
		assert.Equal(t, "limit_exceeded", respCode(m))
		assertClosed(t, nc)
	}
	_, err := a.Call("ping", nil)
	require.NoError(t, err)

	allowed := hostileLogBurst + int(time.Since(start)/hostileLogEvery) + 1
	got := logs.count("unauthorized") + logs.count("refused")
	assert.LessOrEqual(t, got, allowed, "%d attempts logged %d lines", 2*attempts, got)
	assert.Positive(t, logs.count("unauthorized"))
}

// TestHandshakeConfigDefaults checks the zero config gets the handshake
// defaults and a negative budget is refused.
func TestHandshakeConfigDefaults(t *testing.T) {
	c, err := Config{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultHandshakeTimeout, c.HandshakeTimeout)
	assert.Equal(t, DefaultMaxHandshakes, c.MaxHandshakes)
	_, err = Config{MaxHandshakes: -1}.withDefaults()
	assert.ErrorIs(t, err, ErrConfig)
}

// TestRefusedClientReadsWhy is a regression test: a connection refused at
// --max-conns was closed right after its error frame, so a client that sent
// its hello a moment later got a broken pipe or a reset instead of
// limit_exceeded. The refusal is now a lingering close.
func TestRefusedClientReadsWhy(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			ts := startServer(t, network, Config{MaxConns: 1})
			a := ts.client(t)
			for range 20 {
				c := ts.dial(t)
				time.Sleep(time.Millisecond) // let the refusal be sent before the hello
				_, err := c.Hello("")
				assert.Equal(t, protocol.CodeLimitExceeded, errCode(err), "%v", err)
				c.Close()
			}
			_, err := a.Call("ping", nil)
			require.NoError(t, err)
		})
	}
}

// TestPreAuthFrameLimit checks a connection that has not said hello may not
// send frames larger than a hello needs: 64 connections in handshake could
// otherwise make the server buffer max_frame (16 MiB) each.
func TestPreAuthFrameLimit(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	nc := ts.rawConn(t)
	_, err := nc.Write(binary.BigEndian.AppendUint32(nil, maxPreAuthFrame+1))
	require.NoError(t, err)
	m := readResponse(t, nc)
	assert.Equal(t, "frame_too_large", respCode(m))
	assert.Contains(t, m["error"].(map[string]any)["message"], "before a successful hello")
	assertClosed(t, nc)

	// After hello the full max_frame applies.
	c := ts.client(t)
	big := msgpackBody(t, map[string]any{"id": 1, "method": "ping", "params": map[string]any{"pad": strings.Repeat("x", 2*maxPreAuthFrame)}})
	require.NoError(t, c.WriteFrame(big))
	body, err := c.ReadFrame()
	require.NoError(t, err)
	assert.Contains(t, string(body), "bad_request", "served (and refused for its unknown param), not frame_too_large")
}
