// Package nettest builds network files for tests of the programs that
// load them (the server, the CLI): ordinary nets, nets whose forward pass
// overflows, and hostile files.
package nettest

import (
	"bytes"
	"os"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
)

// Net returns a compact-tier net with the given hidden widths whose i-th
// weight of every layer is w(i) (biases 0).
func Net(w func(i int) float32, hidden ...int) *nnet.Net {
	sp, _ := obs.SpaceOf(obs.Compact)
	mk := func(in, out int) nnet.Layer {
		l := nnet.Layer{In: in, Out: out, W: make([]float32, in*out), B: make([]float32, out)}
		for i := range l.W {
			l.W[i] = w(i)
		}
		return l
	}
	n := &nnet.Net{Tier: obs.Compact, Rules: "standard"}
	in := sp.Size
	for _, h := range hidden {
		n.Trunk = append(n.Trunk, mk(in, h))
		in = h
	}
	n.Policy, n.Value = mk(in, env.NumActions), mk(in, 1)
	return n
}

// Small returns the weights of an ordinary net, varied by seed so that
// nets of different seeds differ in content.
func Small(seed int) func(int) float32 {
	return func(i int) float32 { return float32((i*7+seed*13)%17-8) / 64 }
}

// Overflowing returns a net whose every weight is nnet.MaxWeight (allowed)
// but whose eight layers of 64 overflow float32: its outputs are infinite.
func Overflowing() *nnet.Net {
	return Net(func(int) float32 { return nnet.MaxWeight }, 64, 64, 64, 64, 64, 64, 64, 64)
}

// Huge returns an ordinary net with one finite weight of 3e38.
func Huge() *nnet.Net {
	n := Net(Small(6), 8)
	n.Trunk[0].W[3] = 3e38
	return n
}

// Nested returns a network file whose trunk is depth nested arrays.
func Nested(depth int) []byte {
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	_ = enc.EncodeMapLen(4)
	for _, kv := range [][2]string{{"format", nnet.Format}, {"tier", "compact"}} {
		_ = enc.EncodeString(kv[0])
		_ = enc.EncodeString(kv[1])
	}
	_ = enc.EncodeString("version")
	_ = enc.EncodeInt(nnet.Version)
	_ = enc.EncodeString("trunk")
	b.Write(bytes.Repeat([]byte{0x91}, depth)) // a fixarray of one element, depth times
	b.WriteByte(0xc0)
	return b.Bytes()
}

// Write writes n to path.
func Write(t testing.TB, path string, n *nnet.Net) {
	t.Helper()
	b, err := n.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
