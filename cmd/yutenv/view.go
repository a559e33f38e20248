package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/render"
)

func init() {
	commands["view"] = command{summary: "step through a recorded game in the browser (a local page, loopback only)", run: runView}
}

// viewerFiles is the page, its script and its style: everything the viewer
// serves besides the game. Nothing is fetched from anywhere else.
//
//go:embed viewer
var viewerFiles embed.FS

func runView(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return viewMain(ctx, args, stdout, stderr)
}

// viewMain serves the viewer until ctx is cancelled (SIGINT or SIGTERM from
// runView), then shuts the server down and returns nil.
func viewMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("view", "RECORD [flags]", stderr)
	game := fs.Int("game", 0, "which game of a multi-game record file (0-based)")
	listen := fs.String("listen", "127.0.0.1:0", "loopback host:port to serve on (port 0 picks a free port); other addresses are refused")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	addr, err := loopbackAddr("--listen", *listen)
	if err != nil {
		return err
	}
	v, err := loadViewer(fs.Arg(0), *game)
	if err != nil {
		return err
	}
	h, err := v.handler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", *listen, err)
	}
	fmt.Fprintf(stdout, "yutenv view: %s game %d (%d steps): http://%s/\n", v.file, v.game, len(v.events)-1, ln.Addr())
	fmt.Fprintln(stdout, "press Ctrl-C to stop")
	return newPageServer(h).serve(ctx, ln, stdout, "yutenv view: stopped")
}

// viewer holds one replayed game: every position from the start to the end.
type viewer struct {
	file   string // the record file's base name
	game   int
	games  int
	rec    *env.Record
	states []env.State // states[p]: position p, the start (p = 0) or the state after step p-1
	events []env.Event // events[p]: the event that led to position p (zero for p = 0)
	json   []byte      // the game as served at /game.json
}

// loadViewer reads a record file and replays game number game.
func loadViewer(path string, game int) (*viewer, error) {
	f, _, err := userfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := env.ReadRecords(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	if game < 0 || game >= len(recs) {
		return nil, fmt.Errorf("--game %d out of range: %s holds %d games (0..%d)", game, path, len(recs), len(recs)-1)
	}
	v, err := newViewer(recs[game], filepath.Base(path), game, len(recs))
	if err != nil {
		return nil, fmt.Errorf("%s: game %d: %w", path, game, err)
	}
	return v, nil
}

// gameJSON is what /game.json holds: the record's header and every position
// in the documented JSON form of states and events (docs/FORMATS.md).
type gameJSON struct {
	File      string         `json:"file"`
	Game      int            `json:"game"`
	Games     int            `json:"games"`
	Rules     string         `json:"rules"`
	Seats     int            `json:"seats"`
	Pieces    int            `json:"pieces"`
	Players   []string       `json:"players"`
	Seed      uint64         `json:"seed"`
	Result    *env.Result    `json:"result,omitempty"`
	Positions []env.LineJSON `json:"positions"`
	Board     boardGeometry  `json:"board"`
	Colors    []string       `json:"colors"`
}

// boardGeometry tells the page the size of each board SVG.
type boardGeometry struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

func newViewer(rec *env.Record, file string, game, games int) (*viewer, error) {
	v := &viewer{file: file, game: game, games: games, rec: rec}
	g := gameJSON{File: file, Game: game, Games: games, Rules: rec.Rules.String(), Seats: rec.Rules.Players,
		Pieces: rec.Rules.Pieces, Players: rec.Players, Seed: rec.Seed, Result: rec.Result,
		Board: boardGeometry{render.Width, render.Height}}
	if g.Players == nil {
		g.Players = []string{}
	}
	g.Colors = seatColors(rec.Rules.Players)
	_, err := rec.Replay(func(step int, ev env.Event, s *env.State) error {
		v.states = append(v.states, *s)
		v.events = append(v.events, ev)
		l := env.LineJSON{Step: step, State: s.JSON()}
		if step >= 0 {
			e := ev.JSON()
			l.Event = &e
		}
		g.Positions = append(g.Positions, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.json, err = json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// svg renders position p as the page shows it: the last move, the legal
// moves and the station numbers.
func (v *viewer) svg(p int) []byte {
	opts := render.Options{Legal: true, Numbers: true}
	if p > 0 {
		opts.LastMove = &v.events[p]
	}
	return render.SVG(&v.states[p], opts)
}

// handler serves the page (/), its assets (/static/...), the game
// (/game.json) and the board of each position (/board/P.svg).
func (v *viewer) handler() (http.Handler, error) {
	static, err := fs.Sub(viewerFiles, "viewer")
	if err != nil {
		return nil, fmt.Errorf("embedded viewer files: %w", err)
	}
	mux := http.NewServeMux()
	if err := servePage(mux, static); err != nil {
		return nil, err
	}
	mux.HandleFunc("GET /game.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		http.ServeContent(w, r, "game.json", time.Time{}, bytes.NewReader(v.json))
	})
	mux.HandleFunc("GET /board/{file}", func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
		p, err := strconv.Atoi(name)
		if !ok || err != nil || p < 0 || p >= len(v.states) || strconv.Itoa(p) != name {
			http.Error(w, fmt.Sprintf("no board %q: positions are 0..%d (/board/P.svg)", r.PathValue("file"), len(v.states)-1), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		http.ServeContent(w, r, name+".svg", time.Time{}, bytes.NewReader(v.svg(p)))
	})
	return secureHeaders(mux), nil
}

// seatColors is each seat's colour as CSS "#rrggbb".
func seatColors(players int) []string {
	var c []string
	for seat := 0; seat < players; seat++ {
		col, _ := render.SeatColor(seat)
		c = append(c, fmt.Sprintf("#%02x%02x%02x", col.R, col.G, col.B))
	}
	return c
}
