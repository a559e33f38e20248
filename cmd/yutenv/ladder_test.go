package main

import (
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/stats"
)

// ladderRun runs "yutenv ladder" in the process with a state file in dir
// and returns the report it wrote.
func ladderRun(t *testing.T, dir string, args ...string) map[string]any {
	t.Helper()
	out := filepath.Join(dir, "ladder.json")
	code, _, errs := runCmd(t, append([]string{"ladder", "--quiet", "--json", out, "--state", filepath.Join(dir, "state")}, args...)...)
	require.Equal(t, 0, code, errs)
	return readLadderJSON(t, out)
}

// readLadderJSON reads a ladder report without its timings, which differ
// from run to run (everything else is a function of the games).
func readLadderJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep map[string]any
	require.NoError(t, json.Unmarshal(b, &rep))
	for _, r := range rep["ratings"].([]any) {
		delete(r.(map[string]any), "ms_per_decision")
	}
	for _, p := range rep["pairs"].([]any) {
		delete(p.(map[string]any), "ms_per_decision_a")
		delete(p.(map[string]any), "ms_per_decision_b")
	}
	return rep
}

func TestLadderReport(t *testing.T) {
	dir := t.TempDir()
	pngPath := filepath.Join(dir, "ladder.png")
	rep := ladderRun(t, dir, "--agents", "greedy;random;mc:10", "--games", "11", "--png", pngPath)
	assert.Equal(t, "random", rep["anchor"], "random anchors the scale wherever it is in the list")
	assert.EqualValues(t, 12, rep["games_per_pair"], "rounded up to even: both seatings of every seed")
	ratings := rep["ratings"].([]any)
	require.Len(t, ratings, 3)
	prev := 1e9
	for _, r := range ratings {
		r := r.(map[string]any)
		elo, lo, hi := r["elo"].(float64), r["elo_low"].(float64), r["elo_high"].(float64)
		assert.LessOrEqual(t, elo, prev, "strongest first")
		prev = elo
		assert.LessOrEqual(t, lo, elo)
		assert.GreaterOrEqual(t, hi, elo)
		assert.EqualValues(t, 24, r["games"])
		if r["agent"] == "random" {
			assert.Zero(t, elo)
			assert.Zero(t, r["se"])
		} else {
			assert.Greater(t, r["se"].(float64), 0.0)
		}
	}
	pairs := rep["pairs"].([]any)
	require.Len(t, pairs, 3)
	for _, p := range pairs {
		p := p.(map[string]any)
		assert.EqualValues(t, 12, p["games"])
		assert.EqualValues(t, 12, p["wins_a"].(float64)+p["wins_b"].(float64))
	}
	f, err := os.Open(pngPath)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dy(), 100)
}

// TestLadderLuck: by default the ladder counts the games' luck with az's
// value (standard rules) and adds a luck-adjusted fit on the same scale;
// --luck off leaves it out of the report and the table.
func TestLadderLuck(t *testing.T) {
	rep := ladderRun(t, t.TempDir(), "--agents", "random;greedy;mc:10", "--games", "12")
	assert.Equal(t, "az", rep["luck"])
	assert.Contains(t, rep["luck_interval"], "binomial")
	for _, r := range rep["ratings"].([]any) {
		r := r.(map[string]any)
		elo, lo, hi := r["luck_adjusted_elo"].(float64), r["luck_adjusted_elo_low"].(float64), r["luck_adjusted_elo_high"].(float64)
		assert.LessOrEqual(t, lo, elo)
		assert.GreaterOrEqual(t, hi, elo)
		if r["agent"] == "random" {
			assert.Zero(t, elo, "the anchor holds its rating in both fits")
		}
	}
	for _, p := range rep["pairs"].([]any) {
		p := p.(map[string]any)
		assert.Equal(t, "az", p["luck"])
		assert.Contains(t, p, "luck_adjusted_score_a")
		assert.Contains(t, p, "luck_variance_ratio")
	}

	off := ladderRun(t, t.TempDir(), "--agents", "random;greedy;mc:10", "--games", "12", "--luck", "off")
	assert.NotContains(t, off, "luck")
	assert.Equal(t, rawRatings(rep), rawRatings(off), "luck changes no game")
	code, out, errs := runCmd(t, "ladder", "--quiet", "--state", "", "--agents", "random;greedy", "--games", "4", "--luck", "progress")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "luck-adjusted: value progress")
	assert.Contains(t, out, "variance ratio")
	code, _, errs = runCmd(t, "ladder", "--quiet", "--state", "", "--agents", "random;greedy", "--games", "4", "--rules", "kata", "--luck", "az")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "--luck: az values only the rules")
}

