package server

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

// episodeStream is the PCG stream of every env's episode generator ("episode1").
const episodeStream = 0x657069736f646531

// maxDiscarded bounds how many episodes in a row single mode may discard
// because the game ended before the learner's first decision.
const maxDiscarded = 64

// modeKind says which seats a client drives.
type modeKind uint8

const (
	// modeSingle: one learner seat is external; the server plays the others.
	modeSingle modeKind = iota
	// modeMulti: every seat is external.
	modeMulti
)

// autoresetKind says when an env that ended starts its next episode.
type autoresetKind uint8

const (
	// nextStep: the step after the terminal row resets (Gymnasium NEXT_STEP).
	nextStep autoresetKind = iota
	// sameStep: the step that ends an episode resets at once (Gymnasium SAME_STEP).
	sameStep
)

// illegalKind says what an illegal action does.
type illegalKind uint8

const (
	// illegalError: the step fails and no env changes.
	illegalError illegalKind = iota
	// illegalPenalty: the episode ends with reward -1 for the actor.
	illegalPenalty
)

// rewardKind is the reward scheme.
type rewardKind uint8

const (
	// rewardWin: the terminal Outcome only.
	rewardWin rewardKind = iota
	// rewardProgress: the terminal Outcome plus potential-based shaping by race progress.
	rewardProgress
)

var (
	rewardNames    = []string{"win", "progress"}
	modeNames      = []string{"single", "multi"}
	autoresetNames = []string{"next_step", "same_step"}
	illegalNames   = []string{"error", "penalty"}
)

func (m modeKind) String() string      { return modeNames[m] }
func (a autoresetKind) String() string { return autoresetNames[a] }
func (i illegalKind) String() string   { return illegalNames[i] }
func (r rewardKind) String() string    { return rewardNames[r] }

// randomSeat, as batchConfig.Seat, draws the learner seat per episode.
const randomSeat = -1

// batchConfig describes a batch of envs: everything make accepts.
type batchConfig struct {
	Rules        env.Rules
	Tier         obs.Tier
	N            int
	Mode         modeKind
	Seat         int    // learner seat, or randomSeat (single mode)
	Opponent     string // agent spec for the other seats (single mode)
	Autoreset    autoresetKind
	MaxDecisions uint32 // 0 = no truncation
	Illegal      illegalKind
	Reward       rewardKind
	Info         bool
}

// finalInfo is what info reports about an episode that ended in a same_step
// autoreset, kept while the next episode begins.
type finalInfo struct {
	episode   uint64
	seed      uint64
	steps     uint32
	decisions int
	throws    int
	winner    int
	places    [env.MaxPlayers]int8
	learner   int8
	illegal   bool
}

// slot is one env of a batch: the game, its generators, its opponents and
// its episode counters.
type slot struct {
	s        env.State
	epi      rand.PCG
	agents   []agent.Agent // single mode: one per seat (the learner's unused)
	seed     uint64        // game seed of the running episode
	episode  uint64        // episodes begun since reset, minus one
	steps    uint32        // step calls in the running episode
	learner  int8
	ended    bool // the terminal row was returned (next_step): the next step resets
	illegal  bool // the running (or just ended) episode was ended by a penalty
	endedNow bool // same_step: an episode ended in this step; final holds it
	events   []env.Event
	phi      [env.MaxPlayers]float32 // progress potentials at the last row written (reward "progress")
	final    finalInfo
	finalEv  []env.Event
	err      error // a failure inside the server while stepping this env
}

// batch is a handle: N envs stepped together, with the buffers of their
// results reused from one step to the next.
type batch struct {
	cfg     batchConfig
	enc     *obs.Encoder
	d       int // observation size
	rw      int // reward columns: 1 or players
	slots   []slot
	started bool // reset at least once
	start   int  // reset option: starting seat or env.AnySeat
	seat    int  // reset option: learner seat or randomSeat

	// Per-request inputs of runRange.
	op      int // opStep or opReset
	actions []int32
	record  bool
	seeds   []uint64

	// Results, row i for env i.
	obs         []float32
	mask        []uint8
	reward      []float32
	term, trunc []uint8
	toMove      []int8
	finalObs    []float32 // same_step only
	finalMask   []uint8
	finalToMove []int8

	wg sync.WaitGroup
}

