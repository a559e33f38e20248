package vecenv

import (
	"fmt"

	"github.com/yutenv/yutenv/env"
)

// resetSlot starts env i afresh from b.seeds[i].
func (b *Batch) resetSlot(i int, sl *slot, w *worker) error {
	// No step's columns survive a reset: an opponent_step that completes the
	// reset (a client-played opponent moved first) reports a clean step.
	clear(b.rewardRow(i))
	b.rows.Terminated[i], b.rows.Truncated[i] = 0, 0
	if b.cfg.Autoreset == SameStep {
		clear(b.finalRow(i))
		clear(b.finalMaskRow(i))
		b.rows.FinalToMove[i] = -1
	}
	sl.seed0 = b.seeds[i]
	sl.episode = 0
	sl.events = sl.events[:0]
	sl.finalEv = sl.finalEv[:0]
	sl.endedNow = false
	// The slot and its column forget a client-played opponent's decision
	// that was never answered (the client's policy failed): the column is
	// what the client reads to know which envs to answer.
	sl.pending = false
	if b.rows.Pending != nil {
		b.rows.Pending[i] = 0
	}
	return b.openEpisode(i, sl, true, w)
}

// openEpisode starts the next episode of env i and writes its row: right
// after reset (first) episode 0, whose game seed is sl.seed0, else episode
// k = sl.episode + 1, whose game seed is EpisodeSeed(sl.seed0, k). A drawn
// learner seat is LearnerSeat of the game seed, the opponent entry
// OpponentDraw of it. In single mode it plays the opponents up to the
// learner's first decision, discarding games that end before it (each
// discarded game counts as an episode), and stops early at a client-played
// opponent's decision (the row is then that opponent's).
func (b *Batch) openEpisode(i int, sl *slot, first bool, w *worker) error {
	sl.tries = 0
	if err := b.newGame(sl, first); err != nil {
		return err
	}
	return b.resumeOpen(i, sl, w)
}

// newGame sets up the game of sl's next episode (see openEpisode).
func (b *Batch) newGame(sl *slot, first bool) error {
	if !first || sl.tries > 0 {
		sl.episode++
	}
	seed := sl.seed0
	if sl.episode > 0 {
		seed = EpisodeSeed(sl.seed0, sl.episode)
	}
	learner := b.seat
	if learner == RandomSeat {
		learner = LearnerSeat(seed, b.cfg.Rules.Players)
	}
	s, err := env.New(b.cfg.Rules, seed, b.start)
	if err != nil {
		return err
	}
	sl.s, sl.seed, sl.learner = s, seed, int8(learner)
	sl.opp, sl.oset = 0, b.opps
	if b.opps != nil {
		sl.opp = uint8(OpponentDraw(seed, b.opps.cum))
	}
	sl.steps, sl.ended, sl.illegal = 0, false, false
	sl.luck = [env.MaxPlayers]float64{}
	return nil
}

// resumeOpen carries on opening sl's episode (openEpisode) from its game as it is.
func (b *Batch) resumeOpen(i int, sl *slot, w *worker) error {
	for {
		if pending, err := b.settle(i, sl, w, contOpen); err != nil || pending {
			return err
		}
		if !sl.s.IsOver() || !b.single() {
			Potentials(&sl.s, &sl.phi)
			b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.rows.ToMove[i], false)
			return nil
		}
		sl.events = sl.events[:0] // the discarded game's events
		if sl.tries++; sl.tries >= maxDiscarded {
			return fmt.Errorf("%d games in a row ended before the learner's first decision", maxDiscarded)
		}
		if err := b.newGame(sl, false); err != nil {
			return err
		}
	}
}

// settle throws until a decision or the end and, in single mode, plays the
// opponents until the learner's decision or the end. Before each opponent
// decision it reseeds w's agent with AgentSeed(game seed, seat, decision
// counter), so an env's opponents are the same whichever worker plays them,
// and play as the command line's agents of that seat would. At a decision
// of a client-played opponent it writes that opponent's row, marks the env
// pending with cont (what OpponentStep resumes) and returns pending.
func (b *Batch) settle(i int, sl *slot, w *worker, cont uint8) (pending bool, err error) {
	for {
		for sl.s.Phase() == env.PhaseThrow {
			if b.cfg.Luck != nil {
				if err := w.throwLuck(&sl.s); err != nil {
					return false, err
				}
			}
			ev, err := sl.s.SampleThrow()
			if err != nil {
				return false, err
			}
			if b.cfg.Luck != nil {
				for p, x := range w.rows[ev.Throw] {
					sl.luck[p] += x
				}
			}
			if b.record {
				sl.events = append(sl.events, ev)
			}
		}
		if !b.single() || sl.s.Phase() != env.PhaseMove || sl.s.ToMove() == int(sl.learner) {
			return false, nil
		}
		seat, k := sl.s.ToMove(), int(sl.opp)
		spec := sl.oset.opps[k].Spec
		if spec == Client {
			sl.pending, sl.cont = true, cont
			b.rows.Pending[i] = 1
			b.rows.ToMove[i] = int8(seat)
			b.enc.Encode(&sl.s, seat, b.obsRow(i))
			sl.s.Mask(b.maskRow(i))
			return true, nil
		}
		ag, err := w.opponent(sl.oset, k, AgentSeed(sl.seed, seat, sl.s.Decisions()))
		if err != nil {
			return false, err
		}
		a, err := ag.Act(&sl.s)
		if err != nil {
			return false, fmt.Errorf("opponent %q at seat %d: %w", spec, seat, err)
		}
		ev, err := sl.s.Apply(a)
		if err != nil {
			return false, fmt.Errorf("opponent %q at seat %d: %w", spec, seat, err)
		}
		if b.record {
			sl.events = append(sl.events, ev)
		}
	}
}

