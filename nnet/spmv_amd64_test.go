//go:build !noasm && !gccgo && !safe

package nnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// kernel is one choice of spmv's assembly kernels.
type kernel struct {
	name         string
	avx2, avx512 bool
}

// kernels returns the kernels this machine can run (the portable axpy
// always).
func kernels() []kernel {
	ks := []kernel{{name: "axpy"}}
	if useAVX2 {
		ks = append(ks, kernel{name: "avx2", avx2: true})
	}
	if useAVX2 && useAVX512 {
		ks = append(ks, kernel{name: "avx512", avx2: true, avx512: true})
	}
	return ks
}

// withKernel runs f with kernel k selected.
func withKernel(k kernel, f func()) {
	a, b := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = a, b }()
	useAVX2, useAVX512 = k.avx2, k.avx512
	f()
}

// spmvWith returns spmv's output of kernel k from a copy of out.
func spmvWith(k kernel, out, wt []float32, idx []int32, val []float32) []float32 {
	got := append([]float32(nil), out...)
	withKernel(k, func() { spmv(got, wt, idx, val) })
	return got
}

// sameBits reports the first index where a and b differ in their bits.
func sameBits(t *testing.T, a, b []float32, what string) {
	t.Helper()
	require.Len(t, b, len(a))
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			assert.Failf(t, "bits differ", "%s[%d]: %g (%#x) against %g (%#x)", what, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
			return
		}
	}
}

// TestKernelsGiveTheSameBits checks every assembly kernel against the
// portable axpy, bit for bit, at output sizes around the blocks (8, 16,
// 64, 128) and the policy's 180, and on whole networks of the shapes that
// ship or were distilled.
func TestKernelsGiveTheSameBits(t *testing.T) {
	ks := kernels()
	t.Logf("kernels on this machine: %v", ks)
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 180, 256, 513, 896} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			rows := 40
			wt := make([]float32, rows*n)
			for i := range wt {
				wt[i] = float32(r.NormFloat64())
			}
			out := make([]float32, n)
			for i := range out {
				out[i] = float32(r.NormFloat64())
			}
			var idx []int32
			var val []float32
			for i := 0; i < rows; i++ {
				if r.IntN(3) > 0 {
					idx, val = append(idx, int32(i)), append(val, float32(r.NormFloat64()*3))
				}
			}
			want := spmvWith(ks[0], out, wt, idx, val)
			for _, k := range ks[1:] {
				sameBits(t, want, spmvWith(k, out, wt, idx, val), k.name)
			}
		})
	}
	for _, shape := range [][]int{{64}, {256, 256}, {512, 512}, {896, 896}, {200, 13, 130}} {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			n := randomNet(3, shape...)
			x := make([]float32, n.Trunk[0].In)
			for i := range x {
				if r.IntN(8) == 0 {
					x[i] = float32(r.NormFloat64())
				}
			}
			run := func(k kernel) ([]float32, float32) {
				logits := make([]float32, env.NumActions)
				var v float32
				withKernel(k, func() { v = n.Forward(n.NewScratch(), x, logits) })
				return logits, v
			}
			wl, wv := run(ks[0])
			for _, k := range ks[1:] {
				gl, gv := run(k)
				sameBits(t, wl, gl, k.name+" logits")
				sameBits(t, []float32{wv}, []float32{gv}, k.name+" value")
			}
		})
	}
}

// FuzzKernels feeds every kernel the same outputs, rows and inputs (any
// float bits: zeros of both signs, infinities, NaNs, subnormals; inputs
// not zero, as sparseDense passes them) and
// wants the portable axpy's bits from each (NaNs compared as NaN).
func FuzzKernels(f *testing.F) {
	f.Add([]byte("\x11\x05\x00\x00\x80\x3f\x00\x00\x00\xc0"), uint8(17), uint8(3))
	f.Add([]byte{0, 0, 0, 0x80, 0, 0, 0x80, 0x7f, 0, 0, 0xc0, 0x7f}, uint8(180), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, size, rows uint8) {
		n, k := int(size)%300+1, int(rows)%9+1
		word := func(i int) float32 {
			if len(data) < 4 {
				return float32(i%5) - 2
			}
			j := (4 * i) % (len(data) - len(data)%4)
			return math.Float32frombits(uint32(data[j]) | uint32(data[j+1])<<8 | uint32(data[j+2])<<16 | uint32(data[j+3])<<24)
		}
		wt := make([]float32, k*n)
		for i := range wt {
			wt[i] = word(i)
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = word(len(wt) + i)
		}
		idx, val := make([]int32, k), make([]float32, k)
		for i := range idx {
			idx[i], val[i] = int32(i), word(len(wt)+n+i)
			if val[i] == 0 { // spmv's inputs are not zero (gonum's axpy skips them)
				val[i] = 1
			}
		}
		ks := kernels()
		want := spmvWith(ks[0], out, wt, idx, val)
		for _, kn := range ks[1:] {
			got := spmvWith(kn, out, wt, idx, val)
			for i := range want {
				w, g := want[i], got[i]
				if math.Float32bits(w) != math.Float32bits(g) && !(w != w && g != g) {
					t.Fatalf("%s[%d]: %g (%#x) against axpy's %g (%#x)", kn.name, i, g, math.Float32bits(g), w, math.Float32bits(w))
				}
			}
		}
	})
}

// BenchmarkKernels is BenchmarkForwardWidths with each kernel this machine
// can run.
func BenchmarkKernels(b *testing.B) {
	pos := benchPositions(b, 64)
	for _, k := range kernels() {
		for _, w := range []int{256, 512, 896} {
			b.Run(fmt.Sprintf("%s/%dx%d", k.name, w, w), func(b *testing.B) {
				withKernel(k, func() { benchForward(b, randomNet(1, w, w), pos) })
			})
		}
	}
}
