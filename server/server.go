package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/yutenv/yutenv/analysis"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/confine"
	"github.com/yutenv/yutenv/internal/latency"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/internal/ratelog"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// Defaults of Config.
const (
	DefaultMaxConns       = 64
	DefaultMaxEnvsPerConn = 16384
	DefaultMaxEnvs        = 65536
	// DefaultMaxEnvBytes bounds the memory of all envs' buffers (96 MiB:
	// about 52000 envs of the compact tier, 10000 of the tactical tier), so
	// that Config.MemoryBound of the defaults is about 230 MB.
	DefaultMaxEnvBytes = 96 << 20
	DefaultMaxFrame    = protocol.DefaultMaxFrame
	// DefaultMaxInflightBytes bounds the memory of the large frames being
	// served at once, server wide (48 MiB: three maximal frames).
	DefaultMaxInflightBytes = 48 << 20
	DefaultIdleTimeout      = time.Hour
	// DefaultHandshakeTimeout is how long a new connection has to complete hello.
	DefaultHandshakeTimeout = 5 * time.Second
	// DefaultMaxHandshakes is the number of connections that may be in handshake at once.
	DefaultMaxHandshakes = 64
	// DefaultMaxOpponentSims allows mcts:2000 or mc:2000 as an opponent (a few ms a decision).
	DefaultMaxOpponentSims = 2000
	// DefaultMaxNetBytes is the largest network file a client may name (8
	// MiB: two million weights; the Python package's default net, 256 x 256
	// on the tactical tier, has 0.6 million).
	DefaultMaxNetBytes = nnet.DefaultMaxNetBytes
	// DefaultMaxNetCacheBytes bounds the networks the server keeps loaded
	// for its clients (24 MiB: three networks of the largest size, or ten
	// of the usual). With DefaultMaxNetBytes it adds 48 MiB to
	// Config.MemoryBound.
	DefaultMaxNetCacheBytes = 24 << 20

	// DefaultMaxAnalyseSims bounds one analyse request's search over all its
	// states: 2^23 simulations, e.g. 20,000 states of mcts:400 or 4,000 of
	// mcts:2000 (about 20 s on one core: docs/BENCHMARKS.md measures
	// mcts:400 at 0.94 ms a decision).
	DefaultMaxAnalyseSims = 1 << 23
	// DefaultMaxSelfplayBytes bounds the memory of all self-play runs
	// (Limits.SelfplayBytes): 256 MiB, two runs of 128 games in flight of
	// the compact tier and 64 sims (the README's example; az.Config.MemoryBytes about
	// 99 MB each), or five of the Python default of 64 games in flight.
	DefaultMaxSelfplayBytes = 256 << 20
)

