package server

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/render"
)

// i32bin encodes actions as the protocol's int32 bin.
func i32bin(a ...int32) []byte {
	b := make([]byte, 0, 4*len(a))
	for _, x := range a {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

// legalFrom returns the first legal action of each mask row.
func legalFrom(mask []byte, n int) []int32 {
	a := make([]int32, n)
	firstLegal(mask, a)
	return a
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func TestHello(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			ts := startServer(t, network, Config{Version: "9.9"})
			c := ts.dial(t)
			res, err := c.Hello("")
			require.NoError(t, err)
			assert.EqualValues(t, protocol.Version, res["protocol"])
			assert.Equal(t, "yutenv 9.9", res["server"])
			assert.EqualValues(t, env.NumActions, res["actions"])
			assert.Equal(t, "compact", res["default_tier"])
			assert.EqualValues(t, obs.LayoutVersion, res["obs_layout"])
			assert.Contains(t, res["opponents"], "random")
			tiers := res["tiers"].([]any)
			require.Len(t, tiers, len(obs.Tiers()))
			for i, tier := range obs.Tiers() {
				enc, err := obs.NewEncoder(env.Standard(), tier)
				require.NoError(t, err)
				sp := tiers[i].(map[string]any)
				assert.Equal(t, tier.String(), sp["tier"])
				assert.EqualValues(t, enc.Size(), sp["size"])
				assert.Equal(t, "float32", sp["dtype"])
				parts := sp["parts"].([]any)
				require.Len(t, parts, len(enc.Space().Parts))
				sum := 0
				for j, p := range enc.Space().Parts {
					got := parts[j].(map[string]any)
					assert.Equal(t, p.Name, got["name"])
					assert.EqualValues(t, sum, got["offset"], "parts cover the vector in order")
					sum += p.Len()
				}
				assert.Equal(t, enc.Size(), sum)
			}
			lim := res["limits"].(map[string]any)
			assert.EqualValues(t, DefaultMaxFrame, lim["max_frame"])
			assert.EqualValues(t, DefaultMaxEnvs, lim["max_envs"])
			assert.EqualValues(t, DefaultMaxEnvsPerConn, lim["max_envs_per_conn"])
			assert.EqualValues(t, 3600, lim["idle_timeout_s"])
		})
	}
}

func TestHandshake(t *testing.T) {
	tests := []struct {
		name   string
		token  string // the server's
		params map[string]any
		code   protocol.Code
		msg    string // the error's message, hello's name first as every method's
		closed bool
	}{
		{"ok without token", "", map[string]any{}, "", "", false},
		{"nil params", "", nil, "", "", false},
		{"token given", "s3cret", map[string]any{"token": "s3cret"}, "", "", false},
		{"token missing", "s3cret", map[string]any{}, protocol.CodeUnauthorized, "hello: this server requires a token: pass it in hello.params.token", true},
		{"token wrong", "s3cret", map[string]any{"token": "guess"}, protocol.CodeUnauthorized, "hello: wrong token", true},
		{"future protocol", "", map[string]any{"protocol": 2}, protocol.CodeVersionMismatch, "hello: this server speaks protocol 1, the client asked for 2", false},
		{"protocol not int", "", map[string]any{"protocol": "1"}, protocol.CodeBadRequest, "hello: params.protocol: want int, got str", false},
		{"unknown param", "", map[string]any{"tokn": "x"}, protocol.CodeBadRequest, `hello: unknown parameter "tokn" (parameters: protocol, token, client)`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, "unix", Config{Token: tt.token})
			c := ts.dial(t)
			_, err := c.Call("hello", tt.params)
			assert.Equal(t, tt.code, errCode(err), "%v", err)
			if tt.msg != "" {
				var e *Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, tt.msg, e.Message)
			}
			_, err = c.Call("ping", nil)
			switch {
			case tt.closed:
				assert.Error(t, err, "the connection is closed after unauthorized")
				assert.Equal(t, protocol.Code(""), errCode(err))
			case tt.code != "":
				assert.Equal(t, protocol.CodeHandshakeRequired, errCode(err), "still not authenticated")
			default:
				assert.NoError(t, err)
			}
		})
	}
	t.Run("before hello", func(t *testing.T) {
		ts := startServer(t, "tcp", Config{})
		c := ts.dial(t)
		_, err := c.Call("make", nil)
		assert.Equal(t, protocol.CodeHandshakeRequired, errCode(err))
		_, err = c.Hello("")
		assert.NoError(t, err, "hello after a refused request works")
	})
}

