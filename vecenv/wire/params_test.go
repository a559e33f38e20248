package wire_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// reader returns a reader over v in msgpack.
func reader(t *testing.T, v any) *msgp.Reader {
	t.Helper()
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	r := msgp.NewReader(b)
	return &r
}

// TestRulesMapMatchesString reads the same rules as a string and as a map:
// both forms go through the env's one table of rule
// options, so they mean the same rules, accept the same aliases and refuse
// the same mistakes with the same message.
func TestRulesMapMatchesString(t *testing.T) {
	same := []struct {
		name string
		str  string
		m    map[string]any
	}{
		{"board=line means the kata's length", "board=line", map[string]any{"board": "line"}},
		{"board=line with spaces", "board=line,spaces=7", map[string]any{"spaces": 7, "board": "line"}},
		{"alias p", "p=0.5", map[string]any{"p": 0.5}},
		{"alias backdo", "backdo=off", map[string]any{"backdo": false}},
		{"bools as on/off words", "pool=off,capture_bonus=off", map[string]any{"pool": "off", "capture_bonus": false}},
		{"obstacles", "obstacles=4:skip+9:back2", map[string]any{"obstacles": "4:skip+9:back2"}},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			byStr, err := wire.Rules(reader(t, tt.str))
			require.NoError(t, err, "rules %q", tt.str)
			byMap, err := wire.Rules(reader(t, tt.m))
			require.NoError(t, err, "rules %v", tt.m)
			assert.Equal(t, byStr, byMap)
		})
	}
	refused := []struct {
		name string
		str  string
		m    map[string]any
		msg  string
	}{
		{"unknown key", "playerz=2", map[string]any{"playerz": 2}, `unknown rules key "playerz"`},
		{"out of range", "players=9", map[string]any{"players": 9}, "players must be 2 to 4, got 9"},
		{"bad enum", "end=last", map[string]any{"end": "last"}, "end must be one of first, rank"},
		{"an option given twice through an alias", "p=0.5,flat_prob=0.55", map[string]any{"p": 0.5, "flat_prob": 0.55}, `rules key "flat_prob" given more than once`},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, strErr := wire.Rules(reader(t, tt.str))
			_, mapErr := wire.Rules(reader(t, tt.m))
			var re wire.RulesError
			require.ErrorAs(t, strErr, &re, "invalid_rules")
			require.ErrorAs(t, mapErr, &re, "invalid_rules")
			assert.ErrorContains(t, strErr, tt.msg)
			assert.Equal(t, strErr.Error(), mapErr.Error(), "one message in both forms")
		})
	}
	for _, v := range []any{3, map[string]any{"players": []int{2}}} {
		_, err := wire.Rules(reader(t, v))
		var re wire.RulesError
		assert.Error(t, err)
		assert.NotErrorAs(t, err, &re, "a mistyped value is a bad request, not invalid rules")
	}
}

func TestSeatAndChoice(t *testing.T) {
	seats := []struct {
		v    any
		want int
		err  string
	}{
		{1, 1, ""},
		{"random", vecenv.RandomSeat, ""},
		{"first", 0, `want a seat number or "random"`},
		{env.MaxPlayers, 0, "out of range"},
	}
	for _, tc := range seats {
		got, err := wire.Seat(reader(t, tc.v))
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%v", tc.v)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	i, err := wire.Choice("multi", vecenv.ModeNames())
	require.NoError(t, err)
	assert.Equal(t, int(vecenv.Multi), i)
	_, err = wire.Choice("duo", vecenv.ModeNames())
	assert.ErrorContains(t, err, `"duo" is not one of single, multi`)
}

func TestMakeConfig(t *testing.T) {
	str := func(s string) *string { return &s }
	n := 5
	cfg, seatSet, oppSet, err := wire.MakeConfig(&protocol.MakeParams{})
	require.NoError(t, err)
	assert.Equal(t, vecenv.Config{Rules: env.Standard(), Tier: wire.DefaultTier, N: 1, Opponent: "random", Reward: vecenv.RewardWin}, cfg, "the defaults")
	assert.False(t, seatSet)
	assert.False(t, oppSet)
	seat, err := msgpack.Marshal("random")
	require.NoError(t, err)
	cfg, seatSet, oppSet, err = wire.MakeConfig(&protocol.MakeParams{N: &n, Mode: str("multi"), Tier: str("tactical"), Autoreset: str("same_step"),
		Reward: str("progress"), Illegal: str("error"), Seat: seat, Opponent: str("greedy"), MaxDecisions: 9, Info: true})
	require.NoError(t, err)
	assert.Equal(t, vecenv.Config{Rules: env.Standard(), Tier: obs.Tactical, N: 5, Mode: vecenv.Multi, Autoreset: vecenv.SameStep,
		Reward: vecenv.RewardProgress, Illegal: vecenv.IllegalError, Seat: vecenv.RandomSeat, Opponent: "greedy", MaxDecisions: 9, Info: true}, cfg)
	assert.True(t, seatSet)
	assert.True(t, oppSet)
	bad := []struct {
		name string
		p    protocol.MakeParams
		key  string
	}{
		{"tier", protocol.MakeParams{Tier: str("huge")}, "tier"},
		{"mode", protocol.MakeParams{Mode: str("duo")}, "mode"},
		{"reward", protocol.MakeParams{Reward: str("gold")}, "reward"},
		{"rules", protocol.MakeParams{Rules: []byte{0xc0}}, "rules"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := wire.MakeConfig(&tc.p)
			var pe *wire.ParamError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.key, pe.Key)
		})
	}
}

