package env

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
)

// Phase says what a state is waiting for.
type Phase uint8

const (
	// PhaseThrow is a chance node: the seat to move must throw (again).
	PhaseThrow Phase = iota
	// PhaseMove is a decision: the seat to move picks a legal action.
	PhaseMove
	// PhaseOver: the game has ended.
	PhaseOver
)

var phaseNames = []string{"throw", "move", "over"}

// String returns "throw", "move" or "over".
func (p Phase) String() string { return enumString(phaseNames, uint8(p), "Phase") }

// AnySeat asks New to draw the starting seat from the game's seed.
const AnySeat = -1

// seedStream is the fixed PCG stream constant; the game seed is the other half.
const seedStream = 0x5975_7420_4e6f_7269 // "Yut Nori"

// cell is one station of the board: empty when height is 0.
type cell struct {
	height uint8
	owner  uint8
	route  Route
}

// State is a complete game position, including the rules and the random
// number generator. It is a value: assigning it copies it, and a copy plays on
// independently and identically. The zero State is not usable; build one with
// New or FromPosition.
type State struct {
	rules     Rules
	layout    uint8 // index of the board's move tables (layouts)
	thr       [NumThrows]uint64
	rng       rand.PCG
	cells     [NumStations]cell
	occ       [MaxPlayers]uint32 // bit s set: the seat has a stack on station s
	hand      [MaxPlayers]uint8
	finished  [MaxPlayers]uint8
	place     [MaxPlayers]uint8 // 1-based final place, 0 while still playing
	missed    [MaxPlayers]uint8 // turns the seat will miss (skip obstacles)
	pool      [NumThrows]uint8
	poolSize  uint16
	seat      uint8
	phase     Phase
	ranked    uint8
	start     uint8
	decisions uint32
	throws    uint32
}

// validRules holds the rules New validated last: the games of one rule set
// (a playout loop, an env's resets) are checked once, not once a game.
var validRules atomic.Pointer[Rules]

// checkRules is r.Validate, remembered for the last rules that passed.
func checkRules(r Rules) error {
	if p := validRules.Load(); p != nil && *p == r {
		return nil
	}
	if err := r.Validate(); err != nil {
		return err
	}
	v := r
	validRules.Store(&v)
	return nil
}

// New starts a game under rules r with the given seed. start names the first
// seat, or is AnySeat to draw it from the seed. The state begins at a chance
// node: the first seat must throw.
func New(r Rules, seed uint64, start int) (State, error) {
	var s State
	if err := checkRules(r); err != nil {
		return s, err
	}
	if start != AnySeat && (start < 0 || start >= r.Players) {
		return s, fmt.Errorf("%w: start seat %d out of range 0..%d", ErrBadInput, start, r.Players-1)
	}
	s.rules = r
	s.layout = layoutIndex(r)
	s.thr = throwThresholds(r.Probabilities())
	s.rng = *rand.NewPCG(seed, seedStream)
	for i := 0; i < r.Players; i++ {
		s.hand[i] = uint8(r.Pieces)
	}
	if start == AnySeat {
		hi, _ := bits.Mul64(s.rng.Uint64(), uint64(r.Players))
		start = int(hi)
	}
	s.seat = uint8(start)
	s.start = uint8(start)
	s.phase = PhaseThrow
	return s, nil
}

// Rules returns the game's rules.
func (s *State) Rules() Rules { return s.rules }

// Phase returns what the state is waiting for.
func (s *State) Phase() Phase { return s.phase }

// IsChance reports whether the state is a chance node (a throw is due).
func (s *State) IsChance() bool { return s.phase == PhaseThrow }

// IsOver reports whether the game has ended.
func (s *State) IsOver() bool { return s.phase == PhaseOver }

// ToMove returns the seat to throw or move (after the game ends, the seat that moved last).
func (s *State) ToMove() int { return int(s.seat) }

// StartSeat returns the seat that began the game.
func (s *State) StartSeat() int { return int(s.start) }

