package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
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

// shortPage is a page server with limits short enough for a test to wait them out.
func shortPage(h http.Handler) *pageServer {
	s := newPageServer(h)
	s.readHeaderTimeout = 200 * time.Millisecond
	s.readTimeout = 300 * time.Millisecond
	s.writeTimeout = 300 * time.Millisecond
	s.idleTimeout = 300 * time.Millisecond
	s.shutdownGrace = 200 * time.Millisecond
	s.maxConns = 3
	return s
}

// slowClient is a hostile client on a real socket: it sends head at once,
// then trickle one byte at a time, every every, until the server closes the
// connection. closed is closed when the server has closed it (or the client
// gave up after 5 s).
type slowClient struct {
	conn     net.Conn
	closed   chan struct{}
	closedAt time.Time // set before closed is closed
	read     []byte    // what the server sent, set before closed is closed
	readErr  error     // why reading stopped
}

func startSlowClient(t *testing.T, addr, head, trickle string, every time.Duration) *slowClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	c := &slowClient{conn: conn, closed: make(chan struct{})}
	_, err = io.WriteString(conn, head)
	require.NoError(t, err)
	go func() {
		for i := 0; i < len(trickle) && i < 1000; i++ {
			select {
			case <-c.closed:
				return
			case <-time.After(every):
			}
			if _, err := conn.Write([]byte{trickle[i]}); err != nil {
				return
			}
		}
	}()
	go func() {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		c.read, c.readErr = io.ReadAll(conn)
		c.closedAt = time.Now()
		close(c.closed)
	}()
	return c
}

// wait waits for the server to close c's connection and returns how long
// that took from start; it fails the test when the client's own 5 s
// deadline ended it.
func (c *slowClient) wait(t *testing.T, start time.Time) time.Duration {
	t.Helper()
	<-c.closed
	var ne net.Error
	require.False(t, errors.As(c.readErr, &ne) && ne.Timeout(), "the server held the connection for 5 s; it sent %q", c.read)
	return c.closedAt.Sub(start)
}

// TestPageServerCutsSlowClients holds connections the way a hostile client
// does, on real sockets: headers that never end, a body trickled a byte at a
// time, a kept-alive connection left idle. The server closes each one
// within its timeout.
func TestPageServerCutsSlowClients(t *testing.T) {
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, seed: 3, maxGames: 4})
	h, err := w.handler()
	require.NoError(t, err)
	s := shortPage(h)
	addr := startPage(t, s, nil)
	post := "POST /api/games HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
	tests := []struct {
		name, head, trickle string
		within              time.Duration // the limit that applies
		answer              string        // what the server answers before closing, if anything
	}{
		{"headers that never end", "POST /api/games HTTP/1.1\r\nHost: " + addr + "\r\n", strings.Repeat("X-Slow: 1\r\n", 100), s.readHeaderTimeout, ""},
		{"a body a byte at a time", post, `{"seed": ` + strings.Repeat(" ", 190) + `1}`, s.readTimeout, "HTTP/1.1 408"},
		{"an idle kept-alive connection", "GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n", "", s.idleTimeout, "HTTP/1.1 200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c := startSlowClient(t, addr, tc.head, tc.trickle, 50*time.Millisecond)
			took := c.wait(t, start)
			t.Logf("closed after %v (limit %v); the server sent %.40q", took, tc.within, c.read)
			assert.Less(t, took, tc.within+time.Second, "the server closes the connection at its limit")
			assert.True(t, strings.HasPrefix(string(c.read), tc.answer), "answer %.60q, want %q", c.read, tc.answer)
		})
	}
	assert.Zero(t, w.numGames(), "no slow request made a game")
}

// countingListener counts the connections it accepted that are still open,
// and the most at once.
type countingListener struct {
	net.Listener
	mu         sync.Mutex
	open, most int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.open++
	l.most = max(l.most, l.open)
	l.mu.Unlock()
	return &countedConn{Conn: c, l: l}, nil
}

