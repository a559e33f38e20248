// Package detmath computes the transcendental functions that the agents'
// decisions depend on (Exp, Log, Tanh) with the same bits on every
// architecture and CPU.
//
// The standard library's math.Exp, Log, Pow and Tanh differ in the last
// bit between linux/amd64 and arm64, and math.Exp even between two amd64
// CPUs (its assembly takes an FMA path when the CPU has one): Go fuses
// x*y + z into one fused multiply-add instruction on arm64 (and on amd64
// with GOAMD64=v3), which rounds once instead of twice, and the assembly
// versions use other algorithms. A search that compares such values can
// then pick another move on an arm64 Mac than on a Linux x86 box.
//
// These are the standard library's portable algorithms (FreeBSD's msun, as
// ported in Go's src/math; BSD licence), written so that every product is
// rounded before it is added: the Go specification lets an implementation
// fuse x*y + z, even across statements, but an explicit conversion
// float64(x*y) rounds and so forbids the fusion: every product here is
// converted. Only +, -, *, / and the bit manipulations of Frexp
// and Ldexp remain, which IEEE 754 defines exactly.
package detmath

import "math"

// Exp returns e**x, within 1 ulp, with the same bits on every machine.
// Special cases as math.Exp.
func Exp(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00

		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28) // 2**-28
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > overflow: // +Inf too
		return math.Inf(1)
	case x < underflow: // -Inf too
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	// Reduce: x = k*ln2 + r with |r| <= ln2/2, r computed as hi - lo.
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	return expmulti(hi, lo, k)
}

// expmulti returns e**r × 2**k where r = hi - lo and |r| <= ln2/2.
func expmulti(hi, lo float64, k int) float64 {
	const (
		p1 = 1.66666666666666657415e-01  /* 0x3FC55555; 0x55555555 */
		p2 = -2.77777777770155933842e-03 /* 0xBF66C16C; 0x16BEBD93 */
		p3 = 6.61375632143793436117e-05  /* 0x3F11566A; 0xAF25DE2C */
		p4 = -1.65339022054652515390e-06 /* 0xBEBBBD41; 0xC5D26BF1 */
		p5 = 4.13813679705723846039e-08  /* 0x3E663769; 0x72BEA4D0 */
	)
	r := hi - lo
	t := float64(r * r)
	// c = r - t*(p1+t*(p2+t*(p3+t*(p4+t*p5)))), every product rounded.
	c := p4 + float64(t*p5)
	c = p3 + float64(t*c)
	c = p2 + float64(t*c)
	c = p1 + float64(t*c)
	c = r - float64(t*c)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// Log returns the natural logarithm of x, within 1 ulp, with the same bits
// on every machine. Special cases as math.Log.
func Log(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		l1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		l2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		l3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		l4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		l5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		l6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		l7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	// Reduce: x = 2**k × (1+f) with sqrt(2)/2 <= 1+f < sqrt(2).
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	// t1 = s2*(l1+s4*(l3+s4*(l5+s4*l7))), t2 = s4*(l2+s4*(l4+s4*l6)),
	// every product rounded.
	t1 := l5 + float64(s4*l7)
	t1 = l3 + float64(s4*t1)
	t1 = l1 + float64(s4*t1)
	t1 = float64(s2 * t1)
	t2 := l4 + float64(s4*l6)
	t2 = l2 + float64(s4*t2)
	t2 = float64(s4 * t2)
	R := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*ln2Lo))) - f)
}

// Tanh returns the hyperbolic tangent of x with the same bits on every
// machine. Special cases as math.Tanh.
func Tanh(x float64) float64 {
	const maxLog = 8.8029691931113054295988e+01 // log(2**127)
	const (
		p0, p1, p2 = -9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3
		q0, q1, q2 = 1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3
	)
	z := math.Abs(x)
	switch {
	case z > 0.5*maxLog:
		if x < 0 {
			return -1
		}
		return 1
	case z >= 0.625:
		s := Exp(2 * z)
		z = 1 - 2/(s+1)
		if x < 0 {
			z = -z
		}
		return z
	case x == 0:
		return x
	}
	// x + x*s*P(s)/Q(s), every product rounded.
	s := float64(x * x)
	p := float64(float64(float64(p0*s)+p1) * s)
	p = float64((p + p2) * float64(x*s))
	q := float64(float64(s+q0)*s) + q1
	q = float64(q*s) + q2
	return x + p/q
}

// Pow returns x**y for x >= 0 as Exp(y×Log(x)), with the same bits on
// every machine: within a few ulps for results that are neither huge nor
// tiny, which is what the agents need (visit weights, Gamma boosts). y == 1
// and y == 0 give x and 1 exactly; x == 0 gives 0 for y > 0 and +Inf for
// y < 0; a negative x gives NaN.
func Pow(x, y float64) float64 {
	switch {
	case y == 0:
		return 1
	case y == 1:
		return x
	case math.IsNaN(x) || math.IsNaN(y) || x < 0:
		return math.NaN()
	}
	return Exp(float64(y * Log(x)))
}
