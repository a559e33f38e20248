package dataset

import (
	"slices"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// Columns holds the dataset rows of one game or one shard, in the order of
// Arrays, and the rows of its games (GameArrays: every seat's observation
// of the final position). The zero value is not usable: NewColumns sets the
// observation size.
type Columns struct {
	obsSize     int
	obs         []float32
	mask        []uint8
	action      []int32
	policy      []float32
	value       []float32
	searchValue []float32
	seat        []int8
	game        []int64
	decision    []int32
	potential   []float32 // the shaping potential of the seat to move (vecenv.Potentials)
	searched    []uint8   // 1 if the agent searched the decision (Stats.Simulations > 0)
	visits      []float32 // only withVisits
	withVisits  bool
	target      []uint8 // only withTargets: 1 if the row's policy is a target
	withTargets bool
	rows        int
	final       []float32 // per game: the final position's observation for every seat
	games       int       // games ended (EndGame)
}

// NewColumns returns empty columns for observations of obsSize values.
func NewColumns(obsSize int) *Columns { return &Columns{obsSize: obsSize} }

// NewVisitColumns returns empty columns that also keep the raw visit
// counts of every decision (for a dataset with Config.Visits).
func NewVisitColumns(obsSize int) *Columns { return &Columns{obsSize: obsSize, withVisits: true} }

// NewTargetColumns returns empty columns with visit counts and the
// policy_target flag of every row (for a dataset with Config.Visits and
// Config.PolicyTargets: self-play with playout cap randomization). Rows are
// added by AddTargetDecision.
func NewTargetColumns(obsSize int) *Columns {
	return &Columns{obsSize: obsSize, withVisits: true, withTargets: true}
}

// Rows returns the number of rows (decisions).
func (c *Columns) Rows() int { return c.rows }

// Games returns the number of games ended by EndGame.
func (c *Columns) Games() int { return c.games }

// SetValues sets every row's value target to the outcome of its seat.
func (c *Columns) SetValues(outcomes []float64) {
	for i := range c.value {
		c.value[i] = float32(outcomes[c.seat[i]])
	}
}

// EndGame ends the game whose rows were added last: it sets their value
// targets to the outcomes of the final state s (SetValues) and adds the
// game's row of GameArrays, the observation of s for every seat (encoded by
// enc), which is a learner's last observation in the env (the terminal
// row's). Call it once per game, from agent.Game.OnEnd.
func (c *Columns) EndGame(enc *obs.Encoder, s *env.State) {
	for i := range c.value {
		c.value[i] = float32(s.Outcome(int(c.seat[i])))
	}
	d := enc.Size()
	for p := 0; p < s.Rules().Players; p++ {
		n := len(c.final)
		c.final = slices.Grow(c.final, d)[:n+d]
		enc.Encode(s, p, c.final[n:n+d])
	}
	c.games++
}

// data returns the columns in the order of Arrays (shardArrays): visits,
// then policy_target, after the others, and last the game rows (final_obs).
func (c *Columns) data() []any {
	return []any{c.obs, c.mask, c.action, c.policy, c.value, c.searchValue, c.seat, c.game, c.decision,
		c.potential, c.searched, c.visits, c.target, c.final}
}

// Append adds every row of o.
func (c *Columns) Append(o *Columns) {
	c.obs = append(c.obs, o.obs...)
	c.mask = append(c.mask, o.mask...)
	c.action = append(c.action, o.action...)
	c.policy = append(c.policy, o.policy...)
	c.value = append(c.value, o.value...)
	c.searchValue = append(c.searchValue, o.searchValue...)
	c.seat = append(c.seat, o.seat...)
	c.game = append(c.game, o.game...)
	c.decision = append(c.decision, o.decision...)
	c.potential = append(c.potential, o.potential...)
	c.searched = append(c.searched, o.searched...)
	c.visits = append(c.visits, o.visits...)
	c.target = append(c.target, o.target...)
	c.final = append(c.final, o.final...)
	c.rows += o.rows
	c.games += o.games
}

// AddDecision appends the row of one decision of game: the observation of
// s for the seat to move (encoded by enc into buf, of enc.Size() values),
// its mask, the action a, the search policy and value of st (a one-hot
// policy of a when the agent does not search), the seat's shaping potential
// (vecenv.Potentials) and whether the agent searched (st.Simulations > 0).
// Its value target is 0 until EndGame (or SetValues).
func (c *Columns) AddDecision(enc *obs.Encoder, buf []float32, s *env.State, a env.Action, st agent.Stats, game int) {
	enc.Encode(s, s.ToMove(), buf)
	c.obs = append(c.obs, buf...)
	var mask [env.NumActions]uint8
	s.Mask(mask[:])
	c.mask = append(c.mask, mask[:]...)
	c.action = append(c.action, int32(a))
	if st.Policy != nil {
		c.policy = append(c.policy, st.Policy...)
	} else { // no search: the played action, one-hot
		var onehot [env.NumActions]float32
		onehot[a] = 1
		c.policy = append(c.policy, onehot[:]...)
	}
	c.value = append(c.value, 0)
	c.searchValue = append(c.searchValue, float32(st.Value))
	c.seat = append(c.seat, int8(s.ToMove()))
	c.game = append(c.game, int64(game))
	c.decision = append(c.decision, int32(s.Decisions()))
	var phi [env.MaxPlayers]float32
	vecenv.Potentials(s, &phi)
	c.potential = append(c.potential, phi[s.ToMove()])
	searched := uint8(0)
	if st.Simulations > 0 {
		searched = 1
	}
	c.searched = append(c.searched, searched)
	if c.withVisits {
		if st.Visits != nil {
			c.visits = append(c.visits, st.Visits...)
		} else { // a forced move: no search, no visits
			var zero [env.NumActions]float32
			c.visits = append(c.visits, zero[:]...)
		}
	}
	if c.withTargets {
		c.target = append(c.target, 1)
	}
	c.rows++
}

// AddTargetDecision is AddDecision for columns with policy targets
// (NewTargetColumns): target says whether the row's policy is a target
// (a full search) or not (a fast search of playout cap randomization,
// whose policy is recorded but must not be learned from).
func (c *Columns) AddTargetDecision(enc *obs.Encoder, buf []float32, s *env.State, a env.Action, st agent.Stats, game int, target bool) {
	c.AddDecision(enc, buf, s, a, st, game)
	if c.withTargets && !target {
		c.target[len(c.target)-1] = 0
	}
}
