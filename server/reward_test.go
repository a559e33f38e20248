package server

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/protocol"
)

// episodeReturns plays n envs with the first legal action until each has
// finished one episode and returns every env's rewards, step by step.
func episodeReturns(t *testing.T, c *client.Client, params map[string]any, n int) [][]float32 {
	t.Helper()
	h := makeHandle(t, c, params)
	res := do(t, c, "reset", map[string]any{"handle": h, "seed": 7, "options": map[string]any{"start": 0}})
	actions := legalFrom(res["mask"].([]byte), n)
	rewards := make([][]float32, n)
	done := make([]bool, n)
	for range 5000 {
		r, err := c.Step(h, actions, 0)
		require.NoError(t, err)
		rew := r.RewardF32()
		cols := len(rew) / n
		all := true
		for i := range n {
			if !done[i] {
				rewards[i] = append(rewards[i], rew[i*cols:(i+1)*cols]...)
				done[i] = r.Terminated[i] == 1 || r.Truncated[i] == 1
			}
			all = all && done[i]
		}
		if all {
			return rewards
		}
		firstLegal(r.Mask, actions)
	}
	t.Fatal("episodes did not end")
	return nil
}

func TestProgressReward(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	const n = 8
	single := map[string]any{"n": n, "seat": 0, "opponent": "random"}
	win := episodeReturns(t, c, single, n)
	single["reward"] = "progress"
	progress := episodeReturns(t, c, single, n)

	dense := 0
	for i := range n {
		require.Len(t, progress[i], len(win[i]), "same seed and actions, same episode")
		var sumWin, sumProgress float64
		for k, r := range progress[i] {
			assert.LessOrEqual(t, math.Abs(float64(r)), 2.0, "a step's reward is bounded")
			sumWin += float64(win[i][k])
			sumProgress += float64(r)
			if r != 0 && k < len(progress[i])-1 {
				dense++
			}
		}
		// Seat 0 starts, so its first decision has every piece in hand (potential 0):
		// potential-based shaping telescopes and the return equals the win return.
		assert.InDelta(t, sumWin, sumProgress, 1e-4, "env %d", i)
	}
	assert.Positive(t, dense, "progress rewards arrive before the end")

	// Two seats in multi mode: the potentials are opposite, so every row sums to zero.
	multi := episodeReturns(t, c, map[string]any{"n": n, "mode": "multi", "reward": "progress"}, n)
	for i := range n {
		for k := 0; k+1 < len(multi[i]); k += 2 {
			assert.InDelta(t, 0, multi[i][k]+multi[i][k+1], 1e-5)
		}
	}
	_, err := c.Call("make", map[string]any{"n": 1, "reward": "money"})
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
}
