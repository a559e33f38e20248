package server

import (
	"math"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
)

// Limits is the server's one limits policy: every request that asks for
// search or holds memory beyond its frame (an opponent, analyse, a
// self-play run) asks it for its budget, and the memory terms of
// Config.MemoryBound come from it. It is computed once from a Config
// (with defaults filled in) and never changes; the handlers only read it.
//
// A refused request gets limit_exceeded with a message that names the
// limit and the serve flag that sets it.
type Limits struct {
	// OpponentSims bounds one decision's search (DecisionSims) of an
	// opponent and of each analysed state (--max-opponent-sims); 0 or
	// negative: no limit.
	OpponentSims int
	// AnalyseSims bounds the simulations of one analyse request, over all
	// its states (--max-analyse-sims); 0 or negative: no limit.
	AnalyseSims int64
	// StateRows bounds the states one state-method request may carry.
	StateRows int
	// SearchWorkers is how many cores analyse may keep busy at once, server
	// wide (--analyse-workers): the rest stay free for step and the other
	// requests. An analyse agent with workers=W takes W of them.
	SearchWorkers int
	// Cores is --workers: while its client is the server's only one, an
	// analyse also searches on the cores past SearchWorkers.
	Cores int
	// RunsPerConn bounds the self-play runs one connection holds.
	RunsPerConn int
	// RunNodes bounds games_in_flight × sims of one self-play run: every
	// game in flight keeps a search tree of about sims nodes.
	RunNodes int
	// SelfplayBytes bounds the estimated memory (az.Config.MemoryBytes) of all self-play
	// runs together (--max-selfplay-bytes).
	SelfplayBytes int64
	// MaxFrame bounds a self-play batch (its leaves' observations and
	// masks, and their answer), as every frame.
	MaxFrame int
	// NetFileBytes bounds a network file a client names (--max-net-bytes).
	NetFileBytes int64
	// NetCacheBytes bounds the networks kept loaded for clients
	// (--max-net-cache-bytes).
	NetCacheBytes int64
}

// Fixed limits of the policy (the others come from Config).
const (
	// maxStateRows bounds the states of one request (a bin of them is
	// bounded by max_frame too).
	maxStateRows = 1 << 20
	// maxRunsPerConn bounds the self-play runs one connection holds.
	maxRunsPerConn = 4
	// maxRunNodes bounds games_in_flight × sims.
	maxRunNodes = 1 << 22
)

// limits returns the policy of c, whose defaults are filled in.
func (c Config) limits() Limits {
	return Limits{
		OpponentSims: c.MaxOpponentSims, AnalyseSims: c.MaxAnalyseSims, StateRows: maxStateRows,
		SearchWorkers: c.AnalyseWorkers, Cores: c.Workers, RunsPerConn: maxRunsPerConn, RunNodes: maxRunNodes,
		SelfplayBytes: c.MaxSelfplayBytes, MaxFrame: c.MaxFrame,
		NetFileBytes: c.MaxNetBytes, NetCacheBytes: c.MaxNetCacheBytes,
	}
}

// NetBytes is the memory of the networks clients name: those kept loaded,
// and the one file read at a time (its bytes, its decoded layers and its
// weights: three times the file).
func (l Limits) NetBytes() int64 { return l.NetCacheBytes + 3*l.NetFileBytes }

// DecisionSims is the search one decision of sp costs: N times its
// workers (rollouts per action for mc, simulations for mcts and net), at
// least 1 (an agent that does not search still acts). A search with
// playout cap randomization (fast=F) counts N+F: a decision runs one of its
// two searches, but the agent keeps both trees, so the bound that keeps its
// time also keeps its memory.
func DecisionSims(sp agent.Spec) int64 {
	return max(int64(sp.N+sp.Fast)*int64(max(sp.Workers, 1)), 1)
}

// Budget is what one request of a method may spend beyond its frame:
// Limits.Budget computes it from the method's declared draws
// (protocol.Desc.Draws). A budget the method does not draw on is zero: a handler
// that spends it is refused.
type Budget struct {
	// Rows is the most packed states the request may carry or make (DrawRows).
	Rows int
	// Reply is the largest reply it may reserve room for (DrawReply).
	Reply int
	// DecisionSims bounds one decision's search (DrawOpponent, DrawSearch);
	// RequestSims the whole request's (DrawSearch); Workers an agent's
	// search workers (DrawSearch). math.MaxInt64 (or MaxInt): no limit.
	DecisionSims, RequestSims int64
	Workers                   int
	// RunBytes bounds the self-play runs' memory, server wide (DrawRuns).
	RunBytes int64
}

