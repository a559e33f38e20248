//go:build !amd64 || noasm || gccgo || safe

package nnet

// spmv adds val[t]·wt[idx[t]·len(out):][:len(out)] to out for every t in
// turn (val[t] != 0) (the portable kernel).
func spmv(out, wt []float32, idx []int32, val []float32) { spmvAxpy(out, wt, idx, val) }

// Kernel names the kernel that runs the network's layers on this machine:
// "portable" here (the rounded loop of axpy_other.go); on amd64 "avx512",
// "avx2" or "sse". All give the same bits.
func Kernel() string { return "portable" }
