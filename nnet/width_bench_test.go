package nnet

import (
	"fmt"
	"testing"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// BenchmarkForwardWidths is one forward pass of compact-tier MLPs of two
// hidden layers of 256, 512 and 896 (the distilled networks' shapes) on
// observations of real positions.
func BenchmarkForwardWidths(b *testing.B) {
	pos := benchPositions(b, 64)
	for _, w := range []int{256, 512, 896} {
		b.Run(fmt.Sprintf("%dx%d", w, w), func(b *testing.B) { benchForward(b, randomNet(1, w, w), pos) })
	}
}

// benchForward times n's forward pass on the observations of pos in turn.
func benchForward(b *testing.B, n *Net, pos []env.State) {
	sc := n.NewScratch()
	enc, err := obs.NewEncoder(env.Standard(), n.Tier)
	if err != nil {
		b.Fatal(err)
	}
	xs := make([][]float32, len(pos))
	for i := range pos {
		xs[i] = make([]float32, enc.Size())
		enc.Encode(&pos[i], pos[i].ToMove(), xs[i])
	}
	logits := make([]float32, env.NumActions)
	n.Forward(sc, xs[0], logits)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n.Forward(sc, xs[i%len(xs)], logits)
	}
}
