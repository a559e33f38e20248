package main

import (
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/luck"
	"github.com/yutenv/yutenv/stats"
)

// luckUsage is the help of --luck.
const luckUsage = "value function of the luck-adjusted result: az (the shipped network's value; its rules only), progress (a race heuristic, any rules), off, " +
	"or auto (the default): az for the rules az was trained for, else progress"

// luckCounter hands the workers of a match their luck accountants.
type luckCounter struct {
	name string
	pool sync.Pool // of *luck.Accountant, or the error building one
}

// newLuckCounter returns the counter of --luck's value for rules, or nil
// for "off".
func newLuckCounter(value string, rules env.Rules) (*luckCounter, error) {
	name, mk, err := luck.For(value, rules)
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

// luckSums holds a match's per-game outcomes and luck of agent A, by game,
// so that the figures do not depend on the order games end in.
type luckSums struct {
	outcome, luck []float64
	played        []bool
}

// add records game i of the match (0-based within the run's part).
func (s *luckSums) add(i int, outcome, luck float64) {
	if i >= len(s.outcome) {
		n := max(i+1, 2*len(s.outcome))
		s.outcome = append(s.outcome, make([]float64, n-len(s.outcome))...)
		s.luck = append(s.luck, make([]float64, n-len(s.luck))...)
		s.played = append(s.played, make([]bool, n-len(s.played))...)
	}
	s.outcome[i], s.luck[i], s.played[i] = outcome, luck, true
}

// evalLuck is the luck-adjusted result of a match (evalMatch's luck fields).
type evalLuck struct {
	// Luck names the value function the luck was measured with (--luck);
	// empty when it was not measured.
	Luck string `json:"luck,omitempty"`
	// LuckAdjustedScoreA is A's mean luck-adjusted outcome on the scale of
	// the win rate ((1 + outcome) / 2: the win rate itself when the game
	// ends at the first finisher), with its 95% interval from the sample
	// variance of the per-game adjusted results.
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
	// needs for the same precision.
	LuckVarianceRatio *float64 `json:"luck_variance_ratio,omitempty"`
	// MeanLuckA is A's mean luck per game (outcome scale; 0 in expectation).
	MeanLuckA *float64 `json:"mean_luck_a,omitempty"`

	sums luckSums
}

// finishLuck computes the luck-adjusted figures from the sums.
func (l *evalLuck) finishLuck(seats int) {
	s := l.sums
	var n, raw, adj, lk float64
	for i, ok := range s.played {
		if ok {
			n++
			raw += s.outcome[i]
			adj += s.outcome[i] - s.luck[i]
			lk += s.luck[i]
		}
	}
	if l.Luck == "" || n < 2 {
		return
	}
	mean, rawMean := adj/n, raw/n
	var v, rawV float64
	for i, ok := range s.played {
		if ok {
			d, e := s.outcome[i]-s.luck[i]-mean, s.outcome[i]-rawMean
			v += d * d
			rawV += e * e
		}
	}
	v, rawV = v/(n-1), rawV/(n-1)
	half := stats.Z95 * math.Sqrt(v/n)
	score := func(x float64) *float64 { y := (1 + x) / 2; return &y }
	l.LuckAdjustedScoreA, l.LuckAdjustedLow, l.LuckAdjustedHigh = score(mean), score(mean-half), score(mean+half)
	if v > 0 {
		r := rawV / v
		l.LuckVarianceRatio = &r
	}
	lk /= n
	l.MeanLuckA = &lk
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
	return fmt.Sprintf("luck-adjusted (value %s): %s scores %s [%s, %s]%s; variance raw/adjusted %s, mean luck %+.3f",
		m.Luck, m.A, pct(*m.LuckAdjustedScoreA), pct(*m.LuckAdjustedLow), pct(*m.LuckAdjustedHigh), elo, ratio, *m.MeanLuckA)
}

// printLuck writes the luck-adjusted lines of the matches.
func printLuck(w io.Writer, ms []evalMatch) {
	for _, m := range ms {
		if l := luckLine(m); l != "" {
			fmt.Fprintln(w, l)
		}
	}
}
