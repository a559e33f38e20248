package vecenv

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// maxDiscarded bounds how many episodes in a row single mode may discard
// because the game ended before the learner's first decision.
const maxDiscarded = 64

// Mode says which seats the caller drives.
type Mode uint8

const (
	// Single: one learner seat is external; the batch plays the others with
	// the opponent agent.
	Single Mode = iota
	// Multi: every seat is external; each row is for the seat to move.
	Multi
)

// Autoreset says when an env that ended starts its next episode.
type Autoreset uint8

const (
	// NextStep: the step after the terminal row resets (Gymnasium NEXT_STEP).
	NextStep Autoreset = iota
	// SameStep: the step that ends an episode resets at once and reports the
	// terminal row in the final rows (Gymnasium SAME_STEP).
	SameStep
)

// Illegal says what an illegal action does.
type Illegal uint8

const (
	// IllegalError: the step fails (CheckActions reports it) and no env changes.
	IllegalError Illegal = iota
	// IllegalPenalty: the episode ends with reward -1 for the actor.
	IllegalPenalty
)

// Reward is the reward scheme.
type Reward uint8

const (
	// RewardWin: the terminal Outcome only.
	RewardWin Reward = iota
	// RewardProgress: the terminal Outcome plus potential-based shaping by
	// race progress.
	RewardProgress
)

var (
	rewardNames    = []string{"win", "progress"}
	modeNames      = []string{"single", "multi"}
	autoresetNames = []string{"next_step", "same_step"}
	illegalNames   = []string{"error", "penalty"}
)

// ModeNames, AutoresetNames, IllegalNames and RewardNames return the names
// of the values of each kind, in value order (the protocol's spelling).
func ModeNames() []string { return append([]string(nil), modeNames...) }

// AutoresetNames returns the names of the Autoreset values, in value order.
func AutoresetNames() []string { return append([]string(nil), autoresetNames...) }

// IllegalNames returns the names of the Illegal values, in value order.
func IllegalNames() []string { return append([]string(nil), illegalNames...) }

// RewardNames returns the names of the Reward values, in value order.
func RewardNames() []string { return append([]string(nil), rewardNames...) }

// String returns the mode's name: "single" or "multi".
func (m Mode) String() string { return modeNames[m] }

// String returns the autoreset mode's name: "next_step" or "same_step".
func (a Autoreset) String() string { return autoresetNames[a] }

// String returns the illegal-action policy's name: "error" or "penalty".
func (i Illegal) String() string { return illegalNames[i] }

// String returns the reward scheme's name: "win" or "progress".
func (r Reward) String() string { return rewardNames[r] }

// RandomSeat, as Config.Seat or ResetOptions.Seat, draws the learner seat
// per episode.
const RandomSeat = -1

// Config describes a batch of envs.
type Config struct {
	Rules    env.Rules
	Tier     obs.Tier
	N        int // number of envs, at least 1
	Mode     Mode
	Seat     int    // learner seat, or RandomSeat (Single mode)
	Opponent string // agent spec for the other seats (Single mode), when Opponents is empty
	// Opponents, when not empty, is the opponent mixture (Single mode): each
	// episode draws an entry from its game seed (OpponentDraw), and the rows
	// gain the columns Opponent and Pending.
	Opponents    []Opponent
	Autoreset    Autoreset
	MaxDecisions uint32 // truncate an episode after this many steps; 0 = never
	Illegal      Illegal
	Reward       Reward
	Info         bool // record events for Info by default
}

// Bytes returns the memory a batch of c holds for its envs, whose
// observations have obsSize values: every row buffer, the envs' state and
// an allowance for recorded events (info). It is what New allocates, give
// or take a few hundred bytes, and lets a caller refuse a batch before
// allocating it.
func (c Config) Bytes(obsSize int) int64 {
	row := c.RowBytes(obsSize) + 4 + 8 // the step's columns, action, seed
	const eventAllowance = 16 * int(unsafe.Sizeof(env.Event{}))
	return int64(c.N) * int64(row+int(unsafe.Sizeof(slot{}))+eventAllowance)
}