const (
	opStep = iota
	opReset
)

// newBatch allocates a batch and every buffer it will use.
func newBatch(cfg batchConfig) (*batch, error) {
	enc, err := obs.NewEncoder(cfg.Rules, cfg.Tier)
	if err != nil {
		return nil, err
	}
	n, d := cfg.N, enc.Size()
	b := &batch{cfg: cfg, enc: enc, d: d, rw: 1, slots: make([]slot, n), start: env.AnySeat, seat: cfg.Seat}
	if cfg.Mode == modeMulti {
		b.rw = cfg.Rules.Players
	}
	b.actions = make([]int32, n)
	b.seeds = make([]uint64, n)
	b.obs = make([]float32, n*d)
	b.mask = make([]uint8, n*env.NumActions)
	b.reward = make([]float32, n*b.rw)
	b.term = make([]uint8, n)
	b.trunc = make([]uint8, n)
	b.toMove = make([]int8, n)
	if cfg.Autoreset == sameStep {
		b.finalObs = make([]float32, n*d)
		b.finalMask = make([]uint8, n*env.NumActions)
		b.finalToMove = make([]int8, n)
	}
	return b, nil
}

// single reports whether the batch is in single mode.
func (b *batch) single() bool { return b.cfg.Mode == modeSingle }

// runRange serves envs lo..hi-1 of the current operation; the worker pool
// calls it on disjoint ranges at once.
func (b *batch) runRange(lo, hi int) {
	for i := lo; i < hi; i++ {
		sl := &b.slots[i]
		sl.err = nil
		var err error
		switch b.op {
		case opStep:
			err = b.stepSlot(i, sl)
		case opReset:
			err = b.resetSlot(i, sl)
		}
		if err != nil {
			sl.err = err
		}
	}
}

// firstError returns the first env failure of the last operation.
func (b *batch) firstError() error {
	for i := range b.slots {
		if err := b.slots[i].err; err != nil {
			return fmt.Errorf("env %d: %w", i, err)
		}
	}
	return nil
}

// checkActions validates b.actions[:n] before anything changes: ranges
// always, legality under the error policy. It returns a protocol error.
func (b *batch) checkActions() *Error {
	for i, a := range b.actions {
		if a < 0 || a >= env.NumActions {
			return errorf(CodeBadRequest, "step: actions[%d] = %d is out of range 0..%d", i, a, env.NumActions-1)
		}
	}
	if b.cfg.Illegal != illegalError {
		return nil
	}
	for i, a := range b.actions {
		sl := &b.slots[i]
		if sl.ended || sl.s.IsLegal(env.Action(a)) {
			continue
		}
		c := sl.s
		_, err := c.Apply(env.Action(a))
		return errorf(CodeIllegalAction, "step: env %d, seat %d: %v", i, sl.s.ToMove(), err)
	}
	return nil
}

// resetSlot starts env i afresh from b.seeds[i].
func (b *batch) resetSlot(i int, sl *slot) error {
	seed := b.seeds[i]
	sl.epi = *rand.NewPCG(seed, episodeStream)
	sl.episode = 0
	sl.events = sl.events[:0]
	sl.finalEv = sl.finalEv[:0]
	sl.endedNow = false
	if b.single() {
		p := b.cfg.Rules.Players
		if len(sl.agents) != p {
			sl.agents = make([]agent.Agent, p)
		}
		for seat := 0; seat < p; seat++ {
			ag, err := agent.New(b.cfg.Opponent, sl.epi.Uint64())
			if err != nil {
				return err
			}
			sl.agents[seat] = ag
		}
	}
	if err := b.beginEpisode(sl, seed, true); err != nil {
		return err
	}
	b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.toMove[i], false)
	return nil
}

