//go:build !noasm && !gccgo && !safe

package nnet

import "golang.org/x/sys/cpu"

// useAVX2 and useAVX512 select the assembly kernels (tests turn them off
// to compare the kernels).
var (
	useAVX2   = cpu.X86.HasAVX2
	useAVX512 = cpu.X86.HasAVX512F
)

// Kernel names the kernel that runs the network's layers on this machine:
// "avx512", "avx2", or "sse" (gonum's axpy, an amd64 without AVX2); on
// other architectures "portable". All give the same bits.
func Kernel() string {
	switch {
	case useAVX2 && useAVX512:
		return "avx512"
	case useAVX2:
		return "avx2"
	}
	return "sse"
}

// spmvAVX2 is spmv_amd64.s: out[j] += val[t]·wt[idx[t]·stride+j] for
// t < k in turn and j < n (a multiple of 8), each product rounded before
// it is added.
//
//go:noescape
func spmvAVX2(out *float32, n int, wt *float32, stride int, idx *int32, val *float32, k int)

// spmvAVX512 is spmvAVX2 with 512-bit registers (n a multiple of 16).
//
//go:noescape
func spmvAVX512(out *float32, n int, wt *float32, stride int, idx *int32, val *float32, k int)

// spmv adds val[t]·wt[idx[t]·len(out):][:len(out)] to out for every t in
// turn (val[t] != 0, idx ascending): with AVX2, the assembly kernels for
// the outputs up to a multiple of 8 (AVX-512's to a multiple of 16 where
// the CPU has it) and a rounded scalar loop for the rest; else gonum's
// axpy a column at a time. All give the same bits (TestKernelsGiveTheSameBits,
// FuzzKernels).
func spmv(out, wt []float32, idx []int32, val []float32) {
	if !useAVX2 || len(idx) == 0 {
		spmvAxpy(out, wt, idx, val)
		return
	}
	n := len(out)
	_ = wt[int(idx[len(idx)-1])*n+n-1] // inputs ascend: the last row is in wt
	val = val[:len(idx)]
	n8 := n &^ 7
	if n16 := n &^ 15; useAVX512 && n16 > 0 {
		spmvAVX512(&out[0], n16, &wt[0], n, &idx[0], &val[0], len(idx))
		if n8 > n16 {
			spmvAVX2(&out[n16], 8, &wt[n16], n, &idx[0], &val[0], len(idx))
		}
	} else if n8 > 0 {
		spmvAVX2(&out[0], n8, &wt[0], n, &idx[0], &val[0], len(idx))
	}
	for j := n8; j < n; j++ {
		y := out[j]
		for t, i := range idx {
			y += float32(val[t] * wt[int(i)*n+j])
		}
		out[j] = y
	}
}
