package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/render"
)

// playFiles is the page of `play --web`, its script and its style. Nothing
// is fetched from anywhere else: the page works offline.
//
//go:embed playweb
var playFiles embed.FS

// Errors of the web game API; webStatus maps each to its HTTP status.
var (
	// errNoGame: the game id is unknown (never made, or evicted).
	errNoGame = errors.New("no such game")
	// errNotYourTurn: a move was sent while the game waits for nobody (over) or for another seat.
	errNotYourTurn = errors.New("not your turn")
	// errIllegalMove: the action is not one of the player's legal moves.
	errIllegalMove = errors.New("illegal move")
	// errBadRequest: the request body is not the JSON the endpoint takes.
	errBadRequest = errors.New("bad request")
)

// maxWebBody bounds a request body of the web game API: every request is a
// small JSON object.
const maxWebBody = 4 << 10

// webConfig is what every game of a `play --web` server shares.
type webConfig struct {
	rules    env.Rules
	spec     string // agent spec of every seat but the player's
	seat     int    // the player's seat
	seed     uint64 // seed of the first game; 0 draws each game's seed from the clock
	maxGames int    // games held in memory; the least recently used is evicted
}

// webGames holds the games of a `play --web` server, at most cfg.maxGames.
type webGames struct {
	cfg    webConfig
	colors []string
	mu     sync.Mutex
	games  map[string]*webGame
	tick   uint64 // use counter: a game's used is the tick of its last request
	first  bool   // the configured seed has been used
}

// webGame is one game in progress or over. mu serializes its requests.
type webGame struct {
	mu     sync.Mutex
	id     string
	seed   uint64
	used   uint64 // guarded by webGames.mu
	state  env.State
	agents []agent.Agent
	tell   narrator
	log    []webLogEntry
	last   env.Event // the last move, when moved
	moved  bool
}

// webLogEntry is one throw or move of the game log: the event in its JSON
// form (docs/FORMATS.md) and the narration shown to the player.
type webLogEntry struct {
	env.EventJSON
	Say string `json:"say"`
}

// webMove is one legal move of the player, as the page lists it.
type webMove struct {
	Action   int    `json:"action"`
	Text     string `json:"text"`
	Throw    string `json:"throw"`
	From     *int   `json:"from,omitempty"` // absent when the move enters a piece
	To       int    `json:"to"`
	Entered  bool   `json:"entered,omitempty"`
	Finishes bool   `json:"finishes,omitempty"`
	Captures int    `json:"captures,omitempty"`
}

// webView is what every API call answers: the whole game as the page shows it.
type webView struct {
	ID      string        `json:"id"`
	Rules   string        `json:"rules"`
	Seed    uint64        `json:"seed"`
	Start   int           `json:"start"`
	Seat    int           `json:"seat"`
	Players []string      `json:"players"`
	Lineup  string        `json:"lineup"` // the seats as the page names them: "You (A) against greedy (B)"
	Legend  webLegend     `json:"legend"`
	Colors  []string      `json:"colors"`
	State   env.StateJSON `json:"state"`
	Log     []webLogEntry `json:"log"`
	Moves   []webMove     `json:"moves"`
	Board   string        `json:"board"` // the position as SVG, legal moves marked
	Status  string        `json:"status"`
}

// webLegend is the page's key to the throws and the board, in words for the
// game's rules.
type webLegend struct {
	Sticks string `json:"sticks"` // how the sticks make a throw
	Board  string `json:"board"`  // where pieces start, which way they go, how they finish
}

// legendFor writes the legend of the rules r.
func legendFor(r env.Rules) webLegend {
	var l webLegend
	l.Sticks = "Four sticks are thrown; count those that land flat side up (light; round side up is dark): " +
		"one is do (1 step), two gae (2), three geol (3), four yut (4), none mo (5). Yut and mo earn another throw. "
	if r.BackDo {
		l.Sticks += "The marked stick (striped) flat side up on its own is back-do: 1 step back."
	} else {
		l.Sticks += "The marked stick (striped) counts like the others: on its own it is a do."
	}
	end := "HOME"
	if r.Board == env.BoardLine {
		end = "END"
		l.Board = fmt.Sprintf("Pieces enter before space 0 (START) and run along the line, row by row, to space %d (END). ", r.Spaces-1)
	} else {
		l.Board = "Pieces enter from HOME (bottom right) and run counter-clockwise, as the arrow beside it shows: " +
			"up the right side to 5, along the top to 10, down the left side to 15 and along the bottom back to HOME. " +
			"A piece that stops on 5 or 10 turns down that corner's diagonal; one that stops on the centre (22) takes the short way home. "
	}
	switch r.Finish {
	case env.FinishPass:
		l.Board += "A piece finishes by moving past " + end + "; one that stops on " + end + " waits there."
	case env.FinishStop:
		l.Board += "A piece finishes when it reaches or passes " + end + "."
	case env.FinishExact:
		l.Board += "A piece finishes only by stopping exactly on " + end + "."
	case env.FinishWrap:
		again := "goes round the ring again"
		if r.Board == env.BoardLine {
			again = "starts again from space 0"
		}
		l.Board += "A piece finishes by stopping exactly on " + end + "; a move past it " + again + "."
	}
	if !r.Obstacles.IsZero() {
		l.Board += " Obstacles are circled, with their effect under them: skip makes the seat that stops there miss its next turn, -N pushes the stack back N steps."
	}
	return l
}

