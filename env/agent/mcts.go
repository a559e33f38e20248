package agent

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/detmath"
)

func init() {
	registry["mcts"] = func(sp Spec, seed uint64) Agent {
		m := &MCTS{spec: sp, trees: make([]tree, sp.Workers)}
		for i := range m.trees {
			m.trees[i].roll.policy = sp.Rollout
			m.trees[i].c = sp.C
			m.trees[i].prior = sp.Prior == PriorGreedy
		}
		m.Reseed(seed)
		return m
	}
}

// MCTS is Monte Carlo tree search with explicit chance nodes.
//
// The tree alternates decision nodes (the seat to move picks an action)
// and chance nodes (a throw is due). At a decision node the search
// follows the action maximising the PUCT score (prior=greedy, the default)
//
//	Q(a) + c × P(a) × sqrt(N) / (1 + n(a))
//
// where Q(a) is the mean outcome of a for the seat to move (an untried
// action's Q is the node's mean value), N the node's visits, n(a) the
// action's, and P = softmax(greedy score / PriorTemp) over the legal
// actions (see Greedy). With prior=none it is plain UCT: every action is
// tried once, in random order, then the search maximises
//
//	Q(a) + c × sqrt(ln N / n(a)).
//
// Each node keeps one summed outcome per
// seat, so with three or four seats every seat maximises its own outcome
// (max-n). At a chance node the search follows the throw whose visits lag
// furthest behind its probability (argmax p(t) × (N+1) − n(t)), so the
// throw probabilities of the rules resolve chance, deterministically and
// with less noise than sampling. A new leaf is valued by one rollout of
// the rollout policy to the end of the game, chance sampled with the
// agent's generator. With an Evaluator (NewMCTS) the priors and the leaf
// values come from it instead (see MCTSOptions).
//
// N simulations are spent per decision (fewer if the time budget runs out),
// split over W independent trees with their own generators when workers=W
// (root parallelism): their root visit counts and values are summed. The
// played action is the most visited (ties: higher value, then lower id), or
// sampled from visits^(1/temp) when temp > 0. Nodes live in pools that are
// reused from decision to decision: a simulation allocates nothing.
type MCTS struct {
	spec   Spec
	trees  []tree
	pick   rng
	legal  [env.NumActions]env.Action
	policy [env.NumActions]float32
	visits [env.NumActions]float64
	counts [env.NumActions]float32
	sums   [env.NumActions][env.MaxPlayers]float64
	q      [env.NumActions]float64
	opt    MCTSOptions
	errs   []error
}

// Name returns the canonical spec, e.g. "mcts:400".
func (m *MCTS) Name() string { return m.spec.String() }

// Reseed restarts every tree's generator and the move picker from seed.
func (m *MCTS) Reseed(seed uint64) {
	m.pick.seed(seed, 0)
	for i := range m.trees {
		m.trees[i].roll.r.seed(seed, uint64(i)+1)
	}
}

// Act returns the action the search plays.
func (m *MCTS) Act(s *env.State) (env.Action, error) {
	a, _, err := m.ActStats(s)
	return a, err
}