// Config holds a server's limits and identity. The zero value of a field
// means its default; DefaultConfig spells them out.
type Config struct {
	// Token, if not empty, must be presented by every connection's hello.
	Token string
	// MaxConns is the number of connections served at once, once they
	// completed hello. Connections still in handshake do not count against
	// it; they have their own budget, MaxHandshakes.
	MaxConns int
	// MaxHandshakes bounds the connections that have not completed hello
	// yet. When a new connection would exceed it, the oldest of them is
	// closed (with limit_exceeded) to make room: a flood of connections that
	// never say hello costs the others their place in the queue, never the
	// authenticated capacity.
	MaxHandshakes int
	// HandshakeTimeout is how long a connection has, from its accept, to
	// complete hello; a connection that has not is sent handshake_required
	// and closed. Negative disables it.
	HandshakeTimeout time.Duration
	// MaxEnvsPerConn bounds the envs one connection holds, over all its handles.
	MaxEnvsPerConn int
	// MaxEnvs bounds the envs of all connections together.
	MaxEnvs int
	// MaxEnvBytes bounds the memory of the envs of all connections together
	// (vecenv.Config.Bytes: their observation rows and state), in bytes.
	MaxEnvBytes int64
	// MaxFrame is the largest frame body accepted or sent, in bytes.
	MaxFrame int
	// MaxInflightBytes bounds the memory of the frames being served at once,
	// over all connections: a request whose frame or reply is larger than
	// 256 KiB reserves it from this budget before it is allocated, waiting
	// (up to the connection's idle or handshake deadline) while others hold
	// it, and answers limit_exceeded if it can never fit. Zero means
	// DefaultMaxInflightBytes or 3 x MaxFrame, whichever is larger.
	MaxInflightBytes int64
	// IdleTimeout closes a connection silent this long; negative disables it.
	IdleTimeout time.Duration
	// Workers is the size of the pool that steps large batches (default GOMAXPROCS).
	Workers int
	// MaxOpponentSims bounds an opponent's search per decision: N times its
	// workers (rollouts per action for mc, simulations for mcts). An opponent
	// is played inside a step, so an unbounded one would let a client hold
	// the server's cores; 0 means DefaultMaxOpponentSims, negative no limit.
	MaxOpponentSims int
	// NetDirs are the folders a client may name networks from (agent
	// net:NAME, as make's opponent or analyse's agent): a relative NAME is
	// looked up inside them, an absolute one must lie inside one once its
	// symbolic links are resolved, and only regular files are opened
	// (nnet.Dirs). No folder: clients may name no network.
	NetDirs []string
	// OutDirs are the folders a client may make the server write in
	// (selfplay_new's out, a self-play dataset): the path, with its
	// symbolic links resolved, must lie inside one of them, and may hold
	// no ".." (confine.Writes; a relative path is taken inside the first).
	// Every refusal is one message that depends on the path alone. No
	// folder: clients may make the server write nothing.
	OutDirs []string
	// MaxNetBytes is the largest network file a client may name, in bytes
	// (0: DefaultMaxNetBytes).
	MaxNetBytes int64
	// MaxNetCacheBytes bounds the weights of the networks kept loaded
	// (least recently used evicted; 0: DefaultMaxNetCacheBytes). The cache
	// belongs to the process (package nnet): New sets its bound.
	MaxNetCacheBytes int64

	// MaxAnalyseSims bounds one analyse request's search over all its
	// states: states × DecisionSims of its agent (Limits.Analyse). 0 means
	// DefaultMaxAnalyseSims, negative no limit.
	MaxAnalyseSims int64
	// AnalyseWorkers is how many cores analyse requests keep busy at once,
	// server wide; the others stay free for step and the other methods.
	// 0 means Workers-1 (at least 1).
	AnalyseWorkers int
	// MaxSelfplayBytes bounds the estimated memory of all self-play runs
	// together (az.Config.MemoryBytes); it is part of MemoryBound. 0 means
	// DefaultMaxSelfplayBytes.
	MaxSelfplayBytes int64

	// Version is the software version reported by hello ("yutenv <Version>").
	Version string
	// Logger receives the server's structured logs (default: discard).
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of every limit.
func DefaultConfig() Config {
	return Config{
		MaxConns: DefaultMaxConns, MaxHandshakes: DefaultMaxHandshakes, HandshakeTimeout: DefaultHandshakeTimeout,
		MaxEnvsPerConn: DefaultMaxEnvsPerConn, MaxEnvs: DefaultMaxEnvs, MaxEnvBytes: DefaultMaxEnvBytes,
		MaxFrame: DefaultMaxFrame, MaxInflightBytes: DefaultMaxInflightBytes, IdleTimeout: DefaultIdleTimeout, Workers: runtime.GOMAXPROCS(0),
		MaxOpponentSims: DefaultMaxOpponentSims, MaxNetBytes: DefaultMaxNetBytes, MaxNetCacheBytes: DefaultMaxNetCacheBytes,
		MaxAnalyseSims:   DefaultMaxAnalyseSims,
		AnalyseWorkers:   max(1, runtime.GOMAXPROCS(0)-1),
		MaxSelfplayBytes: DefaultMaxSelfplayBytes,
		Version:          "dev",
	}
}

// withDefaults fills zero fields and checks the others.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.MaxConns == 0 {
		c.MaxConns = d.MaxConns
	}
	if c.MaxHandshakes == 0 {
		c.MaxHandshakes = d.MaxHandshakes
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = d.HandshakeTimeout
	}
	if c.MaxEnvsPerConn == 0 {
		c.MaxEnvsPerConn = d.MaxEnvsPerConn
	}
	if c.MaxEnvs == 0 {
		c.MaxEnvs = d.MaxEnvs
	}
	if c.MaxEnvBytes == 0 {
		c.MaxEnvBytes = d.MaxEnvBytes
	}
	if c.MaxFrame == 0 {
		c.MaxFrame = d.MaxFrame
	}
	if c.MaxInflightBytes == 0 {
		// Room for a maximal frame (2 x, as it is read) and a reply at once.
		c.MaxInflightBytes = max(d.MaxInflightBytes, 3*int64(c.MaxFrame))
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.Workers == 0 {
		c.Workers = d.Workers
	}
	if c.MaxOpponentSims == 0 {
		c.MaxOpponentSims = d.MaxOpponentSims
	}
	if c.MaxNetBytes == 0 {
		c.MaxNetBytes = d.MaxNetBytes
	}
	if c.MaxNetCacheBytes == 0 {
		c.MaxNetCacheBytes = d.MaxNetCacheBytes
	}
	if c.MaxAnalyseSims == 0 {
		c.MaxAnalyseSims = d.MaxAnalyseSims
	}
	if c.AnalyseWorkers == 0 {
		c.AnalyseWorkers = max(1, c.Workers-1)
	}
	if c.MaxSelfplayBytes == 0 {
		c.MaxSelfplayBytes = d.MaxSelfplayBytes
	}
	if c.Version == "" {
		c.Version = d.Version
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.MaxConns < 0 || c.MaxHandshakes < 0 || c.MaxEnvsPerConn < 0 || c.MaxEnvs < 0 || c.MaxEnvBytes < 0 || c.MaxInflightBytes < 0 || c.Workers < 0 ||
		c.MaxNetBytes < 0 || c.MaxNetCacheBytes < 0 || c.AnalyseWorkers < 0 || c.MaxSelfplayBytes < 0:
		return c, fmt.Errorf("%w: limits must be positive", ErrConfig)
	case c.MaxFrame < 1024 || c.MaxFrame > 1<<31-1:
		return c, fmt.Errorf("%w: max frame %d out of range 1024..2^31-1", ErrConfig, c.MaxFrame)
	}
	return c, nil
}

