package server

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/protocol"
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
