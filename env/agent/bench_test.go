package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// benchPositions returns n decision states from random games with two or
// more legal actions, so a benchmark measures agents on typical positions.
func benchPositions(b *testing.B, n int) []env.State {
	b.Helper()
	r, err := New("random", 1)
	require.NoError(b, err)
	return envtest.Positions(b, n, r.Act)
}

// BenchmarkAgent measures one decision of each agent on typical positions
// with two or more legal actions.
func BenchmarkAgent(b *testing.B) {
	pos := benchPositions(b, 64)
	for _, spec := range []string{"random", "greedy", "mc:100", "mc:100,rollout=greedy", "mcts:400", "mcts:400,prior=none", "mcts:400,rollout=greedy", "mcts:400,workers=2"} {
		b.Run(spec, func(b *testing.B) {
			a, err := New(spec, 1)
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
		})
	}
}

// BenchmarkRollout measures one simulated game from the start by each rollout policy.
func BenchmarkRollout(b *testing.B) {
	s0, err := env.New(env.Standard(), 1, env.AnySeat)
	if err != nil {
		b.Fatal(err)
	}
	for _, pol := range []Rollout{RolloutRandom, RolloutGreedy} {
		b.Run(pol.String(), func(b *testing.B) {
			var p roller
			p.policy = pol
			p.r.seed(1, 1)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s := s0
				p.play(&s)
			}
		})
	}
}

// BenchmarkGame measures whole games between two agents on one goroutine
// (one core): the target is mc:100 against random in at most 20 ms.
//
// The reseed variants reseed the agent before every decision, as yutenv's
// seed scheme does (Game.Reseed; vecenv.AgentSeed): its cost per game.
func BenchmarkGame(b *testing.B) {
	type bench struct {
		x, y   string
		reseed bool
	}
	for _, bc := range []bench{{"mc:100", "random", false}, {"mcts:400", "mc:100", false}, {"greedy", "random", false},
		{"mc:100", "random", true}, {"greedy", "random", true}} {
		pair := [2]string{bc.x, bc.y}
		name := pair[0] + "_vs_" + pair[1]
		var reseed func(seat, d int) uint64
		if bc.reseed {
			name += "/reseed"
			reseed = func(seat, d int) uint64 { return uint64(seat)<<32 | uint64(d) }
		}
		b.Run(name, func(b *testing.B) {
			x, err := New(pair[0], 1)
			if err != nil {
				b.Fatal(err)
			}
			y, err := New(pair[1], 2)
			if err != nil {
				b.Fatal(err)
			}
			decisions := 0
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				seats := []Agent{x, y}
				if i%2 == 1 {
					seats = []Agent{y, x}
				}
				res, err := Game{Rules: env.Standard(), Seed: uint64(i / 2), Start: env.AnySeat, Seats: seats, Reseed: reseed}.Play()
				if err != nil {
					b.Fatal(err)
				}
				decisions += res.Decisions
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/game")
			b.ReportMetric(float64(decisions)/float64(b.N), "decisions/game")
		})
	}
}