// beginEpisode starts the next episode of sl: its game seed is seed when
// first (right after reset), else the next output of the episode generator.
// In single mode it plays the opponents up to the learner's first decision,
// discarding games that end before it.
func (b *batch) beginEpisode(sl *slot, seed uint64, first bool) error {
	for tries := 0; tries < maxDiscarded; tries++ {
		if !first || tries > 0 {
			seed = sl.epi.Uint64()
			sl.episode++
		}
		learner := b.seat
		if learner == randomSeat {
			hi, _ := bits.Mul64(sl.epi.Uint64(), uint64(b.cfg.Rules.Players))
			learner = int(hi)
		}
		s, err := env.New(b.cfg.Rules, seed, b.start)
		if err != nil {
			return err
		}
		sl.s, sl.seed, sl.learner = s, seed, int8(learner)
		sl.steps, sl.ended, sl.illegal = 0, false, false
		if err := b.settle(sl); err != nil {
			return err
		}
		if !sl.s.IsOver() || !b.single() {
			potentials(&sl.s, &sl.phi)
			return nil
		}
		sl.events = sl.events[:0] // the discarded game's events
	}
	return fmt.Errorf("%d games in a row ended before the learner's first decision", maxDiscarded)
}

// settle throws until a decision or the end and, in single mode, plays the
// opponents until the learner's decision or the end.
func (b *batch) settle(sl *slot) error {
	for {
		for sl.s.Phase() == env.PhaseThrow {
			ev, err := sl.s.SampleThrow()
			if err != nil {
				return err
			}
			if b.record {
				sl.events = append(sl.events, ev)
			}
		}
		if !b.single() || sl.s.Phase() != env.PhaseMove || sl.s.ToMove() == int(sl.learner) {
			return nil
		}
		seat := sl.s.ToMove()
		a, err := sl.agents[seat].Act(&sl.s)
		if err != nil {
			return fmt.Errorf("opponent %q at seat %d: %w", b.cfg.Opponent, seat, err)
		}
		ev, err := sl.s.Apply(a)
		if err != nil {
			return fmt.Errorf("opponent %q at seat %d: %w", b.cfg.Opponent, seat, err)
		}
		if b.record {
			sl.events = append(sl.events, ev)
		}
	}
}

// stepSlot applies b.actions[i] to env i and writes its result row.
func (b *batch) stepSlot(i int, sl *slot) error {
	sl.events = sl.events[:0]
	sl.endedNow = false
	rew := b.reward[i*b.rw : (i+1)*b.rw]
	clear(rew)
	b.term[i], b.trunc[i] = 0, 0
	if b.cfg.Autoreset == sameStep {
		clear(b.finalRow(i))
		clear(b.finalMaskRow(i))
		b.finalToMove[i] = -1
	}
	if sl.ended {
		if err := b.beginEpisode(sl, 0, false); err != nil {
			return err
		}
		b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.toMove[i], false)
		return nil
	}
	actor := sl.s.ToMove()
	ev, err := sl.s.Apply(env.Action(b.actions[i]))
	sl.steps++
	terminated, truncated := false, false
	if err != nil {
		if b.cfg.Illegal != illegalPenalty {
			return err // checkActions let an illegal action through: a bug
		}
		sl.illegal, terminated = true, true
		if b.single() {
			rew[0] = -1
		} else {
			rew[actor] = -1
		}
	} else {
		if b.record {
			sl.events = append(sl.events, ev)
		}
		if err := b.settle(sl); err != nil {
			return err
		}
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
	if b.cfg.Reward == rewardProgress {
		b.shape(sl, rew, terminated)
	}
	b.term[i], b.trunc[i] = b2u(terminated), b2u(truncated)
	if !terminated && !truncated {
		b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.toMove[i], false)
		return nil
	}
	if b.cfg.Autoreset == nextStep {
		b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.toMove[i], true)
		sl.ended = true
		return nil
	}
	b.writeRow(sl, b.finalRow(i), b.finalMaskRow(i), &b.finalToMove[i], true)
	sl.final = snapshot(sl)
	sl.finalEv, sl.events = sl.events, sl.finalEv[:0]
	sl.endedNow = true
	if err := b.beginEpisode(sl, 0, false); err != nil {
		return err
	}
	b.writeRow(sl, b.obsRow(i), b.maskRow(i), &b.toMove[i], false)
	return nil
}

