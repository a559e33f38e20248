package main

// The HTTP plumbing the local pages share: the page of play --web and the
// replay viewer of view. Both serve one person's browser on this machine,
// on a loopback address only.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// loopbackAddr checks that the address s of flag (--listen, --addr) is on
// the loopback interface (127.0.0.0/8, ::1 or localhost) and returns the
// address to listen on.
func loopbackAddr(flag, s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("%s %q: want host:port, such as 127.0.0.1:8080 (%v)", flag, s, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("%s %q: port must be a number 0..65535", flag, s)
	}
	switch {
	case host == "localhost":
		return net.JoinHostPort("127.0.0.1", port), nil
	case host == "":
		return "", fmt.Errorf("%s %q: an empty host means every interface; it serves loopback only (use 127.0.0.1:%s)", flag, s, port)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%s %q: %s is not a loopback address; it serves only 127.0.0.1, ::1 or localhost", flag, s, host)
	}
	return net.JoinHostPort(ip.String(), port), nil
}

// loopbackOnly refuses requests whose Host header does not name a loopback
// host, so a web page elsewhere cannot reach the page through a DNS name
// that it points at 127.0.0.1 (DNS rebinding).
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "this page answers only requests to a loopback host", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// contentSecurity allows the page only its own scripts, styles and data.
const contentSecurity = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// servePage adds a page's index.html (at /) and its other files (at
// /static/NAME) from static to mux. The files are read once, here: a request
// names one of them exactly or is answered 404, so no path a client sends
// reaches a file system.
func servePage(mux *http.ServeMux, static fs.FS) error {
	files := map[string][]byte{}
	err := fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files[name], err = fs.ReadFile(static, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("embedded page files: %w", err)
	}
	page, ok := files["index.html"]
	if !ok {
		return fmt.Errorf("embedded page files: no index.html")
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(page))
	})
	mux.HandleFunc("GET /static/{name...}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		b, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, path.Base(name), time.Time{}, bytes.NewReader(b))
	})
	return nil
}

// secureHeaders adds the headers every local page answers with: the page
// may load only its own scripts, styles and data, and nothing is cached.
func secureHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurity)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// Errors of a request refused before any handler sees it; webStatus maps
// each to its HTTP status.
var (
	// errCrossOrigin: a write sent by a page other than the page itself (403).
	errCrossOrigin = errors.New("refused: a request from another page")
	// errNotJSON: a write whose body is not declared application/json (415).
	errNotJSON = errors.New("refused: send the body as Content-Type application/json")
)

// sameOriginWrites refuses every request that could change something (any
// method but GET and HEAD) unless a browser says it comes from the page
// itself and its body is JSON:
//
//   - Sec-Fetch-Site, when present, must be same-origin or none (typed by
//     the user);
//   - Origin, when present, must be exactly this page's origin,
//     http://HOST:PORT as the request reached it, so never "null";
//   - Content-Type must be application/json.
//
// A page elsewhere can make a browser send a form or a no-cors fetch to
// any address without asking: those carry the other page's origin, or
// null, and cannot be JSON without a CORS preflight, which this server
// never grants. Clients that are not browsers (curl, Python) send neither
// header and pass with a JSON body.
func sameOriginWrites(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := checkWrite(r); err != nil {
				writeError(w, err)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// checkWrite is sameOriginWrites' check of one request.
func checkWrite(r *http.Request) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return fmt.Errorf("%w (Sec-Fetch-Site %q): only the page itself may send it", errCrossOrigin, site)
	}
	if origin, ok := r.Header["Origin"]; ok {
		want := pageOrigin(r)
		if len(origin) != 1 || origin[0] != want || want == "" {
			return fmt.Errorf("%w: Origin %q is not this page's origin %q", errCrossOrigin, strings.Join(origin, ", "), want)
		}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return fmt.Errorf("%w: the request has no Content-Type", errNotJSON)
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return fmt.Errorf("%w, not %q", errNotJSON, ct)
	}
	return nil
}

// pageOrigin is the origin of the page a request reached: http://HOST:PORT
// as the request names it, when its port is the one the server listens on
// ("" when it is not, or the server is unknown).
func pageOrigin(r *http.Request) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	_, port, err := net.SplitHostPort(local.String())
	if err != nil {
		return ""
	}
	_, hostPort, err := net.SplitHostPort(r.Host)
	if err != nil {
		hostPort = "80" // no port: the default one
	}
	if hostPort != port {
		return ""
	}
	return "http://" + r.Host
}

