package env

import "encoding/json"

// PieceJSON is one piece in the JSON form of a state. Pieces of a seat are
// interchangeable; they are listed board first (by station), then hand, then
// finished.
type PieceJSON struct {
	Seat    int    `json:"seat"`
	Status  string `json:"status"`            // "hand", "board" or "finished"
	Station *int   `json:"station,omitempty"` // on the board only
	Route   string `json:"route,omitempty"`   // on the board only: OUTER, C1, C2, CENTRE/C1, CENTRE/C2
}

// StateJSON is the documented JSON form of a state (docs/FORMATS.md), made to
// be compared with another implementation of the same rules.
type StateJSON struct {
	ToMove int         `json:"to_move"`
	Phase  string      `json:"phase"` // "throw", "move" or "over"
	Pool   [6]int      `json:"pool"`  // count of each throw, by id: back-do, do, gae, geol, yut, mo
	Pieces []PieceJSON `json:"pieces"`
	Winner int         `json:"winner"`           // -1 while nobody has won
	Places []int       `json:"places"`           // per seat, 0 while playing
	Legal  []int       `json:"legal"`            // legal action ids, increasing
	Missed []int       `json:"missed,omitempty"` // per seat, turns it will miss (skip obstacles); absent when none
}

// EventJSON is the JSON form of an event: a throw or a move and its effects.
type EventJSON struct {
	Kind      string `json:"kind"` // "throw" or "move"
	Seat      int    `json:"seat"`
	Throw     string `json:"throw"`
	Action    *int   `json:"action,omitempty"`
	From      *int   `json:"from,omitempty"`
	To        *int   `json:"to,omitempty"`
	Entered   bool   `json:"entered,omitempty"`
	Moved     int    `json:"moved,omitempty"`
	Shortcut  bool   `json:"shortcut,omitempty"`
	Joined    bool   `json:"joined,omitempty"`
	Captured  int    `json:"captured,omitempty"`
	Finished  int    `json:"finished,omitempty"`
	Bonus     bool   `json:"bonus_throw,omitempty"`
	Discarded int    `json:"discarded,omitempty"`
	TurnEnded bool   `json:"turn_ended,omitempty"`
	// Obstacles: the mover will miss its next turn; steps a push moved it back; turns passed over.
	LosesTurn   bool   `json:"loses_turn,omitempty"`
	Pushed      int    `json:"pushed,omitempty"`
	TurnsMissed int    `json:"turns_missed,omitempty"`
	Text        string `json:"text"`
}

// LineJSON is one line of a replay in JSON lines: the step index (-1 for the
// initial state), the event that led to the state (absent for the initial
// state) and the state after it.
type LineJSON struct {
	Step  int        `json:"step"`
	Event *EventJSON `json:"event,omitempty"`
	State StateJSON  `json:"state"`
}

// JSON returns the state's JSON form.
func (s *State) JSON() StateJSON {
	j := StateJSON{ToMove: int(s.seat), Phase: s.phase.String(), Winner: s.Winner(), Legal: []int{}, Pieces: []PieceJSON{}}
	for t := range s.pool {
		j.Pool[t] = int(s.pool[t])
	}
	for seat := 0; seat < s.rules.Players; seat++ {
		j.Places = append(j.Places, int(s.place[seat]))
		for st := Station(0); st < NumStations; st++ {
			c := s.cells[st]
			if c.height == 0 || int(c.owner) != seat {
				continue
			}
			for k := 0; k < int(c.height); k++ {
				n := int(st)
				j.Pieces = append(j.Pieces, PieceJSON{Seat: seat, Status: "board", Station: &n, Route: c.route.String()})
			}
		}
		for k := 0; k < int(s.hand[seat]); k++ {
			j.Pieces = append(j.Pieces, PieceJSON{Seat: seat, Status: "hand"})
		}
		for k := 0; k < int(s.finished[seat]); k++ {
			j.Pieces = append(j.Pieces, PieceJSON{Seat: seat, Status: "finished"})
		}
	}
	for _, a := range s.LegalActions(nil) {
		j.Legal = append(j.Legal, int(a))
	}
	if s.missed != [MaxPlayers]uint8{} {
		for seat := 0; seat < s.rules.Players; seat++ {
			j.Missed = append(j.Missed, int(s.missed[seat]))
		}
	}
	return j
}

// JSON returns the event's JSON form.
func (e Event) JSON() EventJSON {
	j := EventJSON{Kind: e.Kind.String(), Seat: int(e.Seat), Throw: e.Throw.String(), Bonus: e.BonusThrow,
		Discarded: int(e.Discarded), TurnEnded: e.TurnEnded, TurnsMissed: int(e.TurnsMissed), Text: e.String()}
	if e.Kind == EventMove {
		a, from, to := int(e.Action), int(e.From), int(e.To)
		j.Action, j.To = &a, &to
		if !e.Entered {
			j.From = &from
		}
		j.Entered, j.Moved, j.Shortcut, j.Joined = e.Entered, int(e.Moved), e.Shortcut, e.Joined
		j.Captured, j.Finished = int(e.Captured+e.PushCaptured), int(e.Finished)
		j.LosesTurn, j.Pushed = e.LosesTurn, int(e.Pushed)
	}
	return j
}

// MarshalJSONLine encodes one replay line (see LineJSON). ev is ignored for step -1.
func MarshalJSONLine(step int, ev Event, s *State) ([]byte, error) {
	l := LineJSON{Step: step, State: s.JSON()}
	if step >= 0 {
		e := ev.JSON()
		l.Event = &e
	}
	return json.Marshal(l)
}
