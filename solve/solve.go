package solve

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/yutenv/yutenv/env"
)

// Errors callers branch on. Every error of this package wraps one of them.
var (
	// ErrUnsupported: the rules are not a variant this package solves
	// (players other than 2, end=rank, skip obstacles, too many pieces).
	ErrUnsupported = errors.New("rules not supported by the solver")
	// ErrTooBig: the state table would need more memory than Options.MaxBytes allows.
	ErrTooBig = errors.New("state table too big")
	// ErrCorrupt: a table file (or a key in it) is damaged or not a table.
	ErrCorrupt = errors.New("damaged solved table")
	// ErrVersion: a table file of a format version this build does not read.
	ErrVersion = errors.New("unsupported solved table version")
	// ErrRules: a table was asked about a game of other rules than it was solved for.
	ErrRules = errors.New("table solved for other rules")
	// ErrUnknownState: a state the table does not hold (one that cannot
	// arise from the start under the table's pool cap).
	ErrUnknownState = errors.New("state not in the solved table")
	// ErrNotConverged: value iteration stopped at Options.MaxIter with the residual above Options.Tol.
	ErrNotConverged = errors.New("value iteration did not converge")
)

// Defaults of Options.
const (
	// DefaultMaxBytes bounds the memory of a solve: 2 GiB.
	DefaultMaxBytes = 2 << 30
	// DefaultTol is the Bellman residual at which value iteration stops.
	DefaultTol = 1e-13
	// DefaultMaxIter bounds the sweeps of value iteration.
	DefaultMaxIter = 100_000
	// MaxPoolCap is the largest Options.PoolCap (a key holds counts up to 15).
	MaxPoolCap = maxPool - 1
	// DefaultTruncation is the bound DefaultPoolCap aims for: the chance
	// that one turn reaches the cap.
	DefaultTruncation = 1e-12
)

// Options tune Solve. The zero value means the defaults.
type Options struct {
	// MaxBytes bounds the memory of the solve's tables; a variant that
	// would need more is refused with ErrTooBig before the memory is
	// taken. 0 means DefaultMaxBytes.
	MaxBytes int64
	// Tol is the Bellman residual at which value iteration stops; 0 means DefaultTol.
	Tol float64
	// MaxIter bounds the sweeps; 0 means DefaultMaxIter.
	MaxIter int
	// PoolCap bounds the pool under pool=on, where a turn's yut and mo
	// chain without limit: a chance node whose pool already holds PoolCap
	// results draws only the results that end the chain (back-do, do,
	// gae, geol), their probabilities scaled to sum to 1. The values
	// differ from the uncapped game's by less than the chance of such a
	// turn, (P(yut)+P(mo))^PoolCap a turn. 0 means DefaultPoolCap(rules);
	// at most MaxPoolCap. Rules with pool=off never pool more than one result.
	PoolCap int
	// MachineBytes is the memory of the machine: a variant whose estimate
	// exceeds it is refused with ErrTooBig whatever MaxBytes allows. 0
	// means the machine's total physical memory (MachineBytes), the check
	// being skipped where that is not known; negative skips it.
	MachineBytes int64
	// Progress, if not nil, is called now and then during the solve.
	Progress func(Progress)

	// listSureWins lists the sure wins (surewin.go) like any state, as
	// tables of format version 1 did: the tests compare both solves.
	listSureWins bool
}

// Progress reports how far a solve has got.
type Progress struct {
	// Stage is "enumerate" (listing the reachable states) or "iterate" (value iteration).
	Stage string
	// States is the number of states listed so far (enumerate) or in all (iterate).
	States int
	// Expanded is the number of states whose successors are listed (enumerate).
	Expanded int
	// Iteration is the sweeps done (iterate), Residual the last sweep's largest change.
	Iteration int
	Residual  float64
	// Done marks the stage's last report: every state listed, or the
	// last sweep done.
	Done bool
}

// DefaultPoolCap returns the pool cap Solve uses for rules r: the smallest
// cap at which a turn reaches it with probability below DefaultTruncation,
// at most MaxPoolCap.
func DefaultPoolCap(r env.Rules) int {
	pr := r.Probabilities()
	q := pr[env.Yut] + pr[env.Mo]
	c, p := 1, q
	for p >= DefaultTruncation && c < MaxPoolCap {
		c++
		p *= q
	}
	return c
}

// Truncation returns the chance that one turn of rules r reaches pool cap
// c, which bounds how far a solved value may differ from the uncapped game's
// per turn: (P(yut)+P(mo))^c, or 0 under pool=off.
func Truncation(r env.Rules, c int) float64 {
	if r.Pool == env.SwitchOff {
		return 0
	}
	pr := r.Probabilities()
	return math.Pow(pr[env.Yut]+pr[env.Mo], float64(c))
}

