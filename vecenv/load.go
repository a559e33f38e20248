package vecenv

import (
	"errors"
	"fmt"

	"github.com/yutenv/yutenv/env"
)

// ErrRulesMismatch is wrapped by Load when a state's rules are not the batch's.
var ErrRulesMismatch = errors.New("the state's rules are not the batch's")

// Load replaces env i's game with s and writes env i's row (Row returns it).
// In Single mode seat, when not RandomSeat, becomes the env's learner; in
// Multi mode it must be RandomSeat. The batch plays the opponents (Single
// mode) and throws up to the next decision; a game that is over reads as
// ended, so the next Step starts a new episode. The episode counters (and
// the luck, Config.Luck) restart.
// The env keeps its episode's game seed (EpisodeInfo.Seed, not part of a
// state): the opponents are reseeded with AgentSeed of it and the loaded
// state's decision counter, and later episodes continue the env's sequence.
func (b *Batch) Load(i int, s env.State, seat int) error {
	switch {
	case i < 0 || i >= b.cfg.N:
		return fmt.Errorf("vecenv: env %d out of range 0..%d", i, b.cfg.N-1)
	case !b.started:
		return ErrNeedsReset
	case seat != RandomSeat && (!b.single() || seat < 0 || seat >= b.cfg.Rules.Players):
		return fmt.Errorf("vecenv: learner seat %d: only in Single mode, 0..%d", seat, b.cfg.Rules.Players-1)
	case s.Rules() != b.cfg.Rules:
		return fmt.Errorf("vecenv: %w: the state is for rules %q, the batch plays %q", ErrRulesMismatch, s.Rules().String(), b.cfg.Rules.String())
	}
	sl := &b.slots[i]
	sl.s = s
	if seat != RandomSeat {
		sl.learner = int8(seat)
	}
	sl.steps, sl.ended, sl.illegal, sl.endedNow, sl.pending = 0, false, false, false, false
	sl.luck = [env.MaxPlayers]float64{}
	sl.events = sl.events[:0]
	b.record = false
	if b.rows.Pending != nil {
		b.rows.Pending[i], b.rows.Opponent[i] = 0, sl.opp
	}
	w := b.worker()
	defer b.done(w)
	_, err := b.loaded(i, sl, w)
	return err
}

// loaded carries a loaded game on to the learner's decision (or a
// client-played opponent's, or the end) and writes its row.
func (b *Batch) loaded(i int, sl *slot, w *worker) (pending bool, err error) {
	if pending, err := b.settle(i, sl, w, contLoad); err != nil || pending {
		return pending, err
	}
	over := sl.s.IsOver()
	sl.ended = over
	Potentials(&sl.s, &sl.phi)
	b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.rows.ToMove[i], over)
	return false, nil
}

// PendingAt reports whether env i's row is for a client-played opponent.
func (b *Batch) PendingAt(i int) bool { return b.slots[i].pending }

// Observe writes, for every env, the observation seen by seat into row i of
// o (N x ObsSize) and that seat's mask into row i of m (N x env.NumActions).
// A mask row is all zero exactly when seat cannot act in that env's game:
// it is not seat's decision (another seat is to move, a throw is due, the
// game is over, or its terminal row was returned and the next Step resets).
// Observe changes nothing and allocates nothing.
func (b *Batch) Observe(seat int, o []float32, m []uint8) error {
	switch {
	case !b.started:
		return ErrNeedsReset
	case seat < 0 || seat >= b.cfg.Rules.Players:
		return fmt.Errorf("vecenv: seat %d out of range 0..%d", seat, b.cfg.Rules.Players-1)
	case len(o) < b.cfg.N*b.d || len(m) < b.cfg.N*env.NumActions:
		return fmt.Errorf("vecenv: Observe needs %d observation and %d mask values", b.cfg.N*b.d, b.cfg.N*env.NumActions)
	}
	for i := range b.slots {
		sl := &b.slots[i]
		b.enc.Encode(&sl.s, seat, o[i*b.d:(i+1)*b.d])
		mr := m[i*env.NumActions : (i+1)*env.NumActions]
		if sl.ended || sl.s.Phase() != env.PhaseMove || sl.s.ToMove() != seat {
			clear(mr)
			continue
		}
		sl.s.Mask(mr)
	}
	return nil
}
