package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
)

// rawCall sends an ordered request and returns the raw response body (copied).
func rawCall(t *testing.T, c *client.Client, id int, method string, params msgp.Obj) []byte {
	t.Helper()
	require.NoError(t, c.WriteFrame(msgp.AppendValue(nil, msgp.Obj{{"id", id}, {"method", method}, {"params", params}})))
	body, err := c.ReadFrame()
	require.NoError(t, err)
	return append([]byte(nil), body...)
}

// TestDeterminism drives two servers, one over a Unix socket and one over
// TCP, with the same requests: every response is identical byte for byte,
// through opponents' moves, random learner seats, autoresets and info.
func TestDeterminism(t *testing.T) {
	n := israce.Scale(64, 16) // under -race fewer envs a batch: the same requests, a quarter of the stepping
	params := []msgp.Obj{
		{{"n", n}, {"seat", "random"}, {"autoreset", "same_step"}, {"info", true}, {"max_decisions", 40}, {"rules", "players=3"}},
		{{"n", n}, {"mode", "multi"}, {"tier", "planes"}, {"info", true}, {"rules", "players=4,end=rank"}},
		{{"n", n}, {"tier", "tactical"}, {"illegal", "penalty"}},
	}
	for _, p := range params {
		t.Run(p[len(p)-1].V.(string), func(t *testing.T) {
			var clients []*client.Client
			for _, network := range networks {
				clients = append(clients, startServer(t, network, Config{}).client(t))
			}
			results := 0
			actions := make([]int32, n)
			for id := 1; id <= 150; id++ {
				var got [][]byte
				for _, c := range clients {
					switch {
					case id == 1:
						got = append(got, rawCall(t, c, id, "make", p))
					case id == 2:
						got = append(got, rawCall(t, c, id, "reset", msgp.Obj{{"handle", 1}, {"seed", 1234}}))
					default:
						bin := i32bin(actions...)
						if id%7 == 0 {
							bin[0] = 200 // illegal: refused (error policy) or penalised, the same way on both
						}
						got = append(got, rawCall(t, c, id, "step", msgp.Obj{{"handle", 1}, {"actions", bin}}))
					}
				}
				require.Equal(t, got[0], got[1], "request %d: responses differ", id)
				if id >= 2 {
					if r, err := clients[0].ParseStep(got[0]); err == nil {
						firstLegal(r.Mask, actions)
						results++
					}
				}
			}
			assert.Greater(t, results, 100, "most requests were served, not refused")
		})
	}
}

// TestSeedDerivation checks that env i of a batch seeded s plays exactly as
// a lone env seeded s+i (so parallel stepping and batch size change
// nothing), and that the first episode after reset(seed) is the engine's
// game env.New(rules, seed, start).
func TestSeedDerivation(t *testing.T) {
	ts := startServer(t, "unix", Config{Workers: 2})
	c := ts.client(t)
	const n, seed = 256, 77
	big := makeHandle(t, c, map[string]any{"n": n, "mode": "multi"})
	res := do(t, c, "reset", map[string]any{"handle": big, "seed": seed})
	bigMask := res["mask"].([]byte)
	bigObs := res["obs"].([]byte)
	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
	require.NoError(t, err)
	d := 4 * enc.Size()
	probe := []int{0, 1, 100, 255}
	solo := map[int]uint64{}
	for _, i := range probe {
		solo[i] = makeHandle(t, c, map[string]any{"mode": "multi"})
		r := do(t, c, "reset", map[string]any{"handle": solo[i], "seed": seed + i})
		assert.Equal(t, bigObs[i*d:(i+1)*d], r["obs"], "env %d after reset", i)
	}
	// The engine's own game for env 0.
	game, err := env.New(env.Standard(), seed, env.AnySeat)
	require.NoError(t, err)
	game.Advance()
	buf := make([]float32, enc.Size())
	actions := make([]int32, n)
	for k := range 60 {
		enc.Encode(&game, game.ToMove(), buf)
		assert.Equal(t, buf, f32s(bigObs[:d]), "step %d: env 0 is the engine's game", k)
		firstLegal(bigMask, actions)
		r, err := c.Step(big, actions, -1)
		require.NoError(t, err)
		bigObs = append([]byte(nil), r.Obs...)
		bigMask = append([]byte(nil), r.Mask...)
		for _, i := range probe {
			sr, err := c.Step(solo[i], actions[i:i+1], -1)
			require.NoError(t, err)
			assert.Equal(t, bigObs[i*d:(i+1)*d], sr.Obs, "step %d, env %d", k, i)
		}
		if r.Terminated[0] == 1 {
			break
		}
		_, err = game.Apply(env.Action(actions[0]))
		require.NoError(t, err)
		game.Advance()
	}
}
