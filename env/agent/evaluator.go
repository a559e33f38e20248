package agent

import (
	"errors"
	"fmt"
	"math"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/detmath"
)

// ErrEvaluator is wrapped by every error an MCTS reports about its
// Evaluator's answer (a value that is not a finite number in [-1, 1]).
var ErrEvaluator = errors.New("evaluator")

// Evaluator values search leaves instead of rollouts: a network, or a
// client that answers for one (az.Run gathers many searches' leaves into
// one batch). Evaluate is called with a state where a seat must move
// (PhaseMove, at least one legal action); it writes a prior for every
// action into priors (180 entries; entries of illegal actions are ignored,
// the rest need not be normalised: the search keeps the legal ones,
// clamps negative or non-finite ones to 0 and normalises, uniform if all
// are 0) and returns the mover's expected outcome in [-1, 1]. An error
// stops the search and is returned by Act.
type Evaluator interface {
	Evaluate(s *env.State, priors []float32) (value float64, err error)
}

// MCTSOptions are the options of an MCTS that a spec string cannot carry.
type MCTSOptions struct {
	// Evaluator, if not nil, replaces the rollout and the greedy prior:
	// every new decision leaf gets its priors and value from it (PUCT; the
	// spec's prior and rollout are ignored). A new leaf at a chance node is
	// first resolved through chance (the throw whose visits lag furthest
	// behind its probability, as everywhere in the tree) down to a decision
	// or the end, so the evaluator only sees decisions and the expectation
	// over throws stays exact.
	Evaluator Evaluator
	// DirichletAlpha > 0 mixes Dirichlet(alpha) noise into the root's
	// priors with weight DirichletFrac (AlphaZero's exploration noise); with
	// PUCT only (an evaluator, or prior=greedy), plain UCT has no priors.
	DirichletAlpha, DirichletFrac float64
	// TempMoves > 0 plays the first TempMoves decisions of a game
	// (State.Decisions() < TempMoves) at temperature 1 (an action sampled in
	// proportion to its visits) and the rest at the spec's temp.
	TempMoves int
	// Gumbel selects the root's actions by Gumbel-Top-m sampling and
	// sequential halving, and the decisions below it by the deterministic
	// rule of Danihelka et al. (gumbel.go); Stats.Policy is then the
	// improved policy from completed Q-values. It needs an Evaluator and
	// one worker, and replaces the Dirichlet noise and the temperature
	// (the Gumbel numbers explore): those must be 0.
	Gumbel bool
	// GumbelM is the number of root actions sequential halving starts
	// from, 1..180 (0: DefaultGumbelM); fewer if fewer are legal.
	GumbelM int
}

// NewMCTS builds an mcts agent with options beyond its spec (sp.Name must
// be "mcts"). The evaluator is shared by every worker tree, which call it
// from their own goroutines when sp.Workers > 1.
func NewMCTS(sp Spec, seed uint64, opt MCTSOptions) (*MCTS, error) {
	if sp.Name != "mcts" {
		return nil, fmt.Errorf("%w: NewMCTS needs an mcts spec, got %q", ErrSpec, sp.Name)
	}
	switch {
	case math.IsNaN(opt.DirichletAlpha) || opt.DirichletAlpha < 0 || opt.DirichletAlpha > MaxC:
		return nil, fmt.Errorf("%w: dirichlet alpha must be 0..%g, got %g", ErrSpec, MaxC, opt.DirichletAlpha)
	case math.IsNaN(opt.DirichletFrac) || opt.DirichletFrac < 0 || opt.DirichletFrac > 1:
		return nil, fmt.Errorf("%w: dirichlet fraction must be 0..1, got %g", ErrSpec, opt.DirichletFrac)
	case opt.TempMoves < 0:
		return nil, fmt.Errorf("%w: temperature moves must be >= 0, got %d", ErrSpec, opt.TempMoves)
	case opt.GumbelM < 0 || opt.GumbelM > env.NumActions:
		return nil, fmt.Errorf("%w: gumbel m must be 1..%d, got %d", ErrSpec, env.NumActions, opt.GumbelM)
	}
	if opt.Gumbel {
		if err := checkGumbel(sp, opt); err != nil {
			return nil, err
		}
		if opt.GumbelM == 0 {
			opt.GumbelM = DefaultGumbelM
		}
	}
	m := registry["mcts"](sp, seed).(*MCTS)
	m.opt = opt
	for i := range m.trees {
		t := &m.trees[i]
		t.eval = opt.Evaluator
		t.alpha, t.frac = opt.DirichletAlpha, opt.DirichletFrac
		t.gumbel, t.gumbelM = opt.Gumbel, opt.GumbelM
		if t.eval != nil {
			t.prior = true
		}
	}
	return m, nil
}