// The limits of a page server (play --web, view). A page's requests come
// from one browser on the same machine and are small, so each limit is far
// above what the page needs and far below what would let a client hold the
// server: without them a client that sends its body a byte at a time, or
// opens connections and leaves them idle, holds each connection for ever,
// and some thousands of them exhaust the process's files. docs/PLAY.md
// lists them (pageLimitsDoc).
const (
	// pageReadHeaderTimeout is how long a client has to send a request's
	// headers, from its connection or its previous request.
	pageReadHeaderTimeout = 5 * time.Second
	// pageReadTimeout is how long a client has to send a whole request,
	// headers and body (at most maxWebBody bytes).
	pageReadTimeout = 10 * time.Second
	// pageWriteTimeout is how long the client has to take an answer,
	// counted from the answer's first byte: an agent thinking over its move
	// does not count.
	pageWriteTimeout = 30 * time.Second
	// pageIdleTimeout is how long a kept-alive connection may wait for its
	// next request.
	pageIdleTimeout = 60 * time.Second
	// pageMaxHeaderBytes bounds a request's headers (a browser sends 1 or
	// 2 KiB); Go's server reads up to 4 KiB more before it answers 431.
	pageMaxHeaderBytes = 16 << 10
	// pageMaxConns is how many connections the server holds at once. A
	// new one past it closes the connection that has been sending its
	// request the longest, or else the one idle the longest
	// (shedListener); it waits, unaccepted, only while every one is being
	// answered. A browser opens at most 6 to one server.
	pageMaxConns = 64
	// pageShutdownGrace is how long a stop (Ctrl-C, SIGTERM) waits for
	// answers in progress before it closes every connection.
	pageShutdownGrace = 2 * time.Second
)

// pageLimitsDoc is the table of the limits above that docs/PLAY.md shows
// (TestPlayDocNamesTheLimits keeps the page in step with it).
//
//go:generate go test -run ^TestPlayDocNamesTheLimits$ -update-play-doc .
func pageLimitsDoc() string {
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s" }
	kib := func(n int) string { return strconv.Itoa(n>>10) + " KiB" }
	rows := [][3]string{
		{"time to send a request's headers", secs(pageReadHeaderTimeout), "the connection is closed"},
		{"time to send a whole request, headers and body", secs(pageReadTimeout), "408, and the connection is closed"},
		{"time to take an answer, from its first byte (the agents' thinking does not count)", secs(pageWriteTimeout), "the connection is closed"},
		{"time a kept-alive connection may stay idle", secs(pageIdleTimeout), "the connection is closed (the browser opens another)"},
		{"request headers", kib(pageMaxHeaderBytes), "431"},
		{"a request body (`play --web`)", kib(maxWebBody), "413"},
		{"connections at once", strconv.Itoa(pageMaxConns), "a new one closes the connection sending its request the longest, or else the one idle the longest; it waits to be accepted only while every one is being answered"},
		{"on Ctrl-C, time left to answers in progress", secs(pageShutdownGrace), "every connection is closed; the command exits 0"},
	}
	var b strings.Builder
	b.WriteString("| limit | value | past it |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	return b.String()
}

// pageServer serves a local page's handler on a loopback listener, with
// the limits above (tests shorten them).
type pageServer struct {
	handler           http.Handler
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	maxHeaderBytes    int
	maxConns          int
	shutdownGrace     time.Duration
}

// newPageServer serves h with the limits above.
func newPageServer(h http.Handler) *pageServer {
	return &pageServer{handler: h, readHeaderTimeout: pageReadHeaderTimeout, readTimeout: pageReadTimeout,
		writeTimeout: pageWriteTimeout, idleTimeout: pageIdleTimeout, maxHeaderBytes: pageMaxHeaderBytes,
		maxConns: pageMaxConns, shutdownGrace: pageShutdownGrace}
}

// serve serves on ln until ctx is cancelled: loopback hosts only, writes
// from the page itself only, at most maxConns connections at once. Then it
// stops: answers in progress get shutdownGrace to finish, the connections
// still open after it are closed, and it prints bye and returns nil.
func (s *pageServer) serve(ctx context.Context, ln net.Listener, stdout io.Writer, bye string) error {
	conns := newShedListener(ln, s.maxConns)
	srv := &http.Server{
		Handler:           conns.wholeRequests(maxWebBody, answerDeadline(s.writeTimeout, loopbackOnly(sameOriginWrites(s.handler)))),
		ReadHeaderTimeout: s.readHeaderTimeout,
		ReadTimeout:       s.readTimeout,
		WriteTimeout:      s.writeTimeout,
		IdleTimeout:       s.idleTimeout,
		MaxHeaderBytes:    s.maxHeaderBytes,
		ConnState:         conns.connState,
		ConnContext:       connContext,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(conns) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Stragglers: slow clients, or an agent still thinking. Nobody
		// waits for them any more.
		err = srv.Close()
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	fmt.Fprintln(stdout, bye)
	return nil
}

// answerDeadline gives each answer d to be written from its first byte:
// the server's WriteTimeout counts from the end of the request's headers,
// which would cut an answer an agent thought over longer than that.
func answerDeadline(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&deadlineWriter{ResponseWriter: w, d: d}, r)
	})
}

// deadlineWriter sets its connection's write deadline to d from the first
// byte written.
type deadlineWriter struct {
	http.ResponseWriter
	d     time.Duration
	armed bool
}

func (w *deadlineWriter) arm() {
	if !w.armed {
		w.armed = true
		// Not supported only by writers that are not connections (tests').
		_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.d))
	}
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.arm()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
