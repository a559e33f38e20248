package solve

import (
	"fmt"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

func init() { agent.Register("optimal", newAgent) }

// tables caches the tables agents have loaded, by path, so that the many
// agents of an evaluation share one copy.
var tables struct {
	sync.Mutex
	byPath map[string]*Table
}

// LoadCached is Load, remembering the table for later calls with the same
// path (agent "optimal:PATH" loads its table this way).
func LoadCached(path string) (*Table, error) {
	tables.Lock()
	defer tables.Unlock()
	if t, ok := tables.byPath[path]; ok {
		return t, nil
	}
	t, err := Load(path)
	if err != nil {
		return nil, err
	}
	if tables.byPath == nil {
		tables.byPath = map[string]*Table{}
	}
	tables.byPath[path] = t
	return t, nil
}

// Agent plays perfectly from a solved table: at every decision the legal
// action with the highest value (Table.Best). It is agent spec
// "optimal:PATH".
type Agent struct {
	t    *Table
	name string
	pol  [env.NumActions]float32
	q    [env.NumActions]float64
}

// NewAgent returns the agent that plays from table t.
func NewAgent(t *Table, name string) *Agent { return &Agent{t: t, name: name} }

// newAgent builds agent spec optimal:PATH.
func newAgent(sp agent.Spec, _ uint64) (agent.Agent, error) {
	t, err := LoadCached(sp.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", agent.ErrSpec, sp.String(), err)
	}
	return NewAgent(t, sp.String()), nil
}

// Name returns the agent's spec.
func (a *Agent) Name() string { return a.name }

// Reseed does nothing: the agent has no randomness.
func (a *Agent) Reseed(uint64) {}

// Act returns the optimal action of the decision s.
func (a *Agent) Act(s *env.State) (env.Action, error) {
	if s.Phase() != env.PhaseMove {
		return 0, fmt.Errorf("%w: phase %s", agent.ErrNoMove, s.Phase())
	}
	act, _, err := a.t.Best(s)
	return act, err
}

// ActStats is Act with the statistics: a one-hot policy of the chosen
// action, the mover's value in [-1, 1] (2p - 1 for the solved probability
// p of winning) and Q, that value after every legal action (a successor
// the table cannot value counting as p = 0.5, as in Best).
func (a *Agent) ActStats(s *env.State) (env.Action, agent.Stats, error) {
	if s.Phase() != env.PhaseMove {
		return 0, agent.Stats{}, fmt.Errorf("%w: phase %s", agent.ErrNoMove, s.Phase())
	}
	act, v, err := a.t.Best(s)
	if err != nil {
		return 0, agent.Stats{}, err
	}
	clear(a.pol[:])
	a.pol[act] = 1
	st := agent.Stats{Policy: a.pol[:], Value: 2*v - 1}
	var legal [env.NumActions]env.Action
	if ls := s.LegalActions(legal[:0]); len(ls) > 1 {
		if err := a.t.ActionValues(s, a.q[:]); err != nil {
			return 0, agent.Stats{}, err
		}
		for i, p := range a.q {
			a.q[i] = 0 // not legal, or not valued: p = 0.5
			if p >= 0 {
				a.q[i] = 2*p - 1
			}
		}
		st.Q = a.q[:]
	}
	me := s.ToMove()
	st.Values[me], st.Values[1-me] = st.Value, -st.Value
	return act, st, nil
}