// Check returns nil if Solve handles rules r, or an error wrapping
// ErrUnsupported that says why not.
func Check(r env.Rules) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	switch {
	case r.Players != 2:
		return fmt.Errorf("%w: players=%d (the solver solves two-seat games)", ErrUnsupported, r.Players)
	case r.End != env.EndFirst:
		return fmt.Errorf("%w: end=%s (the solver solves end=first)", ErrUnsupported, r.End)
	case r.Pieces > MaxPieces:
		return fmt.Errorf("%w: pieces=%d (a state key holds at most %d pieces a seat)", ErrUnsupported, r.Pieces, MaxPieces)
	}
	for _, o := range r.Obstacles {
		if o == env.ObstacleSkip {
			return fmt.Errorf("%w: skip obstacles (missed turns are not part of a state key)", ErrUnsupported)
		}
	}
	return nil
}

// Node kinds of the graph.
const (
	kindMove   = 0 // a decision: the best successor
	kindChance = 1 // a chance node: every throw of non-zero probability
	kindCapped = 2 // a chance node at the pool cap: the throws that end the chain
	kindFixed  = 3 // a game's end (the two pseudo-states)
)

// The two pseudo-states that stand for the end of the game, from the
// point of view of the mover of the state that reaches it.
const (
	lossIndex = 0
	winIndex  = 1
	flipBit   = 1 << 31 // an edge to a state whose mover is the other seat
)

// graph is the reachable state space: keys, node kinds and successors (CSR).
type graph struct {
	c      *codec
	keys   []uint64
	kind   []uint8
	off    []uint32 // edges of state i: edges[off[i]:off[i+1]]
	edges  []uint32 // successor index, flipBit when the mover changes
	slots  []uint32 // open-addressing hash index: state index + 1, 0 empty
	mask   uint64
	shift  uint
	pFull  []float64 // probabilities of a chance node's edges
	tFull  []env.Throw
	pCap   []float64 // of a capped chance node's edges
	tCap   []env.Throw
	cap    int
	budget int64
	// listSureWins is Options.listSureWins.
	listSureWins bool
}

// bytes returns the memory the graph holds now plus its values to come.
func (g *graph) bytes() int64 {
	return int64(cap(g.keys))*8 + int64(cap(g.kind)) + int64(cap(g.off))*4 + int64(cap(g.edges))*4 +
		int64(len(g.slots))*4 + int64(len(g.keys))*8
}

// hash returns the slot of key in a table of 2^(64-shift) slots.
func (g *graph) hash(key uint64) uint64 { return (key * 0x9e3779b97f4a7c15) >> g.shift }

// find returns the index of key if it is listed.
func (g *graph) find(key uint64) (uint32, bool) {
	for i := g.hash(key); ; i = (i + 1) & g.mask {
		v := g.slots[i]
		if v == 0 {
			return 0, false
		}
		if g.keys[v-1] == key {
			return v - 1, true
		}
	}
}

// index returns the index of key, adding it as a new state if it is new.
func (g *graph) index(key uint64) uint32 {
	for i := g.hash(key); ; i = (i + 1) & g.mask {
		v := g.slots[i]
		if v == 0 {
			n := uint32(len(g.keys))
			g.slots[i] = n + 1
			g.keys = append(g.keys, key)
			if uint64(len(g.keys))*2 > uint64(len(g.slots)) {
				g.grow()
			}
			return n
		}
		if g.keys[v-1] == key {
			return v - 1
		}
	}
}

// grow doubles the hash index.
func (g *graph) grow() {
	n := len(g.slots) * 2
	if n == 0 {
		n = 1 << 16
	}
	g.slots = make([]uint32, n)
	g.mask = uint64(n - 1)
	g.shift = uint(64 - bitsLen(uint64(n)-1))
	for i, k := range g.keys {
		if i < 2 {
			continue // the pseudo-states are not in the index
		}
		j := g.hash(k)
		for g.slots[j] != 0 {
			j = (j + 1) & g.mask
		}
		g.slots[j] = uint32(i + 1)
	}
}

// bitsLen is the number of bits needed for x.
func bitsLen(x uint64) int {
	n := 0
	for x != 0 {
		n++
		x >>= 1
	}
	return n
}

// edge returns the edge from s (a state of the table, mover 0) to its
// successor c.
func (g *graph) edge(s, c *env.State) (uint32, error) {
	if c.IsOver() {
		if c.Outcome(s.ToMove()) > 0 {
			return winIndex, nil
		}
		return lossIndex, nil
	}
	flip := uint32(0)
	if c.ToMove() != s.ToMove() {
		flip = flipBit
	}
	key, keyed := g.c.encode(c)
	if keyed {
		if e, listed := g.find(key); listed { // listed, so not a sure win: most edges end here
			return e | flip, nil
		}
	}
	if !g.listSureWins && g.c.sureWin(c) { // never listed: its value is 1 for its mover
		if flip != 0 {
			return lossIndex, nil
		}
		return winIndex, nil
	}
	if !keyed {
		return 0, fmt.Errorf("%w: a pool of more than %d of one result (pool cap %d)", ErrUnsupported, maxPool, g.cap)
	}
	return g.index(key) | flip, nil
}

