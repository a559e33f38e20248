package protocol

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
)

// The params and results of every method, by their msgpack tags. The
// server decodes most params into these structs and encodes most results
// from them; step, reset and selfplay_* read their params by hand, and
// step, reset, load, observe, initial, apply, query and selfplay_* write
// their results by hand (allocation free, or laying bins out in place):
// for those, the structs declare the keys, and tests hold the readers and
// writers to them. An int field may carry a `range:"lo,hi"` tag, checked
// before decoding.

// HelloParams are hello's params.
type HelloParams struct {
	Protocol *int64  `msgpack:"protocol" range:"0,2147483647"`
	Token    *string `msgpack:"token"`
	Client   string  `msgpack:"client"`
}

// HelloLimits is the limits map of hello's result.
type HelloLimits struct {
	MaxFrame          int     `msgpack:"max_frame"`
	MaxEnvsPerConn    int     `msgpack:"max_envs_per_conn"`
	MaxEnvs           int     `msgpack:"max_envs"`
	MaxEnvBytes       int64   `msgpack:"max_env_bytes"`
	MaxInflightBytes  int64   `msgpack:"max_inflight_bytes"`
	IdleTimeoutS      float64 `msgpack:"idle_timeout_s"`
	HandshakeTimeoutS float64 `msgpack:"handshake_timeout_s"`
	MaxConns          int     `msgpack:"max_conns"`
	MaxOpponentSims   int     `msgpack:"max_opponent_sims"`
	MaxAnalyseSims    int64   `msgpack:"max_analyse_sims"`
	AnalyseWorkers    int     `msgpack:"analyse_workers"`
	MaxSelfplayBytes  int64   `msgpack:"max_selfplay_bytes"`
}

// HelloResult is hello's result.
type HelloResult struct {
	Protocol    int         `msgpack:"protocol"`
	Server      string      `msgpack:"server"`
	Actions     int         `msgpack:"actions"`
	Tiers       []msgp.Obj  `msgpack:"tiers"`
	ObsLayout   int         `msgpack:"obs_layout"` // obs.LayoutVersion
	DefaultTier string      `msgpack:"default_tier"`
	Opponents   []string    `msgpack:"opponents"`
	Methods     []string    `msgpack:"methods"`
	Limits      HelloLimits `msgpack:"limits"`
}

// MakeParams are make's params; rules is a str or a map (read by
// vecenv/wire), seat an int or "random".
type MakeParams struct {
	Rules    msgpack.RawMessage `msgpack:"rules"`
	Tier     *string            `msgpack:"tier"`
	N        *int               `msgpack:"n" range:"1,2147483647"`
	Mode     *string            `msgpack:"mode"`
	Seat     msgpack.RawMessage `msgpack:"seat"`
	Opponent *string            `msgpack:"opponent"`
	// Opponents (an array of agent specs, "client" for an entry the client
	// plays) and Weights (an array of numbers > 0, one per entry; default
	// all 1) make an opponent mixture, read by vecenv/wire.Mixture.
	Opponents    msgpack.RawMessage `msgpack:"opponents"`
	Weights      msgpack.RawMessage `msgpack:"weights"`
	Autoreset    *string            `msgpack:"autoreset"`
	MaxDecisions uint32             `msgpack:"max_decisions" range:"0,4294967295"`
	Reward       *string            `msgpack:"reward"`
	Illegal      *string            `msgpack:"illegal"`
	Info         bool               `msgpack:"info"`
	// Luck names the value function that values the throws (package
	// luck: "auto", "az", "progress", "net:NAME", a network file's value
	// head opened from the server's --net-dir folders, or "off", the
	// default): each info map then carries every seat's luck over the
	// episode.
	Luck *string `msgpack:"luck"`
}

// MakeResult is make's result.
type MakeResult struct {
	Handle       uint64    `msgpack:"handle"`
	N            int       `msgpack:"n"`
	Players      int       `msgpack:"players"`
	Mode         string    `msgpack:"mode"`
	Autoreset    string    `msgpack:"autoreset"`
	Reward       string    `msgpack:"reward"`
	Illegal      string    `msgpack:"illegal"`
	Tier         string    `msgpack:"tier"`
	Opponent     string    `msgpack:"opponent"`
	Opponents    []string  `msgpack:"opponents,omitempty"` // a mixture's specs, as the client named them
	Weights      []float64 `msgpack:"weights,omitempty"`   // a mixture's weights
	Seat         any       `msgpack:"seat"`                // int, or "random"
	MaxDecisions uint64    `msgpack:"max_decisions"`
	Info         bool      `msgpack:"info"`
	Luck         string    `msgpack:"luck,omitempty"` // the resolved value function; absent when off
	Rules        string    `msgpack:"rules"`
	ObsSize      int       `msgpack:"obs_size"`
	ObsLayout    int       `msgpack:"obs_layout"` // obs.LayoutVersion
	ObsSpace     msgp.Obj  `msgpack:"obs_space"`
	Actions      int       `msgpack:"actions"`
	RewardShape  []int     `msgpack:"reward_shape"`
}

