package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
	"time"

	"github.com/olekukonko/tablewriter"

	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/grade"
	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/render"
)

func init() {
	commands["grade"] = command{summary: "score every decision of an agent against a reference search: its error rate", run: runGrade}
}

var gradeArgs = `--agent SPEC [--opponent SPEC] [flags]
       yutenv grade (--records FILE|DIR | --dataset DIR) [--seat S] [flags]
       yutenv grade --compare FILE --compare FILE [...] [--json]

Scores every decision of a policy against a reference search (--reference,
default ` + grade.DefaultReference + `): at each decision the reference values every legal
action (its estimate of the mover's outcome in [-1, 1] after it), and the
decision loses the best action's value minus the chosen one's (0 when the
choice is the reference's best). Forced decisions (one legal action) are
counted apart and left out. It reports the mean loss with its 95% interval
(clustered by game: a game's decisions are not independent), its median and 90th
percentile, the share of errors (a loss above ` + fmt.Sprint(grade.ErrorLoss) + `) and blunders (above
` + fmt.Sprint(grade.BlunderLoss) + `), a histogram of the losses and the --worst costliest decisions with
their positions (save one to a file for yutenv analyse --position FILE).

The decisions come from --games games played now between --agent and
--opponent on the seeds of yutenv eval (seats balanced; with --seat S, the agent
in seat S only: the games of yutenv eval in which it has that seat), or from game
records: --records (a file of records, or every *.jsonl file of a folder) or
--dataset (a self-play dataset's records), every seat's decisions or those of --seat.

--compare ranks saved reports (yutenv grade --json, one reference and rules) by
mean loss and says of each agent and the next whether their difference is
separated (its 95% interval leaves out 0), and roughly how many games each would
separate it: n = 1.96² (se_a² G_a + se_b² G_b) / d², for standard errors se over
G games and a difference d.`

// gradeResult is what "yutenv grade --json" prints: the grade.Report's
// fields and what was graded.
type gradeResult struct {
	Agent    string  `json:"agent,omitempty"`
	Opponent string  `json:"opponent,omitempty"`
	Source   string  `json:"source"`
	Seat     *int    `json:"seat,omitempty"`
	Rules    string  `json:"rules"`
	Seed     uint64  `json:"seed"`
	Seconds  float64 `json:"seconds"`
	Version  string  `json:"version"`
	*grade.Report
}