// Server serves envs over stream sockets. Create it with New, run it with
// Serve on one or more listeners, stop it with Shutdown.
type Server struct {
	cfg    Config
	limits Limits // the limits policy of cfg (limits.go)
	// budgets are the policy's budget of a request of each method, by id.
	budgets []Budget
	log     *slog.Logger
	// hostile is log, rate limited: for what clients cause before hello.
	hostile *slog.Logger
	pool    *vecenv.Pool
	hello   []byte // the encoded hello result
	started time.Time
	stats   counters

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	pending   map[*conn]struct{} // connections in handshake, not evicted
	admitted  int                // connections that completed hello
	closing   atomic.Bool
	lingering atomic.Int64 // refused connections in their lingering close
	connWG    sync.WaitGroup
	envMu     sync.Mutex // guards the total env count and bytes against concurrent makes
	envCount  int
	envBytes  int64
	stopOnce  sync.Once
	inflight  *semaphore.Weighted // the in-flight frame budget (budget.go)
	nets      *nnet.Dirs          // the networks clients may name (Config.NetDirs)
	outs      *confine.Writes     // the folders clients may make the server write in (Config.OutDirs)
	netLoads  *semaphore.Weighted // one network file read at a time (Config.MemoryBound)
	cores     analysis.Cores      // the cores analyse may use (Limits.SearchWorkers), and the others while its client is alone
	spMu      sync.Mutex          // guards spBytes
	spBytes   int64               // memory reserved by self-play runs (Limits.SelfplayBytes)
	ctx       context.Context     // canceled by Close and an expired Shutdown: wakes waits on inflight
	cancel    context.CancelFunc
}

