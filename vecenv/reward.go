package vecenv

import (
	"github.com/yutenv/yutenv/env"
)

// progressScale weighs the shaping potential: a seat that has every piece
// home while its opponents have not moved is worth +0.5 (a win is +1).
const progressScale = 0.5

// Potentials writes each seat's shaping potential of the reward scheme
// RewardProgress: progressScale times its race progress minus the mean
// progress of the other seats. A seat's progress is the fraction of the
// total steps its pieces have covered (a piece in hand has covered none, a
// finished piece all, a piece on the board the steps its route needs from
// entry minus what it still needs). A learner's shaped reward for a step is
// the potential of its seat at its next decision minus the one at its last
// (0 in place of the next once the game is over); datasets record every
// decision's potential of the seat to move, so that the same reward is
// computed offline.
func Potentials(s *env.State, phi *[env.MaxPlayers]float32) {
	r := s.Rules()
	full := float64(r.LapSteps()) // steps from hand to finished on the rules' board
	var prog [env.MaxPlayers]float64
	for p := 0; p < r.Players; p++ {
		prog[p] = float64(s.Finished(p)) * full
	}
	for st := env.Station(0); st < env.NumStations; st++ {
		if seat, h, route, ok := s.StackAt(st); ok {
			// Rounded before the sum: arm64 would fuse it into an FMA and the
			// shaped reward would differ in its last bit (docs/COMPATIBILITY.md, "Seeds").
			prog[seat] += float64(float64(h) * (full - float64(r.StepsToFinish(st, route))))
		}
	}
	var total float64
	for p := 0; p < r.Players; p++ {
		prog[p] /= full * float64(r.Pieces)
		total += prog[p]
	}
	for p := 0; p < env.MaxPlayers; p++ {
		if p >= r.Players {
			phi[p] = 0
			continue
		}
		others := (total - prog[p]) / float64(r.Players-1)
		phi[p] = float32(progressScale * (prog[p] - others))
	}
}

// shape adds potential-based shaping (Ng, Harada and Russell, 1999) to the
// reward row: phi(after) - phi(before), with phi = 0 once the episode has
// terminated, so the shaping sums to zero over an episode and leaves the
// optimal policy unchanged. Truncation keeps the last potential.
func (b *Batch) shape(sl *slot, rew []float32, terminated bool) {
	var next [env.MaxPlayers]float32
	if !terminated {
		Potentials(&sl.s, &next)
	}
	if b.single() {
		rew[0] += next[sl.learner] - sl.phi[sl.learner]
	} else {
		for p := range rew {
			rew[p] += next[p] - sl.phi[p]
		}
	}
	sl.phi = next
}
