package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// TestResultsWireFormat pins that the typed results encode to the bytes
// the hand-written writers produced (protocol version 1 did not change):
// the same keys in the same order, integers in their smallest form,
// floats as float64.
func TestResultsWireFormat(t *testing.T) {
	space := msgp.Obj{{"size", 3}, {"parts", []msgp.Obj{}}}
	tests := []struct {
		name  string
		typed any
		want  msgp.Obj
	}{
		{"make", protocol.MakeResult{Handle: 300, N: 70000, Players: 2, Mode: "single", Autoreset: "next_step", Reward: "win", Illegal: "error",
			Tier: "compact", Opponent: "random", Seat: "random", MaxDecisions: 1 << 32, Info: true, Rules: "standard",
			ObsSize: 3, ObsLayout: 2, ObsSpace: space, Actions: 42, RewardShape: []int{70000, 2}},
			msgp.Obj{{"handle", uint64(300)}, {"n", 70000}, {"players", 2}, {"mode", "single"}, {"autoreset", "next_step"}, {"reward", "win"},
				{"illegal", "error"}, {"tier", "compact"}, {"opponent", "random"}, {"seat", "random"}, {"max_decisions", uint64(1 << 32)},
				{"info", true}, {"rules", "standard"}, {"obs_size", 3}, {"obs_layout", 2}, {"obs_space", space}, {"actions", 42}, {"reward_shape", []int{70000, 2}}}},
		{"make seat", protocol.MakeResult{Seat: -1, ObsSpace: msgp.Obj{}, RewardShape: []int{}}, msgp.Obj{{"handle", uint64(0)}, {"n", 0}, {"players", 0}, {"mode", ""}, {"autoreset", ""},
			{"reward", ""}, {"illegal", ""}, {"tier", ""}, {"opponent", ""}, {"seat", -1}, {"max_decisions", uint64(0)}, {"info", false},
			{"rules", ""}, {"obs_size", 0}, {"obs_layout", 0}, {"obs_space", msgp.Obj{}}, {"actions", 0}, {"reward_shape", []int{}}}},
		{"stats", protocol.StatsResult{UptimeS: 1.5, Connections: -1, Conn: protocol.StatsConn{Envs: 4}, LatencyUs: msgp.Obj{{"step", msgp.Obj{{"count", uint64(2)}}}}},
			msgp.Obj{{"uptime_s", 1.5}, {"connections", int64(-1)}, {"connections_total", uint64(0)}, {"envs", int64(0)}, {"handles", int64(0)},
				{"steps", uint64(0)}, {"requests", uint64(0)}, {"errors", uint64(0)},
				{"conn", msgp.Obj{{"envs", 4}, {"handles", 0}, {"requests", uint64(0)}}}, {"latency_us", msgp.Obj{{"step", msgp.Obj{{"count", uint64(2)}}}}}}},
		{"game", protocol.GameResult{Game: 1, Rules: "r", Players: 2, Pieces: 4, StateSize: 40, Actions: 42, Chance: []float64{0.25, 0.5}, ObsSize: msgp.Obj{{"compact", 300}}, ObsLayout: 2},
			msgp.Obj{{"game", 1}, {"rules", "r"}, {"players", 2}, {"pieces", 4}, {"state_size", 40}, {"actions", 42}, {"chance", []any{0.25, 0.5}}, {"obs_size", msgp.Obj{{"compact", 300}}}, {"obs_layout", 2}}},
		{"save", protocol.StateResult{State: []byte{1, 2}}, msgp.Obj{{"state", []byte{1, 2}}}},
		{"render rgb", protocol.RenderRGB{Height: 2, Width: 1, RGB: make([]byte, 300)}, msgp.Obj{{"height", 2}, {"width", 1}, {"rgb", make([]byte, 300)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := msgp.AppendEncoded(nil, tt.typed)
			require.NoError(t, err)
			assert.Equal(t, msgp.AppendValue(nil, tt.want), got)
		})
	}
}
