package solve

import (
	"fmt"
	"slices"
	"time"

	"github.com/yutenv/yutenv/env"
)

// Table holds the solved values of a variant: for every state reachable
// from the start (a chance node or a decision, seats relabelled so the
// mover is first), the probability that the seat to move wins under
// optimal play by both seats. Optimal actions follow by one step of
// lookahead (Best). A Table is read-only once built and safe for
// concurrent use.
type Table struct {
	c      *codec
	keys   []uint64 // sorted
	values []float64

	// PoolCap is the pool cap the table was solved with (Options.PoolCap).
	PoolCap int
	// Iterations is the number of value-iteration sweeps of the solve.
	Iterations int
	// Residual is the Bellman residual of the values: the largest change one
	// more backup would make to any state's value.
	Residual float64
	// Edges is the number of successor links the solve iterated over (0 for a loaded table).
	Edges int
	// EnumerateTime and SolveTime are how long listing the states and the
	// whole solve took (0 for a loaded table).
	EnumerateTime, SolveTime time.Duration
}

// Rules returns the rules the table was solved for.
func (t *Table) Rules() env.Rules { return t.c.rules }

// Len returns the number of states in the table.
func (t *Table) Len() int { return len(t.keys) }

// Bytes returns the memory the table's keys and values take (and the
// size of a saved table's payload).
func (t *Table) Bytes() int64 { return int64(len(t.keys)) * 16 }

// ValueAt returns the value of the i-th state (0 <= i < Len).
func (t *Table) ValueAt(i int) float64 { return t.values[i] }

// State returns the i-th state (0 <= i < Len), with the mover as seat 0.
func (t *Table) State(i int) (env.State, error) {
	var stacks [env.NumStations]env.Stack
	return t.c.state(t.keys[i], stacks[:0])
}

// checkRules refuses a state of other rules than the table's.
func (t *Table) checkRules(s *env.State) error {
	if s.Rules() != t.c.rules {
		return fmt.Errorf("%w: the table was solved for rules %s, the game plays %s", ErrRules, t.c.rules, s.Rules())
	}
	return nil
}

// lookup returns the value of s for its mover, if the table holds s or s
// is a sure win (which a table does not list: its value is 1).
func (t *Table) lookup(s *env.State) (float64, bool) {
	key, ok := t.c.encode(s)
	if ok {
		if i, found := slices.BinarySearch(t.keys, key); found {
			return t.values[i], true
		}
	}
	if t.c.sureWin(s) {
		return 1, true
	}
	return 0, false
}

// maxMissingDepth bounds the expectimax by which a table values a state
// it does not hold (Table.search): the throws and moves below it.
const maxMissingDepth = 12

// valueOf returns the value of s (not over) for its mover: the table's,
// 1 for a sure win, or for a state the table does not hold (one that only
// a move giving up a sure win leads to) an expectimax over its successors
// down to states the table holds. ok is false if that needs more than
// maxMissingDepth steps.
func (t *Table) valueOf(s *env.State) (float64, bool) {
	if v, ok := t.lookup(s); ok {
		return v, true
	}
	return t.search(s, maxMissingDepth, map[uint64]float64{})
}

// search is the expectimax of valueOf below a state the table does not
// hold, with the chance nodes of the solve (capped at the table's pool
// cap) and memo for the states it has valued.
func (t *Table) search(s *env.State, depth int, memo map[uint64]float64) (float64, bool) {
	key, keyed := t.c.encode(s)
	if keyed {
		if v, ok := memo[key]; ok {
			return v, true
		}
	}
	if depth == 0 || !keyed {
		return 0, false
	}
	var ev env.Event
	v := 0.0
	if s.IsChance() {
		var outs [env.NumThrows]env.ChanceOutcome
		atCap := capped(t.c.rules, s.PoolSize(), t.PoolCap)
		total := 0.0
		for _, o := range s.ChanceOutcomes(outs[:0]) {
			if atCap && o.Throw.Bonus() {
				continue
			}
			c := *s
			if err := c.ApplyThrowTo(o.Throw, &ev); err != nil {
				return 0, false
			}
			x, ok := t.below(s, &c, depth-1, memo)
			if !ok {
				return 0, false
			}
			v += o.Prob * x
			total += o.Prob
		}
		if total == 0 {
			return 0, false
		}
		v /= total
	} else {
		var legal [env.NumActions]env.Action
		for _, a := range s.LegalActions(legal[:0]) {
			c := *s
			if err := c.ApplyTo(a, &ev); err != nil {
				return 0, false
			}
			x, ok := t.below(s, &c, depth-1, memo)
			if !ok {
				return 0, false
			}
			v = max(v, x)
		}
	}
	memo[key] = v
	return v, true
}