// New builds a server from cfg and starts its worker pool.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, limits: cfg.limits(), log: cfg.Logger, started: time.Now(),
		hostile:   ratelog.New(cfg.Logger, hostileLogEvery, hostileLogBurst),
		listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{}, pending: map[*conn]struct{}{}}
	s.stats.latency = make([]latency.Histogram, len(methods))
	s.budgets = make([]Budget, len(methods))
	for i := range methods {
		s.budgets[i] = s.limits.Budget(methods[i].Draws)
	}
	if s.hello, err = s.helloResult(); err != nil {
		return nil, err
	}
	if s.nets, err = nnet.NewDirs(s.limits.NetFileBytes, cfg.NetDirs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if s.outs, err = confine.NewWrites("--out-dir", cfg.OutDirs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	nnet.SetCacheLimit(s.limits.NetCacheBytes)
	s.netLoads = semaphore.NewWeighted(1)
	s.pool = vecenv.NewPool(cfg.Workers)
	s.inflight = semaphore.NewWeighted(cfg.MaxInflightBytes)
	spares := max(0, s.limits.Cores-s.limits.SearchWorkers)
	s.cores = analysis.Cores{Search: semaphore.NewWeighted(int64(s.limits.SearchWorkers)), Workers: s.limits.SearchWorkers,
		Spare: semaphore.NewWeighted(int64(spares)), Spares: spares, Sole: s.soleClient}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// helloResult encodes the part of the hello result that never changes.
func (s *Server) helloResult() ([]byte, error) {
	var tiers []msgp.Obj
	for _, t := range obs.Tiers() {
		enc, err := obs.NewEncoder(env.Standard(), t)
		if err != nil {
			return nil, err
		}
		tiers = append(tiers, wire.Space(enc.Space()))
	}
	idle, handshake := 0.0, 0.0
	if s.cfg.IdleTimeout > 0 {
		idle = s.cfg.IdleTimeout.Seconds()
	}
	if s.cfg.HandshakeTimeout > 0 {
		handshake = s.cfg.HandshakeTimeout.Seconds()
	}
	return msgp.AppendEncoded(nil, protocol.HelloResult{
		Protocol: protocol.Version, Server: "yutenv " + s.cfg.Version, Actions: env.NumActions,
		Tiers: tiers, ObsLayout: obs.LayoutVersion, DefaultTier: wire.DefaultTier.String(), Opponents: agent.Names(), Methods: methodNames,
		Limits: protocol.HelloLimits{
			MaxFrame: s.cfg.MaxFrame, MaxEnvsPerConn: s.cfg.MaxEnvsPerConn, MaxEnvs: s.cfg.MaxEnvs,
			MaxEnvBytes: s.cfg.MaxEnvBytes, MaxInflightBytes: s.cfg.MaxInflightBytes,
			IdleTimeoutS: idle, HandshakeTimeoutS: handshake, MaxConns: s.cfg.MaxConns,
			MaxOpponentSims: s.cfg.MaxOpponentSims, MaxAnalyseSims: s.cfg.MaxAnalyseSims,
			AnalyseWorkers: s.cfg.AnalyseWorkers, MaxSelfplayBytes: s.cfg.MaxSelfplayBytes,
		},
	})
}

// Serve accepts connections on l until Shutdown or Close, serving each in
// its own goroutine. It returns ErrServerClosed after a shutdown, or the
// listener's error.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.accept(nc)
	}
}

