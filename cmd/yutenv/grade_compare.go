package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/olekukonko/tablewriter"

	"github.com/yutenv/yutenv/grade"
	"github.com/yutenv/yutenv/internal/userfile"
)

// maxGradeReport is the largest report --compare reads: one of --worst
// 10000 decisions, each with its position, is some 10 MB.
const maxGradeReport = 64 << 20

// gradeComparison is what "yutenv grade --compare FILE --compare FILE
// --json" prints: the reports ranked by mean loss, and each next to the
// one after it.
type gradeComparison struct {
	Reference string `json:"reference"`
	Rules     string `json:"rules"`
	// Agents holds the reports, the smallest mean loss first (ties in the
	// order given).
	Agents []comparedGrade `json:"agents"`
	// Pairs compares each agent of the ranking with the next one.
	Pairs []comparedPair `json:"pairs"`
}

// comparedGrade is one report of a comparison.
type comparedGrade struct {
	// Name is the graded agent's spec, or the records' source.
	Name      string  `json:"name"`
	File      string  `json:"file"`
	Games     int     `json:"games"`
	Decisions int     `json:"decisions"`
	Mean      float64 `json:"mean_loss"`
	SE        float64 `json:"mean_loss_se"`
	Low       float64 `json:"mean_loss_low"`
	High      float64 `json:"mean_loss_high"`
}

// comparedPair compares two neighbours of the ranking: Difference is
// Worse's mean loss minus Better's.
type comparedPair struct {
	Better string `json:"better"`
	Worse  string `json:"worse"`
	grade.Separation
}

// readGradeReport reads one report that yutenv grade --json wrote.
func readGradeReport(name string) (gradeResult, error) {
	var r gradeResult
	b, err := userfile.ReadFile(name, maxGradeReport)
	if err != nil {
		return r, fmt.Errorf("--compare: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("--compare: %s: %w", name, err)
	}
	switch {
	case r.Report == nil || r.Reference == "" || r.Games < 1 || r.Decisions < 0:
		return r, fmt.Errorf("--compare: %s is no report of yutenv grade --json", name)
	case r.MeanSE == nil:
		return r, fmt.Errorf("--compare: %s: %w: %d games, %d graded decisions (it takes two games with a graded decision each; a report of a yutenv before the interval has none)",
			name, grade.ErrNoInterval, r.Games, r.Decisions)
	case r.MeanLow == nil || r.MeanHigh == nil || r.Mean < 0 || *r.MeanSE < 0:
		return r, fmt.Errorf("--compare: %s is no report of yutenv grade --json: its mean loss or interval is out of range", name)
	}
	return r, nil
}

// compareGrades reads the reports of files and compares them.
func compareGrades(files []string) (gradeComparison, error) {
	var c gradeComparison
	if len(files) < 2 {
		return c, fmt.Errorf("--compare takes two reports or more (repeat the flag), got %d", len(files))
	}
	reports := make([]gradeResult, len(files))
	for i, f := range files {
		r, err := readGradeReport(f)
		if err != nil {
			return c, err
		}
		if i > 0 && r.Reference != reports[0].Reference {
			return c, fmt.Errorf("--compare: %s is graded by reference %s, %s by %s: losses of different references do not compare",
				files[0], reports[0].Reference, f, r.Reference)
		}
		if i > 0 && r.Rules != reports[0].Rules {
			return c, fmt.Errorf("--compare: %s is of rules %s, %s of rules %s: losses of different rules do not compare",
				files[0], reports[0].Rules, f, r.Rules)
		}
		reports[i] = r
	}
	c.Reference, c.Rules = reports[0].Reference, reports[0].Rules
	names := make([]string, len(reports))
	count := map[string]int{}
	for i, r := range reports {
		names[i] = r.Agent
		if names[i] == "" {
			names[i] = r.Source
		}
		count[names[i]]++
	}
	for i, r := range reports {
		name := names[i]
		if count[name] > 1 { // two reports of one agent: the files tell them apart
			name += " (" + filepath.Base(files[i]) + ")"
		}
		c.Agents = append(c.Agents, comparedGrade{Name: name, File: files[i], Games: r.Games, Decisions: r.Decisions,
			Mean: r.Mean, SE: *r.MeanSE, Low: *r.MeanLow, High: *r.MeanHigh})
	}
	order := make([]int, len(reports))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(reports[i].Mean, reports[j].Mean) })
	ranked := make([]comparedGrade, len(order))
	for k, i := range order {
		ranked[k] = c.Agents[i]
	}
	c.Agents = ranked
	for k := 1; k < len(order); k++ {
		s, err := grade.Separate(reports[order[k-1]].Report, reports[order[k]].Report)
		if err != nil { // every report was checked for its interval
			return c, fmt.Errorf("--compare: %w", err)
		}
		c.Pairs = append(c.Pairs, comparedPair{Better: ranked[k-1].Name, Worse: ranked[k].Name, Separation: s})
	}
	return c, nil
}

// runGradeCompare prints the comparison of the reports of files.
func runGradeCompare(files []string, asJSON bool, stdout io.Writer) error {
	c, err := compareGrades(files)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	printGradeComparison(stdout, c)
	return nil
}

// printGradeComparison writes a comparison as two tables.
func printGradeComparison(w io.Writer, c gradeComparison) {
	fmt.Fprintf(w, "reference %s, rules %s; mean loss a decision, 95%% interval clustered by game\n", c.Reference, c.Rules)
	t := tablewriter.NewWriter(w)
	t.SetAutoFormatHeaders(false)
	t.SetAlignment(tablewriter.ALIGN_RIGHT)
	t.SetAutoWrapText(false)
	t.SetHeader([]string{"rank", "agent", "games", "decisions", "mean loss [95%]"})
	for k, a := range c.Agents {
		t.Append([]string{fmt.Sprint(k + 1), a.Name, fmt.Sprint(a.Games), fmt.Sprint(a.Decisions), fmt.Sprintf("%.4f [%.4f, %.4f]", a.Mean, a.Low, a.High)})
	}
	t.Render()
	fmt.Fprintln(w, "\nneighbours: the difference of their mean losses; separated when its 95% interval leaves out 0")
	p := tablewriter.NewWriter(w)
	p.SetAutoFormatHeaders(false)
	p.SetAlignment(tablewriter.ALIGN_RIGHT)
	p.SetAutoWrapText(false)
	p.SetHeader([]string{"agents", "difference [95%]", "separated", "games each to separate"})
	for _, s := range c.Pairs {
		sep := "no"
		if s.Separated {
			sep = "yes"
		}
		games := "about " + groupThousands(math.MaxInt32) + " or more"
		switch {
		case s.GamesToSeparate != nil:
			games = "about " + groupThousands(*s.GamesToSeparate)
		case s.Difference == 0:
			games = "never (a tie)"
		}
		p.Append([]string{s.Better + " / " + s.Worse, fmt.Sprintf("%+.4f [%+.4f, %+.4f]", s.Difference, s.Low, s.High), sep, games})
	}
	p.Render()
	fmt.Fprintln(w, "(games each to separate: where 1.96 standard errors of the difference, at that many games each, equal it)")
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	out := s[:len(s)%3]
	for i := len(s) % 3; i < len(s); i += 3 {
		if out != "" {
			out += ","
		}
		out += s[i : i+3]
	}
	return out
}

// errCompareAlone refuses --compare with a source of decisions.
var errCompareAlone = errors.New("--compare reads saved reports: give it without --agent, --records or --dataset")
