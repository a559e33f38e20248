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
// host, so a web page elsewhere cannot reach the viewer through a DNS name
// that it points at 127.0.0.1.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "the viewer answers only requests to a loopback host", http.StatusForbidden)
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
	srv := &http.Server{Handler: loopbackOnly(s.handler), ReadHeaderTimeout: s.readHeaderTimeout}
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
