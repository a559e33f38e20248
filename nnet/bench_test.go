package nnet

import (
	"testing"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
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