// RowBytes returns the bytes of the columns one step writes for one env
// whose observations have obsSize values: obs, mask, reward, to_move and
// the two end flags, and with same-step autoreset the final obs, mask and
// to_move. A step's reply carries these rows; the batch holds them.
func (c Config) RowBytes(obsSize int) int {
	row := 4*obsSize + env.NumActions + 4*c.RewardWidth() + 3
	if c.Mixed() {
		row += 2 // opponent, pending
	}
	if c.Autoreset == SameStep {
		row += 4*obsSize + env.NumActions + 1
	}
	return row
}

// Mixed reports whether the batch plays an opponent mixture (Single mode,
// Opponents given): its rows then carry each env's opponent entry and
// whether the row waits for a client-played opponent.
func (c Config) Mixed() bool { return c.Mode == Single && len(c.Opponents) > 0 }

// RewardWidth returns the number of reward columns of a row: 1 in Single
// mode, one per seat in Multi mode.
func (c Config) RewardWidth() int {
	if c.Mode == Multi {
		return c.Rules.Players
	}
	return 1
}

// EpisodeInfo describes an env's running episode, or one that ended in a
// SameStep autoreset (kept while the next episode begins).
type EpisodeInfo struct {
	Episode   uint64 // episodes begun since the reset, minus one
	Seed      uint64 // the episode's game seed (env.New)
	Steps     uint32 // steps taken in the episode
	Decisions int
	Throws    int
	Winner    int
	Places    [env.MaxPlayers]int8
	Learner   int8 // Single mode: the learner's seat
	Opponent  int8 // Single mode: the episode's opponent entry (Config.Mixture)
	Illegal   bool // the episode was ended by an illegal action (IllegalPenalty)
}

// slot is one env of a batch: the game, its seeds and its episode counters.
type slot struct {
	s        env.State
	seed0    uint64 // game seed of the first episode after the reset
	seed     uint64 // game seed of the running episode
	episode  uint64 // episodes begun since reset, minus one
	steps    uint32 // step calls in the running episode
	learner  int8
	opp      uint8      // the episode's opponent entry, of oset
	oset     *opponents // the mixture the episode drew from (SetOpponents replaces the batch's, not this)
	pending  bool       // the row waits for the client-played opponent's action
	cont     uint8      // what OpponentStep resumes: contStep, contOpen or contLoad
	tries    uint8      // games discarded in a row by the episode being opened
	ended    bool       // the terminal row was returned (next_step): the next step resets
	illegal  bool       // the running (or just ended) episode was ended by a penalty
	endedNow bool       // same_step: an episode ended in this step; final holds it
	events   []env.Event
	phi      [env.MaxPlayers]float32 // progress potentials at the last row written (reward "progress")
	final    EpisodeInfo
	finalEv  []env.Event
	err      error // a failure while stepping this env (a bug or a failing agent)
}

// Batch is N envs stepped together, with the buffers of their results
// reused from one step to the next. A Batch is not safe for concurrent use;
// Reset and Step spread its envs over a Pool's workers.
type Batch struct {
	cfg     Config
	enc     *obs.Encoder
	d       int // observation size
	rw      int // reward columns: 1 or players
	slots   []slot
	started bool // reset at least once
	start   int  // reset option: starting seat or env.AnySeat
	seat    int  // reset option: learner seat or RandomSeat

	// Per-request inputs of runRange.
	op      int // opStep or opReset
	actions []int32
	record  bool
	seeds   []uint64

	rows Rows
	wg   sync.WaitGroup

	opps *opponents // Single mode: the mixture and its idle agents
	// workers holds idle *worker values: a range takes one instead of
	// zeroing a new one's agent tables on every step.
	workers sync.Pool
}

// Rows are a batch's results, row i for env i. The slices belong to the
// batch: the next Reset or Step overwrites them.
type Rows struct {
	Obs         []float32 // N x ObsSize: each row's observation, seen by ToMove[i]
	Mask        []uint8   // N x env.NumActions: the legal actions of that seat; all 0 for a terminal row
	Reward      []float32 // N x RewardWidth
	Terminated  []uint8   // N: 1 if the episode ended by the rules (or an illegal action)
	Truncated   []uint8   // N: 1 if the episode hit MaxDecisions
	ToMove      []int8    // N: the seat the row is for (the learner in Single mode)
	FinalObs    []float32 // SameStep only: the terminal rows of episodes that ended in this step
	FinalMask   []uint8
	FinalToMove []int8 // -1 where no episode ended
	// Mixed batches only (Config.Mixed), else nil:
	Opponent []uint8 // N: the opponent entry of each env's running episode
	Pending  []uint8 // N: 1 where the row is for a client-played opponent, which OpponentStep answers
}

