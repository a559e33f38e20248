package server

import (
	"context"
	"encoding/binary"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/analysis"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// declareGame calls game and returns its id.
func declareGame(t testing.TB, c *client.Client, rules string) int {
	t.Helper()
	res, err := c.Call("game", map[string]any{"rules": rules})
	require.NoError(t, err)
	g, ok := client.Int(res["game"])
	require.True(t, ok)
	assert.Equal(t, int64(env.PackedSize), mustInt(t, res["state_size"]))
	return int(g)
}

func mustInt(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := client.Int(v)
	require.True(t, ok, "%v is not an int", v)
	return int64(n)
}

func int32Bin(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func TestStateMethodsRefuseBadInput(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxOpponentSims = 100
	ts := startServer(t, "unix", cfg)
	c := ts.client(t)
	g := declareGame(t, c, "standard")
	res, err := c.Call("initial", map[string]any{"game": g, "seed": 1, "n": 2, "start": 0})
	require.NoError(t, err)
	two := res["states"].([]byte)
	one := two[:env.PackedSize]
	corrupt := append([]byte(nil), two...)
	corrupt[env.PackedSize+10] = 7 // row 1: seat 0 holds 7 pieces in hand
	cases := []struct {
		name   string
		method string
		params map[string]any
		code   protocol.Code
		text   string
	}{
		{"no game", "apply", map[string]any{"states": one, "throws": []byte{0}}, protocol.CodeBadRequest, "missing params.game"},
		{"unknown game", "apply", map[string]any{"game": 9, "states": one, "throws": []byte{0}}, protocol.CodeUnknownHandle, "no game 9"},
		{"unknown key", "apply", map[string]any{"game": g, "states": one, "throws": []byte{0}, "x": 1}, protocol.CodeBadRequest, "unknown parameter"},
		{"ragged states", "apply", map[string]any{"game": g, "states": two[:7], "throws": []byte{0}}, protocol.CodeBadState, "not a multiple"},
		{"both kinds", "apply", map[string]any{"game": g, "states": one, "throws": []byte{0}, "actions": int32Bin(0)}, protocol.CodeBadRequest, "exactly one"},
		{"short actions", "apply", map[string]any{"game": g, "states": two, "actions": int32Bin(0)}, protocol.CodeBadRequest, "want 8"},
		{"corrupt row", "apply", map[string]any{"game": g, "states": corrupt, "throws": []byte{0, 0}}, protocol.CodeBadState, "row 1"},
		{"move at chance", "apply", map[string]any{"game": g, "states": one, "actions": int32Bin(29)}, protocol.CodeIllegalAction, "row 0"},
		{"throw id", "apply", map[string]any{"game": g, "states": one, "throws": []byte{6}}, protocol.CodeIllegalAction, "out of range"},
		{"bad rules", "game", map[string]any{"rules": "players=9"}, protocol.CodeInvalidRules, "players"},
		{"analyse chance", "analyse", map[string]any{"game": g, "states": one, "agent": "greedy"}, protocol.CodeBadRequest, "phase throw"},
		{"analyse spec", "analyse", map[string]any{"game": g, "states": one, "agent": "nope"}, protocol.CodeBadRequest, "agent"},
		{"analyse limit", "analyse", map[string]any{"game": g, "states": one, "agent": "mcts:200"}, protocol.CodeLimitExceeded, "max-opponent-sims"},
		{"analyse limit with a playout cap", "analyse", map[string]any{"game": g, "states": one, "agent": "mcts:60,fast=60"}, protocol.CodeLimitExceeded, "max-opponent-sims"},
		{"query seat", "query", map[string]any{"game": g, "states": one, "obs": "compact", "seat": 7}, protocol.CodeBadRequest, "out of range"},
		{"query tier", "query", map[string]any{"game": g, "states": one, "obs": "huge"}, protocol.CodeBadRequest, "obs"},
		{"position phase", "position", map[string]any{"game": g, "position": map[string]any{"phase": "later"}}, protocol.CodeBadState, "phase"},
		{"position pieces", "position", map[string]any{"game": g, "position": map[string]any{"phase": "throw", "hand": []int{4, 3}}}, protocol.CodeBadState, "pieces"},
		{"position route", "position", map[string]any{"game": g, "position": map[string]any{"phase": "throw", "hand": []int{3, 4},
			"stacks": []any{map[string]any{"seat": 0, "station": 7, "route": "C1", "height": 1}}}}, protocol.CodeBadState, "not a place of"},
		{"load junk", "state_load", map[string]any{"game": g, "blob": []byte{0x91, 0x91}}, protocol.CodeBadState, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(tc.method, tc.params)
			require.Error(t, err)
			assert.Equal(t, tc.code, errCode(err), "%v", err)
			assert.Contains(t, err.Error(), tc.text)
		})
	}
	// The connection still serves.
	_, err = c.Call("apply", map[string]any{"game": g, "states": two, "throws": []byte{1, 2}})
	require.NoError(t, err)
}

func TestStateMethodsPositionSaveDescribe(t *testing.T) {
	ts := startServer(t, "unix", DefaultConfig())
	c := ts.client(t)
	g := declareGame(t, c, "standard")
	pos := map[string]any{"to_move": 1, "phase": "move", "pool": []int{0, 0, 1, 0, 0, 0},
		"hand": []int{3, 2}, "finished": []int{0, 0},
		"stacks": []any{
			map[string]any{"seat": 0, "station": 5, "route": "C1", "height": 1},
			map[string]any{"seat": 1, "station": 3, "route": "OUTER", "height": 2},
		}}
	res, err := c.Call("position", map[string]any{"game": g, "position": pos, "seed": 9})
	require.NoError(t, err)
	packed := res["state"].([]byte)
	d, err := c.Call("describe", map[string]any{"game": g, "state": packed})
	require.NoError(t, err)
	p := d["position"].(map[string]any)
	assert.Equal(t, "move", p["phase"])
	assert.Len(t, p["stacks"], 2)
	assert.Contains(t, d["json"], `"legal":[63,89]`)
	sv, err := c.Call("state_save", map[string]any{"game": g, "state": packed})
	require.NoError(t, err)
	ld, err := c.Call("state_load", map[string]any{"game": g, "blob": sv["blob"]})
	require.NoError(t, err)
	assert.Equal(t, packed, ld["state"])
	g4 := declareGame(t, c, "players=4")
	_, err = c.Call("state_load", map[string]any{"game": g4, "blob": sv["blob"]})
	assert.Equal(t, protocol.CodeBadState, errCode(err))
}

// TestAnalyseIsTheAnalysisPackages: analyse over the socket answers what
// package analysis answers for the same states, agent and seed (its own
// tests hold that to the agents, however the work is split).
func TestAnalyseIsTheAnalysisPackages(t *testing.T) {
	ts := startServer(t, "unix", DefaultConfig())
	c := ts.client(t)
	g := declareGame(t, c, "standard")
	var packed []byte
	for seed := uint64(0); len(packed) < 9*env.PackedSize; seed++ {
		if s := midGameState(t, seed); s.Phase() == env.PhaseMove {
			packed = s.AppendPacked(packed)
		}
	}
	proto, err := env.New(env.Standard(), 0, 0)
	require.NoError(t, err)
	for _, spec := range []string{"greedy", "mcts:50", "mc:5"} {
		t.Run(spec, func(t *testing.T) {
			sp, err := agent.ParseSpec(spec)
			require.NoError(t, err)
			want := analysis.NewOut(9, 2)
			require.NoError(t, analysis.Analyse(context.Background(), &proto, packed, sp, 3, 1, want))
			res, err := client.Do(c, protocol.Analyse, &protocol.AnalyseParams{Game: &g, States: packed, Agent: &spec, Seed: 3})
			require.NoError(t, err)
			assert.Equal(t, spec, res.Agent)
			assert.Equal(t, want.Actions, res.Actions)
			assert.Equal(t, want.Policy, res.Policy)
			assert.Equal(t, want.Value, res.Value)
			assert.Equal(t, want.Values, res.Values)
		})
	}
}

// midGameState plays a few sampled steps of a standard game.
func midGameState(t testing.TB, seed uint64) env.State {
	s, err := env.New(env.Standard(), seed, env.AnySeat)
	require.NoError(t, err)
	var buf [env.NumActions]env.Action
	for k := 0; k < int(seed%23)+3 && !s.IsOver(); k++ {
		s.Advance()
		if legal := s.LegalActions(buf[:0]); len(legal) > 0 {
			_, err := s.Apply(legal[int(seed)%len(legal)])
			require.NoError(t, err)
		}
	}
	s.Advance()
	return s
}

// BenchmarkStateApply measures apply over a real Unix socket: 1024 packed
// states at decisions, one action each, a round trip per op.
func BenchmarkStateApply(b *testing.B) {
	ts := startServer(b, "unix", DefaultConfig())
	c := ts.client(b)
	g := declareGame(b, c, "standard")
	const n = 1024
	res, err := c.Call("initial", map[string]any{"game": g, "seed": 1, "n": n, "start": 0})
	require.NoError(b, err)
	throws := make([]byte, n)
	for i := range throws {
		throws[i] = uint8(env.Gae)
	}
	res, err = c.Call("apply", map[string]any{"game": g, "states": res["states"], "throws": throws})
	require.NoError(b, err)
	states := res["states"].([]byte)
	acts := make([]int32, n)
	for i := range acts {
		acts[i] = int32(env.EnterAction(env.Gae))
	}
	params := map[string]any{"game": g, "states": states, "actions": int32Bin(acts...)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Call("apply", params); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "states/s")
}

// FuzzStateMethods sends arbitrary requests to a connection that declared a
// game: no input may panic the server or give an internal error, and the
// connection keeps serving.
func FuzzStateMethods(f *testing.F) {
	s, err := env.New(env.Standard(), 1, 0)
	require.NoError(f, err)
	chance := s.AppendPacked(nil)
	_, err = s.ApplyThrow(env.Gae)
	require.NoError(f, err)
	move := s.AppendPacked(nil)
	blob, err := s.MarshalBinary()
	require.NoError(f, err)
	for _, req := range []msgp.Obj{
		{{"id", 1}, {"method", "apply"}, {"params", msgp.Obj{{"game", 0}, {"states", chance}, {"throws", []byte{0xff}}}}},
		{{"id", 2}, {"method", "apply"}, {"params", msgp.Obj{{"game", 0}, {"states", move}, {"actions", int32Bin(89)}}}},
		{{"id", 3}, {"method", "query"}, {"params", msgp.Obj{{"game", 0}, {"states", append(chance, move...)}, {"mask", true}, {"returns", true}, {"obs", "planes"}, {"seat", -1}}}},
		{{"id", 4}, {"method", "analyse"}, {"params", msgp.Obj{{"game", 0}, {"states", move}, {"agent", "mcts:8"}}}},
		{{"id", 5}, {"method", "position"}, {"params", msgp.Obj{{"game", 0}, {"position", msgp.Obj{{"phase", "move"}, {"pool", []int{0, 0, 1, 0, 0, 0}},
			{"stacks", []msgp.Obj{{{"seat", 0}, {"station", 3}, {"route", "OUTER"}, {"height", 1}}}}}}}}},
		{{"id", 6}, {"method", "describe"}, {"params", msgp.Obj{{"game", 0}, {"state", move}}}},
		{{"id", 7}, {"method", "state_load"}, {"params", msgp.Obj{{"blob", blob}}}},
		{{"id", 8}, {"method", "initial"}, {"params", msgp.Obj{{"game", 0}, {"n", 3}, {"seed", 9}, {"start", 1}}}},
		{{"id", 9}, {"method", "game"}, {"params", msgp.Obj{{"rules", "players=4,pieces=5"}}}},
	} {
		f.Add(msgp.AppendValue(nil, req))
	}
	srv, err := New(Config{MaxFrame: 1 << 20})
	require.NoError(f, err)
	f.Cleanup(func() { srv.Close() })
	declare := msgp.AppendValue(nil, msgp.Obj{{"id", 0}, {"method", "game"}, {"params", msgp.Obj{{"rules", "standard"}}}})
	ping := msgp.AppendValue(nil, msgp.Obj{{"id", 0}, {"method", "ping"}})
	f.Fuzz(func(t *testing.T, body []byte) {
		a, _ := net.Pipe()
		c := newConn(srv, a)
		defer a.Close()
		c.authed = true
		c.serveFrame(declare, false)
		require.Equal(t, "", checkResponse(t, c.out))
		c.out = c.out[:0]
		c.serveFrame(body, false)
		if code := checkResponse(t, c.out); code == string(protocol.CodeInternal) {
			t.Fatalf("internal error for %x: %s", body, c.out)
		}
		c.out = c.out[:0]
		c.serveFrame(ping, false)
		require.Equal(t, "", checkResponse(t, c.out))
	})
}

func TestStateMethodsTakeEmptyBatches(t *testing.T) {
	ts := startServer(t, "unix", DefaultConfig())
	c := ts.client(t)
	g := declareGame(t, c, "standard")
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{"apply", map[string]any{"game": g, "states": []byte{}, "throws": []byte{}}},
		{"query", map[string]any{"game": g, "states": []byte{}, "mask": true, "returns": true, "obs": "compact"}},
		{"analyse", map[string]any{"game": g, "states": []byte{}, "agent": "mcts:10"}},
	} {
		t.Run(call.method, func(t *testing.T) {
			_, err := c.Call(call.method, call.params)
			require.NoError(t, err)
		})
	}
}