// Pool returns how many of each throw result wait in the pool of the seat to move.
func (s *State) Pool() [NumThrows]uint8 { return s.pool }

// PoolSize returns the number of results in the pool.
func (s *State) PoolSize() int { return int(s.poolSize) }

// Hand returns how many pieces of seat wait in hand.
func (s *State) Hand(seat int) int { return int(s.hand[seat]) }

// Finished returns how many pieces of seat have finished.
func (s *State) Finished(seat int) int { return int(s.finished[seat]) }

// MissedTurns returns how many of its next turns seat will miss (it landed on skip obstacles).
func (s *State) MissedTurns(seat int) int { return int(s.missed[seat]) }

// Place returns seat's final place (1 = winner), or 0 while it still plays.
func (s *State) Place(seat int) int { return int(s.place[seat]) }

// Winner returns the seat that finished first, or -1 if none has yet.
func (s *State) Winner() int {
	for i := 0; i < s.rules.Players; i++ {
		if s.place[i] == 1 {
			return i
		}
	}
	return -1
}

// Decisions returns the number of actions applied so far.
func (s *State) Decisions() int { return int(s.decisions) }

// Throws returns the number of throws made so far.
func (s *State) Throws() int { return int(s.throws) }

// StackAt returns the stack on station st: its owner, height and route, and
// ok = false if the station is empty.
func (s *State) StackAt(st Station) (seat, height int, route Route, ok bool) {
	if int(st) >= NumStations {
		return 0, 0, 0, false
	}
	c := s.cells[st]
	if c.height == 0 {
		return 0, 0, 0, false
	}
	return int(c.owner), int(c.height), c.route, true
}

// Occupied returns a bit set of the stations holding seat's stacks (bit s for station s).
func (s *State) Occupied(seat int) uint32 { return s.occ[seat] }

// Outcome returns seat's result in [-1, 1] once the game is over (0 before):
// in a two-seat game +1 for the winner and -1 for the loser; with more seats
// places are spread evenly from +1 (first) to -1 (last), and seats that were
// never ranked (the game ended at the first finisher) share the loss: -1.
func (s *State) Outcome(seat int) float64 {
	if s.phase != PhaseOver {
		return 0
	}
	p := int(s.place[seat])
	n := s.rules.Players
	if p == 0 {
		return -1
	}
	if s.rules.End == EndFirst {
		if p == 1 {
			return 1
		}
		return -1
	}
	return 1 - 2*float64(p-1)/float64(n-1)
}

// tables returns the move tables of the state's board and finish mode.
func (s *State) tables() *layoutTables { return &layouts[s.layout] }

// canEnter reports whether the seat to move can use throw t to enter a piece.
func (s *State) canEnter(t Throw) bool {
	me := s.seat
	if s.hand[me] == 0 {
		return false
	}
	if t == BackDo {
		return s.rules.BackDoEnters && s.occ[me] == 0
	}
	return s.tables().entry[t] != destInvalid
}

// movable returns the seat to move's stacks that throw t can move.
func (s *State) movable(t Throw) uint32 {
	occ := s.occ[s.seat]
	if s.rules.Finish != FinishExact && (t != BackDo || s.rules.Board == BoardCross) {
		return occ // every stack takes every forward result (and back-do on the cross)
	}
	mv := &s.tables().move
	var ok uint32
	for b := occ; b != 0; b &= b - 1 {
		st := bits.TrailingZeros32(b)
		if mv[s.cells[st].route][st][t] != destInvalid {
			ok |= 1 << st
		}
	}
	return ok
}

// LegalActions appends the legal actions of the seat to move to dst, in
// increasing id order, and returns it. At a chance node or after the game it
// appends nothing. It does not allocate when dst has room for NumActions.
func (s *State) LegalActions(dst []Action) []Action {
	if s.phase != PhaseMove {
		return dst
	}
	for t := Throw(0); t < NumThrows; t++ {
		if s.pool[t] == 0 {
			continue
		}
		base := uint8(t) * NumSources
		for b := s.movable(t); b != 0; b &= b - 1 {
			dst = append(dst, Action(base+uint8(bits.TrailingZeros32(b))))
		}
		if s.canEnter(t) {
			dst = append(dst, Action(base+EnterSource))
		}
	}
	return dst
}

