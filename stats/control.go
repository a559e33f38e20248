package stats

import (
	"math"
	"math/bits"
)

// Folds is the number of folds of a ControlVariate: the coefficient of
// each fold's games is fitted on the other fold.
const Folds = 2

// ControlVariate estimates the mean of per-game outcomes o with a control
// l of known mean 0 (a game's luck), by the cross-fitted control variate:
// every game is in one of two folds, fixed before the games are played (a
// match's seed groups by parity), and game i of fold k counts
// o_i - b_k l_i, where b_k = sum(o l) / sum(l l) over the OTHER fold's
// games (0 when that fold has no luck). b_k does not depend on game i and
// E[l_i] = 0, so every adjusted value, and their mean, is unbiased; fitted
// on the same games, the coefficient would correlate with the luck it
// multiplies and bias the mean. The uncentred fit (no mean of l
// subtracted) uses the luck's known mean: it is the least-squares
// coefficient through the origin, the variance-minimising one when
// E[l] = 0.
//
// It keeps per-fold sums only (of n, o, l, o l, l l, o o), so memory does
// not grow with the games, and each sum is exact on a grid of 2^-32 (128-bit
// fixed point), so the estimate does not depend on the order games are
// added in. The zero value is empty.
type ControlVariate struct {
	folds [Folds]cvFold
}

type cvFold struct {
	n                int
	o, l, ol, ll, oo fixedSum
}

// Add counts one game of fold k (0 or 1; other values count as their
// parity) with outcome o and control l.
func (c *ControlVariate) Add(k int, o, l float64) {
	f := &c.folds[k&1]
	f.n++
	f.o.add(o)
	f.l.add(l)
	f.ol.add(o * l)
	f.ll.add(l * l)
	f.oo.add(o * o)
}

// Games is the number of games added.
func (c *ControlVariate) Games() int { return c.folds[0].n + c.folds[1].n }

// CVEstimate is a ControlVariate's estimate of the mean outcome.
type CVEstimate struct {
	// Mean is the mean adjusted outcome, Low and High its interval of
	// normal quantile z from the sample variance of the adjusted values.
	Mean, Low, High float64
	// Coef holds the coefficient applied to the luck of each fold's games,
	// both 0 when the raw result is reported.
	Coef [Folds]float64
	// VarianceRatio is the sample variance of the raw outcomes over that of
	// the adjusted values (at least 1: 1 when the raw result is reported);
	// +Inf when the adjusted values have no variance left.
	VarianceRatio float64
	// MeanControl is the mean control (the mean luck).
	MeanControl float64
	// Adjusted tells whether the luck was taken out; false when the
	// adjusted values would not have had a smaller sample variance than the
	// raw outcomes, and the raw mean and its interval are reported instead.
	Adjusted bool
}

// Estimate returns the cross-fitted estimate of the mean outcome with its
// interval of normal quantile z. The interval is never wider than the raw
// outcomes' own (z times their standard error): when the adjusted values'
// sample variance is not below the raw one, it reports the raw mean and
// interval (Adjusted false, Coef 0, VarianceRatio 1). ok is false with
// fewer than two games.
func (c *ControlVariate) Estimate(z float64) (e CVEstimate, ok bool) {
	n := float64(c.Games())
	if n < 2 {
		return e, false
	}
	var sumO, sumOO, sumL, sumAdj, sumAdj2 float64
	for k := range c.folds {
		f, other := &c.folds[k], &c.folds[1-k]
		if ll := other.ll.float(); ll > 0 {
			e.Coef[k] = other.ol.float() / ll
		}
		b, so, sl := e.Coef[k], f.o.float(), f.l.float()
		sumO += so
		sumOO += f.oo.float()
		sumL += sl
		// Every product rounded on its own (float64(...)): no fused multiply-add, so every
		// architecture gives the same bits (docs/COMPATIBILITY.md).
		sumAdj += so - float64(b*sl)
		sumAdj2 += f.oo.float() - float64(2*b*f.ol.float()) + float64(float64(b*b)*f.ll.float())
	}
	variance := func(sum, sum2 float64) (mean, v float64) {
		mean = sum / n
		return mean, math.Max(0, (sum2-float64(float64(n*mean)*mean))/(n-1))
	}
	rawMean, rawV := variance(sumO, sumOO)
	mean, v := variance(sumAdj, sumAdj2)
	e.MeanControl = sumL / n
	if v < rawV {
		e.Adjusted = true
		e.VarianceRatio = rawV / v // +Inf at v = 0
	} else {
		mean, v, e.Coef, e.VarianceRatio = rawMean, rawV, [Folds]float64{}, 1
	}
	half := float64(z * math.Sqrt(v/n))
	e.Mean, e.Low, e.High = mean, mean-half, mean+half
	return e, true
}

// fixedSum adds float64 values rounded to multiples of 2^-32 in a 128-bit
// two's-complement integer: exact, so the sum does not depend on the order
// of its terms. A term is clamped to ±2^30 (a game's luck is bounded far
// below: each throw moves a value in [-1, 1]; its square stays in range
// up to |luck| = 2^15); NaN counts as 0.
type fixedSum struct {
	hi int64
	lo uint64
}

const fixedScale = 1 << 32

func (s *fixedSum) add(x float64) {
	x = math.Max(-1<<30, math.Min(1<<30, x)) // NaN: Max and Min return NaN
	if x != x {
		return
	}
	q := int64(math.Round(x * fixedScale))
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(q), 0)
	s.hi += int64(carry) + q>>63 // q>>63: the sign extension of q, 0 or -1
}

// float is the sum, rounded to float64 (from its magnitude: a negative sum
// has hi = -1 and lo near 2^64 when small, which would cancel).
func (s fixedSum) float() float64 {
	if s.hi < 0 {
		lo, borrow := bits.Sub64(0, s.lo, 0)
		hi := -s.hi - int64(borrow)
		return -(float64(float64(hi)*(1<<64)) + float64(lo)) / fixedScale // float64(...): no FMA
	}
	return (float64(float64(s.hi)*(1<<64)) + float64(s.lo)) / fixedScale
}
