package agent

import (
	"errors"
	"sync/atomic"
	"unsafe"
)

// ErrInterrupted is returned by a search whose interrupt flag was raised
// (SetInterrupt): its caller gave up on the decision (a server's client
// hung up, or the server is shutting down).
var ErrInterrupted = errors.New("search interrupted")

// Interruptible is implemented by the agents that search (mc, mcts and the
// net agent's search). SetInterrupt gives the agent a flag that its
// searches poll cheaply (an atomic load every 16 simulations or every
// round of rollouts): once it is true, ActStats stops and returns
// ErrInterrupted. A nil flag (the default) is never raised.
type Interruptible interface {
	SetInterrupt(flag *atomic.Bool)
}

// SetInterrupt makes every tree's search poll flag.
func (m *MCTS) SetInterrupt(flag *atomic.Bool) {
	for i := range m.trees {
		m.trees[i].stop = flag
	}
}

// SetInterrupt makes every worker's rollouts poll flag.
func (m *MC) SetInterrupt(flag *atomic.Bool) { m.stop = flag }

// Sizes of a search tree's pools, for SearchBytes.
const (
	nodeBytes = int64(unsafe.Sizeof(node{}))
	edgeBytes = int64(unsafe.Sizeof(edge{}))
	// edgesPerNode is the edge pool's starting size per node (tree.search).
	edgesPerNode = 8
	// agentBytes covers an agent's fixed buffers (an MC agent's states
	// after every action, an MCTS agent's per-action arrays).
	agentBytes = 64 << 10
)

// SearchBytes estimates the memory one agent of spec sp holds once it has
// searched: for mcts (and net with sims) its trees' node and edge pools,
// about 430 bytes a simulation (N simulations plus one root per tree), and
// for net with sims its evaluation cache (EvalCacheEntries, at most 176
// KiB); for the others their fixed buffers. Servers use it to bound the
// memory of the searches clients may ask for.
func SearchBytes(sp Spec) int64 {
	b := int64(agentBytes)
	if sp.Name == "mcts" || (IsNetwork(sp.Name) && sp.N > 0) {
		trees := int64(max(sp.Workers, 1))
		b += (int64(sp.N) + trees) * (nodeBytes + edgesPerNode*edgeBytes)
	}
	if IsNetwork(sp.Name) {
		b += int64(EvalCacheEntries(sp.N)) * evalCacheEntryBytes
	}
	if sp.Fast > 0 { // playout cap randomization: the fast search is a second agent
		fast := sp
		fast.N, fast.Fast = sp.Fast, 0
		b += SearchBytes(fast)
	}
	return b
}

// Sizes of a network agent's evaluation cache (package nnet): one entry
// holds a key, a value, and up to EvalCacheLegal legal actions and their
// priors; a search of N simulations gets EvalCacheEntries(N) entries.
const (
	// EvalCacheLegal is the most legal actions a cached evaluation holds
	// (positions with more are evaluated every time).
	EvalCacheLegal = 32
	// EvalCacheMaxEntries bounds the entries of one cache.
	EvalCacheMaxEntries = 1024
	evalCacheEntryBytes = 8 + 4 + 4 + 5*EvalCacheLegal
)

// EvalCacheEntries is the number of entries of the evaluation cache of a
// network search of sims simulations: a power of two, about four per
// simulation, 64..EvalCacheMaxEntries; 0 without a search.
func EvalCacheEntries(sims int) int {
	if sims <= 0 {
		return 0
	}
	n := 64
	for n < 4*sims && n < EvalCacheMaxEntries {
		n *= 2
	}
	return n
}
