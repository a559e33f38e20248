package agent

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"

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
	// fractions for mcts, a one-hot of the chosen action for mc); nil if the
	// agent has none. It is the agent's own buffer, valid until its next
	// call: copy it to keep it.
	Policy []float32
	// Visits is the raw root visit count of every action (mcts, summed over
	// the worker trees; zeros when the decision was forced); nil for agents
	// without a tree. Like Policy it is the agent's buffer.
	Visits []float32
	// Value is the agent's estimate of the mover's outcome in [-1, 1]; 0 if none.
	Value float64
	// Values is the search's estimate of every seat's outcome (seats the
	// rules do not have stay 0). Multi-seat search keeps one value per seat
	// and each seat maximises its own.
	Values [env.MaxPlayers]float64
	// Simulations counts rollouts or tree simulations spent on the decision
	// (0 when the decision was forced: one legal action).
	Simulations int
	// Fast marks a decision of playout cap randomization's fast search
	// (spec option fast=N): its Policy is not a training target.
	Fast bool
	// Q is the agent's estimate, indexed by action, of the mover's outcome
	// in [-1, 1] after each legal action (entries of other actions are 0):
	// the mean rollout outcome (mc), the root child's mean outcome (mcts
	// and a network's PUCT search; an action the search never visited gets
	// the root's value), the completed Q-value (a Gumbel search), the
	// solved value (optimal). It is nil for agents without per-action
	// values (random, greedy, a network without a search) and for forced
	// decisions. Like Policy it is the agent's buffer. Package grade reads
	// it as the reference's valuation of every choice.
	Q []float64
}

// Agent chooses actions. An agent is not safe for concurrent use; give each
// goroutine its own (New is cheap). Act must not change s.
//
// No agent reads the game's own random number generator: search resolves
// chance with the agent's generator, so an agent never sees future throws.
type Agent interface {
	// Name returns the agent's canonical spec string (Spec.String).
	Name() string
	// Act returns an action for the seat to move in s, which must be a decision (PhaseMove).
	Act(s *env.State) (env.Action, error)
	// ActStats is Act plus the decision's statistics.
	ActStats(s *env.State) (env.Action, Stats, error)
}

// Reseeder is implemented by every agent of this package: Reseed makes the
// agent behave from now on exactly like a new agent built with the same
// spec and seed, but keeps its buffers, so a worker that plays many games
// can reuse one agent and stay reproducible game by game.
type Reseeder interface {
	Reseed(seed uint64)
}

// New builds an agent from a spec string such as "random", "greedy",
// "mc:100" or "mcts:400,rollout=greedy" (see ParseSpec). seed makes its
// choices reproducible.
func New(spec string, seed uint64) (Agent, error) {
	sp, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return NewFromSpec(sp, seed)
}

// NewFromSpec builds an agent from a parsed spec.
func NewFromSpec(sp Spec, seed uint64) (Agent, error) {
	if sp.Fast > 0 {
		return newCapped(sp, seed, NewFromSpec)
	}
	if g, ok := external[sp.Name]; ok {
		return g(sp, seed)
	}
	if pkg, ok := externalHome[sp.Name]; ok {
		return nil, fmt.Errorf("%w: agent %s is not linked into this program (import github.com/yutenv/yutenv/%s)", ErrSpec, sp.Name, pkg)
	}
	f, ok := registry[sp.Name]
	if !ok {
		return nil, fmt.Errorf("%w: unknown agent %q", ErrSpec, sp.Name)
	}
	return f(sp, seed), nil
}

// registry maps an agent name to its constructor; each agent file adds itself.
var registry = map[string]func(sp Spec, seed uint64) Agent{}

// external maps the agents that live outside this package (which may not
// import them: dependencies point one way) to their constructors.
var external = map[string]func(sp Spec, seed uint64) (Agent, error){}

// externalHome names the package that registers each external agent of the
// spec grammar, for the error when a program does not link it.
var externalHome = map[string]string{"net": "nnet", "az": "nnet", "optimal": "solve"}

// Register installs the constructor of an agent of the spec grammar that
// lives in another package (externalHome: "net" and "az" from package
// nnet, "optimal" from package solve), in that package's init. It panics
// on another name (a programming error).
func Register(name string, f func(sp Spec, seed uint64) (Agent, error)) {
	if _, ok := externalHome[name]; !ok {
		panic("agent.Register: no external agent " + name)
	}
	external[name] = f
}

// Names lists the known agent names, sorted.
func Names() []string { return kindNames() }

func sortStrings(a []string) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// rng is the agents' generator: PCG from math/rand/v2 (a specified, stable
// algorithm) used directly, without the interface of rand.Rand, because
// rollouts draw from it millions of times.
type rng struct{ pcg rand.PCG }

// agentStream is the fixed PCG stream of agent generators ("agent").
const agentStream = 0x6167656e74

func (r *rng) seed(seed, stream uint64) { r.pcg.Seed(seed, agentStream^stream*0x9e3779b97f4a7c15) }

// uint64 returns 64 random bits.
func (r *rng) uint64() uint64 { return r.pcg.Uint64() }

// intn returns a number in [0, n) for n > 0 (multiply-high: the bias is below n/2^64).
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.pcg.Uint64(), uint64(n))
	return int(hi)
}

// float64 returns a number in [0, 1).
func (r *rng) float64() float64 { return float64(r.pcg.Uint64()>>11) / (1 << 53) }