// enumerate lists every state reachable from the start and its successors.
func (g *graph) enumerate(progress func(Progress)) error {
	s0, err := env.New(g.c.rules, 0, 0)
	if err != nil {
		return err
	}
	key, _ := g.c.encode(&s0)
	g.keys = append(g.keys, math.MaxUint64, math.MaxUint64-1) // the pseudo-states
	g.kind = append(g.kind, kindFixed, kindFixed)
	g.off = append(g.off, 0, 0, 0)
	g.grow()
	g.index(key)
	var stacks [env.NumStations]env.Stack
	var legal [env.NumActions]env.Action
	var ev env.Event
	last := time.Now()
	for i := 2; i < len(g.keys); i++ {
		s, err := g.c.state(g.keys[i], stacks[:0])
		if err != nil {
			return err
		}
		if s.IsChance() {
			k, ts := uint8(kindChance), g.tFull
			if capped(g.c.rules, s.PoolSize(), g.cap) {
				k, ts = kindCapped, g.tCap
			}
			g.kind = append(g.kind, k)
			for _, t := range ts {
				c := s
				if err := c.ApplyThrowTo(t, &ev); err != nil {
					return fmt.Errorf("state %#x: throw %s: %w", g.keys[i], t, err)
				}
				e, err := g.edge(&s, &c)
				if err != nil {
					return err
				}
				g.edges = append(g.edges, e)
			}
		} else {
			g.kind = append(g.kind, kindMove)
			for _, a := range s.LegalActions(legal[:0]) {
				c := s
				if err := c.ApplyTo(a, &ev); err != nil {
					return fmt.Errorf("state %#x: action %s: %w", g.keys[i], a, err)
				}
				e, err := g.edge(&s, &c)
				if err != nil {
					return err
				}
				g.edges = append(g.edges, e)
			}
		}
		if len(g.edges) >= math.MaxUint32 || len(g.keys) >= flipBit {
			return fmt.Errorf("%w: more than %d states or edges", ErrTooBig, int64(flipBit))
		}
		g.off = append(g.off, uint32(len(g.edges)))
		if i&0xfff == 0 {
			if b := g.bytes(); b > g.budget {
				return fmt.Errorf("%w: rules %s need more than %s (%d states listed, %d still to expand), over the bound of %s",
					ErrTooBig, g.c.rules, FormatBytes(b), len(g.keys), len(g.keys)-i, FormatBytes(g.budget))
			}
			if progress != nil && time.Since(last) > 200*time.Millisecond {
				last = time.Now()
				progress(Progress{Stage: "enumerate", States: len(g.keys), Expanded: i})
			}
		}
	}
	if progress != nil {
		progress(Progress{Stage: "enumerate", States: len(g.keys), Expanded: len(g.keys), Done: true})
	}
	g.slots = nil // the index is not needed any more
	return nil
}

// capped reports whether a chance node of rules r whose pool holds
// poolSize results draws only the throws that end the chain, at pool cap
// poolCap (Options.PoolCap).
func capped(r env.Rules, poolSize, poolCap int) bool {
	return r.Pool == env.SwitchOn && poolSize >= poolCap
}

// outcomes sets the throws of full and capped chance nodes and their probabilities.
func (g *graph) outcomes() {
	pr := g.c.rules.Probabilities()
	capSum := 0.0
	for t := range env.Throw(env.NumThrows) {
		if pr[t] == 0 {
			continue
		}
		g.tFull, g.pFull = append(g.tFull, t), append(g.pFull, pr[t])
		if !t.Bonus() {
			g.tCap, g.pCap = append(g.tCap, t), append(g.pCap, pr[t])
			capSum += pr[t]
		}
	}
	for i := range g.pCap {
		g.pCap[i] /= capSum
	}
}

