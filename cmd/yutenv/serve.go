package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/server"
)

func init() {
	commands["serve"] = command{summary: "serve envs to Python trainers over a socket (docs/PROTOCOL.md)", run: runServe}
}

// serveStdin is the standard input watched by --exit-on-stdin-eof (a
// variable so tests can give their own).
var serveStdin io.Reader = os.Stdin

// serveSignals delivers the signals that start a graceful shutdown (a
// variable so tests can send their own).
var serveSignals = func() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// serveExecutable is the binary whose nets/ folder serve allows (a
// variable so tests can give their own).
var serveExecutable = os.Executable

// shippedNetDirs returns the folder of networks shipped with this binary
// (nets/ next to it, as yutenv/_bin/nets in the Python package) if there
// is one: clients may always name those.
func shippedNetDirs() []string {
	exe, err := serveExecutable()
	if err != nil {
		return nil
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil
	}
	dir := filepath.Join(filepath.Dir(exe), "nets")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	return []string{dir}
}

func runServe(args []string, stdout, stderr io.Writer) error {
	def := server.DefaultConfig()
	fs := newFlags("serve", "[flags]", stderr)
	listen := fs.String("listen", "127.0.0.1:7777", "host:port (TCP; port 0 picks a free port) or unix:/path")
	token := fs.String("token", "", "shared secret every connection must present (visible in ps: prefer --token-file)")
	tokenFile := fs.String("token-file", "", "read the token from this file")
	maxConns := fs.Int("max-conns", def.MaxConns, "connections served at once (after hello)")
	maxHandshakes := fs.Int("max-handshakes", def.MaxHandshakes, "connections that may be in handshake at once; a new one past it drops the oldest")
	handshake := fs.Duration("handshake-timeout", def.HandshakeTimeout, "close a connection that has not completed hello this long after connecting (0 disables)")
	maxEnvsConn := fs.Int("max-envs-per-conn", def.MaxEnvsPerConn, "envs one connection may hold")
	maxEnvs := fs.Int("max-envs", def.MaxEnvs, "envs all connections may hold together")
	maxEnvBytes := fs.Int64("max-env-bytes", def.MaxEnvBytes, "bytes of env buffers all connections may hold together")
	maxSims := fs.Int("max-opponent-sims", def.MaxOpponentSims, "largest opponent search per decision, N x workers, (N+fast) x workers with fast=F (-1: no limit)")
	maxAnalyseSims := fs.Int64("max-analyse-sims", def.MaxAnalyseSims, "largest analyse request: states x simulations a decision, over all its states (-1: no limit)")
	analyseWorkers := fs.Int("analyse-workers", def.AnalyseWorkers, "cores analyse requests may keep busy at once, server wide (default: --workers minus one, at least 1)")
	maxSelfplayBytes := fs.Int64("max-selfplay-bytes", def.MaxSelfplayBytes, "estimated memory all self-play runs may hold together, part of the memory bound")
	maxFrame := fs.Int("max-frame", def.MaxFrame, "largest frame body in bytes, either direction")
	maxInflight := fs.Int64("max-inflight-bytes", def.MaxInflightBytes, "bytes of large frames and replies (over 256 KiB) all connections may have in flight together (default: the larger of 48 MiB and 3 x --max-frame)")
	idle := fs.Duration("idle-timeout", def.IdleTimeout, "close a connection silent this long (0 disables)")
	workers := fs.Int("workers", def.Workers, "goroutines stepping large batches in parallel")
	stdinEOF := fs.Bool("exit-on-stdin-eof", false, "shut down gracefully when stdin reaches end of file")
	removeDir := fs.Bool("remove-socket-dir", false, "with --listen unix:PATH, remove PATH's folder on exit if it is then empty (a folder made for this server: the Python package's, which a killed parent cannot remove)")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error (logs go to stderr)")
	logFormat := fs.String("log-format", "text", "text or json")
	grace := fs.Duration("shutdown-timeout", 10*time.Second, "how long a graceful shutdown waits for requests in flight")
	netDirs := fs.StringArray("net-dir", nil, "a folder clients may name networks from (net:NAME), repeatable; the nets/ folder next to this binary, if any, is always allowed")
	outDirs := fs.StringArray("out-dir", nil, "a folder clients may make the server write in (selfplay_new's out), repeatable; without it clients may write nothing")
	maxNetBytes := fs.Int64("max-net-bytes", def.MaxNetBytes, "largest network file a client may name")
	maxNetCache := fs.Int64("max-net-cache-bytes", def.MaxNetCacheBytes, "bytes of network weights kept loaded for clients (least recently used evicted)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "yutenv serve: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return errUsage
	}
	logger, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil && !strings.HasPrefix(*listen, "unix:") {
		return fmt.Errorf("--listen %q is neither host:port nor unix:/path", *listen)
	}
	tok, err := readToken(*token, *tokenFile)
	if err != nil {
		return err
	}
	if tok == "" && server.NeedsToken(*listen) {
		return fmt.Errorf("listening on %s (not loopback) requires --token or --token-file", *listen)
	}
	switch {
	case *maxConns < 1 || *maxHandshakes < 1 || *maxEnvsConn < 1 || *maxEnvs < 1 || *maxEnvBytes < 1 || *maxInflight < 1 || *workers < 1 || *maxNetBytes < 1 || *maxNetCache < 1:
		return errors.New("--max-conns, --max-handshakes, --max-envs-per-conn, --max-envs, --max-env-bytes, --max-inflight-bytes, --workers, --max-net-bytes and --max-net-cache-bytes must be at least 1")
	case *analyseWorkers < 1 || *maxSelfplayBytes < 1 || *maxAnalyseSims == 0:
		return errors.New("--analyse-workers and --max-selfplay-bytes must be at least 1, --max-analyse-sims at least 1 (or -1)")
	case *idle < 0 || *grace < 0 || *handshake < 0:
		return errors.New("--idle-timeout, --handshake-timeout and --shutdown-timeout must not be negative")
	}
	cfg := server.Config{
		Token: tok, MaxConns: *maxConns, MaxHandshakes: *maxHandshakes, HandshakeTimeout: *handshake, MaxEnvsPerConn: *maxEnvsConn, MaxEnvs: *maxEnvs, MaxEnvBytes: *maxEnvBytes, MaxOpponentSims: *maxSims,
		MaxFrame: *maxFrame, MaxInflightBytes: *maxInflight, IdleTimeout: *idle, Workers: *workers, Version: Version, Logger: logger,
		NetDirs: append(shippedNetDirs(), *netDirs...), OutDirs: *outDirs, MaxNetBytes: *maxNetBytes, MaxNetCacheBytes: *maxNetCache,
	}
	cfg.MaxAnalyseSims, cfg.AnalyseWorkers, cfg.MaxSelfplayBytes = *maxAnalyseSims, *analyseWorkers, *maxSelfplayBytes
	if !fs.Changed("analyse-workers") {
		cfg.AnalyseWorkers = 0 // the default, which follows --workers
	}
	if !fs.Changed("max-inflight-bytes") {
		cfg.MaxInflightBytes = 0 // the default, which grows with --max-frame
	}
	if *idle == 0 {
		cfg.IdleTimeout = -1
	}
	if *handshake == 0 {
		cfg.HandshakeTimeout = -1
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	// Garbage counts until collected: keep the process under the
	// documented bound of its limits (unless GOMEMLIMIT says otherwise).
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(cfg.MemoryBound())
	}
	l, addr, err := server.Listen(*listen)
	if err != nil {
		srv.Close()
		return err
	}
	if path, ok := strings.CutPrefix(*listen, "unix:"); ok && *removeDir {
		defer removeSocketDir(l, path)
	}
	// Signals are watched from before the ready line to the end: one that
	// follows the ready line at once still shuts down gracefully.
	sigs, stop := serveSignals()
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()

	ready, _ := json.Marshal(map[string]any{"listening": addr, "pid": os.Getpid(), "protocol": protocol.Version, "version": Version})
	if _, err := fmt.Fprintf(stdout, "%s\n", ready); err != nil {
		srv.Close()
		return err
	}
	if f, ok := stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}
	logger.Info("listening", "addr", addr, "max_conns", cfg.MaxConns, "max_envs", cfg.MaxEnvs, "workers", cfg.Workers)

	eof := make(chan struct{})
	if *stdinEOF {
		go func() {
			io.Copy(io.Discard, serveStdin)
			close(eof)
		}()
	}
	var reason string
	select {
	case err := <-serveErr:
		srv.Close()
		return fmt.Errorf("serving %s: %w", addr, err)
	case sig := <-sigs:
		reason = sig.String()
	case <-eof:
		reason = "stdin closed"
	}
	logger.Info("shutting down", "reason", reason, "timeout", *grace)
	ctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	// A second signal exits at once, whatever the requests in flight are doing.
	select {
	case err = <-shut:
	case sig := <-sigs:
		logger.Warn("second signal; exiting at once", "signal", sig.String())
		return fmt.Errorf("%w: %s during the shutdown", errForced, sig)
	}
	<-serveErr
	if err != nil {
		logger.Warn("shutdown cut short", "err", err)
	}
	return nil
}

// removeSocketDir closes l (which removes its socket file) and removes the
// socket's folder if nothing else is left in it: the folder a parent made
// for this server, which the parent cannot remove when it was killed. A
// folder that holds anything else is left alone (rmdir, never a recursive
// removal).
func removeSocketDir(l net.Listener, path string) {
	l.Close()
	os.Remove(filepath.Dir(path))
}

// errForced is returned by serve when a second signal ended the shutdown.
var errForced = errors.New("exited without waiting for the requests in flight")

// newLogger builds the slog logger of --log-level and --log-format.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// maxTokenFile bounds the --token-file read (a token is a line).
const maxTokenFile = 64 << 10

// readToken returns the token of --token or --token-file (not both).
func readToken(token, file string) (string, error) {
	if token != "" && file != "" {
		return "", errors.New("give --token or --token-file, not both")
	}
	if file == "" {
		return token, nil
	}
	b, err := userfile.ReadFile(file, maxTokenFile)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("--token-file %s is empty", file)
	}
	return t, nil
}