// TestQueryOnAFreshConnection asks for every part of a query as a
// connection's first request, when its reply buffer is still small: every
// part must hold the engine's values (the parts are laid out before they are
// filled, so a buffer that moved would leave them blank).
func TestQueryOnAFreshConnection(t *testing.T) {
	ts := startServer(t, "unix", DefaultConfig())
	for _, tier := range []string{"compact", "planes", "tactical"} {
		t.Run(tier, func(t *testing.T) {
			c := ts.client(t)
			g := declareGame(t, c, "standard")
			var packed []byte
			var states []env.State
			for seed := uint64(0); len(states) < 70; seed++ {
				s := midGameState(t, seed)
				states = append(states, s)
				packed = s.AppendPacked(packed)
			}
			q, err := c.Call("query", map[string]any{"game": g, "states": packed, "mask": true, "returns": true, "obs": tier})
			require.NoError(t, err)
			for i := range states {
				var m [env.NumActions]uint8
				states[i].Mask(m[:])
				assert.Equal(t, m[:], q["mask"].([]byte)[i*env.NumActions:(i+1)*env.NumActions], "state %d", i)
				assert.Equal(t, uint8(states[i].Phase()), q["phase"].([]byte)[i])
				assert.Equal(t, uint8(states[i].ToMove()), q["to_move"].([]byte)[i])
			}
		})
	}
}

