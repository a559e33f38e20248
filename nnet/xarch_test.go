package nnet

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// TestSameBitsEverywhere pins a hash of the bits of everything a net
// computes for 64 positions (a 256-256-256 MLP's logits and value, and the
// Evaluator's priors and tanh value): it must pass unchanged on every
// architecture and build, e.g. GOARCH=arm64 go test -exec
// qemu-aarch64-static, GOAMD64=v3 go test -tags noasm (docs/COMPATIBILITY.md,
// "Seeds"). Before the explicit rounding, arm64 fused the axpy and the
// value head's sum into FMA instructions and gave another hash.
func TestSameBitsEverywhere(t *testing.T) {
	n := randomNet(1, 256, 256, 256)
	sc := n.NewScratch()
	ev := NewEvaluator(n)
	logits := make([]float32, env.NumActions)
	priors := make([]float32, env.NumActions)
	enc, err := obs.NewEncoder(env.Standard(), n.Tier)
	require.NoError(t, err)
	x := make([]float32, enc.Size())
	h := fnv.New64a()
	var b [8]byte
	put32 := func(v float32) {
		binary.LittleEndian.PutUint32(b[:4], math.Float32bits(v))
		h.Write(b[:4])
	}
	for _, s := range benchPositions(t, 64) {
		enc.Encode(&s, s.ToMove(), x)
		put32(n.Forward(sc, x, logits))
		for _, l := range logits {
			put32(l)
		}
		v, err := ev.Evaluate(&s, priors)
		require.NoError(t, err)
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
		for _, p := range priors {
			put32(p)
		}
	}
	assert.Equal(t, uint64(0xe783239f5e8487de), h.Sum64())
}
