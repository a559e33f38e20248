package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/render"
)

func init() {
	commands["replay"] = command{summary: "print a recorded game's states as text or JSON lines", run: runReplay}
}

func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", "RECORD [flags]", stderr)
	format := fs.String("format", "text", "output: text (board after every move) or json (one JSON line per event)")
	game := fs.Int("game", 0, "which game of a multi-game record file (0-based); -1 for all (the default with --check)")
	check := fs.Bool("check", false, "only check the records against the rules; print one summary line per game")
	svgDir := fs.String("svg", "", "also write the board as one SVG file per event into `DIR` (gameG-PPPP.svg; position 0 is the start, P the state after step P-1)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *check && !fs.Changed("game") {
		*game = -1
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("--format must be text or json, got %q", *format)
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	recs, err := env.ReadRecords(f)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s: no records", fs.Arg(0))
	}
	if *game < -1 || *game >= len(recs) {
		return fmt.Errorf("--game %d out of range: the file holds %d games (0..%d)", *game, len(recs), len(recs)-1)
	}
	total, first := len(recs), 0
	if *game >= 0 {
		recs = recs[*game : *game+1]
		first = *game
	}
	if *svgDir != "" {
		if err := os.MkdirAll(*svgDir, 0o755); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	for i, rec := range recs {
		fn := replayPrinter(w, *format)
		if *check {
			fn = nil
		}
		if *svgDir != "" {
			fn = svgFiles(fn, *svgDir, first+i, total, len(rec.Steps))
		}
		s, err := rec.Replay(fn)
		if err != nil {
			return fmt.Errorf("game %d: %w", first+i, err)
		}
		if *check {
			fmt.Fprintf(w, "game %d: ok, %d steps, %d decisions, winner seat %d\n", first+i, len(rec.Steps), s.Decisions(), s.Winner())
		}
	}
	return nil
}

func replayPrinter(w io.Writer, format string) func(int, env.Event, *env.State) error {
	return func(step int, ev env.Event, s *env.State) error {
		if format == "json" {
			b, err := env.MarshalJSONLine(step, ev, s)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(w, "%s\n", b)
			return err
		}
		if step < 0 {
			_, err := fmt.Fprintf(w, "== start: seat %d begins\n%s\n", s.StartSeat(), s.Render())
			return err
		}
		if ev.Kind == env.EventThrow {
			_, err := fmt.Fprintf(w, "-- %d: %v\n", step, ev)
			return err
		}
		_, err := fmt.Fprintf(w, "-- %d: %v\n%s\n", step, ev, s.Render())
		return err
	}
}

// svgFiles wraps a replay callback (nil for none) so that it also writes the
// board after every event as an SVG file into dir, named
// gameG-PPPP.svg with zero-padded numbers that sort in playing order:
// position 0 is the start, position P the state after step P-1.
func svgFiles(next func(int, env.Event, *env.State) error, dir string, game, games, steps int) func(int, env.Event, *env.State) error {
	gw := len(fmt.Sprint(max(games-1, 0)))
	pw := max(4, len(fmt.Sprint(steps)))
	return func(step int, ev env.Event, s *env.State) error {
		opts := render.Options{Legal: true, Numbers: true}
		if step < 0 {
			opts.Caption = fmt.Sprintf("start: seat %d begins", s.StartSeat())
		} else {
			opts.LastMove = &ev
			opts.Caption = fmt.Sprintf("%d: %v", step, ev)
		}
		name := filepath.Join(dir, fmt.Sprintf("game%0*d-%0*d.svg", gw, game, pw, step+1))
		if err := os.WriteFile(name, render.SVG(s, opts), 0o644); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		if next != nil {
			return next(step, ev, s)
		}
		return nil
	}
}
