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
// about 430 bytes a simulation (N simulations plus one root per tree);
// for the others their fixed buffers. Servers use it to bound the memory
// of the searches clients may ask for.
func SearchBytes(sp Spec) int64 {
	b := int64(agentBytes)
	if sp.Name == "mcts" || ((sp.Name == "net" || sp.Name == "az") && sp.N > 0) {
		trees := int64(max(sp.Workers, 1))
		b += (int64(sp.N) + trees) * (nodeBytes + edgesPerNode*edgeBytes)
	}
	return b
}
