package env

import (
	"fmt"
	"strings"
)

// EventKind says whether an event was a throw or a move.
type EventKind uint8

const (
	// EventThrow: a chance node was resolved.
	EventThrow EventKind = iota
	// EventMove: an action was applied.
	EventMove
)

// String returns "throw" or "move".
func (k EventKind) String() string {
	return enumString([]string{"throw", "move"}, uint8(k), "EventKind")
}

// Event reports what one throw or one action did. It is a plain value: the
// engine fills it without allocating.
type Event struct {
	Kind   EventKind
	Seat   int8   // the seat that threw or moved
	Throw  Throw  // the result thrown, or the result the move used
	Action Action // the action applied (moves only)

	Entered   bool    // the move entered a piece from hand
	From      Station // where the moving stack stood (HOME when entering)
	FromRoute Route   // its route before the move
	To        Station // where it stopped (HOME when it finished)
	ToRoute   Route   // its route after the move
	Moved     uint8   // pieces moved
	Shortcut  bool    // the move stopped on a corner or the centre and took its shortcut
	Joined    bool    // the move stacked onto the mover's own pieces
	Height    uint8   // height of the stack where it stopped (0 if it finished)
	Captured  uint8   // opponent pieces sent back to hand
	// CapturedSeat is the seat whose pieces were captured, or -1.
	CapturedSeat int8
	Finished     uint8 // pieces that left the board, finished
	Placed       bool  // the mover finished its last piece and was ranked

	// Obstacles (Rules.Obstacles). To is where the stack ended, after a push.
	LosesTurn        bool      // the stack stopped on a skip obstacle: the mover misses its next turn
	Pushed           uint8     // steps a push obstacle moved the stack back (0: none)
	PushedFrom       Station   // the push obstacle's station, when Pushed > 0
	PushCaptured     uint8     // opponent pieces captured where the push stopped
	PushCapturedSeat int8      // their seat, when PushCaptured > 0
	TurnsMissed      uint8     // turns of other seats skipped when this turn passed
	Board            BoardKind // the board the move was made on (names stations in String)

	BonusThrow bool  // the same seat throws again (yut, mo, or a capture)
	Discarded  uint8 // unusable results discarded when the turn ended
	TurnEnded  bool  // the turn passed
	NextSeat   int8  // the seat to act next
	GameOver   bool  // the game ended with this event
	Winner     int8  // the winner if the game ended, else -1
}

// String describes the event in words, for logs and people.
func (e Event) String() string {
	var b strings.Builder
	if e.Kind == EventThrow {
		fmt.Fprintf(&b, "seat %d throws %s", e.Seat, e.Throw)
	} else {
		fmt.Fprintf(&b, "seat %d: %s", e.Seat, e.Throw)
		name := func(st Station) string {
			if e.Board == BoardLine {
				return fmt.Sprintf("space %d", st)
			}
			return st.String()
		}
		if e.Entered {
			fmt.Fprintf(&b, " enters a piece")
		} else {
			fmt.Fprintf(&b, " moves %d from %s", e.Moved, name(e.From))
		}
		switch {
		case e.Finished > 0:
			fmt.Fprintf(&b, ", %d finished", e.Finished)
		case e.Pushed > 0:
			fmt.Fprintf(&b, " to %s, pushed back %d to %s", name(e.PushedFrom), e.Pushed, name(e.To))
		default:
			fmt.Fprintf(&b, " to %s", name(e.To))
		}
		if e.Shortcut {
			fmt.Fprintf(&b, " (takes the %s shortcut)", e.ToRoute)
		}
		if e.Joined {
			fmt.Fprintf(&b, ", stacks to %d", e.Height)
		}
		if e.Captured > 0 {
			fmt.Fprintf(&b, ", captures %d of seat %d", e.Captured, e.CapturedSeat)
		}
		if e.PushCaptured > 0 {
			fmt.Fprintf(&b, ", captures %d of seat %d where pushed", e.PushCaptured, e.PushCapturedSeat)
		}
		if e.LosesTurn {
			b.WriteString(", misses its next turn")
		}
	}
	if e.BonusThrow {
		b.WriteString(", throws again")
	}
	if e.Discarded > 0 {
		fmt.Fprintf(&b, ", %d unusable discarded", e.Discarded)
	}
	if e.TurnsMissed > 0 {
		fmt.Fprintf(&b, ", %d turn(s) missed", e.TurnsMissed)
	}
	if e.GameOver {
		fmt.Fprintf(&b, "; game over, seat %d wins", e.Winner)
	} else if e.TurnEnded {
		fmt.Fprintf(&b, "; seat %d to play", e.NextSeat)
	}
	return b.String()
}
