package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/luck"
	"github.com/yutenv/yutenv/stats"
)

// luckUsage is the help of --luck.
const luckUsage = "value function of the luck-adjusted result: az (the shipped network's value; its rules only), progress (a race heuristic, any rules), " +
	"net:PATH (a network file's value head; the rules it records, two seats), off, or auto (the default): az for the rules az was trained for, else progress"

// luckCounter hands the workers of a match their luck accountants.
type luckCounter struct {
	name string
	pool sync.Pool // of *luck.Accountant, or the error building one
}

// newLuckCounter returns the counter of --luck's value for rules, or nil
// for "off".
func newLuckCounter(value string, rules env.Rules) (*luckCounter, error) {
	name, mk, err := luck.For(value, rules, luck.LoadFile)
	if err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	if mk == nil {
		return nil, nil
	}
	c := &luckCounter{name: name}
	c.pool.New = func() any {
		v, err := mk()
		if err != nil {
			return err
		}
		return luck.New(v)
	}
	return c, nil
}

// get returns an accountant, reset; put it back when the game is over.
func (c *luckCounter) get() (*luck.Accountant, error) {
	switch x := c.pool.Get().(type) {
	case *luck.Accountant:
		x.Reset()
		return x, nil
	case error:
		return nil, x
	}
	return nil, fmt.Errorf("luck: no accountant")
}

func (c *luckCounter) put(a *luck.Accountant) { c.pool.Put(a) }

// luckFold is the fold of game g of a match of seats seats in its
// cross-fitted luck adjustment (stats.ControlVariate): the parity of its
// seed group g/seats, so that the games that share a game seed (common
// random numbers: A in each seat, the same throws) fall in the same fold and
// each fold's coefficient is fitted on games independent of the games it
// adjusts; each fold holds every seat order equally.
func luckFold(g, seats int) int { return g / seats % 2 }

// evalLuck is the luck-adjusted result of a match (evalMatch's luck fields).
type evalLuck struct {
	// Luck names the value function the luck was measured with (--luck);
	// empty when it was not measured.
	Luck string `json:"luck,omitempty"`
	// LuckAdjustedScoreA is A's mean luck-adjusted outcome on the scale of
	// the win rate ((1 + outcome) / 2: the win rate itself when the game
	// ends at the first finisher), with its 95% interval from the sample
	// variance of the per-game adjusted results: each game's outcome minus
	// its luck times the coefficient fitted on the other fold's games
	// (stats.ControlVariate), or the raw mean outcome and its interval when
	// that would not have been narrower.
	LuckAdjustedScoreA *float64 `json:"luck_adjusted_score_a,omitempty"`
	LuckAdjustedLow    *float64 `json:"luck_adjusted_score_a_low,omitempty"`
	LuckAdjustedHigh   *float64 `json:"luck_adjusted_score_a_high,omitempty"`
	// LuckAdjustedElo is the Elo difference of the adjusted score and its
	// interval (two seats only; null when infinite).
	LuckAdjustedElo     *float64 `json:"luck_adjusted_elo_diff,omitempty"`
	LuckAdjustedEloLow  *float64 `json:"luck_adjusted_elo_diff_low,omitempty"`
	LuckAdjustedEloHigh *float64 `json:"luck_adjusted_elo_diff_high,omitempty"`
	// LuckVarianceRatio is the variance of A's raw outcomes over that of
	// its adjusted ones: how many times fewer games the adjusted result
	// needs for the same precision (1 when the raw result is reported; null
	// when no variance is left).
	LuckVarianceRatio *float64 `json:"luck_variance_ratio,omitempty"`
	// LuckCoefficients are the coefficients the luck of the games of fold 0
	// and fold 1 (even and odd seed groups) was multiplied by before it was
	// subtracted, each fitted on the other fold; both 0 when the raw result
	// is reported.
	LuckCoefficients []float64 `json:"luck_coefficients,omitempty"`
	// MeanLuckA is A's mean luck per game (outcome scale; 0 in expectation).
	MeanLuckA *float64 `json:"mean_luck_a,omitempty"`

	cv stats.ControlVariate
	// luckSE is the adjusted score's standard error, from the unbounded
	// interval (the ladder's effective games); 0 when none.
	luckSE float64
}

// finishLuck computes the luck-adjusted figures from the games counted.
func (l *evalLuck) finishLuck(seats int) {
	e, ok := l.cv.Estimate(stats.Z95)
	if l.Luck == "" || !ok {
		return
	}
	score := func(x float64) *float64 { y := (1 + x) / 2; return &y }
	// A score is in [0, 1], so its interval is too; the estimate itself is
	// left unbiased, even when a few games put it outside.
	bound := func(x float64) *float64 { return score(math.Min(math.Max(x, -1), 1)) }
	l.LuckAdjustedScoreA, l.LuckAdjustedLow, l.LuckAdjustedHigh = score(e.Mean), bound(e.Low), bound(e.High)
	l.luckSE = (e.High - e.Low) / 4 / stats.Z95 // half the width, on the score scale (half the outcome's)
	l.LuckVarianceRatio = finite(e.VarianceRatio)
	l.LuckCoefficients = e.Coef[:]
	l.MeanLuckA = &e.MeanControl
	if seats == 2 {
		elo := func(p *float64) *float64 { return finite(stats.EloDiff(math.Min(math.Max(*p, 0), 1))) }
		l.LuckAdjustedElo, l.LuckAdjustedEloLow, l.LuckAdjustedEloHigh = elo(l.LuckAdjustedScoreA), elo(l.LuckAdjustedLow), elo(l.LuckAdjustedHigh)
	}
}

// luckLine is the table's line of a match's luck-adjusted result.
func luckLine(m evalMatch) string {
	if m.LuckAdjustedScoreA == nil {
		return ""
	}
	elo := ""
	if m.LuckAdjustedElo != nil || m.ChanceRate == 0.5 {
		elo = fmt.Sprintf(", Elo diff %s [%s, %s]", eloText(m.LuckAdjustedElo), eloText(m.LuckAdjustedEloLow), eloText(m.LuckAdjustedEloHigh))
	}
	ratio := "n/a"
	if m.LuckVarianceRatio != nil {
		ratio = fmt.Sprintf("%.2f", *m.LuckVarianceRatio)
	}
	return fmt.Sprintf("luck-adjusted (value %s): %s scores %s [%s, %s]%s; variance raw/adjusted %s, luck coefficients %s, mean luck %+.3f",
		m.Luck, m.A, pct(*m.LuckAdjustedScoreA), pct(*m.LuckAdjustedLow), pct(*m.LuckAdjustedHigh), elo, ratio, coefText(m.LuckCoefficients), *m.MeanLuckA)
}

// coefText writes the luck coefficients of the folds as "0.62/0.58".
func coefText(c []float64) string {
	parts := make([]string, len(c))
	for i, x := range c {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, "/")
}

// printLuck writes the luck-adjusted lines of the matches.
func printLuck(w io.Writer, ms []evalMatch) {
	for _, m := range ms {
		if l := luckLine(m); l != "" {
			fmt.Fprintln(w, l)
		}
	}
}