func runGrade(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("grade", gradeArgs, stderr)
	spec := fs.String("agent", "", "the graded agent's `SPEC`")
	opponent := fs.String("opponent", "greedy", "the opponent's `SPEC` (every other seat)")
	reference := fs.String("reference", grade.DefaultReference, "the reference search's `SPEC` (one that values every move: az,sims=N, mcts:N, mc:N, optimal:PATH)")
	takesSpecs(fs, "agent", "opponent", "reference")
	games := fs.Int("games", 200, "games to play and grade (rounded up to a multiple of the seat count)")
	records := fs.String("records", "", "grade game records: a `FILE` of them (JSON lines), or every *.jsonl file of a folder")
	dsDir := fs.String("dataset", "", "grade the game records of a self-play dataset (its `DIR`)")
	seat := fs.Int("seat", -1, "grade only this seat's decisions: the agent plays only this seat, or the records' decisions of this seat (-1: every seat's)")
	rulesSpec := fs.String("rules", "standard", "rules, as key=value pairs (those of the records)")
	seed := fs.Uint64("seed", 1, "seed of the games' throws and of the agents")
	workers := fs.Int("workers", runtime.NumCPU(), "games graded at once")
	worst := fs.Int("worst", 5, "how many of the costliest decisions to show")
	asJSON := fs.Bool("json", false, "print one JSON object instead of tables")
	png := fs.String("png", "", "plot the histogram of the losses as a PNG to `FILE`")
	compare := fs.StringArray("compare", nil, "compare saved reports of yutenv grade --json instead of grading: a `FILE` each (repeat the flag)")
	prog := addProgressFlags(fs)
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	if err := prog.check(); err != nil {
		return err
	}
	if len(*compare) > 0 {
		if *spec != "" || *records != "" || *dsDir != "" {
			return errCompareAlone
		}
		return runGradeCompare(*compare, *asJSON, stdout)
	}
	switch {
	case *workers < 1 || *workers > 1024:
		return fmt.Errorf("--workers must be 1..1024, got %d", *workers)
	case *worst < 0 || *worst > 10_000:
		return fmt.Errorf("--worst must be 0..10000, got %d", *worst)
	case *games < 1 || *games > 10_000_000:
		return fmt.Errorf("--games must be 1..10000000, got %d", *games)
	case *seat < -1 || *seat >= rules.Players:
		return fmt.Errorf("--seat must be -1..%d under rules %s, got %d", rules.Players-1, rules, *seat)
	}
	if err := checkOutputs("--png", *png); err != nil {
		return err
	}
	res := gradeResult{Rules: rules.String(), Seed: *seed, Version: Version}
	var src grade.Source
	switch {
	case *records != "" && *dsDir != "":
		return fmt.Errorf("give --records or --dataset, not both")
	case *records != "" || *dsDir != "":
		if *spec != "" {
			return fmt.Errorf("--agent plays new games; records are graded as they were played: give one or the other")
		}
		var recs []*env.Record
		var names []string
		if *records != "" {
			recs, names, err = readRecordFiles(*records)
			res.Source = "records " + *records
		} else {
			recs, names, err = readDatasetRecords(*dsDir)
			res.Source = "dataset " + *dsDir
		}
		if err != nil {
			return err
		}
		if src, err = grade.NewRecords(recs, names, rules, *seat); err != nil {
			return err
		}
		if *seat >= 0 {
			res.Seat = seat
		}
	default:
		if *spec == "" {
			fs.Usage()
			return fmt.Errorf("give --agent SPEC (or --records or --dataset)")
		}
		canon, err := canonicalSpecs([]string{*spec, *opponent})
		if err != nil {
			return err
		}
		res.Agent, res.Opponent, res.Source = canon[0], canon[1], "games"
		n := rules.Players
		m := grade.Match{Rules: rules, Agent: canon[0], Opponent: canon[1], Games: (*games + n - 1) / n * n, Seed: *seed}
		if *seat >= 0 { // the balanced match's games in which the agent has that seat
			m.Games, m.OneSeat, m.Seat, res.Seat = *games, true, *seat, seat
		}
		src = m
	}
	if _, err := agent.ParseSpec(*reference); err != nil {
		return fmt.Errorf("--reference: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bar := prog.start(stderr, src.Len(), "grade", "games")
	done := 0
	t0 := time.Now()
	rep, err := grade.Run(ctx, src, grade.Options{Reference: *reference, Workers: *workers, Worst: *worst,
		Progress: func(g int) { bar.Add(g - done); done = g }})
	bar.Finish()
	if err != nil {
		return err
	}
	res.Seconds, res.Report = time.Since(t0).Seconds(), rep
	if *png != "" {
		if err := writeAtomic(*png, func(w io.Writer) error { return plotGrade(w, res) }); err != nil {
			return fmt.Errorf("--png: %w", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printGrade(stdout, res)
	return nil
}

// readRecordFiles reads the records of a file, or of every *.jsonl file
// of a folder (in name order), naming each "FILE, game G".
func readRecordFiles(path string) ([]*env.Record, []string, error) {
	files := []string{path}
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("--records: %w", err)
	} else if fi.IsDir() {
		if files, err = filepath.Glob(filepath.Join(path, "*.jsonl")); err != nil {
			return nil, nil, fmt.Errorf("--records: %w", err)
		}
		if len(files) == 0 {
			return nil, nil, fmt.Errorf("--records: no *.jsonl file in %s", path)
		}
		sort.Strings(files)
	}
	var recs []*env.Record
	var names []string
	for _, f := range files {
		r, n, err := readRecordFile(f)
		if err != nil {
			return nil, nil, err
		}
		recs, names = append(recs, r...), append(names, n...)
	}
	return recs, names, nil
}

// readRecordFile reads one file of records, a regular file (opened without
// blocking: a FIFO is refused at once).
func readRecordFile(name string) ([]*env.Record, []string, error) {
	f, _, err := userfile.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	recs, err := env.ReadRecords(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	names := make([]string, len(recs))
	for i := range recs {
		names[i] = fmt.Sprintf("%s, game %d", name, i)
	}
	return recs, names, nil
}

// readDatasetRecords reads the records of every shard a dataset's
// manifest lists.
func readDatasetRecords(dir string) ([]*env.Record, []string, error) {
	b, err := userfile.ReadFile(filepath.Join(dir, dataset.ManifestName), dataset.MaxManifestSize)
	if err != nil {
		return nil, nil, fmt.Errorf("--dataset: %w", err)
	}
	var m dataset.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("--dataset: %s: %w", dataset.ManifestName, err)
	}
	var recs []*env.Record
	var names []string
	for _, sh := range m.Shards {
		if sh.Records == "" || filepath.Base(sh.Records) != sh.Records {
			return nil, nil, fmt.Errorf("--dataset: %s: shard %s lists records %q, not a file of the folder", dataset.ManifestName, sh.File, sh.Records)
		}
		r, n, err := readRecordFile(filepath.Join(dir, sh.Records))
		if err != nil {
			return nil, nil, fmt.Errorf("--dataset: %w", err)
		}
		recs, names = append(recs, r...), append(names, n...)
	}
	if len(recs) == 0 {
		return nil, nil, fmt.Errorf("--dataset: %s holds no games", dir)
	}
	return recs, names, nil
}

// printGrade writes the report as tables.
func printGrade(w io.Writer, r gradeResult) {
	if r.Agent != "" {
		seats := "seats balanced"
		if r.Seat != nil {
			seats = fmt.Sprintf("in seat %d", *r.Seat)
		}
		fmt.Fprintf(w, "agent %s against %s, rules %s, %d games (%s), seed %d\n", r.Agent, r.Opponent, r.Rules, r.Games, seats, r.Seed)
	} else {
		seats := "every seat"
		if r.Seat != nil {
			seats = fmt.Sprintf("seat %d", *r.Seat)
		}
		fmt.Fprintf(w, "%s: %d games, %s, rules %s\n", r.Source, r.Games, seats, r.Rules)
	}
	fmt.Fprintf(w, "reference %s; loss = the best move's value - the chosen move's, outcomes in [-1, 1]\n", r.Reference)
	t := tablewriter.NewWriter(w)
	t.SetAutoFormatHeaders(false)
	t.SetAlignment(tablewriter.ALIGN_RIGHT)
	t.SetHeader([]string{"decisions", "forced", "mean loss [95%]", "median", "p90", "max", "best chosen",
		fmt.Sprintf("errors (> %g)", r.ErrorLoss), fmt.Sprintf("blunders (> %g)", r.BlunderLoss)})
	t.Append([]string{fmt.Sprint(r.Decisions), fmt.Sprint(r.Forced), meanLoss(r.Report), fmt.Sprintf("%.4f", r.Median),
		fmt.Sprintf("%.4f", r.P90), fmt.Sprintf("%.3f", r.Max), pct(r.BestRate), pct(r.ErrorRate), pct(r.BlunderRate)})
	t.Render()
	if r.MeanSE == nil {
		fmt.Fprintln(w, "(no interval of the mean loss: it takes two games with a graded decision each)")
	}
	if r.QuantileError > 0 {
		fmt.Fprintf(w, "(the median and p90 within %g%%: past %d decisions the losses are binned)\n", 100*r.QuantileError, grade.MaxExactLosses)
	}
	fmt.Fprintln(w, "\nlosses:")
	h := tablewriter.NewWriter(w)
	h.SetAutoFormatHeaders(false)
	h.SetAlignment(tablewriter.ALIGN_RIGHT)
	h.SetHeader([]string{"loss", "decisions", "share"})
	for _, b := range r.Histogram {
		h.Append([]string{b.Label, fmt.Sprint(b.Count), pct(b.Share)})
	}
	h.Render()
	if len(r.Worst) == 0 {
		return
	}
	fmt.Fprintln(w, "\nthe costliest decisions (position: save it to a file for yutenv analyse --position FILE):")
	x := tablewriter.NewWriter(w)
	x.SetAutoFormatHeaders(false)
	x.SetAlignment(tablewriter.ALIGN_RIGHT)
	x.SetHeader([]string{"game", "decision", "seat", "chosen", "value", "best", "value", "loss"})
	for _, d := range r.Worst {
		x.Append([]string{fmt.Sprint(d.Game), fmt.Sprint(d.Decision), fmt.Sprint(d.Seat), d.Move, fmt.Sprintf("%+.3f", d.Value),
			d.BestMove, fmt.Sprintf("%+.3f", d.BestValue), fmt.Sprintf("%.3f", d.Loss)})
	}
	x.Render()
	for _, d := range r.Worst {
		b, _ := json.Marshal(d.Position) // a struct of plain fields: it marshals
		fmt.Fprintf(w, "game %d, decision %d: %s\n", d.Game, d.Decision, b)
	}
}

// meanLoss writes a report's mean loss with its 95% interval, if it has one.
func meanLoss(r *grade.Report) string {
	if r.MeanSE == nil {
		return fmt.Sprintf("%.4f", r.Mean)
	}
	return fmt.Sprintf("%.4f [%.4f, %.4f]", r.Mean, *r.MeanLow, *r.MeanHigh)
}

// plotGrade draws the histogram of the losses, a bar a bin (the share of
// the decisions), with the render package's chart, as the ladder's plot.
func plotGrade(w io.Writer, r gradeResult) error {
	rows := make([]render.IntervalRow, len(r.Histogram))
	for i, b := range r.Histogram {
		rows[i] = render.IntervalRow{Label: "loss " + b.Label, Value: 100 * b.Share, Low: 0, High: 100 * b.Share}
	}
	who := r.Agent
	if who == "" {
		who = r.Source
	}
	title := fmt.Sprintf("yutenv grade: %s, %d decisions, mean loss %s", who, r.Decisions, meanLoss(r.Report))
	xLabel := fmt.Sprintf("%% of the decisions (reference %s)", r.Reference)
	if err := render.IntervalChartPNG(w, title, xLabel, rows); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