// newGameRequest is the body of POST /api/games (optional, as is each field).
type newGameRequest struct {
	Seed *uint64 `json:"seed"`
}

// moveRequest is the body of POST /api/games/{id}/moves.
type moveRequest struct {
	Action *int `json:"action"`
}

// decodeRequest reads one JSON object from a request body into v: unknown
// fields, trailing data, bodies over maxWebBody and bodies not sent in time
// are errors wrapping errBadRequest (and *http.MaxBytesError, or
// os.ErrDeadlineExceeded). An empty body leaves v as it is when empty is
// true.
func decodeRequest(body io.Reader, v any, empty bool) error {
	b, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("%w: reading the body: %w", errBadRequest, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if empty {
			return nil
		}
		return fmt.Errorf("%w: empty body, want a JSON object", errBadRequest)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errBadRequest, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the JSON object", errBadRequest)
	}
	return nil
}

// parseMoveRequest reads the body of a move request.
func parseMoveRequest(body io.Reader) (env.Action, error) {
	var req moveRequest
	if err := decodeRequest(body, &req, false); err != nil {
		return 0, err
	}
	if req.Action == nil {
		return 0, fmt.Errorf("%w: no \"action\" field", errBadRequest)
	}
	if *req.Action < 0 || *req.Action >= env.NumActions {
		return 0, fmt.Errorf("%w: action %d out of range 0..%d", errIllegalMove, *req.Action, env.NumActions-1)
	}
	return env.Action(*req.Action), nil
}

func newWebGames(cfg webConfig) *webGames {
	return &webGames{cfg: cfg, colors: seatColors(cfg.rules.Players), games: map[string]*webGame{}}
}

// create starts a game (seed 0 or nil: the configured one for the first
// game, then one from the clock), plays it up to the player's first
// decision, and stores it, evicting the least recently used game when full.
func (w *webGames) create(seed *uint64) (*webGame, error) {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("game id: %w", err)
	}
	w.mu.Lock()
	sd := w.cfg.seed
	if seed != nil && *seed != 0 {
		sd = *seed
	} else if w.first || sd == 0 {
		sd = clockSeed()
	}
	w.first = true
	w.mu.Unlock()
	agents, names, err := newOpponents(w.cfg.spec, sd, w.cfg.rules.Players, w.cfg.seat)
	if err != nil {
		return nil, err
	}
	s, err := env.New(w.cfg.rules, sd, env.AnySeat)
	if err != nil {
		return nil, err
	}
	g := &webGame{id: hex.EncodeToString(id[:]), seed: sd, state: s, agents: agents,
		tell: narrator{me: w.cfg.seat, names: names, noPool: w.cfg.rules.Pool == env.SwitchOff}}
	if err := g.advance(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.games) >= w.cfg.maxGames {
		var old *webGame
		for _, o := range w.games {
			if old == nil || o.used < old.used {
				old = o
			}
		}
		delete(w.games, old.id)
	}
	w.tick++
	g.used = w.tick
	w.games[g.id] = g
	return g, nil
}

// get returns the game id and marks it used.
func (w *webGames) get(id string) (*webGame, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	g, ok := w.games[id]
	if !ok {
		return nil, fmt.Errorf("%w %q: it was never made or was evicted (at most %d games are kept); start a new game", errNoGame, id, w.cfg.maxGames)
	}
	w.tick++
	g.used = w.tick
	return g, nil
}

