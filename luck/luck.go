package luck

import (
	"errors"
	"fmt"

	"github.com/yutenv/yutenv/env"
)

// Value estimates positions.
type Value interface {
	// Name names the value function in outputs ("az", "progress").
	Name() string
	// Values writes every seat's estimated outcome, in [-1, 1], at s: a
	// decision state (phase move). Entries past the seat count are unused.
	Values(s *env.State, v *[env.MaxPlayers]float64) error
}

// DefaultDepth is the default number of nested chance nodes expanded.
const DefaultDepth = 2

// MaxDepth bounds Accountant.Depth.
const MaxDepth = 8

// ErrNotChance is returned by Throw for a state that is not a chance node.
var ErrNotChance = errors.New("luck: the state is not a chance node")

// Accountant adds up the luck of every throw of a game, for every seat.
// It is not safe for concurrent use: give each goroutine its own.
type Accountant struct {
	// Depth is how many nested chance nodes W expands (1..MaxDepth).
	Depth int

	// stack holds the children being valued, one per depth, so that
	// counting a throw does not allocate.
	stack [MaxDepth + 1]env.State
	vals  [MaxDepth + 1][env.MaxPlayers]float64
	rows  [env.NumThrows][env.MaxPlayers]float64

	v      Value
	luck   [env.MaxPlayers]float64
	own    float64
	throws int
	// probs gives the throw probabilities W and the luck use: the rules'
	// own; tests replace it to show that wrong ones are detected.
	probs func(r env.Rules) [env.NumThrows]float64
}

// New returns an accountant measuring W with v.
func New(v Value) *Accountant {
	return &Accountant{Depth: DefaultDepth, v: v, probs: env.Rules.Probabilities}
}

// Name is the name of the accountant's Value.
func (a *Accountant) Name() string { return a.v.Name() }

// Reset forgets the luck counted so far: call it before each game.
func (a *Accountant) Reset() { a.luck, a.own, a.throws = [env.MaxPlayers]float64{}, 0, 0 }

// Luck returns every seat's luck summed over the throws seen since Reset.
func (a *Accountant) Luck() [env.MaxPlayers]float64 { return a.luck }

// OwnLuck returns the luck of each throw since Reset to the seat that
// threw it, summed: zero in expectation like every seat's luck, and the
// figure most sensitive to wrong probabilities (which make every throw
// look lucky, or unlucky, to its thrower).
func (a *Accountant) OwnLuck() float64 { return a.own }

// Throws returns the number of throws seen since Reset.
func (a *Accountant) Throws() int { return a.throws }

// Throw counts the luck of throw t drawn at s, a chance node (the state
// before the throw; it is not changed).
func (a *Accountant) Throw(s *env.State, t env.Throw) error {
	luck := &a.rows
	if err := a.ThrowLuck(s, luck); err != nil {
		return err
	}
	if t >= env.NumThrows || a.probs(s.Rules())[t] == 0 {
		return fmt.Errorf("luck: throw %v cannot be drawn under these rules", t)
	}
	for p := range a.luck {
		a.luck[p] += luck[t][p]
	}
	a.own += luck[t][s.ToMove()]
	a.throws++
	return nil
}

// ThrowLuck writes, for every throw t the chance node s can draw, every
// seat's luck if t were drawn: W(child t) - sum over u of P(u) W(child u).
// Rows of throws that cannot be drawn are zero. Their expectation under the
// throw probabilities is zero, up to rounding.
func (a *Accountant) ThrowLuck(s *env.State, luck *[env.NumThrows][env.MaxPlayers]float64) error {
	if !s.IsChance() {
		return ErrNotChance
	}
	*luck = [env.NumThrows][env.MaxPlayers]float64{}
	pr := a.probs(s.Rules())
	var mean [env.MaxPlayers]float64
	for t := env.Throw(0); t < env.NumThrows; t++ {
		if pr[t] == 0 {
			continue
		}
		if err := a.child(s, t, 1, &luck[t]); err != nil {
			return err
		}
		for p := range mean {
			mean[p] += pr[t] * luck[t][p]
		}
	}
	for t := env.Throw(0); t < env.NumThrows; t++ {
		if pr[t] == 0 {
			continue
		}
		for p := range mean {
			luck[t][p] -= mean[p]
		}
	}
	return nil
}

// child writes W of the state after throw t at the chance node s, which is
// nested depth chance nodes deep.
func (a *Accountant) child(s *env.State, t env.Throw, depth int, w *[env.MaxPlayers]float64) error {
	c := &a.stack[depth]
	*c = *s
	var ev env.Event
	if err := c.ApplyThrowTo(t, &ev); err != nil {
		return err
	}
	return a.value(c, depth, w)
}

// value writes W(s) for a state nested depth chance nodes deep.
func (a *Accountant) value(s *env.State, depth int, w *[env.MaxPlayers]float64) error {
	switch s.Phase() {
	case env.PhaseOver:
		for p := range w {
			w[p] = 0
			if p < s.Rules().Players {
				w[p] = s.Outcome(p)
			}
		}
		return nil
	case env.PhaseMove:
		return a.v.Values(s, w)
	}
	if depth >= min(max(a.Depth, 1), MaxDepth) {
		return Progress{}.Values(s, w)
	}
	*w = [env.MaxPlayers]float64{}
	pr := a.probs(s.Rules())
	for t := env.Throw(0); t < env.NumThrows; t++ {
		if pr[t] == 0 {
			continue
		}
		c := &a.vals[depth+1]
		if err := a.child(s, t, depth+1, c); err != nil {
			return err
		}
		for p := range w {
			w[p] += pr[t] * c[p]
		}
	}
	return nil
}