// accept registers a new connection in the handshake budget, or refuses
// it when the authenticated connections are at their limit.
func (s *Server) accept(nc net.Conn) {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if s.admitted >= s.cfg.MaxConns {
		s.mu.Unlock()
		s.hostile.Warn("connection refused: limit reached", "remote", remoteName(nc), "max_conns", s.cfg.MaxConns)
		msg := fmt.Sprintf("the server already serves %d connections (--max-conns)", s.cfg.MaxConns)
		s.refuse(nc, errorFrame(nil, nil, protocol.CodeLimitExceeded, msg))
		return
	}
	if len(s.pending) >= s.cfg.MaxHandshakes {
		s.evictOldestLocked()
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	s.pending[c] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	s.stats.connections.Add(1)
	s.stats.connectionsTotal.Add(1)
	go func() {
		defer s.connWG.Done()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		if _, ok := s.pending[c]; ok {
			delete(s.pending, c)
		} else if c.admitted {
			s.admitted--
		}
		s.mu.Unlock()
		s.stats.connections.Add(-1)
	}()
}

// evictOldestLocked closes the connection that has been in handshake the
// longest, to make room for a new one. s.mu is held.
func (s *Server) evictOldestLocked() {
	var old *conn
	for c := range s.pending {
		if old == nil || c.accepted.Before(old.accepted) {
			old = c
		}
	}
	if old == nil {
		return
	}
	delete(s.pending, old)
	old.evict()
}

// admit moves a connection that completed hello from the handshake budget
// to the authenticated one, or reports that the latter is full.
func (s *Server) admit(c *conn) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[c]; !ok {
		// Evicted between its hello arriving and now: it is closing.
		return errorf(protocol.CodeLimitExceeded, "too many connections in handshake (--max-handshakes %d); this one waited longest and was dropped", s.cfg.MaxHandshakes)
	}
	if s.admitted >= s.cfg.MaxConns {
		s.hostile.Warn("connection refused at hello: limit reached", "remote", remoteName(c.nc), "max_conns", s.cfg.MaxConns)
		return errorf(protocol.CodeLimitExceeded, "the server already serves %d connections (--max-conns)", s.cfg.MaxConns)
	}
	delete(s.pending, c)
	s.admitted++
	c.admitted = true
	return nil
}

// shutdownAbandon is how long Shutdown and Close wait, after they closed
// the connections and cancelled the requests' contexts, for the handlers
// still running; past it they return anyway (a handler stuck in a read
// that no context reaches) and leave those goroutines behind.
var shutdownAbandon = 2 * time.Second

// cancelGrace is how long Shutdown, past its deadline, lets the requests
// it cancelled write their answer (shutting_down) before it closes their
// connections: an analyse stops within 16 simulations, and a write after
// the cancellation gives up after finalWriteTimeout.
var cancelGrace = 500 * time.Millisecond

// ErrAbandoned is wrapped by the error of a Shutdown or Close that returned
// while request handlers were still running (see shutdownAbandon).
var ErrAbandoned = errors.New("request handlers still running were abandoned")

// Shutdown stops the server gracefully: it closes the listeners, lets every
// request in flight finish and its response be written, then closes the
// connections. If ctx ends first, the requests' contexts are cancelled
// (an analyse stops within a few simulations and answers shutting_down),
// the requests get cancelGrace to write their answer, the remaining
// connections are then closed and ctx's error is returned; handlers that
// still do not return within shutdownAbandon are abandoned (ErrAbandoned),
// so Shutdown always returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.interrupt()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.connWG.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.stopOnce.Do(s.pool.Close)
		return nil
	case <-ctx.Done():
		err := ctx.Err()
		s.cancel()
		t := time.NewTimer(cancelGrace)
		defer t.Stop()
		select {
		case <-done: // every cancelled request answered and its connection closed
			s.stopOnce.Do(s.pool.Close)
			return err
		case <-t.C:
		}
		s.closeConns()
		return errors.Join(err, s.awaitHandlers(done))
	}
}

