package detmath

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yutenv/yutenv/internal/israce"
)

// ulps returns how many float64 steps lie between a and b (same sign).
func ulps(a, b float64) uint64 {
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

// TestAgainstMath: every function is within one ulp of the standard
// library's (itself within one ulp of the true value) over the ranges the
// agents use, and has its special cases.
func TestAgainstMath(t *testing.T) {
	tests := []struct {
		name     string
		f, want  func(float64) float64
		lo, hi   float64
		maxUlps  uint64
		specials []float64
	}{
		{"Exp", Exp, math.Exp, -40, 40, 2, []float64{0, math.Copysign(0, -1), 1, -1, 1e-300, 709, 710, -745, -746, math.Inf(1), math.Inf(-1), math.NaN()}},
		{"Log", Log, math.Log, 1e-12, 1e6, 1, []float64{0, 1, 2, math.E, 0.5, 1e-300, math.MaxFloat64, -1, math.Inf(1), math.NaN()}},
		{"Tanh", Tanh, math.Tanh, -5, 5, 2, []float64{0, math.Copysign(0, -1), 0.625, -0.625, 0.6249999, 44, 45, -45, 1e-300, math.Inf(1), math.Inf(-1), math.NaN()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < 200000; i++ {
				x := tt.lo + float64((tt.hi-tt.lo)*r.Float64()) // rounded: the same inputs everywhere
				if got, want := tt.f(x), tt.want(x); ulps(got, want) > tt.maxUlps {
					t.Fatalf("%s(%v) = %v, math gives %v (%d ulps apart)", tt.name, x, got, want, ulps(got, want))
				}
			}
			for _, x := range tt.specials {
				got, want := tt.f(x), tt.want(x)
				if math.IsNaN(want) {
					assert.True(t, math.IsNaN(got), "%s(%v) = %v, want NaN", tt.name, x, got)
					continue
				}
				assert.LessOrEqual(t, ulps(got, want), tt.maxUlps, "%s(%v) = %v, want %v", tt.name, x, got, want)
				assert.Equal(t, math.Signbit(want), math.Signbit(got), "%s(%v) sign", tt.name, x)
			}
		})
	}
}

// TestLogSubnormal: Log of the smallest subnormal is ln(2**-1074) =
// -744.44...; the standard library's amd64 assembly says -709.09 (it
// mishandles every subnormal), its Go code on arm64 -744.44.
func TestLogSubnormal(t *testing.T) {
	assert.Equal(t, -744.4400719213812, Log(math.SmallestNonzeroFloat64))
}

// TestSameBitsEverywhere pins a hash of a million results of each
// function: it must pass unchanged on every architecture (run it there, or
// here with GOARCH=arm64 go test -exec qemu-aarch64-static). math's own
// functions give other hashes on amd64 and arm64.
func TestSameBitsEverywhere(t *testing.T) {
	if israce.Enabled {
		t.Skip("a hash of a million values in one goroutine, tenfold slower under -race; the run without it checks it")
	}
	tests := []struct {
		name   string
		f      func(float64) float64
		lo, hi float64
		want   uint64
	}{
		{"Exp", Exp, -40, 40, 0x3fa91cc1bd085bc8},
		{"Log", Log, 0, 1e3, 0xc5566df700a49260},
		{"Tanh", Tanh, -5, 5, 0xf0dc4b3430f1c427},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			h := fnv.New64a()
			var b [8]byte
			for i := 0; i < 1000000; i++ {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(tt.f(tt.lo+float64((tt.hi-tt.lo)*r.Float64()))))
				h.Write(b[:])
			}
			assert.Equal(t, tt.want, h.Sum64())
		})
	}
}

func TestPow(t *testing.T) {
	tests := []struct {
		x, y, want float64
		maxUlps    uint64
	}{
		{3, 1, 3, 0},
		{3, 0, 1, 0},
		{0, 0.5, 0, 0},
		{0, -1, math.Inf(1), 0},
		{1, 123.4, 1, 0},
		{4, 0.5, 2, 1},
		{10, 2, 100, 4},
		{400, 1 / 0.3, math.Pow(400, 1/0.3), 8},
		{0.25, 1 / 0.3, math.Pow(0.25, 1/0.3), 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.x, "^", tt.y), func(t *testing.T) {
			assert.LessOrEqual(t, ulps(Pow(tt.x, tt.y), tt.want), tt.maxUlps, "Pow(%v, %v) = %v, want %v", tt.x, tt.y, Pow(tt.x, tt.y), tt.want)
		})
	}
	assert.True(t, math.IsNaN(Pow(-2, 0.5)))
	assert.True(t, math.IsNaN(Pow(math.NaN(), 2)))
}
