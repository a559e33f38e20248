package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = "../.."

// TestDocsAreFresh fails when a generated table or a quoted figure of a doc
// is not what the results files record.
func TestDocsAreFresh(t *testing.T) {
	results, err := loadResults(root)
	require.NoError(t, err)
	docs, err := docPaths(root)
	require.NoError(t, err)
	regions := 0
	for _, rel := range docs {
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root, rel))
			require.NoError(t, err)
			want, err := render(rel, b, results)
			require.NoError(t, err)
			if string(b) != string(want) {
				t.Fatalf("%s is stale: run go generate ./cmd/genfigures", rel)
			}
			regions += len(beginRE.FindAll(b, -1)) + len(figRE.FindAll(b, -1))
		})
	}
	assert.Positive(t, regions, "no doc quotes a recorded figure")
}

// TestProseQuotesTheRecordedFigures fails when a user doc quotes a recorded
// quantity, outside the markers, at another value than its results file's:
// one quantity, one figure, on every page.
func TestProseQuotesTheRecordedFigures(t *testing.T) {
	results, err := loadResults(root)
	require.NoError(t, err)
	docs, err := docPaths(root)
	require.NoError(t, err)
	for _, rel := range docs {
		b, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		qs := misquotes(string(b), results)
		sort.Slice(qs, func(i, j int) bool { return qs[i].line < qs[j].line })
		for _, q := range qs {
			t.Errorf("%s:%v", rel, q)
		}
	}
}

// TestEveryResultsFileIsUsed fails on a results file or figure no doc
// quotes (a figure recorded for nothing drifts unseen).
func TestEveryResultsFileIsUsed(t *testing.T) {
	results, err := loadResults(root)
	require.NoError(t, err)
	docs, err := docPaths(root)
	require.NoError(t, err)
	var all strings.Builder
	for _, rel := range docs {
		b, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		all.Write(b)
	}
	text := all.String()
	for _, file := range sortedKeys(results) {
		if file == "ladder" {
			continue // the published ladder's figures are read by the package too
		}
		r := results[file]
		for _, k := range sortedKeys(r.Tables) {
			assert.True(t, strings.Contains(text, "figures "+file+"/"+k+" (go generate"), "table %s/%s is in no doc", file, k)
		}
		for _, k := range sortedKeys(r.Figures) {
			used := strings.Contains(text, "<!--fig "+file+"/"+k+"-->")
			for _, tb := range r.Tables {
				for _, row := range tb.Rows {
					used = used || strings.Contains(strings.Join(row, "|"), "{"+k+"}")
				}
			}
			assert.True(t, used, "figure %s/%s is quoted nowhere", file, k)
		}
	}
}

// The check catches the disagreements the docs held before the figures were
// recorded once: mcts:400's time a decision given as 1.04, 0.94, 0.60, 0.62,
// 1.26 and 1.70 ms, random playouts as 238k, 307k and 356k games a second.
// The lines are the docs' own, as they were.
func TestMisquotesCatchesTheOldDisagreements(t *testing.T) {
	results, err := loadResults(root)
	require.NoError(t, err)
	for _, tt := range []struct {
		name, line, figure, quoted string
	}{
		{"a table of times", "| `mcts:400` | 1.04 | 0.60 |", "agents/mcts_400_ms", "1.04"},
		{"the same table's second column", "| `mcts:400` | 1.04 | 0.60 |", "agents/mcts_400_ms", "0.60"},
		{"the ladder's output", "|    4 |    mcts:400 | +440 | [+414, +466] |  2800 | 1629 |    58.2% |      0.6183 |", "agents/mcts_400_ms", "0.6183"},
		{"a round robin's ranking", "|    1 | mcts:400 |  1200 |  880 |    73.3% | +449 |       1.263 |", "agents/mcts_400_ms", "1.263"},
		{"an eval's output", "| mcts:400 | 1172 |    58.6% | [56.4%, 60.7%] | +60 [+45, +76] |           21.2 |       1.704 |", "agents/mcts_400_ms", "1.704"},
		{"prose", "is why it is slow next to yutenv's own `mcts:N` (1.04 ms per\n400-simulation decision in Go).", "agents/mcts_400_ms", "1.04"},
		{"the summary's range", "| random playouts, one core | ≥ 100,000 games/s | **238,000–251,000 games/s** | `yutenv bench --time 3s` |", "playouts/games_per_s", "238,000–251,000"},
		{"prose on a VM", "(2026-11-28: 238,000–251,000 random games/s on one core)", "playouts/games_per_s", "238,000–251,000"},
		{"a benchmark line", "BenchmarkRandomPlayout-2   	  364782	      3255 ns/op	  14804879 decisions/s	    307235 games/s	       0 B/op	       0 allocs/op", "playouts/games_per_s", "307235"},
		{"bench's JSON", `{"rules":"standard","workers":1,"seconds":5.000154582,"games":1534272,"decisions":74010739,"throws":74610788,"games_per_sec":306844.9134599175}`, "playouts/games_per_s", "306844.9134599175"},
		{"a short form", "the engine plays 307k games/s", "playouts/games_per_s", "307k"},
		{"a rating", "For scale: `greedy` +336, `mc:100` +376", "ladder/elo_greedy", "+336"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, q := range misquotes(tt.line, results) {
				got = append(got, q.figure+" "+q.quoted)
			}
			assert.Contains(t, got, tt.figure+" "+tt.quoted)
		})
	}
	for _, ok := range []string{
		"| `mcts:400` | 0.94 |",
		"plays 356,000 random games/s on one core",
		"the engine plays 356k games/s",
		"| mc:100 | mcts:400 | 149 | 251 | 37.2% | [32.7%, 42.1%] | -91 [-126, -55] | 40.7 |", // a pair's decisions a game
		"<!--fig agents/mcts_400_ms-->1.04<!--/fig--> ms per 400-simulation decision",         // marked: the freshness test's
		"`greedy` +335, `mc:100` +376, `mcts:400` +440",
	} {
		t.Run(ok, func(t *testing.T) {
			assert.Empty(t, misquotes(ok, results))
		})
	}
}

