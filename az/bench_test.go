package az

import (
	"testing"

	"github.com/yutenv/yutenv/env"
)

// BenchmarkLeaves measures leaves per second through Run.Next at batch 256
// with an instant evaluator (uniform priors, value 0): the cost of the
// batching itself and of the searches, without a socket or a network.
func BenchmarkLeaves(b *testing.B) {
	cfg := config(b.TempDir())
	cfg.Games, cfg.InFlight, cfg.Sims, cfg.ShardGames = 1_000_000, 256, 32, 1000
	r, err := Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	priors := make([]float32, 256*env.NumActions)
	for i := range priors {
		priors[i] = 1
	}
	values := make([]float32, 256)
	bt, err := r.Next(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	leaves := 0
	for leaves < b.N {
		n := bt.N
		leaves += n
		if bt, err = r.Next(priors[:n*env.NumActions], values[:n]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(leaves)/b.Elapsed().Seconds(), "leaves/s")
}