// ResetParams are reset's params (read by hand).
type ResetParams struct {
	Handle  uint64       `msgpack:"handle"`
	Seed    any          `msgpack:"seed"` // int, array of N ints, or nil
	Options ResetOptions `msgpack:"options"`
	Info    bool         `msgpack:"info"`
	// Shared leaves the rows in the handle's shared region (share): the
	// reply carries only the seeds (and info).
	Shared bool `msgpack:"shared"`
}

// ResetOptions is reset's options map.
type ResetOptions struct {
	Start *int `msgpack:"start"`
	Seat  int  `msgpack:"seat"`
}

// RowsResult are the rows of a handle's envs, after reset, step,
// opponent_step and load.
type RowsResult struct {
	Obs    []byte `msgpack:"obs"`
	Mask   []byte `msgpack:"mask"`
	ToMove []byte `msgpack:"to_move"`
	// Handles made with an opponent mixture only: each env's opponent
	// entry (uint8), and 1 where the row is for a client-played opponent
	// (its seat's view and mask; answer it with opponent_step).
	Opponent []byte `msgpack:"opponent"`
	Pending  []byte `msgpack:"pending"`
}

// ResetResult is reset's result (info only when recorded).
type ResetResult struct {
	RowsResult
	Seeds []uint64 `msgpack:"seeds"`
	Info  []any    `msgpack:"info"`
}

// A shared handle's reset (params.shared) answers only seeds and info.

// StepParams are step's params (read by hand).
type StepParams struct {
	Handle  uint64 `msgpack:"handle"`
	Actions []byte `msgpack:"actions"` // bin of int32, or array of int
	Info    bool   `msgpack:"info"`
	// Shared rings a handle's shared region (share): the actions are the
	// region's, the rows go there, and the reply carries only seq (and
	// info). Seq is the region's req the client wrote for this request.
	Shared bool   `msgpack:"shared"`
	Seq    uint32 `msgpack:"seq"`
}

// ShareParams are share's params: the handle, and how long the server
// polls the region for the next request after serving one (0: it waits on
// the socket at once; capped by MaxShareSpinUs).
type ShareParams struct {
	Handle *uint64 `msgpack:"handle"`
	SpinUs int     `msgpack:"spin_us" range:"0,2147483647"`
}

// MaxShareSpinUs is the longest poll share grants, in microseconds.
const MaxShareSpinUs = 2000

// ShareResult is share's result: the region's layout (its fields' names,
// offsets, types and shapes) and the poll granted. The region itself
// travels with the reply as a file descriptor (SCM_RIGHTS).
type ShareResult struct {
	Version int          `msgpack:"version"`
	Size    int          `msgpack:"size"`
	Fields  []ShareField `msgpack:"fields"`
	SpinUs  int          `msgpack:"spin_us"`
}

// ShareField is one field of a shared region (vecenv.SharedField).
type ShareField struct {
	Name   string `msgpack:"name"`
	Offset int    `msgpack:"offset"`
	Type   string `msgpack:"type"`
	Shape  []int  `msgpack:"shape"`
}

// SetOpponentsParams are set_opponents' params: a handle made with an
// opponent mixture, and its new entries (the keys of make's mixture).
type SetOpponentsParams struct {
	Handle    *uint64            `msgpack:"handle"`
	Opponents msgpack.RawMessage `msgpack:"opponents"`
	Weights   msgpack.RawMessage `msgpack:"weights"`
}

// SetOpponentsResult is set_opponents' result: the mixture as the client
// named it.
type SetOpponentsResult struct {
	Opponents []string  `msgpack:"opponents"`
	Weights   []float64 `msgpack:"weights"`
}

// StepResult is step's result (final_* only when an env autoreset, info
// and final_info only when recorded).
type StepResult struct {
	RowsResult
	Reward      []byte `msgpack:"reward"`
	Terminated  []byte `msgpack:"terminated"`
	Truncated   []byte `msgpack:"truncated"`
	FinalObs    []byte `msgpack:"final_obs"`
	FinalMask   []byte `msgpack:"final_mask"`
	FinalToMove []byte `msgpack:"final_to_move"`
	Info        []any  `msgpack:"info"`
	FinalInfo   []any  `msgpack:"final_info"`
	// Seq is the request served, for a shared step (params.shared), whose
	// reply carries only it and info.
	Seq uint32 `msgpack:"seq"`
}