// NumLegalActions returns len(LegalActions(nil)) without building the list.
func (s *State) NumLegalActions() int {
	if s.phase != PhaseMove {
		return 0
	}
	n := 0
	for t := Throw(0); t < NumThrows; t++ {
		if s.pool[t] == 0 {
			continue
		}
		n += bits.OnesCount32(s.movable(t))
		if s.canEnter(t) {
			n++
		}
	}
	return n
}

// IsLegal reports whether a is a legal action now. It does not allocate.
func (s *State) IsLegal(a Action) bool {
	if s.phase != PhaseMove || !a.Valid() {
		return false
	}
	t := a.Throw()
	if s.pool[t] == 0 {
		return false
	}
	if a.IsEnter() {
		return s.canEnter(t)
	}
	return s.movable(t)&(1<<a.Station()) != 0
}

// Mask writes the legal-action mask into dst[:NumActions]: 1 for legal, 0
// otherwise. dst must have room for NumActions entries.
func (s *State) Mask(dst []uint8) {
	dst = dst[:NumActions]
	clear(dst)
	if s.phase != PhaseMove {
		return
	}
	var buf [NumActions]Action
	for _, a := range s.LegalActions(buf[:0]) {
		dst[a] = 1
	}
}

// checkAction explains why a is not legal, or returns nil.
func (s *State) checkAction(a Action) error {
	if s.IsLegal(a) {
		return nil
	}
	if s.phase != PhaseMove {
		return fmt.Errorf("%w: the state is in phase %s, not move", ErrWrongPhase, s.phase)
	}
	if !a.Valid() {
		return fmt.Errorf("%w: action id %d out of range 0..%d", ErrIllegalAction, uint8(a), NumActions-1)
	}
	t := a.Throw()
	me := s.seat
	if s.pool[t] == 0 {
		return fmt.Errorf("%w: %v: seat %d has no %s in its pool", ErrIllegalAction, a, me, t)
	}
	if a.IsEnter() {
		switch {
		case s.hand[me] == 0:
			return fmt.Errorf("%w: %v: seat %d has no piece in hand", ErrIllegalAction, a, me)
		case t == BackDo && !s.rules.BackDoEnters:
			return fmt.Errorf("%w: %v: back-do cannot enter a piece", ErrIllegalAction, a)
		case t == BackDo && s.occ[me] != 0:
			return fmt.Errorf("%w: %v: back-do enters only when seat %d has nothing on the board", ErrIllegalAction, a, me)
		}
		return fmt.Errorf("%w: %v: %s cannot enter a piece on this board (finish=%s)", ErrIllegalAction, a, t, s.rules.Finish)
	}
	c := s.cells[a.Station()]
	if c.height == 0 || c.owner != me {
		return fmt.Errorf("%w: %v: seat %d has no stack on station %d", ErrIllegalAction, a, me, a.Source())
	}
	if t == BackDo {
		return fmt.Errorf("%w: %v: back-do cannot move a stack off the first space", ErrIllegalAction, a)
	}
	return fmt.Errorf("%w: %v: %s would take the stack past the end (finish=exact)", ErrIllegalAction, a, t)
}

// Apply plays action a for the seat to move and reports what happened. An
// illegal action returns an error wrapping ErrIllegalAction (or ErrWrongPhase)
// and leaves the state unchanged.
func (s *State) Apply(a Action) (Event, error) {
	var ev Event
	err := s.ApplyTo(a, &ev)
	return ev, err
}