// awaitHandlers waits up to shutdownAbandon for done (every connection's
// goroutine returned), then stops the worker pool; past it, it leaves both
// and returns ErrAbandoned.
func (s *Server) awaitHandlers(done <-chan struct{}) error {
	t := time.NewTimer(shutdownAbandon)
	defer t.Stop()
	select {
	case <-done:
		s.stopOnce.Do(s.pool.Close)
		return nil
	case <-t.C:
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		s.log.Error("shutdown: connections still busy after their requests were cancelled; abandoning them", "conns", n, "waited", shutdownAbandon)
		return fmt.Errorf("%w: %d connections after %v", ErrAbandoned, n, shutdownAbandon)
	}
}

// Close stops the server at once, closing every listener and connection
// and cancelling the requests in flight; like Shutdown, it abandons
// handlers that do not return within shutdownAbandon (ErrAbandoned).
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing.Store(true)
	s.cancel()
	for l := range s.listeners {
		l.Close()
	}
	s.mu.Unlock()
	s.closeConns()
	done := make(chan struct{})
	go func() {
		s.connWG.Wait()
		close(done)
	}()
	return s.awaitHandlers(done)
}

func (s *Server) closeConns() {
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
}

// reserveEnvs takes n envs holding bytes of memory from the server-wide
// budgets; false when either would be exceeded (nothing is taken).
func (s *Server) reserveEnvs(n int, bytes int64) bool {
	s.envMu.Lock()
	defer s.envMu.Unlock()
	if s.envCount+n > s.cfg.MaxEnvs || s.envBytes+bytes > s.cfg.MaxEnvBytes {
		return false
	}
	s.envCount += n
	s.envBytes += bytes
	s.stats.envs.Add(int64(n))
	return true
}

// releaseEnvs returns n envs and their bytes to the budgets.
func (s *Server) releaseEnvs(n int, bytes int64) {
	s.envMu.Lock()
	s.envCount -= n
	s.envBytes -= bytes
	s.envMu.Unlock()
	s.stats.envs.Add(int64(-n))
}

// Listen opens a listener for an address in the form --listen accepts:
// "unix:/path" or "host:port". A Unix socket file is made private to the
// owner (mode 0600); a stale socket file nobody listens on is replaced, any
// other existing file is refused. It returns the listener and the address
// in the same form, with the real port when port 0 was asked for.
func Listen(addr string) (net.Listener, string, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return nil, "", fmt.Errorf("%w: empty Unix socket path in %q", ErrConfig, addr)
		}
		if err := removeStaleSocket(path); err != nil {
			return nil, "", err
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			return nil, "", err
		}
		if err := os.Chmod(path, 0o600); err != nil {
			l.Close()
			return nil, "", err
		}
		return l, "unix:" + path, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, "", fmt.Errorf("%w: listen address %q is neither host:port nor unix:/path", ErrConfig, addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	return l, l.Addr().String(), nil
}

// removeStaleSocket deletes path if it is a socket nobody accepts on.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%w: %s exists and is not a socket", ErrConfig, path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%w: another server is listening on %s", ErrConfig, path)
	}
	return os.Remove(path)
}

// NeedsToken reports whether listening on addr requires a token: any TCP
// address but a loopback one (127.0.0.0/8, ::1, localhost). Unix sockets do not.
func NeedsToken(addr string) bool {
	if strings.HasPrefix(addr, "unix:") {
		return false
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// newBufReader wraps a connection for reading frames.
func newBufReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

// counters are the server-wide statistics.
type counters struct {
	connections      atomic.Int64
	connectionsTotal atomic.Uint64
	envs             atomic.Int64
	handles          atomic.Int64
	steps            atomic.Uint64
	requests         atomic.Uint64
	errors           atomic.Uint64
	latency          []latency.Histogram // by method id, made by New
}
