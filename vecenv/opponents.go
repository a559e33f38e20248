package vecenv

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// Client is the opponent spec of an entry that the batch does not play: at
// that opponent's decisions the batch stops, its row becomes the opponent
// seat's own view (Rows.Pending marks it), and the caller answers with
// OpponentStep. The Python package plays its policies (a callable, an SB3
// model, a torch module) as opponents this way, for every waiting env in one
// call.
const Client = "client"

// MaxOpponents bounds the entries of an opponent mixture.
const MaxOpponents = 64

// Opponent is one entry of a Single-mode batch's opponent mixture.
type Opponent struct {
	// Spec is the agent spec that plays the other seats in the episodes
	// that draw this entry (agent.New), or Client.
	Spec string
	// Weight is the entry's relative probability, finite and > 0.
	Weight float64
}

// Sentinel errors of opponent mixtures.
var (
	// ErrMixture is wrapped by every refusal of an opponent mixture.
	ErrMixture = errors.New("bad opponent mixture")
	// ErrPending is wrapped by Step (and CheckActions) while an env waits
	// for a client-played opponent's action: answer it with OpponentStep.
	ErrPending = errors.New("an env waits for its client-played opponent")
	// ErrNotPending is wrapped by OpponentStep when no env waits for a
	// client-played opponent.
	ErrNotPending = errors.New("no env waits for a client-played opponent")
)

// Mixture returns the batch's opponent entries: Config.Opponents, or the
// one entry Config.Opponent with weight 1. It refuses an empty spec, more
// than MaxOpponents entries and a weight that is not finite and > 0.
func (c Config) Mixture() ([]Opponent, error) {
	if len(c.Opponents) == 0 {
		if c.Opponent == "" {
			return nil, fmt.Errorf("%w: no opponent", ErrMixture)
		}
		return []Opponent{{Spec: c.Opponent, Weight: 1}}, nil
	}
	if len(c.Opponents) > MaxOpponents {
		return nil, fmt.Errorf("%w: %d entries, at most %d", ErrMixture, len(c.Opponents), MaxOpponents)
	}
	var total float64
	for i, o := range c.Opponents {
		switch {
		case o.Spec == "":
			return nil, fmt.Errorf("%w: entry %d has no spec", ErrMixture, i)
		case math.IsNaN(o.Weight) || math.IsInf(o.Weight, 0) || o.Weight <= 0:
			return nil, fmt.Errorf("%w: entry %d (%s) has weight %v; want a finite number > 0", ErrMixture, i, o.Spec, o.Weight)
		}
		total += o.Weight
	}
	if math.IsInf(total, 0) {
		return nil, fmt.Errorf("%w: the weights sum to infinity", ErrMixture)
	}
	return append([]Opponent(nil), c.Opponents...), nil
}

// HasClient reports whether an entry of opps is played by the client.
func HasClient(opps []Opponent) bool {
	for _, o := range opps {
		if o.Spec == Client {
			return true
		}
	}
	return false
}

// OpponentDraw returns the entry of a mixture whose cumulative weights are
// cum (cum[i] the sum of the weights of entries 0..i) that the episode with
// game seed x plays: the first i with u*total < cum[i], for u =
// Seed(x, 5)/2^64 taken to 53 bits. One entry is always entry 0, and draws
// nothing. Pure float64 comparisons of a product, so the draw is the same
// on every machine.
func OpponentDraw(x uint64, cum []float64) int {
	if len(cum) <= 1 {
		return 0
	}
	total := cum[len(cum)-1]
	u := float64(mix(x, 5)>>11) * 0x1p-53 * total
	for i, c := range cum[:len(cum)-1] {
		if u < c {
			return i
		}
	}
	return len(cum) - 1
}

// cumulative returns the running sums of the entries' weights.
func cumulative(opps []Opponent) []float64 {
	cum := make([]float64, len(opps))
	var t float64
	for i, o := range opps {
		t += o.Weight
		cum[i] = t
	}
	return cum
}

