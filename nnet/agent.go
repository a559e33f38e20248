package nnet

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/detmath"
	"github.com/yutenv/yutenv/obs"
)

func init() { agent.Register("net", newAgent) }

// Evaluator evaluates states with a Net for the seat to move: it encodes
// the observation of the net's tier, runs the net and answers the
// softmax of the legal actions' logits and tanh of the value. It
// implements agent.Evaluator and is safe for concurrent use (calls are
// serialised; give each goroutine its own for parallel speed).
type Evaluator struct {
	net    *Net
	mu     sync.Mutex
	enc    *obs.Encoder
	sc     *Scratch
	x      []float32
	logits [env.NumActions]float32
	legal  [env.NumActions]env.Action
	cache  *evalCache // nil: none
	cached int        // its entries, made with the encoder
	rules  env.Rules  // of the first state evaluated: the encoder's
}

// NewEvaluator returns an evaluator of n.
func NewEvaluator(n *Net) *Evaluator {
	return &Evaluator{net: n, sc: n.NewScratch()}
}

// NewCachingEvaluator returns an evaluator of n that remembers its answers
// for the last observations it saw, in a table of about entries entries
// (rounded up to a power of two, at most agent.EvalCacheMaxEntries; e.g.
// agent.EvalCacheEntries of a search's simulations; 0: no cache): it
// answers the same as NewEvaluator's, faster when observations recur, as
// they do across a game's searches.
func NewCachingEvaluator(n *Net, entries int) *Evaluator {
	size := 0
	if entries > 0 {
		size = 1
		for size < entries && size < agent.EvalCacheMaxEntries {
			size *= 2
		}
	}
	return &Evaluator{net: n, sc: n.NewScratch(), cached: size}
}

// CacheStats returns the cache's hits and misses (zero without a cache).
func (e *Evaluator) CacheStats() (hits, misses int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cache == nil {
		return 0, 0
	}
	return e.cache.hits, e.cache.misses
}

// Evaluate writes the net's distribution over the legal actions of s into
// priors (0 elsewhere) and returns the mover's value in [-1, 1].
func (e *Evaluator) Evaluate(s *env.State, priors []float32) (float64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.Phase() != env.PhaseMove {
		return 0, fmt.Errorf("%w: phase %s", agent.ErrNoMove, s.Phase())
	}
	if e.enc == nil {
		if err := e.net.CheckRules(s.Rules()); err != nil {
			return 0, err
		}
		enc, err := obs.NewEncoder(s.Rules(), e.net.Tier)
		if err != nil {
			return 0, err
		}
		e.enc, e.x, e.rules = enc, make([]float32, enc.Size()), s.Rules()
		if e.cached > 0 {
			e.cache = newEvalCache(e.cached, enc.Size())
		}
	}
	if s.Rules() != e.rules { // the encoder's layout is its first rules'
		if err := e.net.CheckRules(s.Rules()); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %w: an evaluator made for rules %q was given a state of rules %q", agent.ErrSpec, ErrRules, e.rules.String(), s.Rules().String())
	}
	e.enc.Encode(s, s.ToMove(), e.x)
	legal := s.LegalActions(e.legal[:0])
	var key uint64
	if e.cache != nil {
		key = e.cache.key(e.x)
		clear(priors[:env.NumActions])
		if v, ok := e.cache.get(key, legal, priors); ok {
			return detmath.Tanh(float64(v)), nil
		}
	}
	v := e.net.Forward(e.sc, e.x, e.logits[:])
	if !finite(v) {
		return 0, ErrNonFinite
	}
	for _, a := range legal {
		if !finite(e.logits[a]) {
			return 0, ErrNonFinite
		}
	}
	clear(priors[:env.NumActions])
	Softmax(e.logits[:], legal, priors)
	if e.cache != nil {
		e.cache.put(key, legal, priors, v)
	}
	return detmath.Tanh(float64(v)), nil
}

// ErrNonFinite is returned by Evaluate (and so by the agent) when the
// network's value or a legal action's logit is NaN or infinite: weights
// within MaxWeight can still overflow float32 in a deep or wide net, and a
// NaN must never become a policy. It wraps ErrNet.
var ErrNonFinite = fmt.Errorf("%w: the network's output is NaN or infinite", ErrNet)

func finite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

// Softmax writes the softmax of logits over the legal actions into dst
// (other entries untouched).
func Softmax(logits []float32, legal []env.Action, dst []float32) {
	m := float32(math.Inf(-1))
	for _, a := range legal {
		m = max(m, logits[a])
	}
	sum := 0.0
	for _, a := range legal {
		p := detmath.Exp(float64(logits[a] - m)) // not math.Exp: the same bits on every machine
		dst[a] = float32(p)
		sum += p
	}
	for _, a := range legal {
		dst[a] = float32(float64(dst[a]) / sum)
	}
}

