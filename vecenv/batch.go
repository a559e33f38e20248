package vecenv

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// maxDiscarded bounds how many episodes in a row single mode may discard
// because the game ended before the learner's first decision.
const maxDiscarded = 64

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
	// Luck is every seat's luck over the episode's throws so far (with
	// Config.Luck; zero without).
	Luck [env.MaxPlayers]float64
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
	luck     [env.MaxPlayers]float64 // every seat's luck in the episode (Config.Luck)
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
	// faulted is set when a range hit a memory fault (ErrFault).
	faulted atomic.Bool
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
		Throws: sl.s.Throws(), Winner: sl.s.Winner(), Learner: sl.learner, Opponent: int8(sl.opp), Illegal: sl.illegal, Luck: sl.luck}
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
	if errors.Is(err, ErrFault) {
		b.faulted.Store(true)
	}
	if lo < len(b.slots) {
		b.slots[lo].err = err
	}
}

// Faulted reports whether an operation of the batch hit a memory fault in
// its rows (ErrFault): a shared region shrunk under it. Such a batch is
// done for; its owner drops it.
func (b *Batch) Faulted() bool { return b.faulted.Load() }

// Row returns env i's row of the last operation: its observation, mask and
// the seat the row is for. The slices alias the batch's rows.
func (b *Batch) Row(i int) (o []float32, m []uint8, toMove int8) {
	return b.obsRow(i), b.maskRow(i), b.rows.ToMove[i]
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
