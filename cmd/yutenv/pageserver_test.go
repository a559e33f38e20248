package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// startPage serves s on a fresh loopback port until the test ends (through
// s.serve, as the commands do) and returns its address (127.0.0.1:PORT).
// ln, when not nil, wraps the listener first.
func startPage(t *testing.T, s *pageServer, wrap func(net.Listener) net.Listener) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, io.Discard, "stopped") }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "the page server after its context was cancelled")
		case <-time.After(10 * time.Second):
			t.Error("the page server did not stop")
		}
	})
	return addr
}

// testPlayServer serves a play --web game server with the default limits
// and returns its games and address.
func testPlayServer(t *testing.T, maxGames int) (*webGames, string) {
	t.Helper()
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, seed: 3, maxGames: maxGames})
	h, err := w.handler()
	require.NoError(t, err)
	return w, startPage(t, newPageServer(h), nil)
}

// numGames is how many games w holds.
func (w *webGames) numGames() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.games)
}

// TestPageRefusesCrossOriginWrites sends a write the way each kind of page
// or client would: only the page itself (same origin, or no browser at all)
// may make a game or move, and only with a JSON body. The others are
// refused before the handler runs: no game is made, no move played.
func TestPageRefusesCrossOriginWrites(t *testing.T) {
	w, addr := testPlayServer(t, 64)
	base := "http://" + addr
	self := base // the page's own origin
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)

	var v webView
	code, body := apiCall(t, "POST", base+"/api/games", `{}`, &v)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	require.NotEmpty(t, v.Moves)
	move := fmt.Sprintf(`{"action": %d}`, v.Moves[0].Action)

	const json, plain, form = "application/json", "text/plain", "application/x-www-form-urlencoded"
	tests := []struct {
		name        string
		path        string // default /api/games
		host        string // default addr
		ctype       string
		origin      string
		fetchSite   string
		code        int
		errContains string
	}{
		{name: "no browser (curl, Python)", ctype: json, code: 201},
		{name: "JSON with a charset", ctype: "application/json; charset=utf-8", code: 201},
		{name: "JSON, any case", ctype: "Application/JSON", code: 201},
		{name: "the page itself", ctype: json, origin: self, fetchSite: "same-origin", code: 201},
		{name: "typed by the user", ctype: json, fetchSite: "none", code: 201},
		{name: "the page opened as localhost", host: "localhost:" + port, ctype: json, origin: "http://localhost:" + port, fetchSite: "same-origin", code: 201},
		{name: "another site", ctype: plain, origin: "http://evil.example", fetchSite: "cross-site", code: 403, errContains: "cross-site"},
		{name: "another site sending JSON", ctype: json, origin: "http://evil.example", fetchSite: "cross-site", code: 403},
		{name: "another site, Origin only", ctype: json, origin: "http://evil.example", code: 403, errContains: "http://evil.example"},
		{name: "another site, Sec-Fetch-Site only", ctype: json, fetchSite: "cross-site", code: 403, errContains: "cross-site"},
		{name: "a form or sandboxed page (Origin null)", ctype: form, origin: "null", code: 403, errContains: "null"},
		{name: "Origin null sending JSON", ctype: json, origin: "null", code: 403},
		{name: "another port of this machine", ctype: json, origin: "http://127.0.0.1:1", fetchSite: "same-site", code: 403},
		{name: "same site, other origin", ctype: json, origin: self, fetchSite: "same-site", code: 403, errContains: "same-site"},
		{name: "another loopback address", ctype: json, origin: "http://127.0.0.2:" + port, code: 403},
		{name: "localhost while served as 127.0.0.1", ctype: json, origin: "http://localhost:" + port, code: 403},
		{name: "https", ctype: json, origin: "https://" + addr, code: 403},
		{name: "a path in Origin", ctype: json, origin: self + "/", code: 403},
		{name: "Sec-Fetch-Site unknown", ctype: json, origin: self, fetchSite: "bogus", code: 403},
		{name: "text/plain (a form or no-cors fetch)", ctype: plain, code: 415, errContains: "application/json"},
		{name: "a form", ctype: form, origin: self, code: 415},
		{name: "multipart", ctype: "multipart/form-data; boundary=x", code: 415},
		{name: "no Content-Type", code: 415, errContains: "Content-Type"},
		{name: "not quite JSON", ctype: "application/jsonx", code: 415},
		{name: "a bad media type", ctype: "application/json; ;", code: 415},
		{name: "move from another site", path: "/api/games/" + v.ID + "/moves", ctype: plain, origin: "http://evil.example", fetchSite: "cross-site", code: 403},
		{name: "move as a form", path: "/api/games/" + v.ID + "/moves", ctype: form, code: 415},
	}
	made := 1
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, payload := "/api/games", `{}`
			if tc.path != "" {
				path, payload = tc.path, move
			}
			req, err := http.NewRequest("POST", base+path, strings.NewReader(payload))
			require.NoError(t, err)
			if tc.host != "" {
				req.Host = tc.host
			}
			for k, v := range map[string]string{"Content-Type": tc.ctype, "Origin": tc.origin, "Sec-Fetch-Site": tc.fetchSite} {
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, tc.code, res.StatusCode, "%.200s", b)
			if res.StatusCode == http.StatusCreated {
				made++
			}
			if tc.code >= 400 {
				assert.Contains(t, res.Header.Get("Content-Type"), "application/json")
				assert.Regexp(t, `^\{"error":".+"\}$`, string(b[:min(len(b), 300)]))
				assert.Contains(t, string(b), tc.errContains)
			}
		})
	}
	assert.Equal(t, made, w.numGames(), "only the accepted requests made a game")
	var after webView
	code, body = apiCall(t, "GET", base+"/api/games/"+v.ID, "", &after)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Len(t, after.Log, len(v.Log), "no refused move was played")
}