func (l *countingListener) peak() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.most
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// TestPageServerConnectionCap opens twice as many slow connections as the
// server holds at once: it never holds more than its cap (and the one it
// is making room for), a normal request made after them all is answered at
// once, and every slow one is cut: shed to make room, or answered 408.
func TestPageServerConnectionCap(t *testing.T) {
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, seed: 3, maxGames: 4})
	h, err := w.handler()
	require.NoError(t, err)
	s := shortPage(h)
	s.readTimeout = 2 * time.Second // the slow ones hold their place that long unless shed
	var counted *countingListener
	addr := startPage(t, s, func(ln net.Listener) net.Listener {
		counted = &countingListener{Listener: ln}
		return counted
	})
	head := "POST /api/games HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
	var slow []*slowClient
	for range 2 * s.maxConns {
		slow = append(slow, startSlowClient(t, addr, head, strings.Repeat(" ", 200), 50*time.Millisecond))
	}
	time.Sleep(50 * time.Millisecond) // the slow ones connect first

	start := time.Now()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/")
	require.NoError(t, err, "a normal request is answered beside the slow connections")
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Less(t, time.Since(start), s.readTimeout, "answered before any slow connection timed out")
	for i, c := range slow {
		c.wait(t, time.Now())
		assert.True(t, len(c.read) == 0 || strings.HasPrefix(string(c.read), "HTTP/1.1 408"), "slow client %d was answered %.40q", i, c.read)
	}
	assert.LessOrEqual(t, counted.peak(), s.maxConns+1, "connections held at once")
	t.Logf("at most %d connections at once (cap %d)", counted.peak(), s.maxConns)
}

// TestPageServerLongAnswer: an answer that takes longer than the read and
// write timeouts to prepare (an agent thinking over its move) still reaches
// the client in full: the write timeout counts from the answer's first byte.
func TestPageServerLongAnswer(t *testing.T) {
	var s *pageServer
	s = shortPage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * max(s.readTimeout, s.writeTimeout))
		writeJSON(w, http.StatusOK, map[string]string{"say": strings.Repeat("a long think ", 1000)})
	}))
	addr := startPage(t, s, nil)
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			code, body := apiCall(t, method, "http://"+addr+"/", `{}`, nil)
			assert.Equal(t, http.StatusOK, code)
			assert.Contains(t, string(body), strings.Repeat("a long think ", 1000))
		})
	}
}

// TestPageServerStopsWithSlowClients: cancelling the server (Ctrl-C) while
// a client holds a connection with a request half sent gives answers in
// progress the grace time, then closes the stragglers and returns nil.
func TestPageServerStopsWithSlowClients(t *testing.T) {
	s := shortPage(http.NotFoundHandler())
	s.readTimeout = time.Minute // only the shutdown can end the slow client
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, &out, "stopped") }()
	addr := ln.Addr().String()
	c := startSlowClient(t, addr, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n", strings.Repeat(" ", 200), 50*time.Millisecond)
	time.Sleep(100 * time.Millisecond)

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err, "a stop with a slow client still connected is a clean stop")
	case <-time.After(s.shutdownGrace + 2*time.Second):
		t.Fatal("serve did not return after its grace time")
	}
	took := c.wait(t, start)
	assert.Less(t, took, s.shutdownGrace+time.Second, "the straggler is closed after the grace time")
	assert.Contains(t, out.String(), "stopped")
}

// rawGet sends a GET of target (written as is on the request line) to addr
// on a fresh connection and returns the answer's status and body; it
// follows a redirect to the same server, at most three times. A
// connection the server reset without an answer is status 0.
func rawGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	for range 4 {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, addr)
		if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
			return 0, ""
		}
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if errors.Is(err, syscall.ECONNRESET) {
			return 0, ""
		}
		require.NoError(t, err, "GET %.80q", target)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		conn.Close()
		if errors.Is(err, syscall.ECONNRESET) {
			return res.StatusCode, string(b) // answered, then hung up on the rest of the request
		}
		require.NoError(t, err)
		loc := res.Header.Get("Location")
		if res.StatusCode/100 != 3 || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") {
			return res.StatusCode, string(b)
		}
		target = loc
	}
	t.Fatalf("GET %.80q: too many redirects", target)
	return 0, ""
}

