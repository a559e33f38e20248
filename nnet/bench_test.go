package nnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/env/envtest"
)

// BenchmarkForward is one forward pass of a compact-tier MLP 213-64-(180, 1).
func BenchmarkForward(b *testing.B) {
	n := randomNet(1, 64)
	sc := n.NewScratch()
	x := make([]float32, n.Trunk[0].In)
	logits := make([]float32, env.NumActions)
	b.ReportAllocs()
	for b.Loop() {
		n.Forward(sc, x, logits)
	}
}

// BenchmarkForwardSB3 is one forward pass of Stable-Baselines3's default
// PPO network on the compact tier: separate policy and value trunks of
// 64-64 with tanh, on the observations of real positions.
func BenchmarkForwardSB3(b *testing.B) {
	benchForward(b, shapedNet(1, shape{act: Tanh, policy: []int{64, 64}, val: []int{64, 64}}), benchPositions(b, 64))
}

// BenchmarkEvaluate is one leaf through the Evaluator: encode, forward, softmax.
func BenchmarkEvaluate(b *testing.B) {
	n := randomNet(1, 64)
	ev := NewEvaluator(n)
	s, err := env.New(env.Standard(), 3, env.AnySeat)
	if err != nil {
		b.Fatal(err)
	}
	for s.Phase() != env.PhaseMove {
		if _, err := s.SampleThrow(); err != nil {
			b.Fatal(err)
		}
	}
	priors := make([]float32, env.NumActions)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ev.Evaluate(&s, priors); err != nil {
			b.Fatal(err)
		}
	}
}

var _ agent.Evaluator = (*Evaluator)(nil)

// benchPositions returns n decision states from random games with two or
// more legal actions, the positions env/agent's benchmarks measure.
func benchPositions(t testing.TB, n int) []env.State {
	t.Helper()
	r, err := agent.New("random", 1)
	require.NoError(t, err)
	return envtest.Positions(t, n, r.Act)
}

// BenchmarkSearch is one decision of net:PATH,sims=200 (a 256-256-256 MLP
// on the compact tier) and of the shipped agent
// az,sims=200 (Gumbel, its default, and PUCT) beside one of mcts:2000, on the same 64
// positions: the goal is that the network searches cost no more.
func BenchmarkSearch(b *testing.B) {
	pos := benchPositions(b, 64)
	path := filepath.Join(b.TempDir(), "net.ynet")
	data, err := randomNet(1, 256, 256, 256).MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, spec := range []string{"mcts:2000", "net:" + path + ",sims=200", "az,sims=200", "az,sims=200,gumbel=0"} {
		name := spec
		if strings.HasPrefix(spec, "net:") {
			name = "net256x3,sims=200"
		}
		b.Run(name, func(b *testing.B) {
			a, err := agent.New(spec, 1)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.Act(&pos[0]); err != nil { // warm the pools
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := a.Act(&pos[i%len(pos)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/decision")
		})
	}
}

// BenchmarkForward256 is one forward pass of the 213-256-256-256-(180, 1) MLP.
func BenchmarkForward256(b *testing.B) {
	benchForward(b, randomNet(1, 256, 256, 256), benchPositions(b, 64))
}

// BenchmarkGameSideBySide plays whole games of net:PATH,sims=200 (the
// 256-256-256 MLP) against mcts:2000 and reports each one's time per
// decision over the same games, forced decisions included, as yutenv
// eval's ms_per_decision does. Their decisions interleave, so a machine
// shared with other work slows both alike. One op is one game.
func BenchmarkGameSideBySide(b *testing.B) {
	path := filepath.Join(b.TempDir(), "net.ynet")
	data, err := randomNet(1, 256, 256, 256).MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, spec := range []string{"net:" + path + ",sims=200", "net:" + path + ",sims=200,gumbel=1"} {
		name := strings.TrimPrefix(spec, "net:"+path+",")
		b.Run(name, func(b *testing.B) {
			na, err := agent.New(spec, 1)
			if err != nil {
				b.Fatal(err)
			}
			ma, err := agent.New("mcts:2000", 2)
			if err != nil {
				b.Fatal(err)
			}
			var d [2]time.Duration // net, mcts
			var n [2]int
			for i := 0; b.Loop(); i++ {
				seats, netSeat := []agent.Agent{na, ma}, i%2
				if netSeat == 1 {
					seats[0], seats[1] = ma, na
				}
				g := agent.Game{Rules: env.Standard(), Seed: uint64(i + 1), Start: env.AnySeat, Seats: seats}
				res, err := g.Play()
				if err != nil {
					b.Fatal(err)
				}
				d[0] += res.SeatTime[netSeat]
				d[1] += res.SeatTime[1-netSeat]
				n[0] += res.SeatDecisions[netSeat]
				n[1] += res.SeatDecisions[1-netSeat]
			}
			b.ReportMetric(float64(d[0].Microseconds())/1000/float64(n[0]), "net-ms/decision")
			b.ReportMetric(float64(d[1].Microseconds())/1000/float64(n[1]), "mcts2000-ms/decision")
			hits, misses := na.(*Agent).eval.CacheStats()
			b.ReportMetric(100*float64(hits)/float64(max(hits+misses, 1)), "cache-hit-%")
		})
	}
}

// BenchmarkGumbelStrength is a small strength check, not a test: Gumbel
// search against PUCT at the same small budget (16 simulations), seats
// alternating, one op a game; it reports the Gumbel side's win rate. The
// net is $YUTENV_BENCH_NET (a trained net tells more) or the golden tiny one.
func BenchmarkGumbelStrength(b *testing.B) {
	path := os.Getenv("YUTENV_BENCH_NET")
	if path == "" {
		path = filepath.Join("testdata", "go-tiny.ynet")
	}
	for _, sims := range []int{4, 16} {
		b.Run(fmt.Sprintf("sims=%d", sims), func(b *testing.B) {
			g, err := agent.New(fmt.Sprintf("net:%s,sims=%d,gumbel=1", path, sims), 1)
			if err != nil {
				b.Fatal(err)
			}
			p, err := agent.New(fmt.Sprintf("net:%s,sims=%d", path, sims), 2)
			if err != nil {
				b.Fatal(err)
			}
			wins, games := 0, 0
			for i := 0; b.Loop(); i++ {
				seats := []agent.Agent{g, p}
				if i%2 == 1 {
					seats[0], seats[1] = p, g
				}
				res, err := agent.Game{Rules: env.Standard(), Seed: uint64(i + 1), Start: env.AnySeat, Seats: seats}.Play()
				if err != nil {
					b.Fatal(err)
				}
				if res.Winner == i%2 {
					wins++
				}
				games++
			}
			b.ReportMetric(100*float64(wins)/float64(games), "gumbel-win-%")
		})
	}
}
