package server

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/vecenv"
)

// firstLegal fills actions with the first legal action of each mask row.
var firstLegal = vecenv.FirstLegal

var benchSizes = []int{1, 64, 256, 1024}

// BenchmarkStep measures the whole round trip from a Go client over a real
// socket: one op is one step request of N envs (single mode, compact tier,
// random opponents), the client picking the first legal action of each env.
// It reports env steps per second and wire bytes per env step.
func BenchmarkStep(b *testing.B) {
	for _, network := range networks {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/n=%d", network, n), func(b *testing.B) {
				benchStep(b, network, n, map[string]any{})
			})
		}
	}
}

// BenchmarkStepTiers is BenchmarkStep over a Unix socket for every tier at N = 256.
func BenchmarkStepTiers(b *testing.B) {
	for _, tier := range []string{"compact", "tactical", "planes"} {
		b.Run(tier, func(b *testing.B) {
			benchStep(b, "unix", 256, map[string]any{"tier": tier})
		})
	}
}

func benchStep(b *testing.B, network string, n int, params map[string]any) {
	ts := startServer(b, network, Config{})
	c := ts.client(b)
	params["n"] = n
	h := makeHandle(b, c, params)
	res, err := c.Call("reset", map[string]any{"handle": h, "seed": 1})
	require.NoError(b, err)
	actions := make([]int32, n)
	firstLegal(res["mask"].([]byte), actions)
	reqBytes := 4*n + 48
	var respBytes int
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, err := c.Step(h, actions, -1)
		if err != nil {
			b.Fatal(err)
		}
		respBytes += r.Size
		firstLegal(r.Mask, actions)
	}
	b.StopTimer()
	steps := float64(n) * float64(b.N)
	b.ReportMetric(steps/b.Elapsed().Seconds(), "envsteps/s")
	b.ReportMetric((float64(respBytes)+float64(reqBytes)*float64(b.N))/steps, "B/envstep")
}