// record logs what ev did to the game.
func (g *webGame) record(ev env.Event, desc string) {
	e := webLogEntry{EventJSON: ev.JSON()}
	if ev.Kind == env.EventThrow {
		e.Say = g.tell.explainThrow(ev)
	} else {
		g.last, g.moved = ev, true
		e.Say = fmt.Sprintf("%s: %s.%s", g.tell.who(int(ev.Seat)), desc, g.tell.explainMove(ev))
	}
	g.log = append(g.log, e)
}

// advance throws and lets the agents move until the player has a decision
// or the game is over.
func (g *webGame) advance() error {
	for !g.state.IsOver() {
		if g.state.IsChance() {
			ev, err := g.state.SampleThrow()
			if err != nil {
				return err
			}
			g.record(ev, "")
			continue
		}
		if g.state.ToMove() == g.tell.me {
			return nil
		}
		a, err := opponentAct(g.agents, g.seed, &g.state)
		if err != nil {
			return err
		}
		desc := g.tell.describe(&g.state, a)
		ev, err := g.state.Apply(a)
		if err != nil {
			return err
		}
		g.record(ev, desc)
	}
	return nil
}

// move plays the player's action a and the game on to their next decision.
func (g *webGame) move(a env.Action) error {
	if g.state.IsOver() || g.state.ToMove() != g.tell.me {
		return fmt.Errorf("%w: the game is over", errNotYourTurn)
	}
	if !g.state.IsLegal(a) {
		return fmt.Errorf("%w: %s", errIllegalMove, obs.Describe(&g.state, a))
	}
	desc := g.tell.describe(&g.state, a)
	ev, err := g.state.Apply(a)
	if err != nil {
		return fmt.Errorf("%w: %w", errIllegalMove, err)
	}
	g.record(ev, desc)
	return g.advance()
}

// preview draws the board with the player's legal move a as an arrow.
func (g *webGame) preview(a env.Action) ([]byte, error) {
	if g.state.IsOver() || g.state.ToMove() != g.tell.me || !g.state.IsLegal(a) {
		return nil, fmt.Errorf("%w: action %d is not one of your moves now", errIllegalMove, int(a))
	}
	next := g.state
	ev, err := next.Apply(a)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errIllegalMove, err)
	}
	return render.SVG(&g.state, render.Options{Legal: true, Numbers: true, LastMove: &ev, Names: g.names()}), nil
}

// names names every seat as the page does: "You", "greedy (B)".
func (g *webGame) names() []string {
	names := make([]string, len(g.tell.names))
	for seat := range names {
		names[seat] = g.tell.who(seat)
	}
	return names
}

// view is the game as the page shows it.
func (g *webGame) view(w *webGames) webView {
	s := &g.state
	v := webView{ID: g.id, Rules: s.Rules().String(), Seed: g.seed, Start: env.AnySeat, Seat: g.tell.me,
		Players: g.tell.names, Lineup: g.tell.lineup(), Legend: legendFor(s.Rules()), Colors: w.colors, State: s.JSON(), Log: g.log, Moves: []webMove{}}
	if v.Log == nil {
		v.Log = []webLogEntry{}
	}
	opts := render.Options{Legal: true, Numbers: true, Names: g.names()}
	if g.moved {
		opts.LastMove = &g.last // the arrow shows the last move, whoever made it
	}
	switch {
	case !s.IsOver() && (s.IsChance() || s.ToMove() != g.tell.me):
		// Only after an agent failed mid-way (a 500 told the page so).
		v.Status = fmt.Sprintf("Waiting for %s.", g.tell.who(s.ToMove()))
	case s.IsOver():
		if s.Winner() == g.tell.me {
			v.Status = fmt.Sprintf("You win after %d decisions!", s.Decisions())
		} else {
			v.Status = fmt.Sprintf("%s wins after %d decisions.", g.tell.who(s.Winner()), s.Decisions())
		}
	default:
		v.Status = "Your move: pick one of the moves (hover one to see it on the board)."
		var buf [env.NumActions]env.Action
		for _, a := range s.LegalActions(buf[:0]) {
			next := *s
			ev, err := next.Apply(a)
			if err != nil {
				continue
			}
			j := ev.JSON()
			v.Moves = append(v.Moves, webMove{Action: int(a), Text: g.tell.describe(s, a), Throw: j.Throw, From: j.From,
				To: *j.To, Entered: j.Entered, Finishes: j.Finished > 0, Captures: j.Captured})
		}
	}
	v.Board = string(render.SVG(s, opts))
	return v
}

