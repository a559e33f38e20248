package env

// ViewedBy returns a copy of a finished game's state in which seat is the
// seat to move. Observation encoders show a state to the seat to move; after
// the game ends that is the seat that moved last, and ViewedBy lets them
// show the final position to any seat (the server uses it for a single-mode
// learner whose opponent made the last move). Nothing but the seat to move
// changes. ok is false, and the result is a plain copy, unless the game is
// over and seat is one of its seats. It does not allocate.
func (s *State) ViewedBy(seat int) (v State, ok bool) {
	v = *s
	if s.phase != PhaseOver || seat < 0 || seat >= s.rules.Players {
		return v, false
	}
	v.seat = uint8(seat)
	return v, true
}