const (
	opStep = iota
	opReset
	opOpponent
)

// What OpponentStep resumes in an env waiting for a client-played opponent.
const (
	contStep = iota // a learner's step: then its reward, flags and row
	contOpen        // the opening of an episode: then the learner's first row
	contLoad        // a Load: then the loaded game's row
)

// Sentinel errors of CheckActions.
var (
	// ErrActionRange is wrapped when an action is outside 0..env.NumActions-1.
	ErrActionRange = errors.New("action out of range")
	// ErrIllegalAction is env.ErrIllegalAction, wrapped when an action is
	// not legal and the batch's policy is IllegalError.
	ErrIllegalAction = env.ErrIllegalAction
)

// New allocates a batch and every buffer it will use. It builds the batch's
// encoder (Encoder returns it); the envs start only with Reset.
func New(cfg Config) (*Batch, error) {
	switch {
	case cfg.N < 1:
		return nil, fmt.Errorf("vecenv: %d envs: want at least 1", cfg.N)
	case cfg.Mode == Single && cfg.Seat != RandomSeat && (cfg.Seat < 0 || cfg.Seat >= cfg.Rules.Players):
		return nil, fmt.Errorf("vecenv: learner seat %d out of range 0..%d", cfg.Seat, cfg.Rules.Players-1)
	}
	enc, err := obs.NewEncoder(cfg.Rules, cfg.Tier)
	if err != nil {
		return nil, err
	}
	var opps *opponents
	if cfg.Mode == Single {
		mix, err := cfg.Mixture()
		if err != nil {
			return nil, fmt.Errorf("vecenv: %w", err)
		}
		if opps, err = newOpponents(mix); err != nil {
			return nil, err
		}
	}
	n, d := cfg.N, enc.Size()
	b := &Batch{cfg: cfg, enc: enc, d: d, rw: cfg.RewardWidth(), slots: make([]slot, n), start: env.AnySeat, seat: cfg.Seat, opps: opps}
	b.actions = make([]int32, n)
	b.seeds = make([]uint64, n)
	b.rows = Rows{
		Obs:        make([]float32, n*d),
		Mask:       make([]uint8, n*env.NumActions),
		Reward:     make([]float32, n*b.rw),
		Terminated: make([]uint8, n),
		Truncated:  make([]uint8, n),
		ToMove:     make([]int8, n),
	}
	if cfg.Mixed() {
		b.rows.Opponent = make([]uint8, n)
		b.rows.Pending = make([]uint8, n)
	}
	if cfg.Autoreset == SameStep {
		b.rows.FinalObs = make([]float32, n*d)
		b.rows.FinalMask = make([]uint8, n*env.NumActions)
		b.rows.FinalToMove = make([]int8, n)
	}
	return b, nil
}

// Config returns the batch's configuration.
func (b *Batch) Config() Config { return b.cfg }

// Encoder returns the batch's observation encoder.
func (b *Batch) Encoder() *obs.Encoder { return b.enc }

// N returns the number of envs.
func (b *Batch) N() int { return b.cfg.N }

// Bytes returns the memory the batch holds for its envs: Config.Bytes.
func (b *Batch) Bytes() int64 { return b.cfg.Bytes(b.d) }

// ObsSize returns the length of one observation row.
func (b *Batch) ObsSize() int { return b.d }

// Started reports whether the batch was reset (successfully) at least once.
func (b *Batch) Started() bool { return b.started }

// Rows returns the results of the last Reset or Step.
func (b *Batch) Rows() *Rows { return &b.rows }

// Actions returns the batch's action buffer, one per env: fill it, then
// call CheckActions and Step.
func (b *Batch) Actions() []int32 { return b.actions }

// Seeds returns the batch's seed buffer, one per env: the game seed of each
// env's first episode after the next Reset (later episodes derive theirs
// with EpisodeSeed). SeedAll fills it from one seed, or the caller does;
// after Reset it holds the seeds used.
func (b *Batch) Seeds() []uint64 { return b.seeds }

