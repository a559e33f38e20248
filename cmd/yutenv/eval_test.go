package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/israce"
)

// runCmd runs the binary's entry point and returns its exit code and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// luckOffUnderRace appends --luck off to args under -race: eval's default
// luck accounting costs 28 ms a game, tenfold under the race detector, and
// the tests that call it are not about luck (TestEvalLuck runs it, workers
// and all, under -race).
func luckOffUnderRace(args ...string) []string {
	if israce.Enabled {
		return append(args, "--luck", "off")
	}
	return args
}

func evalJSON(t *testing.T, args ...string) evalMatch {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"eval", "--json", "--quiet"}, args...)...)
	require.Equal(t, 0, code, errs)
	var m evalMatch
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	return m
}

func TestEvalTable(t *testing.T) {
	code, out, errs := runCmd(t, "eval", "--a", "greedy", "--b", "random", "--games", "10") // the default --luck az: 28 ms a game
	require.Equal(t, 0, code, errs)
	for _, want := range []string{"95% Wilson", "Elo diff (95%)", "ms/decision", "decisions/game", "| greedy", "| random", "10 games per pair"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, errs, "games/s", "no progress bar into a pipe unless asked for")
}

func TestEvalJSON(t *testing.T) {
	m := evalJSON(t, "--a", "greedy", "--b", "random", "--games", "100", "--workers", "1", "--luck", "off")
	assert.Equal(t, "greedy", m.A)
	assert.Equal(t, 100, m.Games)
	assert.Equal(t, m.Games, m.WinsA+m.WinsB)
	assert.InDelta(t, float64(m.WinsA)/100, m.WinRateA, 1e-12)
	assert.True(t, m.WilsonLow < m.WinRateA && m.WinRateA < m.WilsonHi)
	require.NotNil(t, m.Elo)
	assert.Positive(t, *m.Elo, "greedy is stronger than random")
	assert.True(t, *m.EloLow < *m.Elo && *m.Elo < *m.EloHigh)
	assert.Greater(t, m.DecisionsPerGame, 10.0)
	assert.InDelta(t, m.DecisionsPerGame, m.ADecisionsPerGame+m.BDecisionsPerGame, 1e-9)
	assert.Equal(t, 0.5, m.ChanceRate)

	again := evalJSON(t, luckOffUnderRace("--a", "greedy", "--b", "random", "--games", "100", "--workers", "3")...)
	assert.Equal(t, m.WinsA, again.WinsA, "results do not depend on the number of workers")
	assert.Equal(t, m.DecisionsPerGame, again.DecisionsPerGame)
	other := evalJSON(t, luckOffUnderRace("--a", "greedy", "--b", "random", "--games", "100", "--seed", "9")...)
	assert.NotEqual(t, m.DecisionsPerGame, other.DecisionsPerGame, "another seed plays other games")
}

func TestEvalSeatsBalanced(t *testing.T) {
	// Two copies of one agent: every pair of games shares its throws with
	// the seats swapped, so the counts stay near even.
	m := evalJSON(t, "--a", "random", "--b", "random", "--games", "7")
	assert.Equal(t, 8, m.Games, "rounded up to a multiple of the seats")
	three := evalJSON(t, "--rules", "players=3", "--a", "greedy", "--b", "random", "--games", "30")
	assert.Equal(t, 30, three.Games)
	assert.InDelta(t, 1.0/3, three.ChanceRate, 1e-12)
	assert.Nil(t, three.Elo, "no Elo for more than two seats")
	assert.Greater(t, three.WinRateA, three.ChanceRate, "greedy beats two random seats more often than chance")
}

