package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/render"
)

func init() {
	commands["replay"] = command{summary: "print a recorded game's states as text or JSON lines", run: runReplay}
}

func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", "RECORD [flags]", stderr)
	format := fs.String("format", "text", "output: text (board after every move) or json (one JSON line per event, with its game index)")
	game := fs.Int("game", -1, "which game of a multi-game record file (0-based); -1 for every game")
	check := fs.Bool("check", false, "only check the records against the rules; print one verdict line per game and fail if any game fails")
	svgDir := fs.String("svg", "", "also write the board as one SVG file per event into `DIR` (gameG-PPPP.svg; position 0 is the start, P the state after step P-1)")
	prog := addProgressFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("--format must be text or json, got %q", *format)
	}
	if *game < -1 {
		return fmt.Errorf("--game %d out of range: -1 (every game) or a game index", *game)
	}
	if err := prog.check(); err != nil {
		return err
	}
	if *svgDir != "" {
		if err := os.MkdirAll(*svgDir, 0o755); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	path := fs.Arg(0)
	games, err := countRecords(path)
	if err != nil {
		return err
	}
	if games == 0 {
		return fmt.Errorf("%s: no records", path)
	}
	if *game >= games {
		return fmt.Errorf("--game %d out of range: the file holds %d games (0..%d)", *game, games, games-1)
	}
	f, _, err := userfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	var bar *progress // writing SVG files is the slow part: games done, rate, ETA
	if *svgDir != "" {
		n := games
		if *game >= 0 {
			n = 1
		}
		bar = prog.start(stderr, n, "replay --svg", "games")
	}
	failed := 0
	err = env.ScanRecords(f, func(g, line int, rec *env.Record, err error) error {
		if *game >= 0 && g != *game {
			return nil
		}
		var s env.State
		if err == nil {
			var fn func(int, env.Event, *env.State) error
			if !*check {
				fn = replayPrinter(w, *format, g)
			}
			if *svgDir != "" {
				fn = svgFiles(fn, *svgDir, g, games, len(rec.Steps))
			}
			s, err = rec.Replay(fn)
			bar.Add(1)
		}
		switch {
		case err == nil && *check:
			fmt.Fprintf(w, "game %d: ok, %d steps, %d decisions, winner seat %d\n", g, len(rec.Steps), s.Decisions(), s.Winner())
		case err == nil:
		case *check:
			// Every game gets its verdict: a bad one does not stop the check.
			failed++
			fmt.Fprintf(w, "game %d (line %d): FAILED: %v\n", g, line, err)
		default:
			return fmt.Errorf("%s: game %d (line %d): %w", path, g, line, err)
		}
		return nil
	})
	bar.Finish()
	if err != nil {
		return err
	}
	if failed > 0 {
		checked := games
		if *game >= 0 {
			checked = 1
		}
		return fmt.Errorf("%s: %d of %d games failed the check", path, failed, checked)
	}
	return nil
}

// countRecords counts the games (non-blank lines) of a record file, so that
// --game can be checked and SVG names padded before anything is printed.
func countRecords(path string) (int, error) {
	f, _, err := userfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20) // env.ScanRecords' limit on a line
	n := 0
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// replayPrinter returns the replay callback that prints game g's events as
// text or as JSON lines (env.MarshalJSONLine's object with "game" first).
func replayPrinter(w io.Writer, format string, g int) func(int, env.Event, *env.State) error {
	return func(step int, ev env.Event, s *env.State) error {
		if format == "json" {
			b, err := env.MarshalJSONLine(step, ev, s)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(w, "{\"game\":%d,%s\n", g, b[1:])
			return err
		}
		if step < 0 {
			_, err := fmt.Fprintf(w, "== game %d start: seat %d begins\n%s\n", g, s.StartSeat(), s.Render())
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
		if err := userfile.WriteAtomic(name, func(w io.Writer) error { _, err := w.Write(render.SVG(s, opts)); return err }); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		if next != nil {
			return next(step, ev, s)
		}
		return nil
	}
}
