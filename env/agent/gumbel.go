package agent

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/detmath"
)

// Gumbel root selection with sequential halving (Danihelka, Guez,
// Schrittwieser and Silver, "Policy improvement by planning with Gumbel",
// ICLR 2022), for an MCTS with an Evaluator (MCTSOptions.Gumbel).
//
// At the root, every legal action a gets a Gumbel(0, 1) number g(a) drawn
// from the tree's generator. The simulation budget n is spent by
// sequential halving over the m actions of highest g(a) + logit(a):
// GumbelSchedule says how many visits the action chosen by simulation k
// must already have, and simulation k follows the action with exactly that
// many visits that maximises g(a) + logit(a) + σ(q̂(a)). The first m
// simulations therefore visit the Gumbel-Top-m actions once each, and every
// phase after that keeps the better half. The played action is, among the
// most visited, the one of highest g + logit + σ(q̂).
//
// q̂ is the completed Q-value: an action's mean outcome for the mover if it
// was visited, otherwise the node's mixed value (its evaluator value mixed
// with the prior-weighted mean Q of the visited actions), min-max rescaled
// to [0, 1] over the legal actions, and σ(q̂) = (GumbelCVisit + max_b N(b))
// × GumbelCScale × q̂. The improved policy softmax(logit + σ(q̂)) over the
// legal actions is the search's Stats.Policy: the policy target of
// self-play. Below the root a decision node follows the deterministic rule
// of the paper, argmax of π'(a) − N(a) / (1 + Σ_b N(b)) with π' that node's
// improved policy; chance nodes keep their rule (the throw whose visits lag
// furthest behind its exact probability).
const (
	// GumbelCVisit is c_visit of σ.
	GumbelCVisit = 50.0
	// GumbelCScale is c_scale of σ (q̂ is rescaled to [0, 1]).
	GumbelCScale = 0.1
	// DefaultGumbelM is the number of root actions sequential halving
	// starts from (m) when the spec does not say.
	DefaultGumbelM = 16
)

// minLogit stands for the logit of an action whose prior is 0.
const minLogit = -1e9

// GumbelSchedule writes into dst (reusing its array) the visit count that
// the root action of each of sims simulations must have when it is chosen,
// for sequential halving over m actions: phases of
// max(1, ⌊sims / (⌈log2 m⌉ × k)⌋) rounds over the k actions still
// considered (k = m, then halved, never below 2), each round visiting every
// considered action once. With m ≤ 1 every simulation goes to the one
// action: 0, 1, 2, ...
func GumbelSchedule(dst []int32, m, sims int) []int32 {
	dst = dst[:0]
	if m <= 1 {
		for k := 0; k < sims; k++ {
			dst = append(dst, int32(k))
		}
		return dst
	}
	log2m := bits.Len(uint(m - 1)) // ⌈log2 m⌉ for m >= 2, in integers
	var visits [env.NumActions]int32
	k := m
	for len(dst) < sims {
		extra := max(1, sims/(log2m*k))
		for range extra {
			for i := 0; i < k && len(dst) < sims; i++ {
				dst = append(dst, visits[i])
			}
			for i := 0; i < k; i++ {
				visits[i]++
			}
		}
		k = max(2, k/2)
	}
	return dst
}

// prepareGumbel draws the root's Gumbel numbers and the visit schedule of
// a search of sims simulations (after the root is evaluated).
func (t *tree) prepareGumbel(sims int) {
	root := &t.nodes[0]
	k := int(root.count)
	for e := 0; e < k; e++ {
		u := (float64(t.roll.r.uint64()>>11) + 0.5) / (1 << 53) // in (0, 1): g is finite
		// detmath, not math.Log: the same bits on every machine.
		t.gumbels[e] = -detmath.Log(-detmath.Log(u))
	}
	t.schedule = GumbelSchedule(t.schedule, min(t.gumbelM, k), sims)
}

