package az

import (
	"math"
	"slices"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

// Setting is one numeric setting of a self-play run as a client gives it:
// the server's selfplay_new param of that key, yutenv.az.SelfPlay's
// argument (python/yutenv/_protocol.py, SELFPLAY_DEFAULTS, generated from
// Settings) and docs/PROTOCOL.md's table. Declared once here.
type Setting struct {
	// Key is the param's name.
	Key string
	// Int marks an integer setting (otherwise a float).
	Int bool
	// Default is the value when the client gives none.
	Default float64
	// Min and Max bound the values a client may give.
	Min, Max float64
	// Doc says what the setting does.
	Doc string
	// Set stores a value into a Config.
	Set func(c *Config, v float64)
}

// settings declares the numeric settings, in the order of selfplay_new's
// params.
var settings = [...]Setting{
	{Key: "sims", Int: true, Default: 64, Min: 1, Max: MaxSims, Doc: "Simulations per decision.",
		Set: func(c *Config, v float64) { c.Sims = int(v) }},
	{Key: "c", Default: 1.5, Min: 0, Max: 100, Doc: "PUCT constant: `Q + c·P·sqrt(N)/(1+n)`.",
		Set: func(c *Config, v float64) { c.C = v }},
	{Key: "dirichlet_alpha", Default: 0.3, Min: 0, Max: 100, Doc: "Root noise `(1-frac)·P + frac·Dir(alpha)` (alpha 0: none).",
		Set: func(c *Config, v float64) { c.DirichletAlpha = v }},
	{Key: "dirichlet_frac", Default: 0.25, Min: 0, Max: 1, Doc: "The root noise's share `frac` of the prior.",
		Set: func(c *Config, v float64) { c.DirichletFrac = v }},
	{Key: "temperature_moves", Int: true, Default: 20, Min: 0, Max: math.MaxInt32, Doc: "The first N decisions of a game sample an action in proportion to visits; later ones play the most visited.",
		Set: func(c *Config, v float64) { c.TempMoves = int(v) }},
	{Key: "gumbel_m", Int: true, Default: 0, Min: 0, Max: agent.MaxGumbelM, Doc: "With `gumbel`: root actions Gumbel-Top-m samples for sequential halving (0: the default, 16).",
		Set: func(c *Config, v float64) { c.GumbelM = int(v) }},
	{Key: "fast_sims", Int: true, Default: 0, Min: 0, Max: MaxSims, Doc: "Playout cap randomization (KataGo): a decision not drawn as a full search (see `full_prob`) runs only this many simulations, without root noise or temperature, and its row's policy is not a target (`policy_target` 0); 0: off, every decision searches `sims`. At most `sims`.",
		Set: func(c *Config, v float64) { c.FastSims = int(v) }},
	{Key: "full_prob", Default: agent.DefaultFullProb, Min: 0, Max: 1, Doc: "With `fast_sims`: the probability that a decision runs the full search of `sims` and records a policy target, drawn from the decision's seed.",
		Set: func(c *Config, v float64) { c.FullProb = v }},
	{Key: "games", Int: true, Default: 1, Min: 1, Max: MaxGames, Doc: "Games in the dataset (a resumed dataset counts its games).",
		Set: func(c *Config, v float64) { c.Games = int(v) }},
	{Key: "games_in_flight", Int: true, Default: 64, Min: 1, Max: MaxInFlight, Doc: "Games played at once; a batch holds at most one leaf of each.",
		Set: func(c *Config, v float64) { c.InFlight = int(v) }},
	{Key: "max_batch", Int: true, Default: 0, Min: 1, Max: MaxInFlight, Doc: "Leaves per batch at most (0: `games_in_flight`).",
		Set: func(c *Config, v float64) { c.MaxBatch = int(v) }},
	{Key: "eval_timeout", Default: 60, Min: 0, Max: 86400, Doc: "Seconds: cancel the run when a batch is not answered in time (0: never).",
		Set: func(c *Config, v float64) { c.EvalTimeout = time.Duration(v * float64(time.Second)) }},
	{Key: "shard_games", Int: true, Default: 100, Min: 1, Max: 1_000_000, Doc: "Games per dataset shard.",
		Set: func(c *Config, v float64) { c.ShardGames = int(v) }},
	{Key: "first_game", Int: true, Default: 0, Min: 0, Max: MaxGames, Doc: "The run plays games `first_game`..`first_game+games-1` (game seeds `seed + g`) into a dataset holding that range, shards named as in one whole run: one part of a distributed run, as `yutenv selfplay --first-game`; a multiple of `shard_games`.",
		Set: func(c *Config, v float64) { c.FirstGame = int(v) }},
}

// DefaultTier is a run's observation tier when the client names none.
const DefaultTier = obs.Compact

// Settings returns the numeric settings, in the order of selfplay_new's params.
func Settings() []Setting { return slices.Clone(settings[:]) }

// LookupSetting returns the setting of key.
func LookupSetting(key string) (Setting, bool) {
	for _, s := range settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// DefaultConfig returns the Config of a run whose client gave no settings:
// the standard rules, DefaultTier and every Setting's default (MaxBatch 0:
// InFlight). Out must still be set.
func DefaultConfig() Config {
	c := Config{Rules: env.Standard(), Tier: DefaultTier}
	for _, s := range settings {
		s.Set(&c, s.Default)
	}
	return c
}

// gameDecisions is the length of a long game, in decisions, for the
// memory estimate of a game's dataset rows: standard games of random and
// greedy players took 50 decisions on average and at most 96 in 6,000
// games. (A longer game only costs its own rows more.)
const gameDecisions = 128

// MemoryBytes estimates the memory of a run of c, for observations of
// obsSize floats: every game in flight's search tree(s) and dataset rows,
// the finished games waiting for an earlier one (at most games in
// flight), and its batch buffers. Finished games are written to
// disk in game order as they finish, so a shard costs no memory however
// many games it holds. The server reserves it from --max-selfplay-bytes.
func (c Config) MemoryBytes(obsSize int) int64 {
	tree := agent.SearchBytes(agent.Spec{Name: "mcts", N: c.Sims})
	if c.FastSims > 0 { // playout cap randomization: each game also holds the fast search's tree
		tree += agent.SearchBytes(agent.Spec{Name: "mcts", N: c.FastSims})
	}
	row := int64(4*obsSize + 2*env.NumActions + 4*env.NumActions*2 + 32)
	game := gameDecisions * row
	batch := int64(max(c.MaxBatch, c.InFlight)) * int64(4*obsSize+env.NumActions)
	return int64(c.InFlight)*(tree+2*game) + batch
}
