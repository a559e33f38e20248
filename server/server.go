package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
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
