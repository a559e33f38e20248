package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/solve"
)

func init() {
	commands["solve"] = command{summary: "solve a small two-seat variant exactly and write its table (agent optimal:FILE)", run: runSolve}
}

const solveUsage = `--rules R --out FILE [flags]

Computes optimal play of a small two-seat variant (pieces=1 or 2 on the cross or on a line,
the kata) by value iteration over every state reachable from the start, and writes the
solved table to FILE (docs/FORMATS.md, "Solved tables"). Agent optimal:FILE then plays
perfectly (yutenv eval --agents optimal:FILE,random). Variants whose table would need more
than --max-mem, or more than the machine's physical memory, are refused before the memory is
taken: pieces=2 on the cross needs about 6 GiB and 5 minutes (--max-mem 8GiB).`

func runSolve(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("solve", solveUsage, stderr)
	rulesSpec := fs.String("rules", "kata", "rules, as key=value pairs (see docs); two seats, end=first, no skip obstacles")
	out := fs.String("out", "", "the table file to write (required)")
	maxMem := fs.String("max-mem", "2GiB", "refuse a solve whose tables would need more memory: whole bytes, or with KiB, MiB, GiB, TiB")
	poolCap := fs.Int("pool-cap", 0, fmt.Sprintf("under pool=on, the pool size from which a chance node draws only chain-ending throws (1..%d; 0: the default for the rules, see docs/BASELINES.md)", solve.MaxPoolCap))
	tol := fs.Float64("tol", solve.DefaultTol, "stop value iteration when no value changes by more than this in a sweep")
	prog := addProgressFlags(fs)
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	if err := prog.check(); err != nil {
		return err
	}
	limit, err := parseBytes(*maxMem)
	if err != nil {
		return fmt.Errorf("--max-mem: %w", err)
	}
	if *out == "" {
		return errors.New("--out FILE is required: the file the solved table is written to")
	}
	if *poolCap < 0 || *poolCap > solve.MaxPoolCap {
		return fmt.Errorf("--pool-cap must be 0..%d, got %d", solve.MaxPoolCap, *poolCap)
	}
	if !(*tol > 0 && *tol < 1e-3) {
		return fmt.Errorf("--tol must be more than 0 and below 1e-3, got %g", *tol)
	}
	if err := solve.Check(rules); err != nil {
		return err
	}
	if err := checkTableOut(*out); err != nil {
		return err
	}
	opt := solve.Options{MaxBytes: limit, PoolCap: *poolCap, Tol: *tol}
	if showProgress(prog, stderr) {
		opt.Progress = solveProgress(stderr, *tol)
	}
	start := time.Now()
	t, err := solve.Solve(rules, opt)
	if errors.Is(err, solve.ErrTooBig) {
		return fmt.Errorf("%w (--max-mem)", err)
	}
	if err != nil {
		return err
	}
	if err := t.Save(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rules       %s\n", rules)
	fmt.Fprintf(stdout, "states      %d (%d edges)\n", t.Len(), t.Edges)
	fmt.Fprintf(stdout, "table       %s in %s\n", solve.FormatBytes(t.Bytes()), *out)
	fmt.Fprintf(stdout, "pool cap    %d (a turn reaches it with probability %.2g)\n", t.PoolCap, solve.Truncation(rules, t.PoolCap))
	fmt.Fprintf(stdout, "iterations  %d\n", t.Iterations)
	fmt.Fprintf(stdout, "residual    %.3g\n", t.Residual)
	fmt.Fprintf(stdout, "first seat  wins with probability %.12f under optimal play\n", t.Start())
	fmt.Fprintf(stdout, "time        %.2fs (listing the states %.2fs)\n", time.Since(start).Seconds(), t.EnumerateTime.Seconds())
	return nil
}

// showProgress reports whether the progress mode asks for progress on w.
func showProgress(m *progressMode, w io.Writer) bool {
	return !m.quiet && m.mode != "never" && (m.mode == "always" || isTerminal(w))
}

// solveProgress returns a Progress callback that prints a line at most
// once a second on w, and the last line of each stage: states listed and
// the rate, then sweeps, the residual and an ETA from the residual's rate
// of decrease towards tol.
func solveProgress(w io.Writer, tol float64) func(solve.Progress) {
	start, last := time.Now(), time.Time{}
	var lastRes float64
	var lastIter int
	return func(p solve.Progress) {
		now := time.Now()
		if now.Sub(last) < time.Second && !p.Done {
			return
		}
		last = now
		el := now.Sub(start).Seconds()
		switch p.Stage {
		case "enumerate":
			fmt.Fprintf(w, "listing states: %d found, %d expanded, %.0f states/s, %.0fs\n", p.States, p.Expanded, float64(p.Expanded)/max(el, 1e-3), el)
		case "iterate":
			eta := "?"
			switch {
			case p.Done:
				eta = "done"
			case lastRes > 0 && p.Residual > 0 && p.Residual < lastRes && p.Iteration > lastIter:
				perSweep := math.Log(lastRes/p.Residual) / float64(p.Iteration-lastIter)
				eta = fmt.Sprintf("~%d sweeps", int(math.Ceil(math.Log(p.Residual/tol)/perSweep)))
			}
			fmt.Fprintf(w, "value iteration: sweep %d, residual %.3g, %d states, ETA %s, %.0fs\n", p.Iteration, p.Residual, p.States, eta, el)
			lastRes, lastIter = p.Residual, p.Iteration
		}
	}
}

// checkTableOut refuses, before the solve, an --out that cannot be written:
// a folder, or a file in a folder that does not exist or is not writable.
func checkTableOut(out string) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() || strings.HasSuffix(out, "/") {
		return fmt.Errorf("--out %s names a folder; give the table's file name", out)
	}
	target, err := userfile.Target(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, ".yutenv-solve-check*")
	if err != nil {
		return fmt.Errorf("--out %s cannot be written: %w", out, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// maxBytesFlag is the largest byte count parseBytes reads: 1 PiB.
const maxBytesFlag = 1 << 50

// byteCount is a byte count's text: a decimal number (a fraction, an
// exponent) and an optional unit.
var byteCount = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)$`)

// byteUnits are the units parseBytes reads: B, KiB, MiB, GiB, TiB (KB,
// MB, GB, TB, K, M, G and T also meaning powers of 1024).
var byteUnits = map[string]int64{"": 1, "B": 1,
	"KiB": 1 << 10, "KB": 1 << 10, "K": 1 << 10, "MiB": 1 << 20, "MB": 1 << 20, "M": 1 << 20,
	"GiB": 1 << 30, "GB": 1 << 30, "G": 1 << 30, "TiB": 1 << 40, "TB": 1 << 40, "T": 1 << 40}

// parseBytes reads a byte count: a number, optionally with a unit of
// byteUnits. A count in bytes must be whole (0.5 and 1.5B are refused, not
// rounded); with a larger unit the count is rounded down to whole bytes
// (0.1GiB is 107374182 bytes). Less than one byte, or more than 1 PiB, is
// refused.
func parseBytes(s string) (int64, error) {
	m := byteCount.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("want a size such as 2GiB or 512MiB, got %q", s)
	}
	mult, ok := byteUnits[m[2]]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q in %q: give B, KiB, MiB, GiB or TiB", m[2], s)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("want a size such as 2GiB or 512MiB, got %q", s)
	}
	b := f * float64(mult)
	switch {
	case b < 1:
		return 0, fmt.Errorf("%q is less than one byte; give a size such as 2GiB or 512MiB", s)
	case mult == 1 && b != math.Trunc(b):
		return 0, fmt.Errorf("%q is not a whole number of bytes; give a size such as 2GiB or 512MiB", s)
	case b > maxBytesFlag:
		return 0, fmt.Errorf("%q is more than 1 PiB", s)
	}
	return int64(b), nil
}