// ActStats returns the action and its statistics: Policy is the root visit
// distribution over the 180 actions, Value and Values the root's mean
// outcome for the mover and for every seat, Q every legal action's mean
// outcome for the mover (the root's value for an action never visited),
// Simulations the simulations run.
func (m *MCTS) ActStats(s *env.State) (env.Action, Stats, error) {
	legal, forced, err := opening(s, &m.legal, &m.policy)
	if err != nil {
		return 0, Stats{}, err
	}
	clear(m.counts[:])
	if forced {
		return legal[0], Stats{Policy: m.policy[:]}, nil
	}
	deadline := deadlineAfter(m.spec.Time)
	if m.opt.Gumbel {
		return m.actGumbel(s, legal, deadline)
	}
	if len(m.trees) == 1 {
		if err := m.trees[0].search(s, m.spec.N, deadline); err != nil {
			return 0, Stats{}, err
		}
	} else {
		if len(m.errs) != len(m.trees) {
			m.errs = make([]error, len(m.trees))
		}
		var wg sync.WaitGroup
		for w := range m.trees {
			wg.Add(1)
			go func(w int, deadline time.Time) {
				defer wg.Done()
				m.errs[w] = m.trees[w].search(s, m.share(w), deadline)
			}(w, deadline)
		}
		wg.Wait()
		for _, err := range m.errs {
			if err != nil {
				return 0, Stats{}, err
			}
		}
	}

	// Merge the roots: every tree expanded the root's legal actions in the same order.
	me := s.ToMove()
	clear(m.visits[:len(legal)])
	clear(m.sums[:len(legal)])
	var rootN float64
	var rootW [env.MaxPlayers]float64
	sims := 0
	for w := range m.trees {
		t := &m.trees[w]
		sims += t.sims
		root := &t.nodes[0]
		rootN += float64(root.n)
		for p := range rootW {
			rootW[p] += root.w[p]
		}
		for i := 0; i < int(root.count); i++ {
			e := t.edges[int(root.first)+i]
			if e.child < 0 {
				continue
			}
			c := &t.nodes[e.child]
			m.visits[i] += float64(c.n)
			for p := range c.w {
				m.sums[i][p] += c.w[p]
			}
		}
	}
	temp := m.spec.Temp
	if s.Decisions() < m.opt.TempMoves {
		temp = 1
	}
	best := m.choose(len(legal), me, temp)
	st := Stats{Policy: m.policy[:], Visits: m.counts[:], Simulations: sims}
	total := 0.0
	for i := range legal {
		total += m.visits[i]
	}
	for i, a := range legal {
		m.policy[a] = float32(m.visits[i] / total)
		m.counts[a] = float32(m.visits[i])
	}
	if rootN > 0 {
		for p := 0; p < s.Rules().Players; p++ {
			st.Values[p] = rootW[p] / rootN
		}
		st.Value = st.Values[me]
	}
	clear(m.q[:])
	for i, a := range legal {
		m.q[a] = st.Value
		if m.visits[i] > 0 {
			m.q[a] = m.sums[i][me] / m.visits[i]
		}
	}
	st.Q = m.q[:]
	return legal[best], st, nil
}

// share is the number of simulations of tree w: N split evenly over the trees.
func (m *MCTS) share(w int) int {
	n := m.spec.N / len(m.trees)
	if w < m.spec.N%len(m.trees) {
		n++
	}
	return n
}

// choose picks the index of the played action among the merged root edges.
func (m *MCTS) choose(k, me int, temp float64) int {
	if temp > 0 {
		total := 0.0
		var wts [env.NumActions]float64
		for i := 0; i < k; i++ {
			if m.visits[i] > 0 {
				wts[i] = detmath.Pow(m.visits[i], 1/temp) // not math.Pow: the same bits on every machine
			}
			total += wts[i]
		}
		if total > 0 && !math.IsInf(total, 0) {
			x := float64(m.pick.float64() * total) // rounded: x -= w must not fuse with it (docs/COMPATIBILITY.md, "Seeds")
			for i := 0; i < k; i++ {
				if x < wts[i] {
					return i
				}
				x -= wts[i]
			}
		}
	}
	best := 0
	for i := 1; i < k; i++ {
		vi, vb := m.visits[i], m.visits[best]
		if vi > vb || (vi == vb && vi > 0 && m.sums[i][me]/vi > m.sums[best][me]/vb) {
			best = i
		}
	}
	return best
}

// node is one state of the tree: a decision, a chance node, or the end.
type node struct {
	state env.State
	w     [env.MaxPlayers]float64 // summed outcomes of every seat
	n     int32                   // visits
	first int32                   // index of the first edge; -1 until expanded
	count uint8                   // number of edges
	raw   float32                 // the evaluator's value for the mover (decision nodes, with an evaluator)
}

// edge leads from a node to a child: an action (decision) or a throw (chance).
type edge struct {
	child int32   // node index; -1 until first visited
	move  uint8   // the action or the throw
	prob  float32 // the throw's probability (chance edges) or the prior (decision edges, prior=greedy)
}

// tree is one search tree with its pools; it is reused across decisions.
type tree struct {
	nodes []node
	edges []edge
	path  []int32
	roll  roller
	c     float64                    // exploration constant
	prior bool                       // PUCT with greedy priors instead of UCT
	sims  int                        // simulations run by the last search
	score [env.NumActions]float64    // scratch for the priors of one expansion
	buf   [env.NumActions]env.Action // scratch for legal actions

	eval        Evaluator               // values leaves instead of rollouts (nil: rollouts)
	alpha, frac float64                 // Dirichlet noise at the root (alpha 0: none)
	priors      [env.NumActions]float32 // the evaluator's answer
	stop        *atomic.Bool            // polled every 16 simulations (SetInterrupt); nil: never

	// Gumbel root selection (gumbel.go): on, m, the root's Gumbel numbers
	// (by edge), the visit schedule and scratch by edge.
	gumbel       bool
	gumbelM      int
	gumbels      [env.NumActions]float64
	schedule     []int32
	logit, sigma [env.NumActions]float64
	qs           [env.NumActions]float64
	seen         [env.NumActions]bool
}

