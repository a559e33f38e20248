package grade

import (
	"errors"
	"fmt"
	"math"

	"github.com/yutenv/yutenv/stats"
)

// clusterSums holds the sums over games of their summed loss and decisions.
type clusterSums struct {
	l, d, ll, dd, ld float64
	graded           int // the games with a graded decision
}

// add takes one game's summed loss l over d graded decisions.
func (c *clusterSums) add(l, d float64) {
	c.l += l
	c.d += d
	c.ll += l * l
	c.dd += d * d
	c.ld += l * d
	if d > 0 {
		c.graded++
	}
}

// se returns the clustered standard error of the mean loss over games
// games (those added, and any others with no graded decision), and false
// when there is none (fewer than two games with a graded decision).
func (c *clusterSums) se(games int) (float64, bool) {
	if c.graded < 2 || games < c.graded {
		return 0, false
	}
	m := c.l / c.d
	resid := max(c.ll-2*m*c.ld+m*m*c.dd, 0) // rounding may leave a tiny negative
	g := float64(games)
	return math.Sqrt(g / (g - 1) * resid / (c.d * c.d)), true
}

// setInterval fills r's interval around r.Mean from the sums over games
// games.
func (c *clusterSums) setInterval(r *Report, games int) {
	se, ok := c.se(games)
	if !ok {
		return
	}
	lo, hi := max(r.Mean-stats.Z95*se, 0), r.Mean+stats.Z95*se
	r.MeanSE, r.MeanLow, r.MeanHigh = &se, &lo, &hi
}

// Separation compares the mean losses of two reports graded by the same
// reference (each agent in its own games).
type Separation struct {
	// Difference is b's mean loss minus a's; Low and High bound its 95%
	// interval (Difference ± Z95·√(se_a² + se_b²)).
	Difference float64 `json:"difference"`
	Low        float64 `json:"difference_low"`
	High       float64 `json:"difference_high"`
	// Separated says whether that interval leaves out 0.
	Separated bool `json:"separated"`
	// GamesToSeparate is roughly how many games each would need for a
	// difference of this size to be separated (the package doc gives the
	// formula); nil when the difference is 0, or the games would pass
	// math.MaxInt32.
	GamesToSeparate *int `json:"games_to_separate"`
}

// ErrNoInterval: a report has no interval of its mean loss (fewer than two
// games with a graded decision), so it cannot be compared.
var ErrNoInterval = errors.New("no interval of the mean loss")

// Separate compares reports a and b; its error wraps ErrNoInterval when
// either has no interval.
func Separate(a, b *Report) (Separation, error) {
	for _, r := range []*Report{a, b} {
		if r.MeanSE == nil {
			return Separation{}, fmt.Errorf("%w: %d games, %d graded decisions (it takes two games with a graded decision each)",
				ErrNoInterval, r.Games, r.Decisions)
		}
	}
	d := b.Mean - a.Mean
	sa, sb := *a.MeanSE, *b.MeanSE
	half := stats.Z95 * math.Sqrt(sa*sa+sb*sb)
	s := Separation{Difference: d, Low: d - half, High: d + half, Separated: math.Abs(d) > half}
	if n, ok := GamesToSeparate(sa*sa*float64(a.Games)+sb*sb*float64(b.Games), d); ok {
		s.GamesToSeparate = &n
	}
	return s, nil
}

// GamesToSeparate returns roughly how many games each of two agents would
// need for a difference d of their mean losses to be separated at 95%,
// given the sum of their per-game variances (se²·games of each): the
// smallest n ≥ 2 with Z95·√(perGame/n) ≤ |d|. It returns false when d is 0
// (no number of games separates a tie) or n would pass math.MaxInt32.
func GamesToSeparate(perGame, d float64) (int, bool) {
	if d == 0 || math.IsNaN(d) || math.IsNaN(perGame) {
		return 0, false
	}
	n := math.Ceil(stats.Z95 * stats.Z95 * perGame / (d * d))
	if n > math.MaxInt32 {
		return 0, false
	}
	return max(int(n), 2), true
}
