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
// computes for 64 positions (the logits and value, and the Evaluator's
// priors and tanh value): a 256-256-256 ReLU MLP's, and for every
// activation a net of separate policy and value trunks after a shared
// layer. It must pass unchanged on every architecture and build, e.g.
// GOARCH=arm64 go test -exec qemu-aarch64-static, GOAMD64=v3 go test -tags
// noasm (docs/COMPATIBILITY.md, "Seeds"). Before the explicit rounding,
// arm64 fused the axpy and the value head's sum into FMA instructions and
// gave another hash.
func TestSameBitsEverywhere(t *testing.T) {
	pos := benchPositions(t, 64)
	for _, tc := range []struct {
		name string
		net  *Net
		want uint64
	}{
		{"relu 256-256-256", randomNet(1, 256, 256, 256), 0xe783239f5e8487de},
		{"relu split", shapedNet(1, shape{act: ReLU, trunk: []int{64}, policy: []int{64}, val: []int{64, 32}}), 0xf73292b40d7c9fd},
		{"tanh split", shapedNet(1, shape{act: Tanh, trunk: []int{64}, policy: []int{64}, val: []int{64, 32}}), 0x3ba707c2965b2223},
		{"leaky_relu split", shapedNet(1, shape{act: LeakyReLU, trunk: []int{64}, policy: []int{64}, val: []int{64, 32}}), 0x6b01ad12693dc09},
		{"elu split", shapedNet(1, shape{act: ELU, trunk: []int{64}, policy: []int{64}, val: []int{64, 32}}), 0xb5ecb6099e000329},
		{"silu split", shapedNet(1, shape{act: SiLU, trunk: []int{64}, policy: []int{64}, val: []int{64, 32}}), 0x8e39294b1a940e48},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, bitsHash(t, tc.net, pos), "0x%x", bitsHash(t, tc.net, pos))
		})
	}
}

// bitsHash hashes the bits of n's outputs and its Evaluator's on pos.
func bitsHash(t *testing.T, n *Net, pos []env.State) uint64 {
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
	for _, s := range pos {
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
	return h.Sum64()
}
