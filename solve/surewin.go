package solve

import (
	"math/bits"

	"github.com/yutenv/yutenv/env"
)

// A sure win is a state whose mover can finish all its pieces with the
// throws its pool already holds, whatever is thrown later: its value is
// exactly 1. The solver lists no sure win (an edge to one goes straight
// to the win), and a table answers 1 for one it does not hold. This is
// what makes the pool tractable: a turn's yut and mo chain on, and every
// longer pool meets every placing of the pieces, but a pool long enough
// to matter is almost always a sure win.
//
// The test is sound, not complete: it searches the mover's own forward
// moves only (no back-do, ignoring that a capture earns more throws),
// within a fixed budget of moves, so a state it calls a sure win is one,
// and a sure win it misses is merely listed and solved like any other.
// Further throws never spoil a sure win: the mover chooses the order in
// which its pool is spent, and the game ends when its last piece finishes.

// winSearchBudget bounds the moves one sure-win test may try.
const winSearchBudget = 256

// Results of a move in winRules.next and winRules.enter.
const (
	winFinish  = -2 // the stack leaves the board
	winInvalid = -1 // the throw cannot move it
)

// winRules holds what the sure-win test needs of a variant: where every
// forward throw takes a stack from every place, and a lower bound on the
// steps each place still needs to finish.
type winRules struct {
	on       bool // false: rules the test does not apply to (obstacles)
	pieces   int
	next     [][env.NumThrows]int16 // place, winFinish or winInvalid
	station  []env.Station          // of each place: stacks on one station join, whatever their routes
	enter    [env.NumThrows]int16
	dist     []int // fewest forward steps from a place to finishing
	distHand int
}

// newWinRules returns the sure-win tables of codec c's rules.
func newWinRules(c *codec) winRules {
	r := c.rules
	w := winRules{pieces: r.Pieces, on: r.Obstacles.IsZero()}
	if !w.on {
		return w
	}
	target := func(to env.Station, rt env.Route, finished, ok bool) int16 {
		switch {
		case !ok:
			return winInvalid
		case finished:
			return winFinish
		case c.index[to][rt] < 0:
			return winInvalid // not a place a stack may stand on: never moved to by the search
		}
		return int16(c.index[to][rt])
	}
	w.next = make([][env.NumThrows]int16, len(c.places))
	w.station = make([]env.Station, len(c.places))
	for i, p := range c.places {
		w.station[i] = p.st
		for t := range env.Throw(env.NumThrows) {
			w.next[i][t] = winInvalid
			if t != env.BackDo {
				w.next[i][t] = target(env.Destination(r, p.st, p.rt, t))
			}
		}
	}
	for t := range env.Throw(env.NumThrows) {
		w.enter[t] = winInvalid
		if t != env.BackDo {
			w.enter[t] = target(env.EntryDestination(r, t))
		}
	}
	// Fewest steps to finish, by relaxation: forward moves only, so every
	// value only falls and the loop ends.
	const far = 1 << 20
	w.dist = make([]int, len(c.places))
	for i := range w.dist {
		w.dist[i] = far
	}
	via := func(n int16, t env.Throw) int {
		switch n {
		case winFinish:
			return t.Steps()
		case winInvalid:
			return far
		}
		return t.Steps() + w.dist[n]
	}
	for changed := true; changed; {
		changed = false
		for i := range w.next {
			for t := env.Do; t < env.NumThrows; t++ {
				if d := via(w.next[i][t], t); d < w.dist[i] {
					w.dist[i], changed = d, true
				}
			}
		}
	}
	w.distHand = far
	for t := env.Do; t < env.NumThrows; t++ {
		w.distHand = min(w.distHand, via(w.enter[t], t))
	}
	return w
}

// ownStacks is the mover's side of a position for the search: pieces in
// hand, finished, and its stacks (place, height).
type ownStacks struct {
	hand, finished int
	n              int
	place          [MaxPieces]int16
	height         [MaxPieces]int
}

// sureWin reports whether the mover of s can finish all its pieces with
// the throws of its pool alone (see the comment at the top of this file).
func (c *codec) sureWin(s *env.State) bool {
	w := &c.win
	if !w.on || s.PoolSize() == 0 || s.IsOver() {
		return false
	}
	me := s.ToMove()
	p := ownStacks{hand: s.Hand(me), finished: s.Finished(me)}
	for b := s.Occupied(me); b != 0; b &= b - 1 {
		st := env.Station(bits.TrailingZeros32(b))
		_, h, rt, _ := s.StackAt(st)
		pl := c.index[st][rt]
		if pl < 0 || p.n == MaxPieces {
			return false
		}
		p.place[p.n], p.height[p.n] = int16(pl), h
		p.n++
	}
	p.sort()
	pool := s.Pool()
	budget := winSearchBudget
	return w.search(&p, &pool, &budget)
}

// search reports whether the pieces p can all finish with the forward
// throws of pool, trying big throws first, within budget moves.
func (w *winRules) search(p *ownStacks, pool *[env.NumThrows]uint8, budget *int) bool {
	if p.finished == w.pieces {
		return true
	}
	steps, need := 0, 0
	for t := env.Do; t < env.NumThrows; t++ {
		steps += int(pool[t]) * t.Steps()
	}
	if p.hand > 0 {
		need = w.distHand
	}
	for i := range p.n {
		need = max(need, w.dist[p.place[i]])
	}
	if steps < need {
		return false
	}
	for t := env.Mo; t >= env.Do; t-- {
		if pool[t] == 0 {
			continue
		}
		pool[t]--
		for i := -1; i < p.n; i++ {
			if *budget <= 0 {
				pool[t]++
				return false
			}
			q, ok := w.move(p, i, t)
			if !ok {
				continue
			}
			*budget--
			if w.search(&q, pool, budget) {
				pool[t]++
				return true
			}
		}
		pool[t]++
	}
	return false
}

// move returns p after its stack i (-1: a piece from hand) moves with
// throw t, and false if it cannot.
func (w *winRules) move(p *ownStacks, i int, t env.Throw) (ownStacks, bool) {
	q := *p
	var to int16
	h := 1
	if i < 0 {
		if p.hand == 0 {
			return q, false
		}
		to = w.enter[t]
		q.hand--
	} else {
		to, h = w.next[p.place[i]][t], p.height[i]
		q.n--
		q.place[i], q.height[i] = q.place[q.n], q.height[q.n]
	}
	switch to {
	case winInvalid:
		return q, false
	case winFinish:
		q.finished += h
		return q, true
	}
	for j := range q.n {
		if w.station[q.place[j]] == w.station[to] { // joins its own stack, which takes the mover's route
			q.place[j] = to
			q.height[j] += h
			q.sort()
			return q, true
		}
	}
	q.place[q.n], q.height[q.n] = to, h
	q.n++
	q.sort()
	return q, true
}

// sort orders the stacks by place, so that a position's search tries its
// moves in one order however it was reached: the test of a state the
// search moved to then finds the same plan within the same budget, and a
// sure win's best move keeps it a sure win.
func (p *ownStacks) sort() {
	for i := 1; i < p.n; i++ {
		for j := i; j > 0 && p.place[j] < p.place[j-1]; j-- {
			p.place[j], p.place[j-1] = p.place[j-1], p.place[j]
			p.height[j], p.height[j-1] = p.height[j-1], p.height[j]
		}
	}
}
