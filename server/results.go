package server

import (
	"github.com/yutenv/yutenv/internal/msgp"
)

// Results of the methods off the hot path are typed structs encoded by
// msgpack/v5: fields in declaration order, integers in their smallest
// form (msgp.AppendEncoded), as the hand-written writers of the hot path
// (step, reset) do.

// result appends v, the result of method, to the reply being built.
func (c *conn) result(method string, v any) *Error {
	out, err := msgp.AppendEncoded(c.out, v)
	if err != nil {
		return errorf(CodeInternal, "%s: encoding the result: %v", method, err)
	}
	c.out = out
	return nil
}

// helloLimits is the limits map of hello's result.
type helloLimits struct {
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

// helloResultT is hello's result.
type helloResultT struct {
	Protocol    int         `msgpack:"protocol"`
	Server      string      `msgpack:"server"`
	Actions     int         `msgpack:"actions"`
	Tiers       []msgp.Obj  `msgpack:"tiers"`
	ObsLayout   int         `msgpack:"obs_layout"` // obs.LayoutVersion
	DefaultTier string      `msgpack:"default_tier"`
	Opponents   []string    `msgpack:"opponents"`
	Methods     []string    `msgpack:"methods"`
	Limits      helloLimits `msgpack:"limits"`
}

// makeResult is make's result.
type makeResult struct {
	Handle       uint64   `msgpack:"handle"`
	N            int      `msgpack:"n"`
	Players      int      `msgpack:"players"`
	Mode         string   `msgpack:"mode"`
	Autoreset    string   `msgpack:"autoreset"`
	Reward       string   `msgpack:"reward"`
	Illegal      string   `msgpack:"illegal"`
	Tier         string   `msgpack:"tier"`
	Opponent     string   `msgpack:"opponent"`
	Seat         any      `msgpack:"seat"` // int, or "random"
	MaxDecisions uint64   `msgpack:"max_decisions"`
	Info         bool     `msgpack:"info"`
	Rules        string   `msgpack:"rules"`
	ObsSize      int      `msgpack:"obs_size"`
	ObsLayout    int      `msgpack:"obs_layout"` // obs.LayoutVersion
	ObsSpace     msgp.Obj `msgpack:"obs_space"`
	Actions      int      `msgpack:"actions"`
	RewardShape  []int    `msgpack:"reward_shape"`
}

// statsConn is the calling connection's part of stats' result.
type statsConn struct {
	Envs     int    `msgpack:"envs"`
	Handles  int    `msgpack:"handles"`
	Requests uint64 `msgpack:"requests"`
}

// statsResultT is stats' result.
type statsResultT struct {
	UptimeS          float64   `msgpack:"uptime_s"`
	Connections      int64     `msgpack:"connections"`
	ConnectionsTotal uint64    `msgpack:"connections_total"`
	Envs             int64     `msgpack:"envs"`
	Handles          int64     `msgpack:"handles"`
	Steps            uint64    `msgpack:"steps"`
	Requests         uint64    `msgpack:"requests"`
	Errors           uint64    `msgpack:"errors"`
	Conn             statsConn `msgpack:"conn"`
	LatencyUs        msgp.Obj  `msgpack:"latency_us"`
}

// stateResult is save's result (and state_save's, position's).
type stateResult struct {
	State []byte `msgpack:"state"`
}

// The results of render, one per format.
type (
	renderText struct {
		Text string `msgpack:"text"`
	}
	renderSVG struct {
		SVG string `msgpack:"svg"`
	}
	renderRGB struct {
		Height int    `msgpack:"height"`
		Width  int    `msgpack:"width"`
		RGB    []byte `msgpack:"rgb"`
	}
)

// gameResult is game's result.
type gameResult struct {
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

// blobResult is state_save's result.
type blobResult struct {
	Blob []byte `msgpack:"blob"`
}

// stateRulesResult is state_load's result.
type stateRulesResult struct {
	State []byte `msgpack:"state"`
	Rules string `msgpack:"rules"`
}

// analyseResult is analyse's result: columns of little-endian numbers.
type analyseResult struct {
	Agent   string `msgpack:"agent"`
	Actions []byte `msgpack:"actions"`
	Policy  []byte `msgpack:"policy"`
	Value   []byte `msgpack:"value"`
	Values  []byte `msgpack:"values"`
}
