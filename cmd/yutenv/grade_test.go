package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/grade"
)

func TestGrade(t *testing.T) {
	dir := t.TempDir()
	records := filepath.Join(dir, "games.jsonl")
	code, _, errs := runCmd(t, "selfplay", "--games", "4", "--out", records, "--quiet")
	require.Equal(t, 0, code, errs)
	kata := filepath.Join(dir, "kata.jsonl")
	code, _, errs = runCmd(t, "selfplay", "--rules", "kata", "--games", "2", "--out", kata, "--quiet")
	require.Equal(t, 0, code, errs)
	ds := filepath.Join(dir, "ds")
	code, _, errs = runCmd(t, "selfplay", "--games", "4", "--tier", "compact", "--out", ds, "--quiet")
	require.Equal(t, 0, code, errs)

	t.Run("json", func(t *testing.T) {
		png := filepath.Join(dir, "losses.png")
		code, out, errs := runCmd(t, "grade", "--agent", "random", "--games", "3", "--reference", "mc:5", "--json", "--worst", "2", "--png", png)
		require.Equal(t, 0, code, errs)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		for _, k := range []string{"agent", "opponent", "source", "rules", "seed", "seconds", "version", "reference", "games",
			"decisions", "forced", "mean_loss", "median_loss", "p90_loss", "max_loss", "quantile_error", "best_rate", "error_rate", "blunder_rate", "histogram", "worst"} {
			assert.Contains(t, m, k)
		}
		assert.Equal(t, "random", m["agent"])
		assert.Equal(t, "greedy", m["opponent"])
		assert.Equal(t, 4.0, m["games"], "rounded up to the seats")
		assert.Len(t, m["worst"], 2)
		b, err := os.ReadFile(png)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(b), "\x89PNG"))
	})
	t.Run("table", func(t *testing.T) {
		code, out, errs := runCmd(t, "grade", "--agent", "greedy", "--opponent", "random", "--games", "2", "--reference", "mc:5")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "agent greedy against random, rules standard, 2 games")
		assert.Contains(t, out, "reference mc:5")
		assert.Contains(t, out, "mean loss")
		assert.Contains(t, out, "the costliest decisions")
	})
	t.Run("one seat", func(t *testing.T) { // --seat with --agent: the balanced games in which the agent has that seat
		var all gradeResult
		code, out, errs := runCmd(t, "grade", "--agent", "random", "--games", "4", "--reference", "mc:5", "--json", "--worst", "10000")
		require.Equal(t, 0, code, errs)
		require.NoError(t, json.Unmarshal([]byte(out), &all))
		for seat := range 2 {
			code, out, errs := runCmd(t, "grade", "--agent", "random", "--games", "2", "--reference", "mc:5", "--json", "--worst", "10000", "--seat", fmt.Sprint(seat))
			require.Equal(t, 0, code, errs)
			var one gradeResult
			require.NoError(t, json.Unmarshal([]byte(out), &one))
			require.NotNil(t, one.Seat)
			assert.Equal(t, seat, *one.Seat)
			assert.Equal(t, 2, one.Games, "not rounded up: games in that seat")
			require.NotEmpty(t, one.Worst)
			var want []grade.Worst
			for _, w := range all.Worst {
				if w.Seat == seat {
					want = append(want, w)
				}
			}
			for _, w := range one.Worst {
				assert.Equal(t, seat, w.Seat)
				assert.Equal(t, seat, w.Game%2, "the balanced match's game of that seat")
			}
			assert.Equal(t, want, one.Worst, "the same decisions graded the same")
		}
		code, out, errs = runCmd(t, "grade", "--agent", "greedy", "--games", "1", "--reference", "mc:5", "--seat", "1", "--quiet")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "agent greedy against greedy, rules standard, 1 games (in seat 1)")
	})
	t.Run("records and dataset", func(t *testing.T) {
		for _, args := range [][]string{{"--records", records}, {"--records", dir, "--rules", "standard", "--seat", "1"}, {"--dataset", ds}} {
			if args[1] == dir { // the folder holds kata records too: the one line that refuses them
				code, _, errs := runCmd(t, append([]string{"grade", "--reference", "mc:5"}, args...)...)
				assert.Equal(t, 1, code)
				assert.Equal(t, "yutenv grade: record of other rules: "+kata+", game 0 is of rules kata, not standard (give --rules kata to grade it)\n", errs)
				continue
			}
			code, out, errs := runCmd(t, append([]string{"grade", "--reference", "mc:5", "--json"}, args...)...)
			require.Equal(t, 0, code, errs)
			var rep gradeResult
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.Equal(t, 4, rep.Games)
			assert.Positive(t, rep.Decisions)
		}
		code, out, errs := runCmd(t, "grade", "--reference", "mc:5", "--records", kata, "--rules", "kata", "--seat", "0")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "records "+kata+": 2 games, seat 0, rules kata")
	})
	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			line string
		}{
			{[]string{"--agent", "random", "--reference", "greedy", "--games", "2"}, grade.ErrNoValues.Error() + ": greedy is no search"},
			{[]string{"--records", kata}, "record of other rules: " + kata + ", game 0 is of rules kata, not standard"},
			{[]string{"--records", records, "--agent", "random"}, "--agent plays new games"},
			{[]string{"--records", records, "--dataset", ds}, "give --records or --dataset, not both"},
			{[]string{"--records", filepath.Join(dir, "none.jsonl")}, "no such file"},
			{[]string{"--dataset", dir}, "--dataset: open"},
			{[]string{"--agent", "random", "--seat", "2"}, "--seat must be -1..1 under rules standard, got 2"},
			{[]string{"--agent", "random", "--reference", "mcts:0"}, "--reference: bad agent spec"},
			{[]string{"--agent", "nobody"}, "bad agent spec"},
		} {
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
				code, out, errs := runCmd(t, append([]string{"grade", "--quiet"}, tc.args...)...)
				assert.Equal(t, 1, code)
				assert.Empty(t, out)
				assert.Contains(t, errs, tc.line)
				assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			})
		}
	})
}