// SeedAll seeds env i with GameSeed(base, i) = base + i, Gymnasium's
// convention for vector envs: env i of a batch plays exactly as a lone env
// seeded base + i, and as game i of a command-line run seeded base.
func (b *Batch) SeedAll(base uint64) {
	for i := range b.seeds {
		b.seeds[i] = GameSeed(base, i)
	}
}

// State returns env i's game. The caller may read it; changing it is Load's job.
func (b *Batch) State(i int) *env.State { return &b.slots[i].s }

// Info returns what env i's running episode looks like now, the events of
// the last operation, and (SameStep, when an episode ended in the last Step)
// the info and events of the episode that ended; final is nil otherwise.
// events are recorded only when the operation recorded (Info or record).
func (b *Batch) Info(i int) (cur EpisodeInfo, events []env.Event, final *EpisodeInfo, finalEvents []env.Event) {
	sl := &b.slots[i]
	cur = snapshot(sl)
	if b.cfg.Autoreset == SameStep && sl.endedNow {
		return cur, sl.events, &sl.final, sl.finalEv
	}
	return cur, sl.events, nil, nil
}

// ResetOptions are Reset's options.
type ResetOptions struct {
	Start   int  // the seat that begins every game, or env.AnySeat to draw it from the seed
	Seat    int  // Single mode: the learner seat from now on, or RandomSeat; used when SeatSet
	SeatSet bool // Seat overrides Config.Seat (else Config.Seat applies)
	Record  bool // record events for Info
}

// Reset starts every env afresh from the seeds in Seeds(), spread over p's
// workers (p nil: in the caller's goroutine). On an error no env is usable
// until the next successful Reset.
func (b *Batch) Reset(p *Pool, o ResetOptions) error {
	players := b.cfg.Rules.Players
	switch {
	case o.Start != env.AnySeat && (o.Start < 0 || o.Start >= players):
		return fmt.Errorf("vecenv: start seat %d out of range 0..%d", o.Start, players-1)
	case o.SeatSet && b.cfg.Mode == Multi:
		return errors.New("vecenv: a learner seat applies to Single mode only")
	case o.SeatSet && o.Seat != RandomSeat && (o.Seat < 0 || o.Seat >= players):
		return fmt.Errorf("vecenv: learner seat %d out of range 0..%d", o.Seat, players-1)
	}
	b.start = o.Start
	b.seat = b.cfg.Seat
	if o.SeatSet {
		b.seat = o.Seat
	}
	b.record = o.Record
	b.op = opReset
	p.run(b, b.cfg.N, &b.wg)
	if err := b.firstError(); err != nil {
		b.started = false
		return err
	}
	b.started = true
	return nil
}

// Step applies Actions() to every env (after CheckActions), spread over p's
// workers (p nil: in the caller's goroutine), and writes the rows. record
// says whether to record events for Info.
func (b *Batch) Step(p *Pool, record bool) error { return b.play(p, record, opStep) }

// play runs operation op (opStep, opOpponent) of a started batch over p's workers.
func (b *Batch) play(p *Pool, record bool, op int) error {
	if !b.started {
		return ErrNeedsReset
	}
	b.record = record
	b.op = op
	p.run(b, b.cfg.N, &b.wg)
	return b.firstError()
}

// ErrNeedsReset is returned by Step before the first successful Reset.
var ErrNeedsReset = errors.New("vecenv: the batch was never reset")

// single reports whether the batch is in single mode.
func (b *Batch) single() bool { return b.cfg.Mode == Single }

// runRange serves envs lo..hi-1 of the current operation; the worker pool
// calls it on disjoint ranges at once.
func (b *Batch) runRange(lo, hi int) {
	w := b.worker()
	defer b.done(w)
	for i := lo; i < hi; i++ {
		sl := &b.slots[i]
		sl.err = nil
		var err error
		switch b.op {
		case opStep:
			err = b.stepSlot(i, sl, w)
		case opReset:
			err = b.resetSlot(i, sl, w)
		case opOpponent:
			if !sl.pending {
				continue
			}
			err = b.opponentSlot(i, sl, w)
		}
		if err != nil {
			sl.err = err
		}
		if b.rows.Opponent != nil {
			b.rows.Opponent[i] = sl.opp
		}
	}
}

