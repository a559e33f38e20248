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
// /static/...) from static to mux.
func servePage(mux *http.ServeMux, static fs.FS) error {
	page, err := fs.ReadFile(static, "index.html")
	if err != nil {
		return fmt.Errorf("embedded page files: %w", err)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(page))
	})
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
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

// pageServer serves a local page's handler on a loopback listener.
type pageServer struct {
	handler           http.Handler
	readHeaderTimeout time.Duration
	shutdownGrace     time.Duration
}

// newPageServer serves h with the default limits.
func newPageServer(h http.Handler) *pageServer {
	return &pageServer{handler: h, readHeaderTimeout: 10 * time.Second, shutdownGrace: 5 * time.Second}
}

// serve serves on ln, loopback hosts only, until ctx is cancelled, then
// shuts the server down and prints bye.
func (s *pageServer) serve(ctx context.Context, ln net.Listener, stdout io.Writer, bye string) error {
	srv := &http.Server{Handler: loopbackOnly(sameOriginWrites(s.handler)), ReadHeaderTimeout: s.readHeaderTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	fmt.Fprintln(stdout, bye)
	return nil
}