// serveGame answers the game g as JSON with status code, after act (if not
// nil) has run on it under its lock; an error (err, from finding or making
// g, or act's) is answered instead.
func (w *webGames) serveGame(rw http.ResponseWriter, g *webGame, err error, code int, act func(*webGame) error) {
	if err == nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if act != nil {
			err = act(g)
		}
	}
	if err != nil {
		writeError(rw, err)
		return
	}
	writeJSON(rw, code, g.view(w))
}

// webStatus is the HTTP status of an API error.
func webStatus(err error) int {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		return http.StatusRequestTimeout
	case errors.Is(err, errCrossOrigin):
		return http.StatusForbidden
	case errors.Is(err, errNotJSON):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, errNoGame):
		return http.StatusNotFound
	case errors.Is(err, errNotYourTurn):
		return http.StatusConflict
	case errors.Is(err, errIllegalMove):
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// writeJSON answers v as JSON with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// writeError answers err as {"error": "..."} with its status.
func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, webStatus(err), map[string]string{"error": err.Error()})
}

// handler serves the page (/), its assets (/static/...) and the API:
// POST /api/games, GET /api/games/{id}, POST /api/games/{id}/moves and
// GET /api/games/{id}/preview/{action} (docs/PLAY.md).
func (w *webGames) handler() (http.Handler, error) {
	static, err := fs.Sub(playFiles, "playweb")
	if err != nil {
		return nil, fmt.Errorf("embedded play files: %w", err)
	}
	mux := http.NewServeMux()
	if err := servePage(mux, static); err != nil {
		return nil, err
	}
	mux.HandleFunc("POST /api/games", func(rw http.ResponseWriter, r *http.Request) {
		var req newGameRequest
		if err := decodeRequest(http.MaxBytesReader(rw, r.Body, maxWebBody), &req, true); err != nil {
			writeError(rw, err)
			return
		}
		g, err := w.create(req.Seed)
		w.serveGame(rw, g, err, http.StatusCreated, nil)
	})
	mux.HandleFunc("GET /api/games/{id}", func(rw http.ResponseWriter, r *http.Request) {
		g, err := w.get(r.PathValue("id"))
		w.serveGame(rw, g, err, http.StatusOK, nil)
	})
	mux.HandleFunc("POST /api/games/{id}/moves", func(rw http.ResponseWriter, r *http.Request) {
		a, err := parseMoveRequest(http.MaxBytesReader(rw, r.Body, maxWebBody))
		if err != nil {
			writeError(rw, err)
			return
		}
		g, err := w.get(r.PathValue("id"))
		w.serveGame(rw, g, err, http.StatusOK, func(g *webGame) error { return g.move(a) })
	})
	mux.HandleFunc("GET /api/games/{id}/preview/{action}", func(rw http.ResponseWriter, r *http.Request) {
		g, err := w.get(r.PathValue("id"))
		if err != nil {
			writeError(rw, err)
			return
		}
		n, err := strconv.Atoi(r.PathValue("action"))
		if err != nil || n < 0 || n >= env.NumActions {
			writeError(rw, fmt.Errorf("%w: action %q is not a number 0..%d", errIllegalMove, r.PathValue("action"), env.NumActions-1))
			return
		}
		g.mu.Lock()
		svg, err := g.preview(env.Action(n))
		g.mu.Unlock()
		if err != nil {
			writeError(rw, err)
			return
		}
		rw.Header().Set("Content-Type", "image/svg+xml")
		_, _ = rw.Write(svg)
	})
	return secureHeaders(mux), nil
}

// playWeb serves the web game until ctx is cancelled.
func playWeb(ctx context.Context, cfg webConfig, listen string, open bool, stdout io.Writer) error {
	addr, err := loopbackAddr("--addr", listen)
	if err != nil {
		return err
	}
	// Check the agent spec now, not at the first game.
	if _, _, err := newOpponents(cfg.spec, 1, cfg.rules.Players, cfg.seat); err != nil {
		return err
	}
	w := newWebGames(cfg)
	h, err := w.handler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", listen, err)
	}
	url := fmt.Sprintf("http://%s/", ln.Addr())
	fmt.Fprintf(stdout, "yutenv play --web: rules %s, You (%s) against %s: %s\n",
		cfg.rules, env.SeatGlyph(cfg.seat), cfg.spec, url)
	fmt.Fprintln(stdout, "press Ctrl-C to stop")
	if open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(stdout, "--open: %v; open %s yourself\n", err, url)
		}
	}
	return newPageServer(h).serve(ctx, ln, stdout, "yutenv play --web: stopped")
}

// openBrowser asks the desktop to open url in the default browser.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