// ApplyTo is Apply writing the event into *ev instead of returning it, for
// loops that play many moves (rollouts): a caller that reuses one
// Event saves copying it at every move. On an error *ev is left as it was.
func (s *State) ApplyTo(a Action, ev *Event) error {
	if !s.IsLegal(a) {
		return s.checkAction(a)
	}
	s.apply(a, ev)
	return nil
}

// apply plays the legal action a, writing what happened into *ev.
func (s *State) apply(a Action, ev *Event) {
	me := s.seat
	t := a.Throw()
	lt := s.tables()
	*ev = Event{Kind: EventMove, Seat: int8(me), Throw: t, Action: a, CapturedSeat: -1, NextSeat: int8(me), Winner: -1,
		Board: s.rules.Board}
	var d dest
	var moved uint8
	if a.IsEnter() {
		ev.Entered = true
		ev.From = Home
		moved = 1
		s.hand[me]--
		if t == BackDo {
			d = packDest(Home, RouteOuter)
		} else {
			d = lt.entry[t]
		}
	} else {
		st := a.Station()
		c := s.cells[st]
		ev.From, ev.FromRoute = st, c.route
		moved = c.height
		s.cells[st] = cell{}
		s.occ[me] &^= 1 << st
		d = lt.move[c.route][st][t]
	}
	ev.Moved = moved
	if d == destFinish {
		s.finished[me] += moved
		ev.Finished = moved
		ev.To = s.end()
	} else {
		to, r := d.station(), d.route()
		ev.To, ev.ToRoute = to, r
		ev.Shortcut = s.rules.Board == BoardCross && r != RouteOuter && r != ev.FromRoute && t != BackDo && to == routeStations[r][0]
		ev.Captured, ev.CapturedSeat, ev.Joined = s.land(me, to, r, moved)
		switch o := s.rules.Obstacles[to]; {
		case o == ObstacleSkip:
			ev.LosesTurn = true
			if s.missed[me] < 255 {
				s.missed[me]++
			}
		case o > 0:
			s.push(me, to, int(o), ev)
		}
		ev.Height = s.cells[ev.To].height
	}
	s.pool[t]--
	s.poolSize--
	s.decisions++

	if s.finished[me] == uint8(s.rules.Pieces) {
		s.rank(me)
		ev.Placed = true
		if s.phase == PhaseOver {
			ev.GameOver = true
			ev.Winner = int8(s.Winner())
			ev.Discarded = s.discard()
			return
		}
		s.endTurn(ev)
		return
	}
	captureBonus := (ev.Captured > 0 || ev.PushCaptured > 0) && s.rules.CaptureBonus == SwitchOn &&
		(!t.Bonus() || s.rules.CaptureBonusYutMo)
	switch {
	case captureBonus || (s.rules.Pool == SwitchOff && t.Bonus()):
		// Without a pool, yut and mo earn their next throw after the move.
		s.phase = PhaseThrow
		ev.BonusThrow = true
	case s.poolSize == 0 || !s.hasUsable():
		s.endTurn(ev)
	}
}

// end returns the station where pieces finish: HOME, or a line's last space.
func (s *State) end() Station {
	if s.rules.Board == BoardLine {
		return Station(s.rules.Spaces - 1)
	}
	return Home
}

// land puts a stack of n pieces of seat me on station to (route r): onto an
// empty station, onto its own stack (joined), or onto another seat's stack,
// which it captures (those pieces go back to hand).
func (s *State) land(me uint8, to Station, r Route, n uint8) (captured uint8, victim int8, joined bool) {
	c := &s.cells[to]
	victim = -1
	switch {
	case c.height == 0:
		*c = cell{height: n, owner: me, route: r}
		s.occ[me] |= 1 << to
	case c.owner == me:
		c.height += n
		c.route = r
		joined = true
	default:
		captured, victim = c.height, int8(c.owner)
		s.hand[c.owner] += c.height
		s.occ[c.owner] &^= 1 << to
		*c = cell{height: n, owner: me, route: r}
		s.occ[me] |= 1 << to
	}
	return captured, victim, joined
}

