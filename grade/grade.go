package grade

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/vecenv"
)

// The losses that count as an error and as a blunder (Report.Errors and
// Report.Blunders count the decisions that lose more), in outcome units:
// 0.02 is one percentage point of a two-seat game's winning chances.
const (
	ErrorLoss   = 0.02
	BlunderLoss = 0.1
)

// DefaultReference is the reference of yutenv grade and yutenv.grade: the
// shipped network's Gumbel search with 800 simulations a decision, four
// times the budget of the strongest agent of the ladder, which grades 200
// games in about a minute on two cores.
const DefaultReference = "az,sims=800"

// Errors a caller may branch on (errors.Is).
var (
	// ErrIllegal: a policy chose an action that is not legal at its decision.
	ErrIllegal = errors.New("illegal action")
	// ErrNoValues: the reference's statistics value no actions
	// (agent.Stats.Q is nil): it is not a search.
	ErrNoValues = errors.New("the reference values no actions")
	// ErrRules: a record is of other rules than the grading's.
	ErrRules = errors.New("record of other rules")
	// ErrCancelled: Run's context ended first.
	ErrCancelled = errors.New("grading cancelled")
)

// Decision is one decision to grade.
type Decision struct {
	// Game is the game's index in its source, Seed its game seed (the
	// reference is reseeded from it: vecenv.AgentSeed).
	Game int
	Seed uint64
	// State is the state before the move (a decision: env.PhaseMove);
	// its ToMove is the graded seat and its Decisions the decision's
	// index in the game.
	State env.State
	// Action is the action the graded policy chose.
	Action env.Action
}

// Graded is a graded decision.
type Graded struct {
	// Game, Decision (the state's decision counter, every seat's
	// decisions counted, as yutenv analyse --decision counts them) and Seat
	// say where it was.
	Game     int `json:"game"`
	Decision int `json:"decision"`
	Seat     int `json:"seat"`
	// Action is the choice and Value the reference's Q of it; Best the
	// reference's best action and BestValue its Q (outcomes in [-1, 1]).
	Action    env.Action `json:"-"`
	Best      env.Action `json:"-"`
	Value     float64    `json:"value"`
	BestValue float64    `json:"best_value"`
	// Loss is BestValue − Value (≥ 0; 0 for a forced decision).
	Loss float64 `json:"loss"`
	// Forced marks a decision of one legal action, not searched.
	Forced bool `json:"-"`
	// State is the state before the move.
	State env.State `json:"-"`
}

// Reference grades decisions with one agent of a spec whose statistics
// value every legal action (agent.Stats.Q). It is not safe for concurrent
// use; give each goroutine its own.
type Reference struct {
	ag    agent.Agent
	rs    agent.Reseeder
	legal [env.NumActions]env.Action
}

// NewReference builds the reference of spec.
func NewReference(spec string) (*Reference, error) {
	ag, err := agent.New(spec, 0)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	return newReference(ag), nil
}

// newReference wraps an agent; it is reseeded only if it is a Reseeder.
func newReference(ag agent.Agent) *Reference {
	rs, _ := ag.(agent.Reseeder)
	return &Reference{ag: ag, rs: rs}
}

// Name returns the reference's canonical spec.
func (r *Reference) Name() string { return r.ag.Name() }

// Grade searches d's state and returns the decision graded. Its errors wrap
// ErrIllegal (d.Action is not legal there), ErrNoValues (the reference is
// not a search), or the reference's own.
func (r *Reference) Grade(d Decision) (Graded, error) {
	s := &d.State
	g := Graded{Game: d.Game, Decision: s.Decisions(), Seat: s.ToMove(), Action: d.Action, Best: d.Action, State: d.State}
	legal := s.LegalActions(r.legal[:0])
	if !slices.Contains(legal, d.Action) {
		return g, IllegalError(d.Game, s, "the graded policy", d.Action)
	}
	if len(legal) == 1 {
		g.Forced = true
		return g, nil
	}
	if r.rs != nil {
		r.rs.Reseed(vecenv.AgentSeed(d.Seed, g.Seat, g.Decision))
	}
	_, st, err := r.ag.ActStats(s)
	if err != nil {
		return g, fmt.Errorf("reference %s, game %d, decision %d: %w", r.Name(), d.Game, g.Decision, err)
	}
	if st.Q == nil {
		return g, fmt.Errorf("%w: %s is no search; give one that values every move (az,sims=N, mcts:N, mc:N, optimal:PATH)", ErrNoValues, r.Name())
	}
	g.Best, g.BestValue = legal[0], st.Q[legal[0]]
	for _, a := range legal[1:] {
		if st.Q[a] > g.BestValue {
			g.Best, g.BestValue = a, st.Q[a]
		}
	}
	g.Value = st.Q[d.Action]
	g.Loss = g.BestValue - g.Value
	return g, nil
}

