package env

import (
	"math/rand/v2"
	"testing"
)

// midgame returns a decision state some way into a random game.
func midgame(b *testing.B) State {
	s, err := New(Standard(), 7, 0)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	RandomPlayout(&s, rng, 20)
	s.Advance()
	if s.Phase() != PhaseMove {
		b.Fatal("not a decision")
	}
	return s
}

// BenchmarkRandomPlayout plays whole random games: the engine's headline number.
func BenchmarkRandomPlayout(b *testing.B) { benchPlayout(b, Standard()) }

// BenchmarkRandomPlayoutKata plays whole random games of the kata (a line of
// 15 spaces, exact finish, no pool).
func BenchmarkRandomPlayoutKata(b *testing.B) { benchPlayout(b, Kata()) }

func benchPlayout(b *testing.B, r Rules) {
	rng := rand.New(rand.NewPCG(1, 2))
	decisions := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s, _ := New(r, uint64(i), AnySeat)
		decisions += RandomPlayout(&s, rng, 0)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
	b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkLegalActions generates the legal actions of a midgame decision.
func BenchmarkLegalActions(b *testing.B) {
	s := midgame(b)
	var buf [NumActions]Action
	b.ReportAllocs()
	for b.Loop() {
		_ = s.LegalActions(buf[:0])
	}
}

// BenchmarkApply copies a midgame state and applies its first legal action.
func BenchmarkApply(b *testing.B) {
	s := midgame(b)
	a := s.LegalActions(nil)[0]
	b.ReportAllocs()
	for b.Loop() {
		c := s
		if _, err := c.Apply(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopy copies a state, as search does millions of times.
func BenchmarkCopy(b *testing.B) {
	s := midgame(b)
	var sink State
	b.ReportAllocs()
	for b.Loop() {
		sink = s
	}
	_ = sink
}

// BenchmarkSampleThrow resolves a chance node with the state's own generator.
func BenchmarkSampleThrow(b *testing.B) {
	s, _ := New(Standard(), 1, 0)
	b.ReportAllocs()
	for b.Loop() {
		c := s
		if _, err := c.SampleThrow(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal saves and restores a midgame state.
func BenchmarkMarshal(b *testing.B) {
	s := midgame(b)
	b.ReportAllocs()
	for b.Loop() {
		blob, _ := s.MarshalBinary()
		if _, err := UnmarshalState(blob); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPerft5 counts paths to depth 5 from the initial state.
func BenchmarkPerft5(b *testing.B) {
	s, _ := New(Standard(), 1, 0)
	for b.Loop() {
		Perft(s, 5)
	}
}