// completedQ writes σ(q̂) of every edge of decision node i into t.sigma
// and the edges' logits into t.logit (indexed from the node's first edge),
// and returns the largest visit count of its edges.
func (t *tree) completedQ(i int32) int32 {
	nd := &t.nodes[i]
	me := nd.state.ToMove()
	first, k := int(nd.first), int(nd.count)
	sumN, maxN := 0.0, int32(0)
	sumP, sumPQ := 0.0, 0.0
	for e := 0; e < k; e++ {
		ed := &t.edges[first+e]
		p := float64(ed.prob)
		t.logit[e] = minLogit
		if p > 0 {
			t.logit[e] = detmath.Log(p)
		}
		t.qs[e], t.seen[e] = 0, false
		if ed.child < 0 {
			continue
		}
		c := &t.nodes[ed.child]
		if c.n == 0 {
			continue
		}
		t.qs[e], t.seen[e] = c.w[me]/float64(c.n), true
		sumN += float64(c.n)
		maxN = max(maxN, c.n)
		sumP += p
		sumPQ += float64(p * t.qs[e]) // rounded: no FMA on arm64 (docs/COMPATIBILITY.md, "Seeds")
	}
	mixed := float64(nd.raw)
	if sumP > 0 {
		mixed = (mixed + sumN*sumPQ/sumP) / (sumN + 1)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for e := 0; e < k; e++ {
		if !t.seen[e] {
			t.qs[e] = mixed
		}
		lo, hi = min(lo, t.qs[e]), max(hi, t.qs[e])
	}
	scale := (GumbelCVisit + float64(maxN)) * GumbelCScale / max(hi-lo, 1e-8)
	for e := 0; e < k; e++ {
		t.sigma[e] = float64((t.qs[e] - lo) * scale) // rounded: later sums must not fuse with it
	}
	return maxN
}

// improved writes softmax(logit + σ(q̂)) of the edges of node i (after
// completedQ(i)) into t.qs.
func (t *tree) improved(i int32) {
	k := int(t.nodes[i].count)
	m := math.Inf(-1)
	for e := 0; e < k; e++ {
		t.qs[e] = t.logit[e] + t.sigma[e]
		m = max(m, t.qs[e])
	}
	sum := 0.0
	for e := 0; e < k; e++ {
		t.qs[e] = detmath.Exp(t.qs[e] - m)
		sum += t.qs[e]
	}
	for e := 0; e < k; e++ {
		t.qs[e] /= sum
	}
}

// visits returns the visit count of edge e.
func (t *tree) visits(e int32) int32 {
	if c := t.edges[e].child; c >= 0 {
		return t.nodes[c].n
	}
	return 0
}

// gumbelRoot picks the root edge of the next simulation (sequential
// halving), or with final the played one: among the edges with the
// scheduled visit count (final: the most visits), the highest
// g + logit + σ(q̂).
func (t *tree) gumbelRoot(final bool) int32 {
	root := &t.nodes[0]
	first, k := root.first, int(root.count)
	maxN := t.completedQ(0)
	want := maxN
	if !final {
		sum := int32(0)
		for e := 0; e < k; e++ {
			sum += t.visits(first + int32(e))
		}
		if int(sum) < len(t.schedule) {
			want = t.schedule[sum]
		}
	}
	best, bestScore := int32(-1), math.Inf(-1)
	for e := 0; e < k; e++ {
		if t.visits(first+int32(e)) != want {
			continue
		}
		if s := t.gumbels[e] + t.logit[e] + t.sigma[e]; s > bestScore || best < 0 {
			best, bestScore = int32(e), s
		}
	}
	if best < 0 { // past the schedule (it cannot happen within it): the least visited
		best = 0
		for e := 1; e < k; e++ {
			if t.visits(first+int32(e)) < t.visits(first+best) {
				best = int32(e)
			}
		}
	}
	return first + best
}

// gumbelInterior picks the edge of decision node i below the root: argmax
// of π'(a) − N(a) / (1 + Σ_b N(b)).
func (t *tree) gumbelInterior(i int32) int32 {
	t.completedQ(i)
	t.improved(i)
	nd := &t.nodes[i]
	first, k := nd.first, int(nd.count)
	sum := 0.0
	for e := 0; e < k; e++ {
		sum += float64(t.visits(first + int32(e)))
	}
	best, bestScore := first, math.Inf(-1)
	for e := 0; e < k; e++ {
		if s := t.qs[e] - float64(t.visits(first+int32(e)))/(1+sum); s > bestScore {
			best, bestScore = first+int32(e), s
		}
	}
	return best
}

// ErrGumbel is wrapped (with ErrSpec) by the refusal of a Gumbel search
// whose other settings do not apply to it.
var ErrGumbel = errors.New("gumbel search")

// checkGumbel refuses the settings a Gumbel search cannot honour.
func checkGumbel(sp Spec, opt MCTSOptions) error {
	switch {
	case opt.Evaluator == nil:
		return fmt.Errorf("%w: %w: needs an evaluator (a network's priors and values)", ErrSpec, ErrGumbel)
	case sp.Workers > 1:
		return fmt.Errorf("%w: %w: searches one tree (workers=1), got workers=%d", ErrSpec, ErrGumbel, sp.Workers)
	case sp.Temp > 0 || opt.TempMoves > 0:
		return fmt.Errorf("%w: %w: the Gumbel numbers choose the move; temperature (temp %g, temperature moves %d) must be 0", ErrSpec, ErrGumbel, sp.Temp, opt.TempMoves)
	case opt.DirichletAlpha > 0 && opt.DirichletFrac > 0:
		return fmt.Errorf("%w: %w: the Gumbel numbers explore; Dirichlet noise (alpha %g, fraction %g) must be off", ErrSpec, ErrGumbel, opt.DirichletAlpha, opt.DirichletFrac)
	case sp.Time > 0:
		return fmt.Errorf("%w: %w: sequential halving needs its whole simulation budget; a time cap must be 0", ErrSpec, ErrGumbel)
	}
	return nil
}

// actGumbel runs a Gumbel search from s (legal: its legal actions, in the
// root's edge order) and answers the played action, the improved policy,
// the visit counts and the completed Q-values.
func (m *MCTS) actGumbel(s *env.State, legal []env.Action, deadline time.Time) (env.Action, Stats, error) {
	t := &m.trees[0]
	if err := t.search(s, m.spec.N, deadline); err != nil {
		return 0, Stats{}, err
	}
	e := t.gumbelRoot(true) - t.nodes[0].first
	clear(m.q[:])
	for i, a := range legal {
		m.q[a] = t.qs[i] // gumbelRoot's completedQ(0): the completed Q-values
	}
	t.improved(0) // after gumbelRoot's completedQ(0)
	for i, a := range legal {
		m.policy[a] = float32(t.qs[i])
		m.counts[a] = float32(t.visits(t.nodes[0].first + int32(i)))
	}
	st := Stats{Policy: m.policy[:], Visits: m.counts[:], Simulations: t.sims, Q: m.q[:]}
	root := &t.nodes[0]
	if root.n > 0 {
		for p := 0; p < s.Rules().Players; p++ {
			st.Values[p] = root.w[p] / float64(root.n)
		}
		st.Value = st.Values[s.ToMove()]
	}
	return legal[e], st, nil
}
