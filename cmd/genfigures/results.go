package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ResultsDir is where the results files live, relative to the repository
// root: one JSON file per measurement (a benchmark, a match, a training run).
const ResultsDir = "docs/results"

// Results is one results file: the figures of one measurement, the command
// that produced them, the machine it ran on and the date.
type Results struct {
	// Title says what was measured, in a few words.
	Title string `json:"title"`
	// Command is the command that reproduces the figures.
	Command string `json:"command"`
	// Machine is the machine and its state (quiet, under load).
	Machine string `json:"machine"`
	// Date is the day of the measurement, YYYY-MM-DD.
	Date string `json:"date"`
	// Figures are the quantities quoted in prose, by key.
	Figures map[string]Figure `json:"figures"`
	// Tables are the tables the docs show, by key.
	Tables map[string]Table `json:"tables"`

	name string // the file's name without .json
	path string // the file, relative to the repository root
}

// Figure is one quantity as the docs print it.
type Figure struct {
	// Text is the figure as the docs print it ("356,000", "0.94", "8.8–8.9x").
	Text string `json:"text"`
	// What says what the figure is, with its unit.
	What string `json:"what"`
	// Mentions are regular expressions that find this quantity quoted in
	// prose without a marker; the first group is the number quoted. Every
	// such quote in a user doc must equal Text.
	Mentions []string `json:"mentions,omitempty"`
}

// Table is one generated table: a header and rows of cells. A cell may
// name a figure of the same file as {key}.
type Table struct {
	// Columns are the header's cells.
	Columns []string `json:"columns"`
	// Align has one letter a column: l (left) or r (right).
	Align string `json:"align"`
	// Rows are the table's rows, one cell a column.
	Rows [][]string `json:"rows"`
	// Note is an optional sentence printed under the table, before the source.
	Note string `json:"note,omitempty"`
}

var (
	keyRE  = regexp.MustCompile(`^[a-z0-9_]+$`)
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	cellRE = regexp.MustCompile(`\{([a-z0-9_]+)\}`)
)

