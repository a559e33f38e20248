package env

import (
	"fmt"
	"strings"
)

// Throw is the result of throwing the four sticks.
type Throw uint8

// The six throws, with the ids of RULES.md.
const (
	// BackDo is exactly one flat side up and it is the marked stick: one step back.
	BackDo Throw = iota
	// Do is exactly one flat side up, not the marked stick: one step.
	Do
	// Gae is two flat sides up: two steps.
	Gae
	// Geol is three flat sides up: three steps.
	Geol
	// Yut is four flat sides up: four steps and a bonus throw.
	Yut
	// Mo is no flat side up: five steps and a bonus throw.
	Mo
)

// NumThrows is the number of distinct throw results.
const NumThrows = 6

var throwNames = [NumThrows]string{"back-do", "do", "gae", "geol", "yut", "mo"}

// String returns the throw's name as in RULES.md ("back-do", "do", "gae", "geol", "yut", "mo").
func (t Throw) String() string {
	if t < NumThrows {
		return throwNames[t]
	}
	return fmt.Sprintf("Throw(%d)", uint8(t))
}

// ParseThrow is the inverse of Throw.String; it also accepts "backdo" and the
// numeric id.
func ParseThrow(s string) (Throw, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, n := range throwNames {
		if n == s || strings.ReplaceAll(n, "-", "") == s || fmt.Sprint(i) == s {
			return Throw(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown throw %q (want one of %s)", ErrBadInput, s, strings.Join(throwNames[:], ", "))
}

// Steps returns how far the throw moves a stack: -1 for back-do, 1..5 otherwise.
func (t Throw) Steps() int {
	if t == BackDo {
		return -1
	}
	return int(t)
}

// Bonus reports whether the throw earns another throw at once (yut and mo).
func (t Throw) Bonus() bool { return t == Yut || t == Mo }

// ThrowProbabilities returns the probability of each throw for sticks that
// land flat side up with probability p, with or without back-do (without it
// the marked stick counts as do). Each product is rounded explicitly so the
// numbers are the same on every architecture (no fused multiply-add).
func ThrowProbabilities(p float64, backDo bool) [NumThrows]float64 {
	q := float64(1 - p)
	q2 := float64(q * q)
	q3 := float64(q2 * q)
	p2 := float64(p * p)
	p3 := float64(p2 * p)
	var pr [NumThrows]float64
	pr[BackDo] = float64(p * q3)
	pr[Do] = float64(3 * pr[BackDo])
	pr[Gae] = float64(6 * float64(p2*q2))
	pr[Geol] = float64(4 * float64(p3*q))
	pr[Yut] = float64(p3 * p)
	pr[Mo] = float64(q2 * q2)
	if !backDo {
		pr[Do] = float64(4 * pr[BackDo])
		pr[BackDo] = 0
	}
	return pr
}

// throwThresholds turns probabilities into cumulative 53-bit integer
// thresholds, so that sampling uses integer comparisons only.
func throwThresholds(pr [NumThrows]float64) [NumThrows]uint64 {
	var th [NumThrows]uint64
	var cum float64
	for t := 0; t < NumThrows; t++ {
		cum = float64(cum + pr[t])
		v := float64(cum * (1 << 53))
		if v > 1<<53 || t == NumThrows-1 {
			v = 1 << 53
		}
		th[t] = uint64(v)
	}
	return th
}

// sampleThrow maps a uniform 64-bit value to a throw.
func sampleThrow(th *[NumThrows]uint64, x uint64) Throw {
	x >>= 11
	for t := 0; t < NumThrows-1; t++ {
		if x < th[t] {
			return Throw(t)
		}
	}
	return Mo
}