// search runs up to sims simulations from root, stopping early once the
// deadline (if not zero) has passed or at the evaluator's first error, and
// failing with ErrInterrupted once the interrupt flag is raised.
func (t *tree) search(root *env.State, sims int, deadline time.Time) error {
	if cap(t.nodes) < sims+1 {
		t.nodes = make([]node, 0, sims+1)
		t.edges = make([]edge, 0, 8*(sims+1))
		t.path = make([]int32, 0, 64)
	}
	t.nodes, t.edges = t.nodes[:0], t.edges[:0]
	t.roll.setRules(root.Rules())
	t.newNode(root)
	t.sims = 0
	if t.eval != nil {
		if _, err := t.evaluate(0); err != nil {
			return err
		}
	} else {
		t.expand(0)
	}
	if t.prior && t.alpha > 0 && t.frac > 0 {
		t.addNoise()
	}
	if t.gumbel {
		t.prepareGumbel(sims)
	}
	for t.sims < sims {
		if t.sims&15 == 0 && t.sims > 0 {
			if t.stop != nil && t.stop.Load() {
				return ErrInterrupted
			}
			if !deadline.IsZero() && time.Now().After(deadline) {
				return nil
			}
		}
		if err := t.simulate(); err != nil {
			return err
		}
		t.sims++
	}
	return nil
}

// newNode appends a node for state s and returns its index.
func (t *tree) newNode(s *env.State) int32 {
	t.nodes = append(t.nodes, node{state: *s, first: -1})
	return int32(len(t.nodes) - 1)
}

// expand gives node i its edges: one per legal action, or one per throw
// with a non-zero probability.
func (t *tree) expand(i int32) {
	nd := &t.nodes[i]
	nd.first = int32(len(t.edges))
	switch nd.state.Phase() {
	case env.PhaseMove:
		legal := nd.state.LegalActions(t.buf[:0])
		if t.prior {
			t.roll.scorer.prepare(&nd.state)
			maxS := math.Inf(-1)
			for i, a := range legal {
				t.score[i] = t.roll.scorer.score(&nd.state, a)
				maxS = max(maxS, t.score[i])
			}
			sum := 0.0
			for i := range legal {
				t.score[i] = detmath.Exp((t.score[i] - maxS) / PriorTemp) // not math.Exp: the same bits on every machine
				sum += t.score[i]
			}
			for i, a := range legal {
				t.edges = append(t.edges, edge{child: -1, move: uint8(a), prob: float32(t.score[i] / sum)})
			}
			break
		}
		for _, a := range legal {
			t.edges = append(t.edges, edge{child: -1, move: uint8(a)})
		}
	case env.PhaseThrow:
		pr := t.roll.rules.Probabilities()
		for th, p := range pr {
			if p > 0 {
				t.edges = append(t.edges, edge{child: -1, move: uint8(th), prob: float32(p)})
			}
		}
	}
	nd.count = uint8(int32(len(t.edges)) - nd.first)
}

// simulate runs one simulation: select down the tree, add one node, value
// it by a rollout (or the evaluator), and add the outcomes to every node on
// the path.
func (t *tree) simulate() error {
	t.path = t.path[:0]
	i := int32(0)
	var v [env.MaxPlayers]float64
	for {
		t.path = append(t.path, i)
		nd := &t.nodes[i]
		if nd.state.IsOver() {
			v = outcomes(&nd.state)
			break
		}
		if nd.first < 0 {
			if t.eval != nil {
				var err error
				if v, err = t.leaf(i); err != nil {
					return err
				}
				break
			}
			if nd.n == 0 {
				c := nd.state
				v = t.roll.play(&c)
				break
			}
			t.expand(i)
		}
		e := t.selectEdge(i)
		child := t.edges[e].child
		if child < 0 {
			child = t.addChild(i, e)
			t.path = append(t.path, child)
			if t.eval != nil {
				var err error
				if v, err = t.leaf(child); err != nil {
					return err
				}
				break
			}
			c := t.nodes[child].state
			v = t.roll.play(&c)
			break
		}
		i = child
	}
	for _, j := range t.path {
		nd := &t.nodes[j]
		nd.n++
		for p := range v {
			nd.w[p] += v[p]
		}
	}
	return nil
}