// loadResults reads every results file under root's ResultsDir, checked.
func loadResults(root string) (map[string]*Results, error) {
	paths, err := filepath.Glob(filepath.Join(root, ResultsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no results files in %s", filepath.Join(root, ResultsDir))
	}
	all := map[string]*Results{}
	for _, p := range paths {
		r, err := readResults(p)
		if err != nil {
			return nil, err
		}
		all[r.name] = r
	}
	if _, dup := all["ladder"]; dup {
		return nil, fmt.Errorf("%s/ladder.json: the ladder's results are %s", ResultsDir, LadderFile)
	}
	l, err := ladderResults(root)
	if err != nil {
		return nil, err
	}
	all[l.name] = l
	return all, nil
}

// readResults reads and checks one results file.
func readResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := parseResults(strings.TrimSuffix(filepath.Base(path), ".json"), b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// parseResults decodes a results file named name and checks it: every field
// known, the command, machine and date given, every key a plain word, every
// mention a regular expression with one group, every table's rows as wide as
// its header and every {key} of a cell a figure of the file.
func parseResults(name string, b []byte) (*Results, error) {
	var r Results
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	r.name = name
	r.path = filepath.Join(ResultsDir, name+".json")
	if !keyRE.MatchString(name) {
		return nil, fmt.Errorf("the file's name %q is not a key (a-z, 0-9, _)", name)
	}
	var errs []error
	for field, v := range map[string]string{"title": r.Title, "command": r.Command, "machine": r.Machine} {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, fmt.Errorf("no %s", field))
		}
	}
	if !dateRE.MatchString(r.Date) {
		errs = append(errs, fmt.Errorf("date %q is not YYYY-MM-DD", r.Date))
	}
	if len(r.Figures)+len(r.Tables) == 0 {
		errs = append(errs, errors.New("no figures and no tables"))
	}
	for _, k := range sortedKeys(r.Figures) {
		f := r.Figures[k]
		if !keyRE.MatchString(k) {
			errs = append(errs, fmt.Errorf("figure key %q is not a key (a-z, 0-9, _)", k))
		}
		if _, err := parseNumbers(f.Text); err != nil {
			errs = append(errs, fmt.Errorf("figure %s: %w", k, err))
		}
		if f.What == "" {
			errs = append(errs, fmt.Errorf("figure %s: no what", k))
		}
		for _, m := range f.Mentions {
			re, err := regexp.Compile(m)
			if err != nil {
				errs = append(errs, fmt.Errorf("figure %s: mention %q: %w", k, m, err))
			} else if re.NumSubexp() != 1 {
				errs = append(errs, fmt.Errorf("figure %s: mention %q has %d groups, not 1 (use (?:...) for the others)", k, m, re.NumSubexp()))
			}
		}
	}
	for _, k := range sortedKeys(r.Tables) {
		t := r.Tables[k]
		if !keyRE.MatchString(k) {
			errs = append(errs, fmt.Errorf("table key %q is not a key (a-z, 0-9, _)", k))
		}
		if len(t.Columns) == 0 || len(t.Align) != len(t.Columns) || strings.Trim(t.Align, "lr") != "" {
			errs = append(errs, fmt.Errorf("table %s: %d columns, align %q (one l or r a column)", k, len(t.Columns), t.Align))
		}
		for i, row := range t.Rows {
			if len(row) != len(t.Columns) {
				errs = append(errs, fmt.Errorf("table %s: row %d has %d cells, not %d", k, i+1, len(row), len(t.Columns)))
			}
			for _, c := range row {
				for _, m := range cellRE.FindAllStringSubmatch(c, -1) {
					if _, ok := r.Figures[m[1]]; !ok {
						errs = append(errs, fmt.Errorf("table %s: row %d names {%s}, which is no figure of the file", k, i+1, m[1]))
					}
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &r, nil
}

// source is the line under a generated table: the command, the machine, the
// date and the file, linked from the document at docPath (relative to the
// repository root).
func (r *Results) source(docPath string) string {
	rel, err := filepath.Rel(filepath.Dir(docPath), r.path)
	if err != nil {
		rel = r.path
	}
	return fmt.Sprintf("Measured with `%s` on %s, %s ([%s](%s)).", r.Command, r.Machine, r.Date, filepath.Base(r.path), filepath.ToSlash(rel))
}

// markdown renders table key of r as a Markdown table with its source line.
func (r *Results) markdown(key, docPath string) (string, error) {
	t, ok := r.Tables[key]
	if !ok {
		return "", fmt.Errorf("%s.json has no table %q (it has %s)", r.name, key, strings.Join(sortedKeys(r.Tables), ", "))
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.Columns, " | ") + " |\n|")
	for _, a := range t.Align {
		if a == 'r' {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = cellRE.ReplaceAllStringFunc(c, func(m string) string { return r.Figures[m[1:len(m)-1]].Text })
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	if t.Note != "" {
		b.WriteString(t.Note + " ")
	}
	b.WriteString(r.source(docPath) + "\n")
	return b.String(), nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LadderFile is the published ladder, which the Python package ships
// (yutenv.evaluate(..., rating=True) places a policy on it): it is the
// results file of `yutenv ladder`, read as the results named "ladder" whose
// figures are the ratings, elo_AGENT (the agent's spec with every character
// but a-z and 0-9 made _: elo_mcts_400).
const LadderFile = "python/yutenv/ladder.json"

// ladderResults reads the published ladder under root as results.
func ladderResults(root string) (*Results, error) {
	b, err := os.ReadFile(filepath.Join(root, LadderFile))
	if err != nil {
		return nil, err
	}
	var l struct {
		Games   int `json:"games_per_pair"`
		Seed    int `json:"seed"`
		Ratings []struct {
			Agent   string  `json:"agent"`
			Elo     float64 `json:"elo"`
			Low     float64 `json:"elo_low"`
			High    float64 `json:"elo_high"`
			Games   int     `json:"games"`
			Wins    int     `json:"wins"`
			WinRate float64 `json:"win_rate"`
		} `json:"ratings"`
		Pairs []struct {
			A       string  `json:"a"`
			B       string  `json:"b"`
			Games   int     `json:"games"`
			WinsA   int     `json:"wins_a"`
			WinsB   int     `json:"wins_b"`
			Rate    float64 `json:"win_rate_a"`
			RateLow float64 `json:"win_rate_a_low"`
			RateHi  float64 `json:"win_rate_a_high"`
		} `json:"pairs"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", LadderFile, err)
	}
	if len(l.Ratings) == 0 {
		return nil, fmt.Errorf("%s: no ratings", LadderFile)
	}
	r := &Results{
		Title:   "the published ladder",
		Command: fmt.Sprintf("yutenv ladder --games %d --seed %d", l.Games, l.Seed),
		Machine: "the 2-vCPU Intel Xeon VM with AVX-512, nothing else running",
		Date:    "2026-11-27",
		Figures: map[string]Figure{},
		name:    "ladder",
		path:    LadderFile,
	}
	ratings := Table{Columns: []string{"rank", "agent", "Elo", "95% interval", "games", "wins", "win rate"}, Align: "rlrrrrr"}
	for i, x := range l.Ratings {
		ratings.Rows = append(ratings.Rows, []string{strconv.Itoa(i + 1), x.Agent, fmt.Sprintf("%+.0f", x.Elo),
			fmt.Sprintf("[%+.0f, %+.0f]", x.Low, x.High), strconv.Itoa(x.Games), strconv.Itoa(x.Wins), fmt.Sprintf("%.1f%%", 100*x.WinRate)})
	}
	pairs := Table{Columns: []string{"a", "b", "games", "wins a", "wins b", "win rate a", "95% Wilson"}, Align: "llrrrrr"}
	for _, x := range l.Pairs {
		pairs.Rows = append(pairs.Rows, []string{x.A, x.B, strconv.Itoa(x.Games), strconv.Itoa(x.WinsA), strconv.Itoa(x.WinsB),
			fmt.Sprintf("%.1f%%", 100*x.Rate), fmt.Sprintf("[%.1f%%, %.1f%%]", 100*x.RateLow, 100*x.RateHi)})
	}
	r.Tables = map[string]Table{"ratings": ratings, "pairs": pairs}
	for _, x := range l.Ratings {
		// How prose quotes a rating: `mcts:400` +440, `mc:100`'s +376.
		mention := "`" + regexp.QuoteMeta(x.Agent) + "`(?:'s)? ([+-]\\d+)\\b"
		r.Figures["elo_"+nonWord.ReplaceAllString(x.Agent, "_")] = Figure{
			Text:     fmt.Sprintf("%+.0f", x.Elo),
			What:     "the rating of " + x.Agent + " on the published scale (random = 0)",
			Mentions: []string{mention},
		}
	}
	return r, nil
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)
