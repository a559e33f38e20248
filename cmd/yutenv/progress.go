package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// progressMode says when a long command draws its progress bar: on a
// terminal only (auto, the default), always (into a pipe or a file too, for
// logs) or never.
type progressMode struct {
	mode  string
	quiet bool
}

// addProgressFlags registers --progress and its shorthand --quiet.
func addProgressFlags(fs *pflag.FlagSet) *progressMode {
	m := &progressMode{}
	fs.StringVar(&m.mode, "progress", "auto", "progress bar (count, rate, ETA) on stderr: auto (on a terminal only), always or never")
	fs.BoolVar(&m.quiet, "quiet", false, "no progress bar (--progress never)")
	return m
}

// check refuses an unknown --progress value.
func (m *progressMode) check() error {
	switch m.mode {
	case "auto", "always", "never":
		return nil
	}
	return fmt.Errorf("--progress must be auto, always or never, got %q", m.mode)
}

// start returns a bar of total steps on w, or nil when the mode says no bar
// (every method of a nil *progress does nothing).
func (m *progressMode) start(w io.Writer, total int, what, unit string) *progress {
	if m.quiet || m.mode == "never" || (m.mode == "auto" && !isTerminal(w)) {
		return nil
	}
	return &progress{w: w, bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30),
	)}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress is a running bar; nil means none.
type progress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

// Add advances the bar by n steps.
func (p *progress) Add(n int) {
	if p != nil {
		_ = p.bar.Add(n)
	}
}

// Finish draws the bar complete and ends its line.
func (p *progress) Finish() {
	if p != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