func TestEvalRoundRobin(t *testing.T) {
	spellings := [][]string{
		{"--agents", "random;greedy;mc:3"},
		{"--agents", "random,greedy,mc:3"},
		{"--agents", "random", "--agents", "greedy;mc:3"},
	}
	if israce.Enabled {
		spellings = spellings[:1] // the same round robin: its workers under -race once
	}
	for _, args := range spellings {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := runCmd(t, append([]string{"eval", "--games", "40", "--json", "--quiet", "--luck", "off"}, args...)...)
			require.Equal(t, 0, code, errs)
			var rep evalReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			require.Len(t, rep.Matches, 3)
			require.Len(t, rep.Ranking, 3)
			assert.Equal(t, 120, rep.Games)
			assert.Equal(t, "random", rep.Ranking[2].Agent, "random ranks last")
			assert.Equal(t, 0.0, rep.Ranking[2].Elo, "the first agent of the list is the anchor")
			for _, r := range rep.Ranking {
				assert.Equal(t, 80, r.Games)
				if r.Agent != "random" {
					assert.Greater(t, r.Elo, 50.0)
				}
			}
		})
	}
	code, out, errs := runCmd(t, "eval", "--agents", "random;greedy", "--games", "20", "--quiet", "--luck", "off")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ranking (Bradley-Terry Elo")
}

// TestEvalFirstGame checks that parts of a run (--first-game) play exactly
// the run's games: their wins and decisions add up to the whole run's, for
// two and three seats.
func TestEvalFirstGame(t *testing.T) {
	for _, rules := range []string{"standard", "players=3"} {
		t.Run(rules, func(t *testing.T) {
			whole := evalJSON(t, luckOffUnderRace("--a", "greedy", "--b", "random", "--rules", rules, "--seed", "9", "--games", "24")...)
			var wins, decisions int
			var dpg float64
			for _, first := range []string{"0", "12"} {
				part := evalJSON(t, luckOffUnderRace("--a", "greedy", "--b", "random", "--rules", rules, "--seed", "9", "--games", "12", "--first-game", first)...)
				wins += part.WinsA
				dpg += part.DecisionsPerGame * float64(part.Games)
				decisions += part.Games
			}
			assert.Equal(t, whole.Games, decisions)
			assert.Equal(t, whole.WinsA, wins)
			assert.InDelta(t, whole.DecisionsPerGame*float64(whole.Games), dpg, 1e-6)
		})
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--a", "random"}, "give --a and --b"},
		{[]string{"--a", "random", "--b", "random", "--agents", "greedy;random"}, "not both"},
		{[]string{"--agents", "greedy"}, "at least two specs"},
		{[]string{"--a", "random", "--b", "mcts:0"}, "count must be an integer"},
		{[]string{"--a", "random", "--b", "alpha"}, `unknown agent "alpha"`},
		{[]string{"--a", "random", "--b", "greedy", "--rules", "players=9"}, "players must be 2 to 4"},
		{[]string{"--agents", "random;greedy", "--rules", "players=3"}, "needs two-seat rules"},
		{[]string{"--a", "random", "--b", "greedy", "--games", "0"}, "--games must be"},
		{[]string{"--a", "random", "--b", "greedy", "--workers", "0"}, "--workers must be"},
		{[]string{"--a", "random", "--b", "greedy", "extra"}, "unexpected arguments"},
		{[]string{"--a", "random", "--b", "greedy", "--first-game", "3"}, "--first-game must be a multiple of the seat count"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errs := runCmd(t, append([]string{"eval", "--quiet"}, tt.args...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, tt.msg)
		})
	}
}

func TestEloNullWhenInfinite(t *testing.T) {
	m := evalMatch{Games: 10, WinsA: 10}
	m.finish(2)
	assert.Nil(t, m.Elo)
	assert.NotNil(t, m.EloLow)
}

func TestRankAgents(t *testing.T) {
	specs := []string{"a", "b", "c"}
	pairs := [][2]int{{0, 1}, {0, 2}, {1, 2}}
	matches := []evalMatch{
		{Games: 100, WinsA: 25, WinsB: 75},
		{Games: 100, WinsA: 10, WinsB: 90},
		{Games: 100, WinsA: 25, WinsB: 75},
	}
	r := rankAgents(specs, pairs, matches)
	require.Len(t, r, 3)
	assert.Equal(t, []string{"c", "b", "a"}, []string{r[0].Agent, r[1].Agent, r[2].Agent})
	assert.Equal(t, 0.0, r[2].Elo, "the first agent of the list is the anchor")
	assert.InDelta(t, 0.825, r[0].WinRate, 1e-12)
	assert.Greater(t, r[1].Elo, 100.0)
	assert.Greater(t, r[0].Elo-r[1].Elo, 100.0)
}
