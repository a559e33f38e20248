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
			"decisions", "forced", "mean_loss", "median_loss", "p90_loss", "max_loss", "mean_loss_se", "mean_loss_low", "mean_loss_high",
			"quantile_error", "best_rate", "error_rate", "blunder_rate", "histogram", "worst"} {
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
		assert.Contains(t, out, "mean loss [95%]")
		assert.Regexp(t, `\| +\d+\.\d{4} \[\d+\.\d{4}, \d+\.\d{4}\] \|`, out, "the mean loss and its interval")
		assert.NotContains(t, out, "no interval")
		assert.Contains(t, out, "the costliest decisions")
	})
	t.Run("one game", func(t *testing.T) { // no interval: null in JSON, said in the table
		code, out, errs := runCmd(t, "grade", "--agent", "random", "--games", "1", "--seat", "0", "--reference", "mc:5", "--json")
		require.Equal(t, 0, code, errs)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		for _, k := range []string{"mean_loss_se", "mean_loss_low", "mean_loss_high"} {
			assert.Contains(t, m, k)
			assert.Nil(t, m[k], k)
		}
		code, out, errs = runCmd(t, "grade", "--agent", "random", "--games", "1", "--seat", "0", "--reference", "mc:5")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "(no interval of the mean loss: it takes two games with a graded decision each)")
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

// gradeReport runs yutenv grade --json with args and saves its report to
// dir/name, returning the path and the report.
func gradeReport(t *testing.T, dir, name string, args ...string) (string, gradeResult) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"grade", "--json", "--quiet"}, args...)...)
	require.Equal(t, 0, code, errs)
	var r gradeResult
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	return path, r
}