// HandleParams are the params of a method that takes a handle only.
type HandleParams struct {
	Handle *uint64 `msgpack:"handle"`
}

// StatsConn is the calling connection's part of stats' result.
type StatsConn struct {
	Envs     int    `msgpack:"envs"`
	Handles  int    `msgpack:"handles"`
	Requests uint64 `msgpack:"requests"`
}

// StatsResult is stats' result.
type StatsResult struct {
	UptimeS          float64   `msgpack:"uptime_s"`
	Connections      int64     `msgpack:"connections"`
	ConnectionsTotal uint64    `msgpack:"connections_total"`
	Envs             int64     `msgpack:"envs"`
	Handles          int64     `msgpack:"handles"`
	Steps            uint64    `msgpack:"steps"`
	Requests         uint64    `msgpack:"requests"`
	Errors           uint64    `msgpack:"errors"`
	Conn             StatsConn `msgpack:"conn"`
	LatencyUs        msgp.Obj  `msgpack:"latency_us"`
}

// IndexParams are save's params: one env of a handle.
type IndexParams struct {
	Handle *uint64 `msgpack:"handle"`
	Index  *uint64 `msgpack:"index"`
}

// StateResult is save's result (and position's).
type StateResult struct {
	State []byte `msgpack:"state"`
}

// LoadParams are load's params.
type LoadParams struct {
	Handle *uint64 `msgpack:"handle"`
	Index  *uint64 `msgpack:"index"`
	State  []byte  `msgpack:"state"`
	Seat   *int    `msgpack:"seat" range:"0,3"`
}

// LoadResult is load's result.
type LoadResult struct{ RowsResult }

// RenderParams are render's params.
type RenderParams struct {
	Handle *uint64 `msgpack:"handle"`
	Index  *uint64 `msgpack:"index"`
	Format *string `msgpack:"format"`
}

// RenderResult is render's result, one form per format.
type RenderResult struct {
	RenderText
	RenderSVG
	RenderRGB
}

// RenderText is render's result in format text.
type RenderText struct {
	Text string `msgpack:"text"`
}

// RenderSVG is render's result in format svg.
type RenderSVG struct {
	SVG string `msgpack:"svg"`
}

// RenderRGB is render's result in format rgb: height x width x 3 bytes,
// row-major.
type RenderRGB struct {
	Height int    `msgpack:"height"`
	Width  int    `msgpack:"width"`
	RGB    []byte `msgpack:"rgb"`
}

// ObserveParams are observe's params.
type ObserveParams struct {
	Handle *uint64 `msgpack:"handle"`
	Seat   *int    `msgpack:"seat" range:"0,3"`
}

// ObserveResult is observe's result.
type ObserveResult struct {
	Obs  []byte `msgpack:"obs"`
	Mask []byte `msgpack:"mask"`
}

// SelfplayNewParams are selfplay_new's params (read by hand into an
// az.Config: rules, tier, gumbel, seed, out and az.Settings).
type SelfplayNewParams struct {
	Rules          any     `msgpack:"rules"`
	Tier           string  `msgpack:"tier"`
	Sims           int     `msgpack:"sims"`
	C              float64 `msgpack:"c"`
	DirichletAlpha float64 `msgpack:"dirichlet_alpha"`
	DirichletFrac  float64 `msgpack:"dirichlet_frac"`
	TempMoves      int     `msgpack:"temperature_moves"`
	Gumbel         bool    `msgpack:"gumbel"`
	GumbelM        int     `msgpack:"gumbel_m"`
	FastSims       int     `msgpack:"fast_sims"`
	FullProb       float64 `msgpack:"full_prob"`
	Seed           uint64  `msgpack:"seed"`
	Games          int     `msgpack:"games"`
	InFlight       int     `msgpack:"games_in_flight"`
	MaxBatch       int     `msgpack:"max_batch"`
	EvalTimeout    float64 `msgpack:"eval_timeout"`
	Out            string  `msgpack:"out"`
	ShardGames     int     `msgpack:"shard_games"`
	FirstGame      int     `msgpack:"first_game"`
}

// SelfplayNewResult is selfplay_new's result.
type SelfplayNewResult struct {
	ID          uint64  `msgpack:"id"`
	ObsSize     int     `msgpack:"obs_size"`
	ObsLayout   int     `msgpack:"obs_layout"`
	Actions     int     `msgpack:"actions"`
	Tier        string  `msgpack:"tier"`
	Rules       string  `msgpack:"rules"`
	Games       int     `msgpack:"games"`
	FirstGame   int     `msgpack:"first_game"`
	GamesDone   int     `msgpack:"games_done"`
	InFlight    int     `msgpack:"games_in_flight"`
	MaxBatch    int     `msgpack:"max_batch"`
	EvalTimeout float64 `msgpack:"eval_timeout"`
	Out         string  `msgpack:"out"`
}