// Solve computes the optimal values of every state reachable under rules r
// (which Check must accept) by value iteration, and returns them as a
// Table. It refuses a variant whose tables would exceed opt.MaxBytes with
// an error wrapping ErrTooBig, before taking that memory.
func Solve(r env.Rules, opt Options) (*Table, error) {
	if err := Check(r); err != nil {
		return nil, err
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.Tol <= 0 {
		opt.Tol = DefaultTol
	}
	if opt.MaxIter <= 0 {
		opt.MaxIter = DefaultMaxIter
	}
	switch {
	case opt.PoolCap == 0:
		opt.PoolCap = DefaultPoolCap(r)
	case opt.PoolCap < 1 || opt.PoolCap > MaxPoolCap:
		return nil, fmt.Errorf("%w: pool cap %d out of range 1..%d", ErrUnsupported, opt.PoolCap, MaxPoolCap)
	}
	if r.Pool == env.SwitchOff {
		opt.PoolCap = 1 // never reached: without a pool a chance node's pool is empty
	}
	est, err := EstimateBytes(r, opt.PoolCap)
	if err != nil {
		return nil, err
	}
	if est > opt.MaxBytes {
		return nil, fmt.Errorf("%w: rules %s need about %s (an estimate from the ways to place the pieces), over the bound of %s",
			ErrTooBig, r, FormatBytes(est), FormatBytes(opt.MaxBytes))
	}
	if err := fitsMachine(r, est, opt.MachineBytes); err != nil {
		return nil, err
	}
	c, err := newCodec(r)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	g := &graph{c: c, cap: opt.PoolCap, budget: opt.MaxBytes, listSureWins: opt.listSureWins}
	g.outcomes()
	if err := g.enumerate(opt.Progress); err != nil {
		return nil, err
	}
	enumTime := time.Since(start)
	v, iters, res := g.iterate(opt)
	if res > opt.Tol {
		return nil, fmt.Errorf("%w: residual %.3g after %d sweeps (tolerance %.3g)", ErrNotConverged, res, iters, opt.Tol)
	}
	t := &Table{c: c, PoolCap: opt.PoolCap, Iterations: iters, EnumerateTime: enumTime, SolveTime: time.Since(start), Edges: len(g.edges)}
	for i, x := range v { // sums of probabilities may round a hair past 1
		v[i] = min(max(x, 0), 1)
	}
	t.Residual = g.residual(v)
	g.edges, g.off, g.kind = nil, nil, nil
	t.setSorted(g.keys[2:], v[2:])
	return t, nil
}

// iterate runs Gauss-Seidel value iteration, sweeping the states in the
// reverse of the order they were found (successors mostly come later, so
// most values are final after one sweep), until a sweep changes no value
// by more than opt.Tol. It returns the values, the sweeps and the last
// sweep's largest change.
func (g *graph) iterate(opt Options) ([]float64, int, float64) {
	n := len(g.keys)
	v := make([]float64, n)
	for i := range v {
		v[i] = 0.5
	}
	v[lossIndex], v[winIndex] = 0, 1
	res := math.Inf(1)
	it := 0
	last := time.Now()
	for it < opt.MaxIter && res > opt.Tol {
		it++
		res = g.sweep(v, true)
		if opt.Progress != nil && time.Since(last) > 200*time.Millisecond {
			last = time.Now()
			opt.Progress(Progress{Stage: "iterate", States: n, Iteration: it, Residual: res})
		}
	}
	if opt.Progress != nil {
		opt.Progress(Progress{Stage: "iterate", States: n, Iteration: it, Residual: res, Done: true})
	}
	return v, it, res
}

// backup returns the Bellman backup of state i under values v.
func (g *graph) backup(v []float64, i int) float64 {
	es := g.edges[g.off[i]:g.off[i+1]]
	switch g.kind[i] {
	case kindMove:
		best := 0.0
		for _, e := range es {
			x := v[e&^flipBit]
			if e&flipBit != 0 {
				x = 1 - x
			}
			best = max(best, x)
		}
		return best
	case kindFixed:
		return v[i]
	}
	ps := g.pFull
	if g.kind[i] == kindCapped {
		ps = g.pCap
	}
	ps = ps[:len(es)]
	sum := 0.0
	for k, e := range es {
		x := v[e&^flipBit]
		if e&flipBit != 0 {
			x = 1 - x
		}
		sum += ps[k] * x
	}
	return sum
}

// sweep backs up every state once, last found first, in place when
// update is set, and returns the largest change.
func (g *graph) sweep(v []float64, update bool) float64 {
	res := 0.0
	for i := len(g.keys) - 1; i >= 2; i-- {
		x := g.backup(v, i)
		res = max(res, math.Abs(x-v[i]))
		if update {
			v[i] = x
		}
	}
	return res
}

// residual returns the Bellman residual of v: the largest |T v - v| over the states.
func (g *graph) residual(v []float64) float64 { return g.sweep(v, false) }

// setSorted fills the table with keys and values sorted by key.
func (t *Table) setSorted(keys []uint64, vals []float64) {
	type kv struct {
		k uint64
		v float64
	}
	pairs := make([]kv, len(keys))
	for i := range keys {
		pairs[i] = kv{keys[i], vals[i]}
	}
	slices.SortFunc(pairs, func(a, b kv) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return 0
	})
	t.keys = make([]uint64, len(pairs))
	t.values = make([]float64, len(pairs))
	for i, p := range pairs {
		t.keys[i], t.values[i] = p.k, p.v
	}
}