// LoadCached is Load through the process's network cache (Cache): the
// many agents of a run (one per worker and seat) share one copy of a net,
// and a changed file is read again. It opens any path (the caller is the
// operator), but only a regular file of at most MaxFileSize bytes, without
// blocking on a FIFO.
func LoadCached(path string) (*Net, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := shared.load(f, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// Agent plays a network: the policy's most likely legal action without
// search (spec net:PATH), or an MCTS guided by the net's priors and values
// (net:PATH,sims=N[,c=..,workers=..,temp=..]), or with Gumbel root
// selection and sequential halving (net:PATH,sims=N,gumbel=1[,m=..]), whose
// statistics' policy is the improved policy of completed Q-values.
type Agent struct {
	spec    agent.Spec
	net     *Net
	eval    *Evaluator
	search  *agent.MCTS
	policy  [env.NumActions]float32
	legal   [env.NumActions]env.Action
	played  env.Rules // the last rules CheckRules passed
	rulesOK bool
}

// New returns the agent of a net spec (see agent.ParseSpec).
func New(sp agent.Spec, seed uint64) (*Agent, error) {
	if sp.Name != "net" {
		return nil, fmt.Errorf("%w: nnet.New needs a net spec, got %q", agent.ErrSpec, sp.Name)
	}
	n, err := LoadCached(sp.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", agent.ErrSpec, sp.String(), err)
	}
	return newWith(sp, n, seed)
}

// newWith returns the agent of spec sp (net or az) playing n.
func newWith(sp agent.Spec, n *Net, seed uint64) (*Agent, error) {
	a := &Agent{spec: sp, net: n, eval: NewEvaluator(n)}
	if sp.N > 0 {
		a.eval = NewCachingEvaluator(n, agent.EvalCacheEntries(sp.N))
		ms, err := agent.DefaultSpec("mcts")
		if err != nil {
			return nil, err
		}
		ms.N, ms.C, ms.Workers, ms.Temp = sp.N, sp.C, sp.Workers, sp.Temp
		opt := agent.MCTSOptions{Evaluator: a.eval, Gumbel: sp.Gumbel, GumbelM: sp.M}
		if a.search, err = agent.NewMCTS(ms, seed, opt); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func newAgent(sp agent.Spec, seed uint64) (agent.Agent, error) { return New(sp, seed) }

// Name returns the canonical spec.
func (a *Agent) Name() string { return a.spec.String() }

// Net returns the agent's network.
func (a *Agent) Net() *Net { return a.net }

// Reseed restarts the search's generator (the policy alone is deterministic).
func (a *Agent) Reseed(seed uint64) {
	if a.search != nil {
		a.search.Reseed(seed)
	}
}

// Act returns the agent's action.
func (a *Agent) Act(s *env.State) (env.Action, error) {
	act, _, err := a.ActStats(s)
	return act, err
}

// ActStats returns the action and its statistics: the search's (with
// sims), or the net's policy over the legal actions and its value.
func (a *Agent) ActStats(s *env.State) (env.Action, agent.Stats, error) {
	if !a.rulesOK || s.Rules() != a.played { // forced decisions skip the evaluator: check here
		if err := a.net.checkRules(s.Rules(), a.spec.Name); err != nil {
			return 0, agent.Stats{}, err
		}
		a.played, a.rulesOK = s.Rules(), true
	}
	if a.search != nil {
		return a.search.ActStats(s)
	}
	legal := s.LegalActions(a.legal[:0])
	if len(legal) == 0 {
		return 0, agent.Stats{}, fmt.Errorf("%w: phase %s", agent.ErrNoMove, s.Phase())
	}
	v, err := a.eval.Evaluate(s, a.policy[:])
	if err != nil {
		return 0, agent.Stats{}, err
	}
	best := legal[0]
	for _, x := range legal[1:] {
		if a.policy[x] > a.policy[best] {
			best = x
		}
	}
	st := agent.Stats{Policy: a.policy[:], Value: v}
	st.Values[s.ToMove()] = v
	return best, st, nil
}

// SetInterrupt makes the agent's search (with sims) poll flag
// (agent.Interruptible); a policy-only agent evaluates once and has
// nothing to interrupt.
func (a *Agent) SetInterrupt(flag *atomic.Bool) {
	if a.search != nil {
		a.search.SetInterrupt(flag)
	}
}