// firstError returns the first env failure of the last operation.
func (b *Batch) firstError() error {
	for i := range b.slots {
		if err := b.slots[i].err; err != nil {
			return fmt.Errorf("env %d: %w", i, err)
		}
	}
	return nil
}

// CheckActions validates Actions() before anything changes: no env waits
// for a client-played opponent (ErrPending), ranges always
// (ErrActionRange), legality under IllegalError (ErrIllegalAction).
func (b *Batch) CheckActions() error {
	if i := b.firstPending(); i >= 0 {
		return fmt.Errorf("env %d: %w (seat %d is to move): answer with the opponents' actions first", i, ErrPending, b.slots[i].s.ToMove())
	}
	if err := checkRange(b.actions); err != nil {
		return err
	}
	if b.cfg.Illegal != IllegalError {
		return nil
	}
	for i, a := range b.actions {
		sl := &b.slots[i]
		if sl.ended || sl.s.IsLegal(env.Action(a)) {
			continue
		}
		return b.illegal(i, sl, a)
	}
	return nil
}

// checkRange checks that every action is one of the codec's.
func checkRange(actions []int32) error {
	for i, a := range actions {
		if a < 0 || a >= env.NumActions {
			return fmt.Errorf("actions[%d] = %d is out of range 0..%d: %w", i, a, env.NumActions-1, ErrActionRange)
		}
	}
	return nil
}

// illegal explains why action a is illegal in env i, wrapping ErrIllegalAction.
func (b *Batch) illegal(i int, sl *slot, a int32) error {
	c := sl.s
	_, err := c.Apply(env.Action(a))
	if !errors.Is(err, ErrIllegalAction) {
		err = fmt.Errorf("%w: %w", ErrIllegalAction, err)
	}
	return fmt.Errorf("env %d, seat %d: %w", i, sl.s.ToMove(), err)
}

