package env

import (
	"encoding/json"
	"fmt"
)

// PositionDesc is a readable description of a position, for people and
// clients: the phase and routes by name, per-seat lists as long as the rules
// have seats. Turn it into a Position with Position (which FromPosition then
// checks), and a Position into one with Describe.
type PositionDesc struct {
	ToMove int    `json:"to_move" msgpack:"to_move"`
	Phase  string `json:"phase" msgpack:"phase"` // "throw", "move" or "over"
	// Pool counts the results waiting to be used, by throw id (back-do, do, gae, geol, yut, mo).
	Pool [NumThrows]int `json:"pool" msgpack:"pool"`
	// Hand, Finished and Place have one entry per seat. A missing Hand is
	// whatever is neither on the board nor finished; missing Finished and
	// Place are all 0.
	Hand     []int       `json:"hand,omitempty" msgpack:"hand"`
	Finished []int       `json:"finished,omitempty" msgpack:"finished"`
	Place    []int       `json:"place,omitempty" msgpack:"place"`
	Stacks   []StackDesc `json:"stacks" msgpack:"stacks"`
	// Missed has, per seat, how many of its next turns it will miss (skip
	// obstacles); missing or empty: nobody misses a turn.
	Missed []int `json:"missed,omitempty" msgpack:"missed,omitempty"`
}

// StackDesc is one stack of a PositionDesc; Route is a route name (OUTER,
// C1, C2, CENTRE/C1, CENTRE/C2) and Height at least 1.
type StackDesc struct {
	Seat    int    `json:"seat" msgpack:"seat"`
	Station int    `json:"station" msgpack:"station"`
	Route   string `json:"route" msgpack:"route"`
	Height  int    `json:"height" msgpack:"height"`
}

// Describe returns the readable description of a position.
func Describe(p Position) PositionDesc {
	n := p.Rules.Players
	d := PositionDesc{ToMove: p.ToMove, Phase: p.Phase.String(), Pool: p.Pool,
		Hand: append([]int(nil), p.Hand[:n]...), Finished: append([]int(nil), p.Finished[:n]...),
		Place: append([]int(nil), p.Place[:n]...), Stacks: []StackDesc{}}
	for _, st := range p.Stacks {
		d.Stacks = append(d.Stacks, StackDesc{Seat: st.Seat, Station: int(st.Station), Route: st.Route.String(), Height: st.Height})
	}
	if len(p.Missed) > 0 {
		d.Missed = append([]int(nil), p.Missed...)
	}
	return d
}

// Position turns the description into a Position under rules r. It checks
// what only the description can get wrong (names, list lengths, ranges of
// the indices it uses) and wraps ErrCorrupt; FromPosition checks the rest.
func (d PositionDesc) Position(r Rules) (Position, error) {
	bad := func(format string, args ...any) (Position, error) {
		return Position{}, fmt.Errorf("%w: position: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	p := Position{Rules: r, ToMove: d.ToMove, Pool: d.Pool}
	switch d.Phase {
	case "throw":
		p.Phase = PhaseThrow
	case "move":
		p.Phase = PhaseMove
	case "over":
		p.Phase = PhaseOver
	default:
		return bad("phase %q is not one of throw, move, over", clipText(d.Phase))
	}
	n := r.Players
	for _, l := range []struct {
		name string
		v    []int
		dst  *[MaxPlayers]int
	}{{"hand", d.Hand, &p.Hand}, {"finished", d.Finished, &p.Finished}, {"place", d.Place, &p.Place}} {
		if l.v == nil {
			continue
		}
		if len(l.v) != n {
			return bad("%s has %d entries, want one per seat (%d)", l.name, len(l.v), n)
		}
		copy(l.dst[:], l.v)
	}
	if len(d.Missed) > 0 {
		if len(d.Missed) != n {
			return bad("missed has %d entries, want one per seat (%d)", len(d.Missed), n)
		}
		p.Missed = append([]int(nil), d.Missed...)
	}
	if len(d.Stacks) > NumStations {
		return bad("%d stacks, more than the %d stations", len(d.Stacks), NumStations)
	}
	for i, st := range d.Stacks {
		route, err := ParseRoute(st.Route)
		if err != nil {
			return bad("stacks[%d]: %v", i, err)
		}
		if st.Station < 0 || st.Station >= NumStations {
			return bad("stacks[%d]: station %d out of range 0..%d", i, st.Station, NumStations-1)
		}
		if st.Seat < 0 || st.Seat >= n {
			return bad("stacks[%d]: seat %d out of range 0..%d", i, st.Seat, n-1)
		}
		p.Stacks = append(p.Stacks, Stack{Seat: st.Seat, Station: Station(st.Station), Route: route, Height: st.Height})
	}
	if d.Hand == nil {
		for seat := range n {
			p.Hand[seat] = r.Pieces - p.Finished[seat]
		}
		for _, st := range p.Stacks {
			p.Hand[st.Seat] -= st.Height
		}
	}
	return p, nil
}

// clipText shortens untrusted text quoted in an error message.
func clipText(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// StateDesc is one state made readable: the protocol's describe result
// (protocol.DescribeResult, positions.Description).
type StateDesc struct {
	// Position is the position (Describe), every field of it.
	Position PositionDesc `msgpack:"position"`
	// Start is the seat that moved first.
	Start int `msgpack:"start"`
	// Decisions and Throws count the game's decisions and throws so far.
	Decisions int `msgpack:"decisions"`
	Throws    int `msgpack:"throws"`
	// JSON is the state's JSON form (State.JSON).
	JSON string `msgpack:"json"`
	// Text is the text board (State.Render).
	Text string `msgpack:"text"`
}

// DescribeState describes one state.
func DescribeState(s *State) (StateDesc, error) {
	js, err := json.Marshal(s.JSON())
	if err != nil {
		return StateDesc{}, err
	}
	return StateDesc{Position: Describe(s.Position()), Start: s.StartSeat(), Decisions: s.Decisions(),
		Throws: s.Throws(), JSON: string(js), Text: s.Render()}, nil
}