// push moves the stack of me that stopped on the obstacle at station from
// back by up to k steps, one back-do step at a time along its route, never
// behind the first place of the board (station 1 of the cross, space 0 of a
// line). Where it stops it lands like any move: it joins the mover's own
// stack or captures another seat's. An obstacle where the push stops does
// nothing.
func (s *State) push(me uint8, from Station, k int, ev *Event) {
	c := s.cells[from]
	st, r, n := pushBack(&s.tables().move, s.rules.Board, from, c.route, k)
	if n == 0 {
		return
	}
	s.cells[from] = cell{}
	s.occ[me] &^= 1 << from
	ev.Pushed = uint8(n)
	ev.PushedFrom = from
	ev.To, ev.ToRoute = st, r
	captured, victim, joined := s.land(me, st, r, c.height)
	if captured > 0 {
		ev.PushCaptured, ev.PushCapturedSeat = captured, victim
	}
	ev.Joined = ev.Joined || joined
}

// pushBack walks up to k back-do steps from station st on route r with the
// move table mv, stopping before HOME on the cross and at space 0 of a line,
// and returns where it stopped and the steps taken.
func pushBack(mv *[NumRoutes][NumStations][NumThrows]dest, board BoardKind, st Station, r Route, k int) (Station, Route, int) {
	n := 0
	for ; n < k; n++ {
		d := mv[r][st][BackDo]
		if d == destInvalid || d == destFinish || (board == BoardCross && d.station() == Home) {
			break
		}
		st, r = d.station(), d.route()
	}
	return st, r, n
}

// AfterObstacle returns where a stack that stopped on station st (route rt)
// ends up under the rules' obstacles: pushed back by a push obstacle (n > 0
// steps, see docs/RULES.md), or where it stopped (n = 0).
func (r Rules) AfterObstacle(st Station, rt Route) (to Station, route Route, n int) {
	if int(st) >= NumStations || int(rt) >= NumRoutes || !hasLayout(r) || r.Obstacles[st] <= 0 {
		return st, rt, 0
	}
	return pushBack(&layouts[layoutIndex(r)].move, r.Board, st, rt, int(r.Obstacles[st]))
}

// rank gives seat the next place and ends the game when the rules say so.
func (s *State) rank(seat uint8) {
	s.ranked++
	s.place[seat] = s.ranked
	n := uint8(s.rules.Players)
	if s.rules.End == EndFirst {
		s.phase = PhaseOver
		return
	}
	if s.ranked == n-1 {
		for i := uint8(0); i < n; i++ {
			if s.place[i] == 0 {
				s.ranked++
				s.place[i] = s.ranked
			}
		}
		s.phase = PhaseOver
	}
}

// hasUsable reports whether any result in the pool has a legal use.
func (s *State) hasUsable() bool {
	for t := Throw(0); t < NumThrows; t++ {
		if s.pool[t] > 0 && (s.movable(t) != 0 || s.canEnter(t)) {
			return true
		}
	}
	return false
}

// discard empties the pool and returns how many results it held.
func (s *State) discard() uint8 {
	n := s.poolSize
	s.pool = [NumThrows]uint8{}
	s.poolSize = 0
	if n > 255 {
		n = 255
	}
	return uint8(n)
}

// endTurn discards what is left of the pool and passes the turn to the next
// seat still playing, which must throw.
func (s *State) endTurn(ev *Event) {
	ev.Discarded = s.discard()
	ev.TurnEnded = true
	n := uint8(s.rules.Players)
	next := s.seat
	for {
		next = (next + 1) % n
		if s.place[next] != 0 {
			continue
		}
		if s.missed[next] > 0 { // it landed on a skip obstacle: this turn is lost
			s.missed[next]--
			if ev.TurnsMissed < 255 {
				ev.TurnsMissed++
			}
			continue
		}
		break
	}
	s.seat = next
	s.phase = PhaseThrow
	ev.NextSeat = int8(next)
}