// TestBTLuckCounts: a pair counts its adjusted score s of n' games won,
// n' = s(1-s)/se² with se the adjusted score's standard error (from its
// 95% interval), plus the virtual draw; without a usable adjusted result it
// counts its raw games and wins.
func TestBTLuckCounts(t *testing.T) {
	adjusted := func(s, se float64) evalLuck {
		lo, hi := s-stats.Z95*se, s+stats.Z95*se
		return evalLuck{LuckAdjustedScoreA: &s, LuckAdjustedLow: &lo, LuckAdjustedHigh: &hi, luckSE: se}
	}
	tests := []struct {
		name           string
		m              evalMatch
		winsA, gamesAB float64
	}{
		{"no luck: the raw counts", evalMatch{Games: 10, WinsA: 7, WinsB: 3}, 7.5, 11},
		// 0.6 x 0.4 / 0.05² = 96 games, 57.6 of them won.
		{"the binomial of the adjusted variance", evalMatch{Games: 10, WinsA: 7, evalLuck: adjusted(0.6, 0.05)}, 58.1, 97},
		{"a wider interval counts fewer games", evalMatch{Games: 10, WinsA: 7, evalLuck: adjusted(0.5, 0.25)}, 2.5, 5},
		{"a score clamped at 1: the raw counts", evalMatch{Games: 10, WinsA: 10, evalLuck: adjusted(1, 0.01)}, 10.5, 11},
		{"no variance left: the raw counts", evalMatch{Games: 10, WinsA: 5, evalLuck: adjusted(0.4, 0)}, 5.5, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wins, games := btLuckCounts(2, [][2]int{{0, 1}}, []evalMatch{tt.m})
			assert.InDelta(t, tt.winsA, wins[0], 1e-9)
			assert.InDelta(t, tt.gamesAB-wins[0], wins[1], 1e-9, "the rest are B's")
			assert.InDelta(t, tt.gamesAB, games[0][1], 1e-9)
			assert.Equal(t, games[0][1], games[1][0])
		})
	}
}

func TestLadderTable(t *testing.T) {
	code, out, errs := runCmd(t, "ladder", "--quiet", "--state", "", "--agents", "random;greedy", "--games", "4", "--anchor", "greedy", "--anchor-elo", "1000")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "greedy = +1000")
	assert.Contains(t, out, "95% interval")
	assert.Contains(t, out, "|    1 | greedy | +1000 |")
}

func TestLadderCommonRandomNumbers(t *testing.T) {
	// Game g of every pair has the same seed and seating whatever the other
	// agents of the ladder are: a pair's games alone are the same as in a
	// bigger ladder.
	big := ladderRun(t, t.TempDir(), "--agents", "random;greedy;mc:5", "--games", "10", "--seed", "7")
	small := ladderRun(t, t.TempDir(), "--agents", "greedy;mc:5", "--games", "10", "--seed", "7", "--anchor", "greedy")
	assert.Equal(t, big["pairs"].([]any)[2], small["pairs"].([]any)[0])
}

func TestLadderResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a few seconds of games")
	}
	// A sixth of the games under -race, where the ladders are tenfold slower
	// (the binary's too); the signal still comes long before the last pair ends.
	games := israce.Scale(60, 10)
	args := []string{"ladder", "--quiet", "--workers", "1", "--agents", "random;greedy;mc:30", "--games", strconv.Itoa(games), "--seed", "3"}
	want := ladderRun(t, t.TempDir(), args[1:]...)

	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			state, out := filepath.Join(dir, "state"), filepath.Join(dir, "ladder.json")
			all := append(args, "--state", state, "--json", out)
			cmd := yutenvCommand(t, all...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			// The first pair (random against greedy) is fast: its state is
			// saved when it ends, long before the last pair ends.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(state); err == nil {
					break
				}
				require.True(t, time.Now().Before(deadline), "no state file")
				time.Sleep(10 * time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			require.Error(t, err, "the ladder ended before the signal")
			if sig == syscall.SIGINT {
				assert.Contains(t, stderr.String(), "rerun the same command to continue")
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, 1, ee.ExitCode(), "an orderly exit, not a death by signal")
			}
			_, err = os.Stat(out)
			require.ErrorIs(t, err, os.ErrNotExist, "no report before the ladder ends")
			b, err := os.ReadFile(state)
			require.NoError(t, err)
			st, err := decodeLadderState(b)
			require.NoError(t, err, "the state file is whole")
			require.Less(t, st.played(), 3*games)

			code, _, errs := runCmd(t, all...)
			require.Equal(t, 0, code, errs)
			assert.Contains(t, errs, "continuing")
			assert.Equal(t, want, readLadderJSON(t, out), "resuming gives the uninterrupted ladder")
		})
	}
}