// snapshot records the info of sl's running episode.
func snapshot(sl *slot) finalInfo {
	f := finalInfo{episode: sl.episode, seed: sl.seed, steps: sl.steps, decisions: sl.s.Decisions(),
		throws: sl.s.Throws(), winner: sl.s.Winner(), learner: sl.learner, illegal: sl.illegal}
	for p := 0; p < sl.s.Rules().Players; p++ {
		f.places[p] = int8(sl.s.Place(p))
	}
	return f
}

func b2u(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

func (b *batch) obsRow(i int) []float32   { return b.obs[i*b.d : (i+1)*b.d] }
func (b *batch) maskRow(i int) []uint8    { return b.mask[i*env.NumActions : (i+1)*env.NumActions] }
func (b *batch) finalRow(i int) []float32 { return b.finalObs[i*b.d : (i+1)*b.d] }
func (b *batch) finalMaskRow(i int) []uint8 {
	return b.finalMask[i*env.NumActions : (i+1)*env.NumActions]
}

// seatOf returns the seat sl's rows are for: the learner in single mode, the
// seat to move in multi mode.
func (b *batch) seatOf(sl *slot) int {
	if b.single() {
		return int(sl.learner)
	}
	return sl.s.ToMove()
}

// writeRow encodes sl's observation for the seat it belongs to (the learner
// in single mode, the seat to move in multi mode), its mask (all zero for an
// ended episode) and that seat.
func (b *batch) writeRow(sl *slot, o []float32, m []uint8, seat *int8, ended bool) {
	who := b.seatOf(sl)
	*seat = int8(who)
	encodeFor(b.enc, &sl.s, who, o)
	if ended {
		clear(m)
		return
	}
	sl.s.Mask(m)
}

// encodeFor writes the observation of s as seen by seat. The encoder sees
// the seat to move, so for another seat (only ever after the game is over:
// the opponent made the last move) it encodes the final position viewed by
// that seat.
func encodeFor(enc *obs.Encoder, s *env.State, seat int, dst []float32) {
	if s.ToMove() == seat {
		enc.Encode(s, dst)
		return
	}
	v, _ := s.ViewedBy(seat)
	enc.Encode(&v, dst)
}

// fail records a failure (a recovered panic) of the range starting at lo.
func (b *batch) fail(lo int, err error) {
	if lo < len(b.slots) {
		b.slots[lo].err = err
	}
}

// progressScale weighs the shaping potential: a seat that has every piece
// home while its opponents have not moved is worth +0.5 (a win is +1).
const progressScale = 0.5

// potentials writes each seat's shaping potential: progressScale times its
// race progress minus the mean progress of the other seats. A seat's progress
// is the fraction of the total steps its pieces have covered (a piece in
// hand has covered none, a finished piece all, a piece on the board the steps
// its route needs from entry minus what it still needs).
func potentials(s *env.State, phi *[env.MaxPlayers]float32) {
	r := s.Rules()
	full := float64(r.LapSteps()) // steps from hand to finished on the rules' board
	var prog [env.MaxPlayers]float64
	for p := 0; p < r.Players; p++ {
		prog[p] = float64(s.Finished(p)) * full
	}
	for st := env.Station(0); st < env.NumStations; st++ {
		if seat, h, route, ok := s.StackAt(st); ok {
			prog[seat] += float64(h) * (full - float64(r.StepsToFinish(st, route)))
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
func (b *batch) shape(sl *slot, rew []float32, terminated bool) {
	var next [env.MaxPlayers]float32
	if !terminated {
		potentials(&sl.s, &next)
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