// leaf values the new node j (already on the path) with the evaluator: a
// chance node is resolved throw by throw (each new node joins the path)
// down to a decision, which the evaluator values, or the end of the game.
func (t *tree) leaf(j int32) ([env.MaxPlayers]float64, error) {
	for {
		nd := &t.nodes[j]
		switch {
		case nd.state.IsOver():
			return outcomes(&nd.state), nil
		case nd.state.Phase() == env.PhaseMove:
			return t.evaluate(j)
		}
		if nd.first < 0 {
			t.expand(j)
		}
		e := t.selectEdge(j)
		c := t.edges[e].child
		if c < 0 {
			c = t.addChild(j, e)
		}
		t.path = append(t.path, c)
		j = c
	}
}

// addChild creates the node that edge e of node i leads to.
func (t *tree) addChild(i int32, e int32) int32 {
	s := t.nodes[i].state
	mv := t.edges[e].move
	if s.Phase() == env.PhaseThrow {
		_, _ = s.ApplyThrow(env.Throw(mv)) // fails only on a pool of 255 equal results
	} else {
		_, _ = s.Apply(env.Action(mv)) // the action came from LegalActions
	}
	c := t.newNode(&s)
	t.edges[e].child = c
	return c
}

// selectEdge picks the edge to follow from expanded node i.
func (t *tree) selectEdge(i int32) int32 {
	nd := &t.nodes[i]
	first, k := nd.first, int32(nd.count)
	if nd.state.Phase() == env.PhaseThrow {
		best, bestGap := first, math.Inf(-1)
		total := float64(nd.n) + 1
		for e := first; e < first+k; e++ {
			ed := &t.edges[e]
			n := 0.0
			if ed.child >= 0 {
				n = float64(t.nodes[ed.child].n)
			}
			// float64(p*total) rounds the product: arm64 would fuse p*total - n
			// into one FMA and could pick another throw (docs/COMPATIBILITY.md, "Seeds").
			if gap := float64(float64(ed.prob)*total) - n; gap > bestGap {
				best, bestGap = e, gap
			}
		}
		return best
	}
	if t.gumbel {
		if i == 0 {
			return t.gumbelRoot(false)
		}
		return t.gumbelInterior(i)
	}
	if t.prior {
		me := nd.state.ToMove()
		sqrtN := math.Sqrt(float64(nd.n))
		fpu := 0.0 // first-play urgency: an untried action starts at the node's mean value
		if nd.n > 0 {
			fpu = nd.w[me] / float64(nd.n)
		}
		best, bestScore := first, math.Inf(-1)
		for e := first; e < first+k; e++ {
			ed := &t.edges[e]
			q, n := fpu, 0.0
			if ed.child >= 0 {
				c := &t.nodes[ed.child]
				n = float64(c.n)
				q = c.w[me] / n
			}
			if score := q + t.c*float64(ed.prob)*sqrtN/(1+n); score > bestScore {
				best, bestScore = e, score
			}
		}
		return best
	}
	untried := 0
	for e := first; e < first+k; e++ {
		if t.edges[e].child < 0 {
			untried++
		}
	}
	if untried > 0 {
		j := t.roll.r.intn(untried)
		for e := first; e < first+k; e++ {
			if t.edges[e].child < 0 {
				if j == 0 {
					return e
				}
				j--
			}
		}
	}
	me := nd.state.ToMove()
	logN := detmath.Log(float64(nd.n)) // not math.Log: the same bits on every machine
	best, bestScore := first, math.Inf(-1)
	for e := first; e < first+k; e++ {
		c := &t.nodes[t.edges[e].child]
		n := float64(c.n)
		// float64(c×√…) rounds the product: arm64 and GOAMD64=v3 would fuse it
		// into the sum (docs/COMPATIBILITY.md, "Seeds").
		if score := c.w[me]/n + float64(t.c*math.Sqrt(logN/n)); score > bestScore {
			best, bestScore = e, score
		}
	}
	return best
}
