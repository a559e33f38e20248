package main

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/israce"
)

// TestEvalLuck: eval reports the luck-adjusted score beside the raw one,
// with the value it used (az by default for az's rules, progress
// elsewhere), and nothing of it with --luck off.
func TestEvalLuck(t *testing.T) {
	for _, c := range []struct{ rules, luck, want string }{
		{"standard", "", "az"},
		{"players=3", "", "progress"},
		{"standard", "progress", "progress"},
	} {
		t.Run(c.rules+" "+c.want, func(t *testing.T) {
			// Two thirds of the games under -race, where az's luck costs 0.3 s a game (fewer and greedy
			// wins them all: no spread to adjust); the workers still share the pool of accountants.
			games := israce.Scale(30, 20)
			args := []string{"--a", "greedy", "--b", "random", "--games", strconv.Itoa(games), "--rules", c.rules}
			if c.luck != "" {
				args = append(args, "--luck", c.luck)
			}
			m := evalJSON(t, args...)
			assert.Equal(t, c.want, m.Luck)
			require.NotNil(t, m.LuckAdjustedScoreA)
			assert.True(t, *m.LuckAdjustedLow < *m.LuckAdjustedScoreA && *m.LuckAdjustedScoreA < *m.LuckAdjustedHigh)
			require.NotNil(t, m.MeanLuckA)
			// The adjusted mean outcome is the raw one minus the mean luck.
			assert.InDelta(t, (1+m.MeanOutcomeA-*m.MeanLuckA)/2, *m.LuckAdjustedScoreA, 1e-9)
			require.NotNil(t, m.LuckVarianceRatio)
			assert.Positive(t, *m.LuckVarianceRatio)
			assert.Equal(t, c.rules == "standard", m.LuckAdjustedElo != nil)
		})
	}
	m := evalJSON(t, "--a", "greedy", "--b", "random", "--games", "10", "--luck", "off")
	assert.Empty(t, m.Luck)
	assert.Nil(t, m.LuckAdjustedScoreA)

	code, out, errs := runCmd(t, "eval", "--agents", "greedy;random;mc:2", "--games", "10", "--luck", "progress")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "luck-adjusted (value progress): greedy scores")
	assert.Contains(t, out, "luck-adjusted (value progress): random scores")

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--luck", "az", "--rules", "players=3"}, "values only the rules"},
		{[]string{"--luck", "dice"}, "--luck: the value function must be one of"},
	} {
		code, _, errs := runCmd(t, append([]string{"eval", "--quiet", "--a", "greedy", "--b", "random"}, c.args...)...)
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, c.msg)
	}
}
