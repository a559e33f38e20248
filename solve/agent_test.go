package solve

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/israce"
)

// playGame plays one game of seed under rules r between agents a (seat 0)
// and b (seat 1), seat first moving first, and returns the winner.
func playGame(t *testing.T, r env.Rules, seed uint64, first int, a, b agent.Agent) int {
	t.Helper()
	s, err := env.New(r, seed, first)
	require.NoError(t, err)
	seats := [2]agent.Agent{a, b}
	for {
		s.Advance()
		if s.IsOver() {
			return s.Winner()
		}
		act, err := seats[s.ToMove()].Act(&s)
		require.NoError(t, err)
		_, err = s.Apply(act)
		require.NoError(t, err)
	}
}

// optimal wins at least its solved value against any opponent, and
// exactly it against itself: over seeded games its win rate lies within a
// confidence interval of what the table says.
func TestOptimalAgent(t *testing.T) {
	if israce.Enabled {
		t.Skip("solves the kata and plays 1,200 games in one goroutine, tenfold slower under -race; the run without it does")
	}
	const games = 400
	tb := mustSolve(t, "kata", 0)
	r := tb.Rules()
	path := filepath.Join(t.TempDir(), "kata.ysolve")
	require.NoError(t, tb.Save(path))
	opt, err := agent.New("optimal:"+path, 1)
	require.NoError(t, err)
	assert.Equal(t, "optimal:"+path, opt.Name())
	v := tb.Start()
	// 3.3 standard errors of a rate near one half: a test that fails about once in a thousand runs by chance.
	slack := 3.3 * math.Sqrt(0.25/games)
	for _, opp := range []string{"random", "greedy"} {
		t.Run(opp, func(t *testing.T) {
			b, err := agent.New(opp, 7)
			require.NoError(t, err)
			wins := 0
			for g := range games {
				first := g % 2
				w := playGame(t, r, uint64(g), first, opt, b)
				if w == 0 {
					wins++
				}
			}
			rate := float64(wins) / games
			// Optimal play guarantees its value from either seat; the seats alternate.
			floor := (v + (1 - v)) / 2
			assert.GreaterOrEqual(t, rate, floor-slack, "optimal wins %.3f against %s", rate, opp)
			t.Logf("optimal vs %s: %.3f over %d games", opp, rate, games)
		})
	}
	t.Run("itself", func(t *testing.T) {
		wins := 0
		for g := range games {
			if playGame(t, r, uint64(1000+g), 0, opt, opt) == 0 {
				wins++
			}
		}
		assert.InDelta(t, v, float64(wins)/games, slack, "the first seat wins at the solved rate")
	})
}

func TestOptimalAgentRefuses(t *testing.T) {
	tb := mustSolve(t, "kata,spaces=5", 0)
	path := filepath.Join(t.TempDir(), "t.ysolve")
	require.NoError(t, tb.Save(path))
	a, err := agent.New("optimal:"+path, 1)
	require.NoError(t, err)
	s, err := env.New(env.Kata(), 1, 0)
	require.NoError(t, err)
	s.Advance()
	_, err = a.Act(&s)
	require.ErrorIs(t, err, ErrRules)
	assert.Contains(t, err.Error(), "solved for rules kata,spaces=5")

	_, err = agent.New("optimal:"+filepath.Join(t.TempDir(), "none"), 1)
	require.ErrorIs(t, err, agent.ErrSpec)

	s, err = env.New(tb.Rules(), 1, 0)
	require.NoError(t, err)
	_, err = a.Act(&s)
	require.ErrorIs(t, err, agent.ErrNoMove)
}

// Best picks an action whose value is the decision's solved value.
func TestBestMatchesValue(t *testing.T) {
	tb := mustSolve(t, "kata,spaces=7", 0)
	var vals [env.NumActions]float64
	n := 0
	for i := range tb.Len() {
		s, err := tb.State(i)
		require.NoError(t, err)
		if s.Phase() != env.PhaseMove {
			continue
		}
		a, v, err := tb.Best(&s)
		require.NoError(t, err)
		require.InDelta(t, tb.ValueAt(i), v, 1e-12)
		require.NoError(t, tb.ActionValues(&s, vals[:]))
		require.Equal(t, v, vals[a])
		if s.NumLegalActions() > 1 {
			_, st, err := NewAgent(tb, "optimal").ActStats(&s)
			require.NoError(t, err)
			require.InDelta(t, 2*v-1, st.Q[a], 1e-12, "Stats.Q holds 2p - 1")
			for x, q := range st.Q {
				if s.IsLegal(env.Action(x)) {
					require.LessOrEqual(t, q, st.Q[a], "action %v", env.Action(x))
				}
			}
		}
		n++
	}
	assert.Positive(t, n)
}