// Missed turns (skip obstacles) survive every state method: a position
// that sets them, describe, apply and state_save/state_load (packed
// version 1 had no room for them).
func TestStateMethodsKeepMissedTurns(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	g := declareGame(t, c, "kata,obstacles=4:skip+9:back2")
	pos := map[string]any{"to_move": 0, "phase": "throw", "pool": []int{0, 0, 0, 0, 0, 0},
		"stacks": []any{map[string]any{"seat": 0, "station": 5, "route": "LINE", "height": 1}}, "missed": []int{0, 2}}
	res := do(t, c, "position", map[string]any{"game": g, "position": pos, "seed": 1})
	state := res["state"].([]byte)
	require.Len(t, state, env.PackedSize)
	missed := func(state []byte) []any {
		t.Helper()
		d := do(t, c, "describe", map[string]any{"game": g, "state": state})
		return d["position"].(map[string]any)["missed"].([]any)
	}
	assert.EqualValues(t, []any{int8(0), int8(2)}, missed(state))
	blob := do(t, c, "state_save", map[string]any{"game": g, "state": state})["blob"].([]byte)
	assert.Equal(t, state, do(t, c, "state_load", map[string]any{"blob": blob})["state"])
	// seat 0 throws do and moves 5 to 6; seat 1 misses its turn, so seat 0 throws again
	after := do(t, c, "apply", map[string]any{"game": g, "states": state, "throws": []byte{byte(env.Do)}})["states"].([]byte)
	after = do(t, c, "apply", map[string]any{"game": g, "states": after, "actions": int32Bin(int32(env.NewAction(env.Do, 5)))})["states"].([]byte)
	s, err := env.New(envtest.Rules(t, "kata,obstacles=4:skip+9:back2"), 0, 0)
	require.NoError(t, err)
	require.NoError(t, s.Unpack(after))
	assert.Equal(t, 0, s.ToMove(), "seat 1 misses the turn")
	assert.Equal(t, 1, s.MissedTurns(1))
	assert.EqualValues(t, []any{int8(0), int8(1)}, missed(after))
}
