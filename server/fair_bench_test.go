package server

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/msgp"
)

// BenchmarkStepBesideAnalyse is the fairness benchmark of
// docs/BENCHMARKS.md: one client steps a single env (one op = one step
// round trip over a Unix socket) while, in the "analyse" variant, another
// client runs the largest analyse the default limits allow (states ×
// mcts:max-opponent-sims up to --max-analyse-sims), hanging up when the
// steps are done. It reports the stepping client's steps per second and
// the p50, p99, p99.9 and maximum of a step's round trip.
func BenchmarkStepBesideAnalyse(b *testing.B) {
	for _, busy := range []bool{false, true} {
		b.Run(map[bool]string{false: "alone", true: "analyse"}[busy], func(b *testing.B) {
			cfg := DefaultConfig()
			ts := startServer(b, "unix", cfg)
			if busy {
				an := ts.client(b)
				g := declareGame(b, an, "standard")
				states := int(cfg.limits().AnalyseSims / DecisionSims(agent.Spec{Name: "mcts", N: cfg.MaxOpponentSims}))
				if err := an.WriteFrame(msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "analyse"}, {"params", msgp.Obj{
					{"game", g}, {"states", decisionStates(b, states)}, {"agent", fmt.Sprintf("mcts:%d", cfg.MaxOpponentSims)}}}})); err != nil {
					b.Fatal(err)
				}
				defer an.Close()
				time.Sleep(200 * time.Millisecond) // searching
			}
			c := ts.client(b)
			h := makeHandle(b, c, map[string]any{"n": 1})
			res, err := c.Call("reset", map[string]any{"handle": h, "seed": 1})
			if err != nil {
				b.Fatal(err)
			}
			actions := make([]int32, 1)
			firstLegal(res["mask"].([]byte), actions)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				r, err := c.Step(h, actions, 0)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				firstLegal(r.Mask, actions)
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) }
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
			b.ReportMetric(pct(0.999), "p99.9-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
		})
	}
}