func TestReadResetAndStep(t *testing.T) {
	b, err := vecenv.New(vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 2, Mode: vecenv.Multi})
	require.NoError(t, err)
	var r msgp.Reader
	var a wire.ResetArgs
	p, _ := msgpack.Marshal(map[string]any{"handle": 3, "seed": []uint64{7, 8}, "options": map[string]any{"start": 1}, "info": true})
	require.NoError(t, wire.ReadReset(p, &r, &a))
	assert.Equal(t, uint64(3), a.Handle)
	assert.True(t, a.HandleSet)
	assert.Equal(t, 2, a.SeedCount())
	assert.Equal(t, int8(1), a.Info)
	assert.Equal(t, vecenv.ResetOptions{Start: 1}, a.Options)
	a.Seed(b)
	assert.Equal(t, []uint64{7, 8}, b.Seeds())
	require.NoError(t, wire.ReadReset(nil, &r, &a))
	assert.Equal(t, vecenv.ResetOptions{Start: env.AnySeat}, a.Options, "no params: the defaults")
	assert.Equal(t, int8(-1), a.Info)
	for _, tc := range []struct {
		name string
		p    map[string]any
		err  string
	}{
		{"unknown key", map[string]any{"nope": 1}, "unknown parameter"},
		{"a bad seed in the list", map[string]any{"seed": []any{1, "x"}}, "[1]"},
		{"an unknown option", map[string]any{"options": map[string]any{"speed": 1}}, `unknown option "speed" (options: start, seat)`},
		{"a bad seat", map[string]any{"options": map[string]any{"seat": "first"}}, "seat: want a seat number"},
	} {
		t.Run("reset "+tc.name, func(t *testing.T) {
			p, _ := msgpack.Marshal(tc.p)
			err := wire.ReadReset(p, &r, &a)
			var ke msgp.KeyError
			require.ErrorAs(t, err, &ke)
			assert.ErrorContains(t, err, tc.err)
		})
	}

	var s wire.StepArgs
	dst := make([]int32, 2)
	for _, tc := range []struct {
		name    string
		actions any
		want    []int32
		err     string
	}{
		{"a bin", []byte{5, 0, 0, 0, 6, 0, 0, 0}, []int32{5, 6}, ""},
		{"an array", []int{-1, 7}, []int32{-1, 7}, ""},
		{"a short bin", []byte{5, 0, 0, 0}, nil, "params.actions: 4 bytes, want 8 (N = 2 little-endian int32)"},
		{"a short array", []int{1}, nil, "params.actions: 1 actions for 2 envs"},
		{"a value out of int32", []int64{1, 1 << 40}, nil, "params.actions[1]:"},
		{"missing", nil, nil, "params.actions: missing"},
	} {
		t.Run("step "+tc.name, func(t *testing.T) {
			m := map[string]any{"handle": 1, "info": false}
			if tc.actions != nil {
				m["actions"] = tc.actions
			}
			p, _ := msgpack.Marshal(m)
			require.NoError(t, wire.ReadStep(p, &s))
			assert.Equal(t, int8(0), s.Info)
			err := s.Actions(dst)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, dst)
		})
	}
	p, _ = msgpack.Marshal(map[string]any{"actions": "left"})
	var ke msgp.KeyError
	assert.ErrorAs(t, wire.ReadStep(p, &s), &ke)
	assert.Equal(t, "actions", string(ke.Key))
}

// TestReadStepAllocatesNothing: step's params are read from the frame.
func TestReadStepAllocatesNothing(t *testing.T) {
	p, _ := msgpack.Marshal(map[string]any{"handle": 1, "actions": make([]byte, 32), "info": false})
	var s wire.StepArgs
	dst := make([]int32, 8)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if wire.ReadStep(p, &s) != nil || s.Actions(dst) != nil {
			t.Fatal("refused")
		}
	}))
}

func TestSpace(t *testing.T) {
	sp, err := obs.SpaceOf(obs.Compact)
	require.NoError(t, err)
	v := wire.Space(sp)
	b := msgp.AppendValue(nil, v)
	var back map[string]any
	require.NoError(t, msgpack.Unmarshal(b, &back))
	assert.Equal(t, "compact", back["tier"])
	assert.Len(t, back["parts"], len(sp.Parts))
}

func TestMakeResult(t *testing.T) {
	cases := []struct {
		name     string
		cfg      vecenv.Config
		opponent string
		seat     any
		shape    []int
	}{
		{"single, a random seat", vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 3, Seat: vecenv.RandomSeat, Opponent: "random"}, "random", "random", []int{3}},
		{"single, seat 1", vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 2, Seat: 1, Opponent: "greedy"}, "greedy", 1, []int{2}},
		{"multi", vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 2, Mode: vecenv.Multi}, "", 0, []int{2, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := vecenv.New(tc.cfg)
			require.NoError(t, err)
			r := wire.MakeResult(tc.cfg, b, 7, tc.opponent, nil)
			assert.Equal(t, uint64(7), r.Handle)
			assert.Equal(t, tc.seat, r.Seat)
			assert.Equal(t, tc.shape, r.RewardShape)
			assert.Equal(t, tc.opponent, r.Opponent)
			assert.Equal(t, b.ObsSize(), r.ObsSize)
			assert.Equal(t, env.NumActions, r.Actions)
			assert.Equal(t, "standard", r.Rules)
		})
	}
}