// evaluate asks the evaluator about decision node i: it sets the priors
// of its edges (expanding it) and returns every seat's value.
func (t *tree) evaluate(i int32) (v [env.MaxPlayers]float64, err error) {
	nd := &t.nodes[i]
	val, err := t.eval.Evaluate(&nd.state, t.priors[:])
	if err != nil {
		return v, err
	}
	if math.IsNaN(val) || val < -1 || val > 1 {
		return v, fmt.Errorf("%w: value %g is not a number in [-1, 1]", ErrEvaluator, val)
	}
	nd = &t.nodes[i] // (the evaluator cannot move nodes, but stay safe if it ever could)
	nd.raw = float32(val)
	nd.first = int32(len(t.edges))
	legal := nd.state.LegalActions(t.buf[:0])
	sum := 0.0
	for _, a := range legal {
		p := float64(t.priors[a])
		if !(p > 0) || math.IsInf(p, 1) {
			p = 0
		}
		t.score[a] = p
		sum += p
	}
	for _, a := range legal {
		p := 1 / float64(len(legal))
		if sum > 0 {
			p = t.score[a] / sum
		}
		t.edges = append(t.edges, edge{child: -1, move: uint8(a), prob: float32(p)})
	}
	nd.count = uint8(len(legal))
	return seatValues(&nd.state, val), nil
}

// seatValues spreads the mover's value over the seats: the others share
// its negation (zero sum), so with two seats the opponent gets -value.
func seatValues(s *env.State, val float64) (v [env.MaxPlayers]float64) {
	n := s.Rules().Players
	me := s.ToMove()
	for p := 0; p < n; p++ {
		if p == me {
			v[p] = val
		} else {
			v[p] = -val / float64(n-1)
		}
	}
	return v
}

// addNoise mixes Dirichlet(alpha) noise into the priors of root node 0.
func (t *tree) addNoise() {
	nd := &t.nodes[0]
	first, k := int(nd.first), int(nd.count)
	if k < 2 {
		return
	}
	sum := 0.0
	for e := 0; e < k; e++ {
		g := t.roll.r.gamma(t.alpha)
		t.score[e] = g
		sum += g
	}
	if !(sum > 0) {
		return
	}
	for e := 0; e < k; e++ {
		ed := &t.edges[first+e]
		// float64(…) rounds the product: no FMA on arm64 (docs/COMPATIBILITY.md, "Seeds").
		ed.prob = float32(float64((1-t.frac)*float64(ed.prob)) + t.frac*t.score[e]/sum)
	}
}

// normal returns a standard normal number (Marsaglia's polar method).
func (r *rng) normal() float64 {
	for {
		u, v := 2*r.float64()-1, 2*r.float64()-1
		s := float64(u*u) + float64(v*v) // rounded products: no FMA on arm64
		if s > 0 && s < 1 {
			return u * math.Sqrt(-2*detmath.Log(s)/s) // Sqrt is exact everywhere; math.Log is not
		}
	}
}

// gamma returns a Gamma(alpha, 1) number (Marsaglia and Tsang; alpha < 1
// by boosting: Gamma(alpha+1) × U^(1/alpha)).
func (r *rng) gamma(alpha float64) float64 {
	boost := 1.0
	if alpha < 1 {
		boost = detmath.Pow(1-r.float64(), 1/alpha) // 1-U in (0, 1]
		alpha++
	}
	d := alpha - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.normal()
		v := 1 + float64(c*x) // rounded products here and below: no FMA on arm64
		if v <= 0 {
			continue
		}
		v = float64(v * v * v)
		u := 1 - r.float64()
		if detmath.Log(u) < float64(0.5*x*x)+d-float64(d*v)+float64(d*detmath.Log(v)) {
			return d * v * boost
		}
	}
}