// TestPlayWebSafeMethodsStartNothing: no GET or HEAD request makes a game or
// plays a move (a page elsewhere can make a browser send those freely, with
// an <img> or a link), and the viewer takes no write at all.
func TestPlayWebSafeMethodsStartNothing(t *testing.T) {
	w, addr := testPlayServer(t, 64)
	base := "http://" + addr
	var v webView
	code, body := apiCall(t, "POST", base+"/api/games", `{}`, &v)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	for _, method := range []string{"GET", "HEAD"} {
		for _, path := range []string{"/api/games", "/api/games/" + v.ID + "/moves", "/api/games?seed=1", "/api/games/" + v.ID + "/moves?action=" + fmt.Sprint(v.Moves[0].Action)} {
			t.Run(method+" "+path, func(t *testing.T) {
				code, _ := apiCall(t, method, base+path, "", nil)
				assert.Equal(t, http.StatusMethodNotAllowed, code)
			})
		}
	}
	assert.Equal(t, 1, w.numGames())
	var after webView
	code, _ = apiCall(t, "GET", base+"/api/games/"+v.ID, "", &after)
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, after.Log, len(v.Log), "no move was played")
}

// wireTap records every byte a server's connections read and wrote, so a
// test can see what a browser really sent and what it was answered.
type wireTap struct {
	mu    sync.Mutex
	conns []*tapConn
}

// wrap returns ln recording into t.
func (t *wireTap) wrap(ln net.Listener) net.Listener { return &tapListener{Listener: ln, tap: t} }

type tapListener struct {
	net.Listener
	tap *wireTap
}

func (l *tapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &tapConn{Conn: c}
	l.tap.mu.Lock()
	l.tap.conns = append(l.tap.conns, tc)
	l.tap.mu.Unlock()
	return tc, nil
}

type tapConn struct {
	net.Conn
	mu      sync.Mutex
	in, out bytes.Buffer
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.in.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

func (c *tapConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.out.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// exchange is one request a server read whole and the status it answered
// (0 while unanswered).
type exchange struct {
	method, path string
	header       http.Header
	status       int
}

func (e exchange) String() string {
	return fmt.Sprintf("%s %s (Origin %q, Sec-Fetch-Site %q, Content-Type %q): %d", e.method, e.path,
		e.header.Get("Origin"), e.header.Get("Sec-Fetch-Site"), e.header.Get("Content-Type"), e.status)
}

// exchanges parses what was recorded so far into requests and answers.
func (t *wireTap) exchanges() []exchange {
	t.mu.Lock()
	conns := append([]*tapConn(nil), t.conns...)
	t.mu.Unlock()
	var all []exchange
	for _, c := range conns {
		c.mu.Lock()
		in := bufio.NewReader(bytes.NewReader(bytes.Clone(c.in.Bytes())))
		out := bufio.NewReader(bytes.NewReader(bytes.Clone(c.out.Bytes())))
		c.mu.Unlock()
		for {
			req, err := http.ReadRequest(in)
			if err != nil {
				break
			}
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				break // not read whole yet
			}
			e := exchange{method: req.Method, path: req.URL.Path, header: req.Header}
			if res, err := http.ReadResponse(out, req); err == nil {
				if _, err := io.Copy(io.Discard, res.Body); err == nil {
					e.status = res.StatusCode
				}
			}
			all = append(all, e)
		}
	}
	return all
}
