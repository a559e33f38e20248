//go:build !noasm && !gccgo && !safe

package nnet

import "gonum.org/v1/gonum/blas/gonum"

// blas32 is gonum's BLAS, whose float32 axpy is SSE assembly on amd64
// (MULPS then ADDPS: every product rounded before it is added, as the
// portable axpy does, so both give the same bits).
var blas32 gonum.Implementation

// axpy computes y += alpha·x (len(x) == len(y)).
func axpy(alpha float32, x, y []float32) {
	blas32.Saxpy(len(x), alpha, x, 1, y, 1)
}