// IllegalError is the one line that says who chose an illegal action
// where, with the legal ones; it wraps ErrIllegal.
func IllegalError(game int, s *env.State, who string, a env.Action) error {
	var buf [env.NumActions]env.Action
	legal := s.LegalActions(buf[:0])
	names := make([]string, len(legal))
	for i, l := range legal {
		names[i] = fmt.Sprintf("%s (%d)", l, int(l))
	}
	return fmt.Errorf("%w: %s chose action %d (%s) at decision %d of game %d, seat %d; legal: %s",
		ErrIllegal, who, int(a), a, s.Decisions(), game, s.ToMove(), strings.Join(names, ", "))
}

// Source hands out the decisions to grade, game by game.
type Source interface {
	// Len is the number of games.
	Len() int
	// Decisions returns game g's decisions to grade, in order. p holds
	// the worker's agents: slots 0 and 1 are the source's (Run's
	// reference takes slot RefSlot).
	Decisions(p *vecenv.Players, g int) ([]Decision, error)
}

// RefSlot is the vecenv.Players slot of Run's reference.
const RefSlot = 2

// Options says how Run grades.
type Options struct {
	// Reference is the reference's agent spec (DefaultReference if empty).
	Reference string
	// Workers is the number of games graded at once (at least 1).
	Workers int
	// Worst is how many of the costliest decisions the report keeps.
	Worst int
	// Progress, if not nil, is called after every game with the number
	// of games graded so far.
	Progress func(games int)
}

// gameResult is one game's graded decisions.
type gameResult struct {
	graded []Graded
	err    error
}

// Run grades every decision of src with the reference on opt.Workers
// goroutines. The report does not depend on the number of workers. It
// returns the first game's error, wrapped with the game's place, or an
// error wrapping ErrCancelled when ctx ended first.
func Run(ctx context.Context, src Source, opt Options) (*Report, error) {
	spec := opt.Reference
	if spec == "" {
		spec = DefaultReference
	}
	sp, err := agent.ParseSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	spec = sp.String()
	stop := make(chan struct{})
	results := vecenv.Play(opt.Workers, 0, src.Len(), stop, func(p *vecenv.Players, g int) gameResult {
		if ctx.Err() != nil {
			return gameResult{err: ctx.Err()}
		}
		ds, err := src.Decisions(p, g)
		if err != nil {
			return gameResult{err: err}
		}
		ag, err := p.Get(RefSlot, spec)
		if err != nil {
			return gameResult{err: fmt.Errorf("reference: %w", err)}
		}
		ref := newReference(ag)
		out := make([]Graded, len(ds))
		for i, d := range ds {
			if out[i], err = ref.Grade(d); err != nil {
				return gameResult{err: err}
			}
		}
		return gameResult{graded: out}
	})
	sum := newSummer(spec, opt.Worst)
	err = vecenv.InOrder(results, 0, stop, func(g int, r gameResult) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w after %d games: %w", ErrCancelled, g, context.Cause(ctx))
		}
		if r.err != nil {
			return r.err
		}
		sum.add(r.graded)
		if opt.Progress != nil {
			opt.Progress(g + 1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCancelled, context.Cause(ctx))
	}
	return sum.report(src.Len()), nil
}

// quantile returns the q-quantile of sorted xs (linear between ranks), 0
// for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pos := q * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}