func TestLadderRefusesAnotherLaddersState(t *testing.T) {
	dir := t.TempDir()
	ladderRun(t, dir, "--agents", "random;greedy", "--games", "4")
	tests := []struct {
		name string
		args []string
	}{
		{"games", []string{"--agents", "random;greedy", "--games", "6"}},
		{"agents", []string{"--agents", "random;mc:5", "--games", "4"}},
		{"agent order", []string{"--agents", "greedy;random", "--games", "4"}},
		{"seed", []string{"--agents", "random;greedy", "--games", "4", "--seed", "2"}},
		{"rules", []string{"--agents", "random;greedy", "--games", "4", "--rules", "kata"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCmd(t, append([]string{"ladder", "--quiet", "--state", filepath.Join(dir, "state")}, tt.args...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "made by a different ladder")
			assert.Contains(t, errs, "delete it or give another --state")
		})
	}
	t.Run("another anchor is the same ladder", func(t *testing.T) {
		rep := ladderRun(t, dir, "--agents", "random;greedy", "--games", "4", "--anchor", "greedy")
		assert.Equal(t, "greedy", rep["anchor"])
	})
}

func TestLadderErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format":"yutenv-ladder-state","version":1,"ladder":{"agents":["random","greedy"],"rules":"standard","games":4,"seed":1},"pairs":[[[9,0,1,1,1,1]]]}`), 0o644))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"three seats", []string{"--rules", "players=3"}, "two-seat rules"},
		{"anchor not listed", []string{"--agents", "greedy;mc:5"}, "--anchor random is not one of the agents"},
		{"one agent", []string{"--agents", "greedy"}, "at least two"},
		{"twice", []string{"--agents", "greedy;greedy"}, "listed twice"},
		{"bad spec", []string{"--agents", "greedy;nope"}, "unknown agent"},
		{"no games", []string{"--games", "0"}, "--games"},
		{"anchor rating not a number", []string{"--agents", "random;greedy", "--games", "2", "--anchor-elo", "NaN"}, "--anchor-elo must be a number"},
		{"anchor rating infinite", []string{"--agents", "random;greedy", "--games", "2", "--anchor-elo", "+Inf"}, "--anchor-elo must be a number"},
		{"damaged state", []string{"--agents", "random;greedy", "--games", "4", "--state", bad}, "bad game"},
		{"state is a directory", []string{"--agents", "random;greedy", "--state", dir}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCmd(t, append([]string{"ladder", "--quiet", "--state", ""}, tt.args...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, tt.want)
		})
	}
}

func FuzzLadderState(f *testing.F) {
	f.Add([]byte(`{"format":"yutenv-ladder-state","version":1,"ladder":{"agents":["random","greedy"],"rules":"standard","games":4,"seed":1},"pairs":[[[0,1,3,4,5,6]]]}`))
	f.Add([]byte(`{"format":"yutenv-ladder-state","version":1,"ladder":{"agents":["a","b","c"],"games":2},"pairs":[[],[],[[1,0,0,0,0,0],[1,0,0,0,0,0]]]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(b []byte) {
			st, err := decodeLadderState(b)
			if err != nil {
				assert.ErrorIs(t, err, ErrLadderState)
				return
			}
			// A state that decodes can be fitted without a panic.
			assert.LessOrEqual(t, st.played(), len(st.Pairs)*st.Key.Games)
			_, _ = ladderFit(st, 0, 0)
		}
		check(b)
		// The same content sealed with its checksum, so that the checks
		// behind the checksum see the fuzzed content too.
		var st ladderState
		if json.Unmarshal(b, &st) == nil && st.Format == ladderStateFormat {
			st.Version = ladderStateVersion
			st.SHA256 = st.sum()
			sealed, err := json.Marshal(&st)
			require.NoError(t, err)
			check(sealed)
		}
	})
}

func TestLadderDefaultsLeaveOutAgentsThatRefuseTheRules(t *testing.T) {
	kata, err := env.ParseRules("kata")
	require.NoError(t, err)
	tests := []struct {
		name  string
		rules env.Rules
		az    bool
	}{
		{"standard keeps az", env.Standard(), true},
		{"kata leaves az out", kata, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := playable(agent.LadderSpecs(), tt.rules)
			assert.Equal(t, tt.az, slices.Contains(got, "az"))
			assert.Equal(t, tt.az, slices.Contains(got, "az,sims=200"))
			assert.Contains(t, got, "random", "the anchor stays")
		})
	}
}