// stepSlot applies b.actions[i] to env i and writes its result row.
func (b *Batch) stepSlot(i int, sl *slot, w *worker) error {
	sl.events = sl.events[:0]
	sl.endedNow = false
	clear(b.rewardRow(i))
	b.rows.Terminated[i], b.rows.Truncated[i] = 0, 0
	if b.rows.Pending != nil {
		b.rows.Pending[i] = 0
	}
	if b.cfg.Autoreset == SameStep {
		clear(b.finalRow(i))
		clear(b.finalMaskRow(i))
		b.rows.FinalToMove[i] = -1
	}
	if sl.ended {
		return b.openEpisode(i, sl, false, w)
	}
	actor := sl.s.ToMove()
	ev, err := sl.s.Apply(env.Action(b.actions[i]))
	sl.steps++
	if err != nil {
		if b.cfg.Illegal != IllegalPenalty {
			return err // checkActions let an illegal action through: a bug
		}
		sl.illegal = true
		if b.single() {
			b.rewardRow(i)[0] = -1
		} else {
			b.rewardRow(i)[actor] = -1
		}
		return b.finishStep(i, sl, w)
	}
	if b.record {
		sl.events = append(sl.events, ev)
	}
	if pending, err := b.settle(i, sl, w, contStep); err != nil || pending {
		return err
	}
	return b.finishStep(i, sl, w)
}

// finishStep ends env i's step once the game is at the learner's decision
// (or over, or ended by an illegal action): the reward, the end flags, the
// row, and under SameStep the next episode.
func (b *Batch) finishStep(i int, sl *slot, w *worker) error {
	rew := b.rewardRow(i)
	terminated, truncated := sl.illegal, false
	if !sl.illegal {
		switch {
		case sl.s.IsOver():
			terminated = true
			if b.single() {
				rew[0] = float32(sl.s.Outcome(int(sl.learner)))
			} else {
				for p := range rew {
					rew[p] = float32(sl.s.Outcome(p))
				}
			}
		case b.cfg.MaxDecisions > 0 && sl.steps >= b.cfg.MaxDecisions:
			truncated = true
		}
	}
	if b.cfg.Reward == RewardProgress {
		b.shape(sl, rew, terminated)
	}
	b.rows.Terminated[i], b.rows.Truncated[i] = b2u(terminated), b2u(truncated)
	if !terminated && !truncated {
		b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.rows.ToMove[i], false)
		return nil
	}
	if b.cfg.Autoreset == NextStep {
		b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.rows.ToMove[i], true)
		sl.ended = true
		return nil
	}
	b.writeRow(sl, b.finalRow(i), b.finalMaskRow(i), &b.rows.FinalToMove[i], true)
	sl.final = snapshot(sl)
	sl.finalEv, sl.events = sl.events, sl.finalEv[:0]
	sl.endedNow = true
	return b.openEpisode(i, sl, false, w)
}

// opponentSlot applies b.actions[i], the client-played opponent's action,
// to env i, which waits for it, and resumes what the wait interrupted.
func (b *Batch) opponentSlot(i int, sl *slot, w *worker) error {
	sl.pending = false
	b.rows.Pending[i] = 0
	ev, err := sl.s.Apply(env.Action(b.actions[i]))
	if err != nil {
		return err // CheckOpponentActions let an illegal action through: a bug
	}
	if b.record {
		sl.events = append(sl.events, ev)
	}
	switch sl.cont {
	case contOpen:
		return b.resumeOpen(i, sl, w)
	case contLoad:
		_, err := b.loaded(i, sl, w)
		return err
	}
	if pending, err := b.settle(i, sl, w, contStep); err != nil || pending {
		return err
	}
	return b.finishStep(i, sl, w)
}