func TestMake(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		check  func(t *testing.T, res map[string]any)
	}{
		{"defaults", nil, func(t *testing.T, res map[string]any) {
			assert.EqualValues(t, 1, res["handle"])
			assert.EqualValues(t, 1, res["n"])
			assert.EqualValues(t, 2, res["players"])
			assert.Equal(t, "single", res["mode"])
			assert.Equal(t, "next_step", res["autoreset"])
			assert.Equal(t, "error", res["illegal"])
			assert.Equal(t, "win", res["reward"])
			assert.Equal(t, "compact", res["tier"])
			assert.Equal(t, "random", res["opponent"])
			assert.EqualValues(t, 0, res["seat"])
			assert.Equal(t, "standard", res["rules"])
			assert.EqualValues(t, 180, res["actions"])
			assert.Equal(t, []any{int8(1)}, res["reward_shape"])
			enc, _ := obs.NewEncoder(env.Standard(), obs.Compact)
			assert.EqualValues(t, enc.Size(), res["obs_size"])
			assert.EqualValues(t, obs.LayoutVersion, res["obs_layout"])
			assert.EqualValues(t, enc.Size(), res["obs_space"].(map[string]any)["size"])
		}},
		{"rules string", map[string]any{"rules": "players=3,end=rank", "seat": 2}, func(t *testing.T, res map[string]any) {
			assert.Equal(t, "players=3,end=rank", res["rules"])
			assert.EqualValues(t, 3, res["players"])
			assert.EqualValues(t, 2, res["seat"])
		}},
		{"rules map", map[string]any{"rules": map[string]any{"players": 4, "back_do": false, "flat_prob": 0.5, "end": "rank"}}, func(t *testing.T, res map[string]any) {
			assert.Equal(t, "players=4,flat_prob=0.5,back_do=off,end=rank", res["rules"])
		}},
		{"multi", map[string]any{"mode": "multi", "n": 8, "rules": "players=3"}, func(t *testing.T, res map[string]any) {
			assert.Equal(t, "multi", res["mode"])
			assert.Equal(t, "", res["opponent"])
			assert.Equal(t, []any{int8(8), int8(3)}, res["reward_shape"])
		}},
		{"everything", map[string]any{"tier": "planes", "n": 3, "seat": "random", "opponent": "random", "autoreset": "same_step",
			"max_decisions": 50, "reward": "win", "illegal": "penalty", "info": true}, func(t *testing.T, res map[string]any) {
			assert.Equal(t, "planes", res["tier"])
			assert.Equal(t, "random", res["seat"])
			assert.Equal(t, "same_step", res["autoreset"])
			assert.Equal(t, "penalty", res["illegal"])
			assert.EqualValues(t, 50, res["max_decisions"])
			assert.Equal(t, true, res["info"])
		}},
	}
	ts := startServer(t, "unix", Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ts.client(t)
			res, err := c.Call("make", tt.params)
			require.NoError(t, err)
			tt.check(t, res)
		})
	}
}