func TestGradeCompare(t *testing.T) {
	dir := t.TempDir()
	rnd, rr := gradeReport(t, dir, "random.json", "--agent", "random", "--games", "6", "--reference", "mc:8")
	grd, gr := gradeReport(t, dir, "greedy.json", "--agent", "greedy", "--games", "6", "--reference", "mc:8")
	mc, mr := gradeReport(t, dir, "mc.json", "--agent", "mc:8", "--games", "4", "--reference", "mc:8") // the reference itself: loss 0
	require.Zero(t, mr.Mean)
	require.Greater(t, rr.Mean, gr.Mean, "random loses most")

	t.Run("json", func(t *testing.T) {
		code, out, errs := runCmd(t, "grade", "--compare", rnd, "--compare", grd, "--compare", mc, "--json")
		require.Equal(t, 0, code, errs)
		var c gradeComparison
		require.NoError(t, json.Unmarshal([]byte(out), &c))
		assert.Equal(t, "mc:8", c.Reference)
		assert.Equal(t, "standard", c.Rules)
		require.Len(t, c.Agents, 3)
		assert.Equal(t, []string{"mc:8", "greedy", "random"}, []string{c.Agents[0].Name, c.Agents[1].Name, c.Agents[2].Name}, "smallest mean loss first")
		assert.Equal(t, comparedGrade{Name: "greedy", File: grd, Games: gr.Games, Decisions: gr.Decisions, Mean: gr.Mean,
			SE: *gr.MeanSE, Low: *gr.MeanLow, High: *gr.MeanHigh}, c.Agents[1])
		require.Len(t, c.Pairs, 2)
		for k, pair := range []struct{ a, b gradeResult }{{mr, gr}, {gr, rr}} {
			want, err := grade.Separate(pair.a.Report, pair.b.Report)
			require.NoError(t, err)
			assert.Equal(t, comparedPair{Better: c.Agents[k].Name, Worse: c.Agents[k+1].Name, Separation: want}, c.Pairs[k])
			assert.Positive(t, c.Pairs[k].Difference)
		}
	})
	t.Run("table", func(t *testing.T) {
		code, out, errs := runCmd(t, "grade", "--compare", grd, "--compare", rnd)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "reference mc:8, rules standard; mean loss a decision, 95% interval clustered by game")
		assert.Regexp(t, `\| +1 \| +greedy \| +6 \| +\d+ \| \d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\] \|`, out)
		assert.Regexp(t, `\| +greedy / random \| \+\d\.\d{4} \[[-+]\d\.\d{4}, \+\d\.\d{4}\] \| +(yes|no) \| +about [\d,]+ \|`, out)
	})
	t.Run("too close to separate", func(t *testing.T) { // hand-written reports: a difference of 1e-9
		var files []string
		for i, mean := range []float64{0.02, 0.02 + 1e-9} {
			f := filepath.Join(dir, fmt.Sprintf("close%d.json", i))
			rep := fmt.Sprintf(`{"agent":"a%d","source":"games","rules":"standard","reference":"mc:8","games":200,"decisions":4000,`+
				`"mean_loss":%v,"mean_loss_se":0.001,"mean_loss_low":0.018,"mean_loss_high":0.022}`, i, mean)
			require.NoError(t, os.WriteFile(f, []byte(rep), 0o644))
			files = append(files, "--compare", f)
		}
		code, out, errs := runCmd(t, append([]string{"grade"}, files...)...)
		require.Equal(t, 0, code, errs)
		assert.Regexp(t, `\| +a0 / a1 \| \+0\.0000 \[-0\.0028, \+0\.0028\] \| +no \| +about 2,147,483,647 or more \|`, out)
	})
	t.Run("one agent twice", func(t *testing.T) {
		code, out, errs := runCmd(t, "grade", "--compare", grd, "--compare", grd)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "greedy (greedy.json) / greedy (greedy.json)")
		assert.Contains(t, out, "never (a tie)")
	})
	t.Run("bad input", func(t *testing.T) {
		other, _ := gradeReport(t, dir, "other.json", "--agent", "greedy", "--games", "2", "--reference", "mc:5")
		kata, _ := gradeReport(t, dir, "kata.json", "--agent", "greedy", "--games", "2", "--reference", "mc:8", "--rules", "kata")
		one, _ := gradeReport(t, dir, "one.json", "--agent", "greedy", "--games", "1", "--seat", "0", "--reference", "mc:8")
		empty := filepath.Join(dir, "empty.json")
		require.NoError(t, os.WriteFile(empty, []byte("{}"), 0o644))
		garbage := filepath.Join(dir, "garbage.json")
		require.NoError(t, os.WriteFile(garbage, []byte("[1, 2"), 0o644))
		for _, tc := range []struct {
			args []string
			line string
		}{
			{[]string{"--compare", grd}, "--compare takes two reports or more (repeat the flag), got 1"},
			{[]string{"--compare", grd, "--compare", other}, "--compare: " + grd + " is graded by reference mc:8, " + other + " by mc:5: losses of different references do not compare"},
			{[]string{"--compare", grd, "--compare", kata}, "--compare: " + grd + " is of rules standard, " + kata + " of rules kata"},
			{[]string{"--compare", grd, "--compare", one}, "--compare: " + one + ": no interval of the mean loss: 1 games, "},
			{[]string{"--compare", grd, "--compare", empty}, "--compare: " + empty + " is no report of yutenv grade --json"},
			{[]string{"--compare", grd, "--compare", garbage}, "--compare: " + garbage + ": unexpected end of JSON input"},
			{[]string{"--compare", grd, "--compare", filepath.Join(dir, "none.json")}, "no such file"},
			{[]string{"--compare", grd, "--compare", dir}, "not a regular file"},
			{[]string{"--compare", grd, "--compare", rnd, "--agent", "random"}, "--compare reads saved reports: give it without --agent, --records or --dataset"},
		} {
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
				code, out, errs := runCmd(t, append([]string{"grade"}, tc.args...)...)
				assert.Equal(t, 1, code)
				assert.Empty(t, out)
				assert.Contains(t, errs, tc.line)
				assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			})
		}
	})
}

// FuzzGradeCompare reads arbitrary bytes as a saved report beside a real
// one: a comparison or one line of error, never a panic.
func FuzzGradeCompare(f *testing.F) {
	good := `{"agent":"a","source":"games","rules":"standard","reference":"mc:5","games":2,"decisions":3,"mean_loss":0.1,` +
		`"mean_loss_se":0.01,"mean_loss_low":0.08,"mean_loss_high":0.12}`
	f.Add([]byte(good))
	f.Add([]byte(`{"reference":"mc:5","rules":"standard","games":2,"mean_loss_se":null}`))
	f.Add([]byte(`{"reference":"mc:5","rules":"standard","games":1e9,"mean_loss":-1,"mean_loss_se":-1,"mean_loss_low":0,"mean_loss_high":0}`))
	dir := f.TempDir()
	a := filepath.Join(dir, "a.json")
	if err := os.WriteFile(a, []byte(good), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "b.json")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		c, err := compareGrades([]string{a, p})
		if err != nil {
			assert.NotContains(t, err.Error(), "\n")
			return
		}
		require.Len(t, c.Pairs, 1)
		var buf strings.Builder
		printGradeComparison(&buf, c)
	})
}
