//go:build !amd64 || noasm || gccgo || safe

package nnet

// axpy computes y += alpha·x (len(x) == len(y)). Not gonum's portable
// axpy: its y[i] += alpha*x[i] is fused into one FMA instruction on arm64
// (and on amd64 with GOAMD64=v3), which rounds once, so the network would
// give other bits than amd64's assembly. float32(alpha*v) rounds the
// product first (docs/COMPATIBILITY.md, "Seeds").
func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += float32(alpha * v)
	}
}