// firstPending returns the first env waiting for a client-played opponent, or -1.
func (b *Batch) firstPending() int {
	if b.rows.Pending == nil {
		return -1
	}
	for i := range b.slots {
		if b.slots[i].pending {
			return i
		}
	}
	return -1
}

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
	sl.pending = false
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
			ev, err := sl.s.SampleThrow()
			if err != nil {
				return false, err
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

// CheckOpponentActions validates Actions() for OpponentStep before anything
// changes: some env waits for a client-played opponent (else ErrNotPending),
// and the action of every env that waits is in range (ErrActionRange) and
// legal (ErrIllegalAction, whatever Config.Illegal says: the penalty is the
// learner's). The actions of the other envs are ignored.
func (b *Batch) CheckOpponentActions() error {
	if b.firstPending() < 0 {
		return ErrNotPending
	}
	for i, a := range b.actions {
		sl := &b.slots[i]
		if !sl.pending {
			continue
		}
		if a < 0 || a >= env.NumActions {
			return fmt.Errorf("actions[%d] = %d is out of range 0..%d: %w", i, a, env.NumActions-1, ErrActionRange)
		}
		if !sl.s.IsLegal(env.Action(a)) {
			return b.illegal(i, sl, a)
		}
	}
	return nil
}

// OpponentStep applies Actions() to the envs that wait for a client-played
// opponent (after CheckOpponentActions) and carries each on to the
// learner's next decision, the end of its step, or the client-played
// opponent's next decision, writing its row as Step would. The rows of the
// other envs, and the rewards, flags and events so far of the waiting ones,
// are kept: once no env waits (Rows.Pending all 0), the rows are those of
// one complete Step. record says whether to record events for Info.
func (b *Batch) OpponentStep(p *Pool, record bool) error { return b.play(p, record, opOpponent) }

// Pending reports whether some env waits for a client-played opponent.
func (b *Batch) Pending() bool { return b.firstPending() >= 0 }

// Opponents returns the batch's opponent mixture (Single mode).
func (b *Batch) Opponents() []Opponent {
	if b.opps == nil {
		return nil
	}
	return append([]Opponent(nil), b.opps.opps...)
}

// SetOpponents replaces the opponent mixture of a batch made with one
// (Config.Mixed) from the next episode each env begins on: a running
// episode finishes against the entry it drew, of the mixture it drew from
// (Rows.Opponent indexes that mixture until the episode ends).
func (b *Batch) SetOpponents(mix []Opponent) error {
	if !b.cfg.Mixed() {
		return fmt.Errorf("vecenv: %w: the batch was made with one opponent; make it with Opponents to change them", ErrMixture)
	}
	cfg := b.cfg
	cfg.Opponents = mix
	mix, err := cfg.Mixture()
	if err != nil {
		return fmt.Errorf("vecenv: %w", err)
	}
	opps, err := newOpponents(mix)
	if err != nil {
		return err
	}
	b.opps, b.cfg = opps, cfg
	return nil
}

// snapshot records the info of sl's running episode.
func snapshot(sl *slot) EpisodeInfo {
	f := EpisodeInfo{Episode: sl.episode, Seed: sl.seed, Steps: sl.steps, Decisions: sl.s.Decisions(),
		Throws: sl.s.Throws(), Winner: sl.s.Winner(), Learner: sl.learner, Opponent: int8(sl.opp), Illegal: sl.illegal}
	for p := 0; p < sl.s.Rules().Players; p++ {
		f.Places[p] = int8(sl.s.Place(p))
	}
	return f
}

func b2u(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

func (b *Batch) obsRow(i int) []float32    { return b.rows.Obs[i*b.d : (i+1)*b.d] }
func (b *Batch) rewardRow(i int) []float32 { return b.rows.Reward[i*b.rw : (i+1)*b.rw] }
func (b *Batch) maskRow(i int) []uint8     { return b.rows.Mask[i*env.NumActions : (i+1)*env.NumActions] }
func (b *Batch) finalRow(i int) []float32  { return b.rows.FinalObs[i*b.d : (i+1)*b.d] }
func (b *Batch) finalMaskRow(i int) []uint8 {
	return b.rows.FinalMask[i*env.NumActions : (i+1)*env.NumActions]
}

// seatOf returns the seat sl's rows are for: the learner in single mode, the
// seat to move in multi mode.
func (b *Batch) seatOf(sl *slot) int {
	if b.single() {
		return int(sl.learner)
	}
	return sl.s.ToMove()
}

// writeRow encodes sl's observation for the seat it belongs to (the learner
// in single mode, the seat to move in multi mode), its mask (all zero for an
// ended episode) and that seat.
func (b *Batch) writeRow(sl *slot, o []float32, m []uint8, seat *int8, ended bool) {
	who := b.seatOf(sl)
	*seat = int8(who)
	b.enc.Encode(&sl.s, who, o)
	if ended {
		clear(m)
		return
	}
	sl.s.Mask(m)
}

// fail records a failure (a recovered panic) of the range starting at lo.
func (b *Batch) fail(lo int, err error) {
	if lo < len(b.slots) {
		b.slots[lo].err = err
	}
}

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

// Row returns env i's row of the last operation: its observation, mask and
// the seat the row is for. The slices alias the batch's rows.
func (b *Batch) Row(i int) (o []float32, m []uint8, toMove int8) {
	return b.obsRow(i), b.maskRow(i), b.rows.ToMove[i]
}

// ErrRulesMismatch is wrapped by Load when a state's rules are not the batch's.
var ErrRulesMismatch = errors.New("the state's rules are not the batch's")

// Load replaces env i's game with s and writes env i's row (Row returns it).
// In Single mode seat, when not RandomSeat, becomes the env's learner; in
// Multi mode it must be RandomSeat. The batch plays the opponents (Single
// mode) and throws up to the next decision; a game that is over reads as
// ended, so the next Step starts a new episode. The episode counters restart.
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

// FirstLegal fills actions with the first legal action of each mask row (N
// rows of env.NumActions), or 0 for a row without one (a terminal row, whose
// action the next Step ignores): the simplest policy, for examples, tests
// and benchmarks.
func FirstLegal(mask []uint8, actions []int32) {
	for i := range actions {
		a := bytes.IndexByte(mask[i*env.NumActions:(i+1)*env.NumActions], 1)
		actions[i] = int32(max(a, 0))
	}
}