// TestPageOddStaticPaths asks both pages for paths a hostile client would
// try, written raw on the request line: each is refused with a 4xx (404,
// or 400/431 for a request line Go refuses itself), never a 5xx, and
// nothing from outside the embedded files is served.
func TestPageOddStaticPaths(t *testing.T) {
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, seed: 3, maxGames: 4})
	play, err := w.handler()
	require.NoError(t, err)
	path, _ := writeRecords(t, t.TempDir(), 1)
	v, err := loadViewer(path, 0)
	require.NoError(t, err)
	view, err := v.handler()
	require.NoError(t, err)
	long := "/static/" + strings.Repeat("a", 8000)
	huge := "/static/" + strings.Repeat("a/", 2*pageMaxHeaderBytes)
	paths := []string{
		"/static/%c0%ae%c0%ae/etc/passwd", // overlong UTF-8 dots
		"/static/%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afetc/passwd",
		"/static/%ff", "/static/%ff%fe.js", "/static/\xff.js",
		"/static/../pageserver.go", "/static/../../go.mod", "/static/..%2fpageserver.go", "/static/%2e%2e/%2e%2e/go.mod",
		"/static/..%5c..%5cgo.mod", "/static/..\\..\\go.mod", "/static/%2fetc%2fpasswd", "/static//etc/passwd",
		"/static/%00", "/static/index.html%00.js", "/static/a%00b",
		"/static/.", "/static/./", "/static/", "/static", "/static/nothing.js", "/static/index.html/",
		long, "/%c0%ae%c0%ae/etc/passwd", "/etc/passwd", "/..%2f..%2fetc%2fpasswd",
	}
	for _, page := range []struct {
		name string
		h    http.Handler
	}{{"play", play}, {"view", view}} {
		addr := startPage(t, newPageServer(page.h), nil)
		for _, p := range paths {
			t.Run(page.name+" "+fmt.Sprintf("%.60q", p), func(t *testing.T) {
				code, body := rawGet(t, addr, p)
				assert.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest, http.StatusRequestHeaderFieldsTooLarge}, code, "%.200s", body)
				assert.NotContains(t, body, "package main")
				assert.NotContains(t, body, "module github.com")
				assert.NotContains(t, body, "root:")
			})
		}
		t.Run(page.name+" a path over the header limit", func(t *testing.T) {
			// 431, or a reset: the server hangs up with the rest of the request unread.
			code, _ := rawGet(t, addr, huge)
			assert.Contains(t, []int{http.StatusRequestHeaderFieldsTooLarge, 0}, code)
		})
		t.Run(page.name+" the real files", func(t *testing.T) {
			code, body := rawGet(t, addr, "/static/index.html")
			assert.Equal(t, http.StatusOK, code)
			assert.Contains(t, body, "<script")
		})
	}
}

var updatePlayDoc = flag.Bool("update-play-doc", false, "rewrite the table of page limits in docs/PLAY.md")

// TestPlayDocNamesTheLimits: docs/PLAY.md shows the page server's limits as
// pageLimitsDoc renders them from their constants (-update-play-doc, which
// go generate passes, rewrites the table).
func TestPlayDocNamesTheLimits(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "PLAY.md")
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	const begin = "<!-- BEGIN GENERATED: page limits (go generate ./cmd/yutenv; do not edit) -->\n"
	const end = "<!-- END GENERATED -->"
	i := bytes.Index(page, []byte(begin))
	require.GreaterOrEqual(t, i, 0, "docs/PLAY.md has no %q", begin)
	j := bytes.Index(page[i:], []byte(end))
	require.GreaterOrEqual(t, j, 0, "docs/PLAY.md: no %q after the table", end)
	want := pageLimitsDoc()
	if *updatePlayDoc {
		fresh := slices.Concat(page[:i+len(begin)], []byte(want), page[i+j:])
		require.NoError(t, os.WriteFile(path, fresh, 0o644))
		return
	}
	assert.Equal(t, want, string(page[i+len(begin):i+j]), "docs/PLAY.md's table of limits is stale: go generate ./cmd/yutenv")
}