// Budget returns the budget of a request of a method drawing on d.
func (l Limits) Budget(d protocol.Draw) Budget {
	var b Budget
	unlimited := func(v int64) int64 {
		if v <= 0 {
			return math.MaxInt64
		}
		return v
	}
	if d&protocol.DrawRows != 0 {
		b.Rows = l.StateRows
	}
	if d&protocol.DrawReply != 0 {
		b.Reply = l.MaxFrame
	}
	if d&(protocol.DrawOpponent|protocol.DrawSearch) != 0 {
		b.DecisionSims = unlimited(int64(l.OpponentSims))
	}
	if d&protocol.DrawSearch != 0 {
		b.RequestSims, b.Workers = unlimited(l.AnalyseSims), l.SearchWorkers
	}
	if d&protocol.DrawRuns != 0 {
		b.RunBytes = l.SelfplayBytes
	}
	return b
}

// Search checks the search of agent sp (spec as the client named it, in
// params.field) over n states (0: an opponent, searching inside
// steps): each decision's against DecisionSims, its workers against
// Workers and the request's against RequestSims. It is the one check of a
// search's simulations.
func (b *Budget) Search(field, spec string, sp agent.Spec, n int) *Error {
	sims := DecisionSims(sp)
	switch {
	case b.DecisionSims == 0:
		return errorf(protocol.CodeInternal, "params.%s: the method does not declare a search budget (protocol.Desc.Draws)", field)
	case sims > b.DecisionSims:
		return errorf(protocol.CodeLimitExceeded, "params.%s: %q searches %d simulations a decision, above this server's --max-opponent-sims %d",
			field, msgp.Clip([]byte(spec)), sims, b.DecisionSims)
	case n == 0:
		return nil
	case b.Workers == 0 || b.RequestSims == 0:
		return errorf(protocol.CodeInternal, "the method does not declare DrawSearch")
	case max(sp.Workers, 1) > b.Workers:
		return errorf(protocol.CodeLimitExceeded, "params.%s: %q searches with %d workers, more than this server's --analyse-workers %d",
			field, msgp.Clip([]byte(spec)), max(sp.Workers, 1), b.Workers)
	case int64(n)*sims > b.RequestSims:
		return errorf(protocol.CodeLimitExceeded, "%d states × %d simulations = %d, above this server's --max-analyse-sims %d a request; send at most %d states of %q at a time",
			n, sims, int64(n)*sims, b.RequestSims, b.RequestSims/sims, msgp.Clip([]byte(spec)))
	}
	return nil
}

// AnalyseChunk is how many states an analyse worker searches per turn on
// a core before it gives the core back (so requests take turns): about
// 2^16 simulations' worth, at least one state.
func (l Limits) AnalyseChunk(sp agent.Spec) int {
	return int(max(1, (1<<16)/DecisionSims(sp)))
}

// AnalyseBytes bounds the memory of the analyse searches running at once:
// an agent of the largest search OpponentSims allows on each core analyse
// may use (an agent lives only while it holds a core).
func (l Limits) AnalyseBytes() int64 {
	n := l.OpponentSims
	if n <= 0 {
		n = agent.MaxN // no limit: the spec grammar's
	}
	return int64(max(l.SearchWorkers, l.Cores)) * agent.SearchBytes(agent.Spec{Name: "mcts", N: n})
}

// Selfplay checks a self-play run a connection holding runs runs asks
// for (cfg.MaxBatch filled in), and returns the memory it will reserve
// from SelfplayBytes.
func (l Limits) Selfplay(cfg az.Config, runs int) (int64, *Error) {
	if runs >= l.RunsPerConn {
		return 0, errorf(protocol.CodeLimitExceeded, "this connection already holds %d self-play runs; close one with selfplay_close", runs)
	}
	if cfg.InFlight*cfg.Sims > l.RunNodes {
		return 0, errorf(protocol.CodeLimitExceeded, "games_in_flight × sims = %d exceeds %d (the search trees held at once)", cfg.InFlight*cfg.Sims, l.RunNodes)
	}
	space, err := obs.SpaceOf(cfg.Tier)
	if err != nil {
		return 0, errorf(protocol.CodeBadRequest, "params.tier: %v", err)
	}
	if size := cfg.MaxBatch * (4*space.Size + env.NumActions + 4*env.NumActions + 4); size+1024 > l.MaxFrame {
		return 0, errorf(protocol.CodeLimitExceeded, "a batch of %d leaves of tier %s takes about %d bytes, more than max_frame %d; lower max_batch",
			cfg.MaxBatch, cfg.Tier, size, l.MaxFrame)
	}
	b := cfg.MemoryBytes(space.Size)
	if b > l.SelfplayBytes {
		return 0, errorf(protocol.CodeLimitExceeded, "games_in_flight %d × sims %d of tier %s need about %d bytes, more than this server's --max-selfplay-bytes %d; lower games_in_flight or sims",
			cfg.InFlight, cfg.Sims, cfg.Tier, b, l.SelfplayBytes)
	}
	return b, nil
}
