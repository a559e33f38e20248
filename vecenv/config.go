package vecenv

import (
	"unsafe"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

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
	// Luck, when not nil, values the games' throws: every env's
	// EpisodeInfo.Luck then holds each seat's luck over its episode (the
	// luck-adjusted evaluation, docs/BASELINES.md). It is called once per
	// worker goroutine, and LuckName names what it values with.
	Luck     func() (ThrowLuck, error)
	LuckName string
}

// ThrowLuck values a chance node's throws (package luck's Accountant is
// one): for every throw t that s can draw, every seat's luck if t were
// drawn (the value after t minus the expected value over the throws). It
// does not change s.
type ThrowLuck interface {
	ThrowLuck(s *env.State, luck *[env.NumThrows][env.MaxPlayers]float64) error
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
