package solve

import (
	"testing"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// BenchmarkSolve measures whole solves (listing the states and value
// iteration); docs/BASELINES.md quotes its figures. cross_pieces2 takes
// minutes and about 6 GiB: run it alone, with -benchtime 1x.
func BenchmarkSolve(b *testing.B) {
	for _, v := range []struct{ name, rules string }{
		{"kata", "kata"},
		{"cross_pieces1", "pieces=1"},
		{"cross_pieces2", "pieces=2"},
	} {
		b.Run(v.name, func(b *testing.B) {
			r := envtest.Rules(b, v.rules)
			var tb *Table
			for b.Loop() {
				var err error
				if tb, err = Solve(r, Options{MaxBytes: 8 << 30}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tb.Len()), "states")
			b.ReportMetric(float64(tb.Iterations), "sweeps")
			b.ReportMetric(tb.Residual, "residual")
			if tb.Residual > 1e-9 {
				b.Fatalf("Bellman residual %g above 1e-9", tb.Residual)
			}
		})
	}
}

// BenchmarkBest measures one optimal decision (the agent's cost).
func BenchmarkBest(b *testing.B) {
	tb := mustSolve(b, "kata", 0)
	s, err := tb.State(tb.Len() / 2)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; s.Phase() != env.PhaseMove; i++ {
		if s, err = tb.State(i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := tb.Best(&s); err != nil {
			b.Fatal(err)
		}
	}
}
