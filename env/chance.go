package env

import (
	"fmt"
)

// ApplyThrow resolves a chance node with the chosen result t (the explicit
// mode used by search). t must have a non-zero probability under the rules.
func (s *State) ApplyThrow(t Throw) (Event, error) {
	var ev Event
	err := s.ApplyThrowTo(t, &ev)
	return ev, err
}

// ApplyThrowTo is ApplyThrow writing the event into *ev instead of returning
// it (see ApplyTo). On an error *ev is left as it was.
func (s *State) ApplyThrowTo(t Throw, ev *Event) error {
	if err := s.checkThrow(t); err != nil {
		return err
	}
	s.applyThrow(t, ev)
	return nil
}

// checkThrow explains why t cannot be applied now, or returns nil.
func (s *State) checkThrow(t Throw) error {
	if s.phase != PhaseThrow {
		return fmt.Errorf("%w: the state is in phase %s, not throw", ErrWrongPhase, s.phase)
	}
	if t >= NumThrows {
		return fmt.Errorf("%w: throw id %d out of range 0..%d", ErrBadInput, uint8(t), NumThrows-1)
	}
	if t == BackDo && !s.rules.BackDo {
		return fmt.Errorf("%w: back-do cannot be thrown with back_do=off", ErrBadInput)
	}
	if s.pool[t] == 255 {
		return fmt.Errorf("%w: the pool already holds 255 %s results", ErrBadInput, t)
	}
	return nil
}

// applyThrow adds the result t to the pool, writing what happened into *ev.
func (s *State) applyThrow(t Throw, ev *Event) {
	*ev = Event{Kind: EventThrow, Seat: int8(s.seat), Throw: t, CapturedSeat: -1, NextSeat: int8(s.seat), Winner: -1}
	s.pool[t]++
	s.poolSize++
	s.throws++
	if t.Bonus() && s.rules.Pool == SwitchOn {
		ev.BonusThrow = true
		return
	}
	s.phase = PhaseMove
	if s.hasUsable() {
		return
	}
	if s.rules.Pool == SwitchOff && t.Bonus() {
		// The throw has no use and is spent, but it still earns the next throw.
		ev.Discarded = s.discard()
		s.phase = PhaseThrow
		ev.BonusThrow = true
		return
	}
	s.endTurn(ev)
}

// SampleThrow resolves a chance node by throwing with the state's own
// generator (the sampled mode used for training and playouts).
func (s *State) SampleThrow() (Event, error) {
	if s.phase != PhaseThrow {
		return Event{}, fmt.Errorf("%w: the state is in phase %s, not throw", ErrWrongPhase, s.phase)
	}
	t := sampleThrow(&s.thr, s.rng.Uint64())
	if s.pool[t] == 255 {
		return Event{}, fmt.Errorf("%w: the pool already holds 255 %s results", ErrBadInput, t)
	}
	var ev Event
	s.applyThrow(t, &ev)
	return ev, nil
}

// Advance throws with the state's own generator until the state is a
// decision or the game is over, and returns the number of throws made.
func (s *State) Advance() int {
	n := 0
	for s.phase == PhaseThrow {
		if _, err := s.SampleThrow(); err != nil {
			break // a full pool: cannot happen in sampled play
		}
		n++
	}
	return n
}

// Outcome of a chance node: a throw result and its probability.
type ChanceOutcome struct {
	Throw Throw
	Prob  float64
}

// ChanceOutcomes appends the outcomes of the chance node (every throw with a
// non-zero probability) to dst. It appends nothing unless the state is a
// chance node.
func (s *State) ChanceOutcomes(dst []ChanceOutcome) []ChanceOutcome {
	if s.phase != PhaseThrow {
		return dst
	}
	pr := s.rules.Probabilities()
	for t := Throw(0); t < NumThrows; t++ {
		if pr[t] > 0 {
			dst = append(dst, ChanceOutcome{Throw: t, Prob: pr[t]})
		}
	}
	return dst
}