// Value returns the probability that the seat to move in s wins under
// optimal play (for a finished game: 1 if it won, else 0). s must be
// of the table's rules (else ErrRules). A state the table does not hold
// (a sure win, or a state only a move giving up a sure win leads to) is
// valued from the states it holds, a few steps below; one that cannot
// arise from the start under the table's pool cap is an error wrapping
// ErrUnknownState.
func (t *Table) Value(s *env.State) (float64, error) {
	if err := t.checkRules(s); err != nil {
		return 0, err
	}
	if s.IsOver() {
		if s.Winner() == s.ToMove() {
			return 1, nil
		}
		return 0, nil
	}
	v, ok := t.valueOf(s)
	if !ok {
		return 0, fmt.Errorf("%w: the state is not in the table (it cannot arise from the start under pool cap %d, or only after a move that gave up a sure win)", ErrUnknownState, t.PoolCap)
	}
	return v, nil
}

// Start returns the value of the start of a game for the first seat: its
// probability of winning when both seats play optimally.
func (t *Table) Start() float64 {
	s, err := env.New(t.c.rules, 0, 0)
	if err != nil {
		return 0
	}
	v, _ := t.lookup(&s)
	return v
}

// afterValue returns the value for the mover of s of the state c that one
// of its actions led to (below), and ok = false when the table cannot
// value c.
func (t *Table) afterValue(s, c *env.State) (float64, bool) {
	return t.below(s, c, maxMissingDepth, nil)
}

// below returns the value for the mover of s of its successor c: 1 or 0
// if the game is over, else the table's (a sure win's 1 included) or, for
// a state it does not hold, search's at depth, turned round when the other
// seat is to move. memo is search's (nil: made when a search needs it).
func (t *Table) below(s, c *env.State, depth int, memo map[uint64]float64) (float64, bool) {
	if c.IsOver() {
		if c.Outcome(s.ToMove()) > 0 {
			return 1, true
		}
		return 0, true
	}
	v, ok := t.lookup(c)
	if !ok {
		if memo == nil {
			memo = map[uint64]float64{}
		}
		if v, ok = t.search(c, depth, memo); !ok {
			return 0, false
		}
	}
	if c.ToMove() != s.ToMove() {
		v = 1 - v
	}
	return v, true
}

// Best returns the optimal action of the decision s and its value (the
// mover's probability of winning): the legal action whose successor has
// the highest value, the lowest action id on a tie. A successor the
// table does not hold is valued from the states below it (as Value does);
// one it cannot value (a state that cannot arise from the start under its
// pool cap) counts as 0.5. s must be a decision (else an error wrapping
// env.ErrWrongPhase) of the table's rules (else ErrRules).
func (t *Table) Best(s *env.State) (env.Action, float64, error) {
	if err := t.checkRules(s); err != nil {
		return 0, 0, err
	}
	if s.Phase() != env.PhaseMove {
		return 0, 0, fmt.Errorf("%w: the state is in phase %s, not move", env.ErrWrongPhase, s.Phase())
	}
	var legal [env.NumActions]env.Action
	var ev env.Event
	best, bestV := env.Action(0), -1.0
	for _, a := range s.LegalActions(legal[:0]) {
		c := *s
		if err := c.ApplyTo(a, &ev); err != nil {
			return 0, 0, err
		}
		v, ok := t.afterValue(s, &c)
		if !ok {
			v = 0.5
		}
		if v > bestV {
			best, bestV = a, v
		}
	}
	return best, bestV, nil
}

// ActionValues writes into dst[:env.NumActions] the value of every legal
// action of the decision s for its mover (-1 for illegal actions and
// successors the table cannot value). Its errors are Best's.
func (t *Table) ActionValues(s *env.State, dst []float64) error {
	if err := t.checkRules(s); err != nil {
		return err
	}
	if s.Phase() != env.PhaseMove {
		return fmt.Errorf("%w: the state is in phase %s, not move", env.ErrWrongPhase, s.Phase())
	}
	dst = dst[:env.NumActions]
	for i := range dst {
		dst[i] = -1
	}
	var legal [env.NumActions]env.Action
	var ev env.Event
	for _, a := range s.LegalActions(legal[:0]) {
		c := *s
		if err := c.ApplyTo(a, &ev); err != nil {
			return err
		}
		if v, ok := t.afterValue(s, &c); ok {
			dst[a] = v
		}
	}
	return nil
}