// RunParams are the params of a method that takes a self-play run id only.
type RunParams struct {
	ID uint64 `msgpack:"id"`
}

// SelfplayNextParams are selfplay_next's params.
type SelfplayNextParams struct {
	ID     uint64 `msgpack:"id"`
	Priors []byte `msgpack:"priors"`
	Values []byte `msgpack:"values"`
}

// SelfplayNextResult is selfplay_next's result.
type SelfplayNextResult struct {
	N         int    `msgpack:"n"`
	Obs       []byte `msgpack:"obs"`
	Mask      []byte `msgpack:"mask"`
	Done      bool   `msgpack:"done"`
	Games     int    `msgpack:"games"`
	Decisions int    `msgpack:"decisions"`
	Leaves    int64  `msgpack:"leaves"`
	Batches   int64  `msgpack:"batches"`
}

// GameParams are game's params.
type GameParams struct {
	Rules msgpack.RawMessage `msgpack:"rules"`
}

// GameResult is game's result.
type GameResult struct {
	Game      int       `msgpack:"game"`
	Rules     string    `msgpack:"rules"`
	Players   int       `msgpack:"players"`
	Pieces    int       `msgpack:"pieces"`
	StateSize int       `msgpack:"state_size"`
	Actions   int       `msgpack:"actions"`
	Chance    []float64 `msgpack:"chance"`
	ObsSize   msgp.Obj  `msgpack:"obs_size"`
	ObsLayout int       `msgpack:"obs_layout"` // obs.LayoutVersion
}

// InitialParams are initial's params.
type InitialParams struct {
	Game  *int   `msgpack:"game"`
	Seed  uint64 `msgpack:"seed"`
	N     *int   `msgpack:"n"`
	Start *int   `msgpack:"start"`
}

// StatesResult is the result of initial and apply.
type StatesResult struct {
	States []byte `msgpack:"states"`
}

// ApplyParams are apply's params.
type ApplyParams struct {
	Game    *int   `msgpack:"game"`
	States  []byte `msgpack:"states"`
	Actions []byte `msgpack:"actions"`
	Throws  []byte `msgpack:"throws"`
}

// QueryParams are query's params.
type QueryParams struct {
	Game    *int    `msgpack:"game"`
	States  []byte  `msgpack:"states"`
	Mask    bool    `msgpack:"mask"`
	Returns bool    `msgpack:"returns"`
	Obs     *string `msgpack:"obs"`
	Seat    *int    `msgpack:"seat"`
}

// QueryResult is query's result (mask, returns, obs when asked for).
type QueryResult struct {
	Phase   []byte `msgpack:"phase"`
	ToMove  []byte `msgpack:"to_move"`
	Mask    []byte `msgpack:"mask"`
	Returns []byte `msgpack:"returns"`
	Obs     []byte `msgpack:"obs"`
}

// StateParams are the params of describe and state_save: one packed state.
type StateParams struct {
	Game  *int   `msgpack:"game"`
	State []byte `msgpack:"state"`
}

// DescribeResult is describe's result.
type DescribeResult = env.StateDesc

// PositionParams are position's params.
type PositionParams struct {
	Game     *int              `msgpack:"game"`
	Position *env.PositionDesc `msgpack:"position"`
	Seed     uint64            `msgpack:"seed"`
}

// BlobResult is state_save's result.
type BlobResult struct {
	Blob []byte `msgpack:"blob"`
}

// StateLoadParams are state_load's params.
type StateLoadParams struct {
	Game *int   `msgpack:"game"`
	Blob []byte `msgpack:"blob"`
}

// StateRulesResult is state_load's result.
type StateRulesResult struct {
	State []byte `msgpack:"state"`
	Rules string `msgpack:"rules"`
}

// AnalyseParams are analyse's params.
type AnalyseParams struct {
	Game   *int    `msgpack:"game"`
	States []byte  `msgpack:"states"`
	Agent  *string `msgpack:"agent"`
	Seed   uint64  `msgpack:"seed"`
}

// AnalyseResult is analyse's result: columns of little-endian numbers.
type AnalyseResult struct {
	Agent   string `msgpack:"agent"`
	Actions []byte `msgpack:"actions"`
	Policy  []byte `msgpack:"policy"`
	Value   []byte `msgpack:"value"`
	Values  []byte `msgpack:"values"`
}
