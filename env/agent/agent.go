package agent

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/yutenv/yutenv/env"
)

// ErrSpec is wrapped by every error about an agent spec string.
var ErrSpec = errors.New("bad agent spec")

// ErrNoMove is returned when an agent is asked to act on a state that is not a decision.
var ErrNoMove = errors.New("no decision to make")

// Stats is what an agent reports about one decision, for datasets and logs.
// Agents without a search leave Policy nil.
type Stats struct {
	// Policy is the search's distribution over the 180 actions (visit
	// fractions or best-action one-hot); nil if the agent has none.
	Policy []float32
	// Value is the agent's estimate of the mover's outcome in [-1, 1]; 0 if none.
	Value float64
	// Simulations counts rollouts or tree simulations spent on the decision.
	Simulations int
}

// Agent chooses actions. An agent is not safe for concurrent use; give each
// goroutine its own (New is cheap). Act must not change s.
type Agent interface {
	// Name returns the spec string the agent was built from.
	Name() string
	// Act returns an action for the seat to move in s, which must be a decision (PhaseMove).
	Act(s *env.State) (env.Action, error)
	// ActStats is Act plus the decision's statistics.
	ActStats(s *env.State) (env.Action, Stats, error)
}

// New builds an agent from a spec string such as "random", "greedy",
// "mc:100" or "mcts:400,rollout=greedy". seed makes its choices reproducible.
func New(spec string, seed uint64) (Agent, error) {
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	name, _, _ = strings.Cut(name, ",")
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w: unknown agent %q (known: %s)", ErrSpec, name, strings.Join(Names(), ", "))
	}
	return f(strings.TrimSpace(spec), seed)
}

// registry maps an agent name to its constructor; each agent file adds itself.
var registry = map[string]func(spec string, seed uint64) (Agent, error){}

// Names lists the known agent names, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func sortStrings(a []string) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6167656e74)) }
