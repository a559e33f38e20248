package env

import (
	"fmt"
	"math/bits"
	"sort"
)

// Stack is one stack of pieces on the board, as Position lists it.
type Stack struct {
	Seat    int     `json:"seat" msgpack:"seat"`
	Station Station `json:"station" msgpack:"station"`
	Route   Route   `json:"route" msgpack:"route"`
	Height  int     `json:"height" msgpack:"height"`
}

// Position is an open, checkable description of a game position: everything
// in a State but the random number generator and the counters. Use it to
// build test positions directly, and to inspect a state.
type Position struct {
	Rules    Rules           `json:"rules" msgpack:"rules"`
	ToMove   int             `json:"to_move" msgpack:"to_move"`
	Phase    Phase           `json:"phase" msgpack:"phase"`
	Pool     [NumThrows]int  `json:"pool" msgpack:"pool"`
	Hand     [MaxPlayers]int `json:"hand" msgpack:"hand"`
	Finished [MaxPlayers]int `json:"finished" msgpack:"finished"`
	Place    [MaxPlayers]int `json:"place" msgpack:"place"`
	Stacks   []Stack         `json:"stacks" msgpack:"stacks"`
	// Missed is, per seat, how many of its next turns it will miss (skip
	// obstacles); left out when nobody misses a turn.
	Missed []int `json:"missed,omitempty" msgpack:"missed,omitempty"`
}

// Position returns the state's position. Stacks are listed by station.
func (s *State) Position() Position {
	p := Position{Rules: s.rules, ToMove: int(s.seat), Phase: s.phase}
	for t := range s.pool {
		p.Pool[t] = int(s.pool[t])
	}
	for i := 0; i < MaxPlayers; i++ {
		p.Hand[i], p.Finished[i], p.Place[i] = int(s.hand[i]), int(s.finished[i]), int(s.place[i])
	}
	for st := Station(0); st < NumStations; st++ {
		if c := s.cells[st]; c.height > 0 {
			p.Stacks = append(p.Stacks, Stack{Seat: int(c.owner), Station: st, Route: c.route, Height: int(c.height)})
		}
	}
	if s.missed != [MaxPlayers]uint8{} {
		p.Missed = make([]int, s.rules.Players)
		for i := range p.Missed {
			p.Missed[i] = int(s.missed[i])
		}
	}
	return p
}

// FromPosition builds a state from a position and a seed for its generator.
// It checks the position thoroughly (rules, ranges, piece counts, one stack
// per station, stations on their routes, a phase that fits the pool) and
// refuses an inconsistent one with an error wrapping ErrCorrupt or
// ErrInvalidRules.
func FromPosition(p Position, seed uint64) (State, error) {
	s, err := New(p.Rules, seed, AnySeat)
	if err != nil {
		return State{}, err
	}
	return s, s.setPosition(p)
}

// setPosition replaces everything but the generator and counters; on error s
// is left in an unspecified but safe state, and callers discard it.
func (s *State) setPosition(p Position) error {
	r := s.rules
	n := r.Players
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: position: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if p.ToMove < 0 || p.ToMove >= n {
		return bad("to_move %d out of range 0..%d", p.ToMove, n-1)
	}
	if p.Phase > PhaseOver {
		return bad("unknown phase %d", p.Phase)
	}
	s.seat, s.phase = uint8(p.ToMove), p.Phase
	s.cells = [NumStations]cell{}
	s.occ = [MaxPlayers]uint32{}
	s.poolSize = 0
	for t, c := range p.Pool {
		if c < 0 || c > 255 {
			return bad("pool count of %s is %d, want 0..255", Throw(t), c)
		}
		if c > 0 && t == int(BackDo) && !r.BackDo {
			return bad("back-do in the pool with back_do=off")
		}
		s.pool[t] = uint8(c)
		s.poolSize += uint16(c)
	}
	onBoard := [MaxPlayers]int{}
	for _, st := range p.Stacks {
		switch {
		case st.Seat < 0 || st.Seat >= n:
			return bad("stack seat %d out of range 0..%d", st.Seat, n-1)
		case int(st.Station) >= NumStations:
			return bad("stack station %d out of range 0..28", st.Station)
		case !r.OnBoard(st.Station, st.Route):
			return bad("station %d on route %v is not a place of the %s board", st.Station, st.Route, r.Board)
		case r.Board == BoardLine && r.Finish != FinishPass && int(st.Station) == r.Spaces-1:
			return bad("a stack on the last space %d, where finish=%s takes it off the board", st.Station, r.Finish)
		case st.Height < 1 || st.Height > r.Pieces:
			return bad("stack height %d out of range 1..%d", st.Height, r.Pieces)
		case s.cells[st.Station].height != 0:
			return bad("two stacks on station %d", st.Station)
		}
		s.cells[st.Station] = cell{height: uint8(st.Height), owner: uint8(st.Seat), route: st.Route}
		s.occ[st.Seat] |= 1 << st.Station
		onBoard[st.Seat] += st.Height
	}
	if len(p.Missed) > n {
		return bad("missed turns for %d seats, the game has %d", len(p.Missed), n)
	}
	s.missed = [MaxPlayers]uint8{}
	for i, m := range p.Missed {
		if m < 0 || m > 255 {
			return bad("seat %d misses %d turns, want 0..255", i, m)
		}
		s.missed[i] = uint8(m)
	}
	var places []int
	over := p.Phase == PhaseOver
	for i := 0; i < MaxPlayers; i++ {
		h, f, pl := p.Hand[i], p.Finished[i], p.Place[i]
		if i >= n {
			if h != 0 || f != 0 || pl != 0 {
				return bad("seat %d does not exist under %d players", i, n)
			}
			s.hand[i], s.finished[i], s.place[i] = 0, 0, 0
			continue
		}
		if h < 0 || f < 0 || h+f+onBoard[i] != r.Pieces {
			return bad("seat %d: hand %d + board %d + finished %d != %d pieces", i, h, onBoard[i], f, r.Pieces)
		}
		if pl < 0 || pl > n {
			return bad("seat %d: place %d out of range 0..%d", i, pl, n)
		}
		if pl != 0 {
			places = append(places, pl)
		}
		if f == r.Pieces && pl == 0 {
			return bad("seat %d finished every piece but has no place", i)
		}
		if pl != 0 && f != r.Pieces && !(over && r.End == EndRank) {
			return bad("seat %d has place %d but %d pieces unfinished", i, pl, r.Pieces-f)
		}
		s.hand[i], s.finished[i], s.place[i] = uint8(h), uint8(f), uint8(pl)
	}
	sort.Ints(places)
	for i, pl := range places {
		if pl != i+1 {
			return bad("places %v are not 1..%d", places, len(places))
		}
	}
	s.ranked = uint8(len(places))
	wantOver := (r.End == EndFirst && len(places) == 1) || (r.End == EndRank && len(places) == n)
	switch {
	case over != wantOver:
		return bad("phase %s does not fit places %v", p.Phase, places)
	case r.End == EndFirst && len(places) > 1:
		return bad("more than one place under end=first")
	case r.End == EndRank && !over && len(places) >= n-1:
		return bad("places %v: under end=rank the game is over once %d seats are ranked", places, n-1)
	case !over && s.place[s.seat] != 0:
		return bad("seat to move %d has already finished", s.seat)
	case p.Phase == PhaseMove && (s.poolSize == 0 || !s.hasUsable()):
		return bad("phase move with no usable result in the pool")
	}
	return nil
}

// NumStacks returns how many stacks seat has on the board.
func (s *State) NumStacks(seat int) int { return bits.OnesCount32(s.occ[seat]) }