func TestMakeErrors(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		code   protocol.Code
		msg    string
	}{
		{"unknown param", map[string]any{"nn": 2}, protocol.CodeBadRequest, `unknown parameter "nn"`},
		{"n zero", map[string]any{"n": 0}, protocol.CodeBadRequest, "params.n: 0 is out of range"},
		{"n str", map[string]any{"n": "4"}, protocol.CodeBadRequest, "params.n: want int, got str"},
		{"n float", map[string]any{"n": 4.0}, protocol.CodeBadRequest, "want int, got float"},
		{"bad mode", map[string]any{"mode": "duo"}, protocol.CodeBadRequest, `"duo" is not one of single, multi`},
		{"bad tier", map[string]any{"tier": "huge"}, protocol.CodeBadRequest, "bad observation tier"},
		{"opponent too costly", map[string]any{"opponent": "mcts:100000"}, protocol.CodeLimitExceeded, "above this server's --max-opponent-sims 2000"},
		{"opponent too costly with workers", map[string]any{"opponent": "mc:1000,workers=4"}, protocol.CodeLimitExceeded, "4000 simulations"},
		{"bad rules", map[string]any{"rules": "players=9"}, protocol.CodeInvalidRules, "players must be 2 to 4"},
		{"bad rules key", map[string]any{"rules": map[string]any{"playerz": 2}}, protocol.CodeInvalidRules, "unknown rules key"},
		{"rules value type", map[string]any{"rules": map[string]any{"players": []int{2}}}, protocol.CodeBadRequest, "want bool, int, float or str"},
		{"rules type", map[string]any{"rules": 3}, protocol.CodeBadRequest, "want str or map"},
		{"bad opponent", map[string]any{"opponent": "oracle"}, protocol.CodeBadRequest, "unknown agent"},
		{"seat out of range", map[string]any{"seat": 2}, protocol.CodeBadRequest, "out of range 0..1"},
		{"seat word", map[string]any{"seat": "first"}, protocol.CodeBadRequest, `want a seat number or "random"`},
		{"multi with opponent", map[string]any{"mode": "multi", "opponent": "random"}, protocol.CodeBadRequest, "mode single only"},
		{"bad autoreset", map[string]any{"autoreset": "never"}, protocol.CodeBadRequest, "next_step, same_step"},
		{"bad reward", map[string]any{"reward": "dense"}, protocol.CodeBadRequest, `"dense" is not one of win`},
		{"bad illegal", map[string]any{"illegal": "ignore"}, protocol.CodeBadRequest, "error, penalty"},
		{"negative max", map[string]any{"max_decisions": -1}, protocol.CodeBadRequest, "out of range"},
		{"too many envs", map[string]any{"n": 100}, protocol.CodeLimitExceeded, "per connection"},
		{"frame too small", map[string]any{"n": 50, "tier": "tactical"}, protocol.CodeLimitExceeded, "max_frame"},
	}
	ts := startServer(t, "tcp", Config{MaxEnvsPerConn: 64, MaxFrame: 64 << 10})
	c := ts.client(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Call("make", tt.params)
			require.Error(t, err)
			assert.Equal(t, tt.code, errCode(err), "%v", err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	res, err := c.Call("stats", nil)
	require.NoError(t, err)
	assert.EqualValues(t, 0, res["envs"], "failed makes hold no envs")
}

// do calls a method and fails the test on error.
func do(t *testing.T, c *client.Client, method string, params map[string]any) map[string]any {
	t.Helper()
	res, err := c.Call(method, params)
	require.NoError(t, err, "%s %v", method, params)
	return res
}

func TestReset(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 3, "rules": "players=3"})
	t.Run("one seed", func(t *testing.T) {
		res := do(t, c, "reset", map[string]any{"handle": h, "seed": 10})
		assert.Equal(t, []any{int8(10), int8(11), int8(12)}, res["seeds"])
		enc, _ := obs.NewEncoder(env.Standard(), obs.Compact)
		assert.Len(t, res["obs"], 3*4*enc.Size())
		assert.Len(t, res["mask"], 3*env.NumActions)
		assert.Equal(t, []byte{0, 0, 0}, res["to_move"], "the learner is seat 0")
		for i := range 3 {
			assert.Positive(t, bytes.Count(res["mask"].([]byte)[i*180:(i+1)*180], []byte{1}), "env %d is at a decision", i)
		}
		assert.NotContains(t, res, "info")
	})
	t.Run("seed list and options", func(t *testing.T) {
		res := do(t, c, "reset", map[string]any{"handle": h, "seed": []uint64{math.MaxUint64, 0, 7}, "options": map[string]any{"start": 1, "seat": 2}, "info": true})
		assert.Equal(t, []byte{2, 2, 2}, res["to_move"])
		info := res["info"].([]any)
		require.Len(t, info, 3)
		assert.EqualValues(t, uint64(math.MaxUint64), info[0].(map[string]any)["seed"])
		assert.EqualValues(t, 2, info[1].(map[string]any)["learner"])
	})
	t.Run("random seed", func(t *testing.T) {
		a := do(t, c, "reset", map[string]any{"handle": h})["seeds"].([]any)
		b := do(t, c, "reset", map[string]any{"handle": h, "seed": nil})["seeds"].([]any)
		assert.NotEqual(t, a, b)
	})
	errs := []struct {
		name   string
		params map[string]any
		code   protocol.Code
		msg    string
	}{
		{"no handle", map[string]any{"seed": 1}, protocol.CodeBadRequest, "missing params.handle"},
		{"unknown handle", map[string]any{"handle": 99}, protocol.CodeUnknownHandle, "no handle 99"},
		{"seed count", map[string]any{"handle": h, "seed": []int{1, 2}}, protocol.CodeBadRequest, "2 seeds for 3 envs"},
		{"negative seed", map[string]any{"handle": h, "seed": -1}, protocol.CodeBadRequest, "negative"},
		{"seed str", map[string]any{"handle": h, "seed": "1"}, protocol.CodeBadRequest, "want int, got str"},
		{"start range", map[string]any{"handle": h, "options": map[string]any{"start": 3}}, protocol.CodeBadRequest, "seat 3 out of range 0..2"},
		{"unknown option", map[string]any{"handle": h, "options": map[string]any{"begin": 0}}, protocol.CodeBadRequest, `unknown option "begin"`},
		{"options type", map[string]any{"handle": h, "options": 1}, protocol.CodeBadRequest, "want map"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Call("reset", tt.params)
			require.Error(t, err)
			assert.Equal(t, tt.code, errCode(err), "%v", err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestStepErrors(t *testing.T) {
	ts := startServer(t, "tcp", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 2})
	_, err := c.Call("step", map[string]any{"handle": h, "actions": i32bin(0, 0)})
	assert.Equal(t, protocol.CodeNeedsReset, errCode(err), "%v", err)
	res := do(t, c, "reset", map[string]any{"handle": h, "seed": 5})
	mask := res["mask"].([]byte)
	legal := legalFrom(mask, 2)
	illegal := int32(bytes.IndexByte(mask[:180], 0))
	before := do(t, c, "save", map[string]any{"handle": h, "index": 0})["state"]
	tests := []struct {
		name   string
		params map[string]any
		code   protocol.Code
		msg    string
	}{
		{"missing actions", map[string]any{"handle": h}, protocol.CodeBadRequest, "missing params.actions"},
		{"short bin", map[string]any{"handle": h, "actions": i32bin(legal[0])}, protocol.CodeBadRequest, "4 bytes, want 8"},
		{"short list", map[string]any{"handle": h, "actions": []int{1}}, protocol.CodeBadRequest, "1 actions for 2 envs"},
		{"actions str", map[string]any{"handle": h, "actions": "12"}, protocol.CodeBadRequest, "want bin of int32 or array of int"},
		{"list of str", map[string]any{"handle": h, "actions": []string{"a", "b"}}, protocol.CodeBadRequest, "actions[0]: want int"},
		{"out of range", map[string]any{"handle": h, "actions": i32bin(legal[0], 180)}, protocol.CodeBadRequest, "actions[1] = 180 is out of range"},
		{"negative", map[string]any{"handle": h, "actions": i32bin(-1, legal[1])}, protocol.CodeBadRequest, "actions[0] = -1"},
		{"illegal", map[string]any{"handle": h, "actions": i32bin(illegal, legal[1])}, protocol.CodeIllegalAction, "env 0, seat 0"},
		{"unknown handle", map[string]any{"handle": h + 1, "actions": i32bin(legal...)}, protocol.CodeUnknownHandle, ""},
		{"unknown param", map[string]any{"handle": h, "actions": i32bin(legal...), "render": true}, protocol.CodeBadRequest, `unknown parameter "render"`},
		{"handle str", map[string]any{"handle": "1", "actions": i32bin(legal...)}, protocol.CodeBadRequest, "params.handle: want int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Call("step", tt.params)
			require.Error(t, err)
			assert.Equal(t, tt.code, errCode(err), "%v", err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	after := do(t, c, "save", map[string]any{"handle": h, "index": 0})["state"]
	assert.Equal(t, before, after, "refused steps change nothing")
	_, err = c.Call("step", map[string]any{"handle": h, "actions": []int32{legal[0], legal[1]}})
	assert.NoError(t, err, "actions as an array of ints")
}

// TestSingleMode plays whole episodes and checks the single-mode contract.
func TestSingleMode(t *testing.T) {
	for _, rules := range []string{"standard", "players=3,end=rank", "players=4,pieces=2"} {
		t.Run(rules, func(t *testing.T) {
			ts := startServer(t, "unix", Config{})
			c := ts.client(t)
			const n = 16
			h := makeHandle(t, c, map[string]any{"n": n, "rules": rules, "seat": "random", "info": true})
			res := do(t, c, "reset", map[string]any{"handle": h, "seed": 3})
			actions := legalFrom(res["mask"].([]byte), n)
			learner := append([]byte(nil), res["to_move"].([]byte)...)
			ended := make([]bool, n)
			episodes := 0
			// A third of the steps under -race: each checks every row, tenfold slower there.
			for range israce.Scale(400, 120) {
				r, err := c.Step(h, actions, -1)
				require.NoError(t, err)
				var info []map[string]any
				require.NoError(t, msgpack.Unmarshal(r.Info, &info))
				rew := r.RewardF32()
				for i := range n {
					if ended[i] {
						// next_step: this step began a new episode.
						assert.Zero(t, rew[i])
						assert.Zero(t, r.Terminated[i])
						learner[i] = r.ToMove[i]
						ended[i] = false
						assert.EqualValues(t, learner[i], info[i]["learner"])
						assert.EqualValues(t, 0, info[i]["steps"])
						continue
					}
					assert.Equal(t, learner[i], r.ToMove[i], "rows are always the learner's")
					assert.EqualValues(t, learner[i], info[i]["learner"])
					if r.Terminated[i] == 1 {
						episodes++
						ended[i] = true
						assert.Contains(t, []float32{1, 0, -1}, rew[i], "Outcome of 2 to 4 seats under end=first or a 3-seat ranking")
						assert.NotEqual(t, -1, info[i]["winner"])
						assert.Zero(t, bytes.Count(r.Mask[i*180:(i+1)*180], []byte{1}), "an ended row has no legal action")
						if p := info[i]["places"].([]any); assert.NotEmpty(t, p) {
							assert.Equal(t, rew[i] == 1, toI(p[learner[i]]) == 1, "reward +1 iff the learner placed first")
						}
					} else {
						assert.Zero(t, rew[i], "no reward before the end")
						assert.Positive(t, bytes.Count(r.Mask[i*180:(i+1)*180], []byte{1}))
					}
					assert.Zero(t, r.Truncated[i])
				}
				firstLegal(r.Mask, actions)
			}
			assert.Positive(t, episodes, "some episodes ended")
		})
	}
}

func toI(v any) int {
	n, _ := client.Int(v)
	return n
}

func TestMultiMode(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	const n, players = 4, 3
	h := makeHandle(t, c, map[string]any{"n": n, "mode": "multi", "rules": "players=3,pieces=1"})
	res := do(t, c, "reset", map[string]any{"handle": h, "seed": 2, "options": map[string]any{"start": 1}})
	assert.Equal(t, []byte{1, 1, 1, 1}, res["to_move"], "options.start names the first seat")
	actions := legalFrom(res["mask"].([]byte), n)
	seats := map[int8]bool{}
	ends := 0
	for range 200 {
		r, err := c.Step(h, actions, 0)
		require.NoError(t, err)
		assert.Nil(t, r.Info)
		rew := r.RewardF32()
		require.Len(t, rew, n*players)
		for i := range n {
			seats[int8(r.ToMove[i])] = true
			row := rew[i*players : (i+1)*players]
			if r.Terminated[i] == 1 {
				ends++
				assert.ElementsMatch(t, []float32{1, -1, -1}, row, "first to finish wins, the others lose")
			} else {
				assert.Equal(t, []float32{0, 0, 0}, row)
			}
		}
		firstLegal(r.Mask, actions)
	}
	assert.Len(t, seats, players, "every seat gets decisions")
	assert.Positive(t, ends)
}

func TestCloseStatsRender(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 5})
	do(t, c, "reset", map[string]any{"handle": h, "seed": 1})
	do(t, c, "ping", nil)
	st := do(t, c, "stats", nil)
	assert.EqualValues(t, 5, st["envs"])
	assert.EqualValues(t, 1, st["handles"])
	assert.EqualValues(t, 1, st["connections"])
	assert.Equal(t, map[string]any{"envs": int8(5), "handles": int8(1), "requests": int8(5)}, st["conn"])
	lat := st["latency_us"].(map[string]any)
	for _, m := range []string{"hello", "make", "reset", "ping"} {
		s := lat[m].(map[string]any)
		assert.EqualValues(t, 1, s["count"], m)
		assert.LessOrEqual(t, toF(s["p50"]), toF(s["max"]))
	}
	text := do(t, c, "render", map[string]any{"handle": h, "index": 4})["text"].(string)
	assert.Contains(t, text, "seat 0 (A)")
	img := do(t, c, "render", map[string]any{"handle": h, "index": 4, "format": "rgb"})
	assert.EqualValues(t, render.Height, img["height"])
	assert.EqualValues(t, render.Width, img["width"])
	assert.Len(t, img["rgb"], render.RGBSize)
	svg := do(t, c, "render", map[string]any{"handle": h, "index": 4, "format": "svg"})["svg"].(string)
	assert.Contains(t, svg, "<svg")
	_, err := c.Call("render", map[string]any{"handle": h, "index": 4, "format": "png"})
	assert.Equal(t, protocol.CodeUnsupported, errCode(err))
	_, err = c.Call("render", map[string]any{"handle": h, "index": 5})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	_, err = c.Call("render", map[string]any{"handle": h})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	_, err = c.Call("ping", map[string]any{"x": 1})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	do(t, c, "close", map[string]any{"handle": h})
	_, err = c.Call("close", map[string]any{"handle": h})
	assert.Equal(t, protocol.CodeUnknownHandle, errCode(err))
	st = do(t, c, "stats", nil)
	assert.EqualValues(t, 0, st["envs"])
	_, err = c.Call("launch", nil)
	assert.Equal(t, protocol.CodeUnknownMethod, errCode(err))
}

func toF(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	}
	n, _ := client.Int(v)
	return float64(n)
}

func TestSaveLoad(t *testing.T) {
	ts := startServer(t, "tcp", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 2, "mode": "multi"})
	res := do(t, c, "reset", map[string]any{"handle": h, "seed": 9})
	actions := legalFrom(res["mask"].([]byte), 2)
	r, err := c.Step(h, actions, -1)
	require.NoError(t, err)
	firstLegal(r.Mask, actions)
	blob := do(t, c, "save", map[string]any{"handle": h, "index": 0})["state"].([]byte)
	var obsAfter [][]byte
	for range 5 {
		r, err := c.Step(h, actions, -1)
		require.NoError(t, err)
		obsAfter = append(obsAfter, append([]byte(nil), r.Obs...))
		firstLegal(r.Mask, actions)
	}
	// Load env 0's saved state into env 1 and replay: env 1 must now
	// follow env 0's history exactly.
	res = do(t, c, "load", map[string]any{"handle": h, "index": 1, "state": blob})
	do(t, c, "load", map[string]any{"handle": h, "index": 0, "state": blob})
	d := len(res["obs"].([]byte))
	a := legalFrom(res["mask"].([]byte), 1)[0]
	actions = []int32{a, a}
	for k := range 5 {
		r, err := c.Step(h, actions, -1)
		require.NoError(t, err)
		assert.Equal(t, r.Obs[:d], r.Obs[d:], "step %d: both envs play the loaded game", k)
		assert.Equal(t, obsAfter[k][:d], r.Obs[:d], "step %d: the loaded game repeats the saved one", k)
		firstLegal(r.Mask, actions)
	}
	other := makeHandle(t, c, map[string]any{"rules": "players=3"})
	do(t, c, "reset", map[string]any{"handle": other, "seed": 1})
	tests := []struct {
		name   string
		params map[string]any
		code   protocol.Code
		msg    string
	}{
		{"other rules", map[string]any{"handle": other, "index": 0, "state": blob}, protocol.CodeBadState, "the handle plays"},
		{"garbage", map[string]any{"handle": h, "index": 0, "state": []byte{1, 2, 3}}, protocol.CodeBadState, ""},
		{"deep", map[string]any{"handle": h, "index": 0, "state": nested(60000)}, protocol.CodeBadState, "nesting"},
		{"no state", map[string]any{"handle": h, "index": 0}, protocol.CodeBadRequest, "missing params.state"},
		{"state str", map[string]any{"handle": h, "index": 0, "state": "x"}, protocol.CodeBadRequest, "want bin"},
		{"seat in multi", map[string]any{"handle": h, "index": 0, "state": blob, "seat": 1}, protocol.CodeBadRequest, "mode single"},
		{"index", map[string]any{"handle": h, "index": 2, "state": blob}, protocol.CodeBadRequest, "out of range 0..1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Call("load", tt.params)
			require.Error(t, err)
			assert.Equal(t, tt.code, errCode(err), "%v", err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	_, err = c.Call("save", map[string]any{"handle": h, "index": -1})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
}

// TestOversizedResult: a result that outgrows max_frame (only info can make
// it) is replaced by limit_exceeded, which says the step happened.
func TestOversizedResult(t *testing.T) {
	ts := startServer(t, "unix", Config{MaxFrame: 64 << 10})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 60})
	res := do(t, c, "reset", map[string]any{"handle": h, "seed": 1})
	_, err := c.Step(h, legalFrom(res["mask"].([]byte), 60), 1)
	assert.Equal(t, protocol.CodeLimitExceeded, errCode(err))
	assert.ErrorContains(t, err, "the request was carried out")
	_, err = c.Call("save", map[string]any{"handle": h, "index": 0})
	assert.NoError(t, err, "the connection goes on")
	h2 := makeHandle(t, c, nil)
	_, err = c.Call("save", map[string]any{"handle": h2, "index": 0})
	assert.Equal(t, protocol.CodeNeedsReset, errCode(err))
}

// TestTerminalRowIsTheLearners: when an opponent ends the game, the
// terminal row still shows the final position from the learner's seat.
func TestTerminalRowIsTheLearners(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	const n = 32
	h := makeHandle(t, c, map[string]any{"n": n, "rules": "pieces=1"})
	res := do(t, c, "reset", map[string]any{"handle": h, "seed": 5})
	actions := legalFrom(res["mask"].([]byte), n)
	enc, err := obs.NewEncoder(envtest.Rules(t, "pieces=1"), obs.Compact)
	require.NoError(t, err)
	d := enc.Size()
	buf := make([]float32, d)
	checked := 0
	for range 100 {
		r, err := c.Step(h, actions, -1)
		require.NoError(t, err)
		rows := f32s(r.Obs)
		for i := range n {
			if r.Terminated[i] == 0 || r.RewardF32()[i] != -1 {
				continue
			}
			blob := do(t, c, "save", map[string]any{"handle": h, "index": i})["state"].([]byte)
			s, err := env.UnmarshalState(blob)
			require.NoError(t, err)
			require.True(t, s.IsOver())
			require.Equal(t, 1, s.ToMove(), "the opponent made the last move")
			enc.Encode(&s, 0, buf)
			assert.Equal(t, buf, rows[i*d:(i+1)*d], "env %d: the learner's view", i)
			enc.Encode(&s, 1, buf)
			assert.NotEqual(t, buf, rows[i*d:(i+1)*d], "not the opponent's view")
			checked++
		}
		firstLegal(r.Mask, actions)
	}
	assert.Positive(t, checked, "some games were won by the opponent")
}