func TestParseNumbers(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"0.94", "0.941469", true},
		{"0.94", "1.04", false},
		{"356k", "356,000", true},
		{"356k", "356,400", true},
		{"238,000–251,000", "356,000", false},
		{"8.8–8.9x", "8.8–8.9x", true},
		{"8.8–8.9x", "8.8x", false},
		{"1.27–1.60 M", "1.27–1.60 M", true},
		{"12.3 MB", "12.3", true},
		{"+389", "+389", true},
		{"+389", "+390", false},
	} {
		t.Run(tt.a+" "+tt.b, func(t *testing.T) {
			a, err := parseNumbers(tt.a)
			require.NoError(t, err)
			b, err := parseNumbers(tt.b)
			require.NoError(t, err)
			assert.Equal(t, tt.same, sameNumbers(a, b))
		})
	}
	_, err := parseNumbers("none")
	assert.Error(t, err)
}

// A results file that is not complete, or names what it lacks, is refused
// with a message naming the fault.
func TestParseResultsRefuses(t *testing.T) {
	const good = `{"title": "t", "command": "c", "machine": "m", "date": "2026-11-29",
		"figures": {"x": {"text": "1.5", "what": "w", "mentions": ["a (\\d+)"]}},
		"tables": {"t": {"columns": ["a", "b"], "align": "lr", "rows": [["{x}", "2"]]}}}`
	_, err := parseResults("ok", []byte(good))
	require.NoError(t, err)
	for _, tt := range []struct{ name, from, to, want string }{
		{"no command", `"command": "c"`, `"command": ""`, "no command"},
		{"a bad date", `2026-11-29`, `29.11.2026`, "not YYYY-MM-DD"},
		{"an unknown field", `"title": "t"`, `"title": "t", "when": 1`, "unknown field"},
		{"a text with no number", `"text": "1.5"`, `"text": "fast"`, "holds no number"},
		{"a mention of two groups", `a (\\d+)`, `(a) (\\d+)`, "2 groups"},
		{"a short row", `["{x}", "2"]`, `["{x}"]`, "row 1 has 1 cells"},
		{"an unknown figure", `["{x}", "2"]`, `["{y}", "2"]`, "names {y}"},
		{"a bad align", `"align": "lr"`, `"align": "lx"`, "align"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseResults("bad", []byte(strings.Replace(good, tt.from, tt.to, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// render writes regions and figures, and refuses a region or figure that
// names nothing recorded, and a marker it cannot read.
func TestRender(t *testing.T) {
	r, err := parseResults("bench", []byte(`{"title": "t", "command": "cmd --x", "machine": "a VM", "date": "2026-11-29",
		"figures": {"x": {"text": "1.5", "what": "w"}},
		"tables": {"t": {"columns": ["a", "b"], "align": "lr", "rows": [["{x}", "2"]]}}}`))
	require.NoError(t, err)
	results := map[string]*Results{"bench": r}
	doc := "It takes <!--fig bench/x-->9<!--/fig--> ms.\n\n" +
		"<!-- BEGIN GENERATED: figures bench/t (go generate ./cmd/genfigures; do not edit) -->\nold\n<!-- END GENERATED -->\n"
	got, err := render("docs/X.md", []byte(doc), results)
	require.NoError(t, err)
	assert.Equal(t, "It takes <!--fig bench/x-->1.5<!--/fig--> ms.\n\n"+
		"<!-- BEGIN GENERATED: figures bench/t (go generate ./cmd/genfigures; do not edit) -->\n"+
		"| a | b |\n|---|---:|\n| 1.5 | 2 |\n\nMeasured with `cmd --x` on a VM, 2026-11-29 ([bench.json](results/bench.json)).\n"+
		"<!-- END GENERATED -->\n", string(got))
	again, err := render("docs/X.md", got, results)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(again), "rendering twice changes nothing")

	doc = "Write `<!--fig NAME/KEY-->TEXT<!--/fig-->` to quote a figure.\n"
	got, err = render("docs/X.md", []byte(doc), results)
	require.NoError(t, err, "the syntax shown in a code span is no marker")
	assert.Equal(t, doc, string(got))

	readme, err := render("README.md", []byte("<!-- BEGIN GENERATED: figures bench/t (go generate ./cmd/genfigures; do not edit) -->\n<!-- END GENERATED -->"), results)
	require.NoError(t, err)
	assert.Contains(t, string(readme), "(docs/results/bench.json)", "links are relative to the doc")

	for _, tt := range []struct{ name, doc, want string }{
		{"no such file", "<!--fig other/x-->1<!--/fig-->", "no results file"},
		{"no such figure", "<!--fig bench/y-->1<!--/fig-->", "no figure \"y\""},
		{"no such table", "<!-- BEGIN GENERATED: figures bench/u (go generate ./cmd/genfigures; do not edit) -->\n<!-- END GENERATED -->", "no table \"u\""},
		{"no end marker", "<!-- BEGIN GENERATED: figures bench/t (go generate ./cmd/genfigures; do not edit) -->\n", "no end marker"},
		{"a misspelt marker", "<!-- fig bench/x -->1<!--/fig-->", "not <!--fig FILE/KEY-->"},
		{"a marker of capitals", "<!--fig Bench/x-->1<!--/fig-->", "not <!--fig FILE/KEY-->"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render("docs/X.md", []byte(tt.doc), results)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// FuzzRender: any document renders or is refused, without a panic, and a
// rendered one renders to itself again.
func FuzzRender(f *testing.F) {
	r, err := parseResults("bench", []byte(`{"title": "t", "command": "c", "machine": "m", "date": "2026-11-29",
		"figures": {"x": {"text": "1.5", "what": "w", "mentions": ["takes (\\d+(?:\\.\\d+)?) ms"]}},
		"tables": {"t": {"columns": ["a"], "align": "l", "rows": [["{x}"]]}}}`))
	require.NoError(f, err)
	results := map[string]*Results{"bench": r}
	f.Add("It takes <!--fig bench/x-->9<!--/fig--> ms.")
	f.Add("<!-- BEGIN GENERATED: figures bench/t (go generate ./cmd/genfigures; do not edit) -->\nold\n<!-- END GENERATED -->")
	f.Add("`<!--fig NAME/KEY-->` <!--fig bench/x--><!--/fig--><!--/fig-->")
	f.Fuzz(func(t *testing.T, doc string) {
		_ = misquotes(doc, results)
		out, err := render("docs/X.md", []byte(doc), results)
		if err != nil {
			return
		}
		again, err := render("docs/X.md", out, results)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again))
	})
}

// FuzzParseResults: any bytes are a results file or an error, never a panic.
func FuzzParseResults(f *testing.F) {
	f.Add([]byte(`{"title": "t", "command": "c", "machine": "m", "date": "2026-11-29", "figures": {"x": {"text": "1,5k", "what": "w"}}}`))
	f.Add([]byte(`{"tables": {"t": {"columns": ["a"], "align": "r", "rows": [["{y}"]]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseResults("f", b)
		if err != nil {
			return
		}
		for k := range r.Tables {
			_, err := r.markdown(k, "docs/X.md")
			require.NoError(t, err)
		}
	})
}