// opponents are a batch's mixture with an idle-agent pool per entry. An
// env owns no agent: a range of envs borrows one per entry for its run and
// reseeds it with AgentSeed before every decision, so memory grows with the
// workers, not with the envs (an mcts:2000 agent holds about 0.4 MB).
type opponents struct {
	opps   []Opponent
	cum    []float64
	pools  []sync.Pool
	client bool // some entry is Client
}

// newOpponents checks every entry's spec by building one agent of it,
// which seeds its entry's pool.
func newOpponents(opps []Opponent) (*opponents, error) {
	o := &opponents{opps: opps, cum: cumulative(opps), pools: make([]sync.Pool, len(opps)), client: HasClient(opps)}
	for i, e := range opps {
		if e.Spec == Client {
			continue
		}
		a, err := agent.New(e.Spec, 0)
		if err != nil {
			return nil, fmt.Errorf("vecenv: opponent: %w", err)
		}
		if _, ok := a.(agent.Reseeder); !ok {
			return nil, fmt.Errorf("vecenv: opponent %s: %w", e.Spec, agent.ErrNotReseeder)
		}
		o.pools[i].Put(a)
	}
	return o, nil
}

// worker is what one run of a range borrows: an agent per opponent entry,
// taken from the pool of the entry's mixture on first use and returned by
// release. An env whose episode drew from an older mixture (SetOpponents)
// swaps the worker's agent of that entry for one of its own mixture.
type worker struct {
	b    *Batch
	ags  [MaxOpponents]agent.Agent
	from [MaxOpponents]*opponents // the mixture each borrowed agent came from
	used uint64                   // bit i: ags[i] is borrowed
	// luck values throws (Config.Luck), made at the worker's first throw;
	// rows is its scratch.
	luck ThrowLuck
	rows [env.NumThrows][env.MaxPlayers]float64
}

// throwLuck writes into w.rows the luck of every throw the chance node s
// can draw (Config.Luck).
func (w *worker) throwLuck(s *env.State) error {
	if w.luck == nil {
		l, err := w.b.cfg.Luck()
		if err != nil {
			return fmt.Errorf("luck %s: %w", w.b.cfg.LuckName, err)
		}
		w.luck = l
	}
	if err := w.luck.ThrowLuck(s, &w.rows); err != nil {
		return fmt.Errorf("luck %s: %w", w.b.cfg.LuckName, err)
	}
	return nil
}

// worker returns an idle worker of b (its agent tables are empty).
func (b *Batch) worker() *worker {
	if w, ok := b.workers.Get().(*worker); ok {
		return w
	}
	return &worker{b: b}
}

// done releases w's agents and keeps w for the next range.
func (b *Batch) done(w *worker) {
	w.release()
	b.workers.Put(w)
}

// opponent returns the worker's agent of entry k of o reseeded with seed.
func (w *worker) opponent(o *opponents, k int, seed uint64) (agent.Agent, error) {
	if w.ags[k] != nil && w.from[k] != o {
		w.from[k].pools[k].Put(w.ags[k])
		w.ags[k] = nil
	}
	if w.ags[k] == nil {
		if v := o.pools[k].Get(); v != nil {
			w.ags[k] = v.(agent.Agent)
		} else {
			a, err := agent.New(o.opps[k].Spec, seed)
			if err != nil {
				return nil, err
			}
			w.ags[k] = a
		}
		w.from[k] = o
		w.used |= 1 << k
	}
	w.ags[k].(agent.Reseeder).Reseed(seed) // newOpponents checked that the entry is one
	return w.ags[k], nil
}

// release returns the borrowed agents to their mixtures' pools.
func (w *worker) release() {
	for u := w.used; u != 0; u &= u - 1 {
		k := bits.TrailingZeros64(u)
		w.from[k].pools[k].Put(w.ags[k])
		w.ags[k], w.from[k] = nil, nil
	}
	w.used = 0
}
