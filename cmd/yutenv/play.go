package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/render"
	"github.com/yutenv/yutenv/vecenv"
)

func init() {
	commands["play"] = command{summary: "play against a baseline agent in the terminal", run: runPlay}
}

// playStdin is where play reads the player's moves (a variable so tests
// can drive a game).
var playStdin io.Reader = os.Stdin

// errQuit ends a game the player left.
var errQuit = errors.New("quit")

const playArgs = `[--opponent SPEC] [--seat N] [--seed N] [--rules R] [--web [--addr HOST:PORT] [--open]]

Plays one game against baseline agents: you take --seat, the agent (e.g.
random, greedy, mc:100, mcts:400) every other seat. The board is drawn as
text; at each decision the legal moves are listed in words and numbered.
Type a move's number and Enter; "b" redraws the board, "h" explains the
commands, "q" leaves.

With --web it serves a page on a loopback address instead and prints its
URL: the board, your legal moves to click, the throws and the game log, and
a button for a new game. It serves until Ctrl-C (docs/PLAY.md).`

// maxWebGames is how many games play --web keeps by default.
const maxWebGames = 64

func runPlay(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return playMain(ctx, args, stdout, stderr)
}

// playMain is play: a terminal game, or with --web a page served until ctx
// is cancelled.
func playMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("play", playArgs, stderr)
	opponent := fs.String("opponent", "mcts:400", "agent spec of every other seat")
	agentSpec := fs.String("agent", "", "the same as --opponent")
	takesSpecs(fs, "opponent", "agent")
	web := fs.Bool("web", false, "serve the game as a web page on --addr instead of the terminal")
	addr := fs.String("addr", "127.0.0.1:0", "with --web: loopback host:port to serve on (port 0 picks a free port)")
	open := fs.Bool("open", false, "with --web: open the page in the desktop's browser")
	maxGames := fs.Int("max-games", maxWebGames, "with --web: games kept in memory; the least recently played is dropped")
	seat := fs.Int("seat", 0, "your seat: 0 (A) to players-1")
	seed := fs.Uint64("seed", 0, "seed of the game (throws and the agents); 0 picks one from the clock")
	rulesSpec := fs.String("rules", "standard", "rules: a preset (standard, kata) and/or key=value pairs (e.g. players=3)")
	recordPath := fs.String("record", "", "append the game's record (JSON line) to this file when the game ends or you quit")
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	if *seat < 0 || *seat >= rules.Players {
		return fmt.Errorf("--seat must be 0..%d for %d players, got %d", rules.Players-1, rules.Players, *seat)
	}
	if fs.Changed("agent") {
		if fs.Changed("opponent") {
			return fmt.Errorf("--agent and --opponent are the same flag: give one")
		}
		*opponent = *agentSpec
	}
	if *web {
		if *recordPath != "" {
			return fmt.Errorf("--record is for the terminal game; the web page keeps its log")
		}
		if *maxGames < 1 {
			return fmt.Errorf("--max-games must be at least 1, got %d", *maxGames)
		}
		return playWeb(ctx, webConfig{rules: rules, spec: *opponent, seat: *seat, seed: *seed, maxGames: *maxGames}, *addr, *open, stdout)
	}
	for _, f := range []string{"addr", "open", "max-games"} {
		if fs.Changed(f) {
			return fmt.Errorf("--%s is for --web", f)
		}
	}
	sd := *seed
	if !fs.Changed("seed") || sd == 0 {
		sd = clockSeed()
	}
	agents, names, err := newOpponents(*opponent, sd, rules.Players, *seat)
	if err != nil {
		return err
	}
	p := &playSession{narrator: narrator{me: *seat, names: names, noPool: rules.Pool == env.SwitchOff},
		in: bufio.NewScanner(playStdin), out: stdout, agents: agents, rec: env.NewRecord(rules, sd, env.AnySeat)}
	s, err := env.New(rules, sd, env.AnySeat)
	if err != nil {
		return err
	}
	p.seed = sd
	fmt.Fprintf(stdout, "Yut Nori, rules %s, seed %d: %s.\n", rules, sd, p.lineup())
	starts := p.who(s.ToMove()) + " starts"
	if s.ToMove() == *seat {
		starts = "You start"
	}
	fmt.Fprintf(stdout, "%s. Type a move's number; h for help, q to quit.\n\n", starts)
	p.rec.Players = p.names
	err = p.play(&s)
	if *recordPath != "" {
		if werr := appendRecord(*recordPath, p.rec); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if errors.Is(err, errQuit) {
		fmt.Fprintln(stdout, "You left the game.")
		return nil
	}
	return err
}

// newOpponents builds an agent of spec for every seat but me (nil there)
// and the seats' names ("you" for me).
func newOpponents(spec string, seed uint64, players, me int) ([]agent.Agent, []string, error) {
	agents, names := make([]agent.Agent, players), make([]string, players)
	for i := range agents {
		if i == me {
			names[i] = "you"
			continue
		}
		a, err := agent.New(spec, seed)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := a.(agent.Reseeder); !ok {
			return nil, nil, fmt.Errorf("agent %s: %w", a.Name(), agent.ErrNotReseeder)
		}
		agents[i], names[i] = a, a.Name()
	}
	return agents, names, nil
}

// opponentAct asks the agent of the seat to move in s for its action. The
// seed scheme is every game runner's (vecenv.AgentSeed): the opponent plays
// as a server env's opponent of the same game seed.
func opponentAct(agents []agent.Agent, seed uint64, s *env.State) (env.Action, error) {
	seat := s.ToMove()
	agents[seat].(agent.Reseeder).Reseed(vecenv.AgentSeed(seed, seat, s.Decisions()))
	return agents[seat].Act(s)
}

// appendRecord appends rec as one JSON line to the file at path.
func appendRecord(path string, rec *env.Record) error {
	f, err := userfile.Append(path)
	if err != nil {
		return fmt.Errorf("play: --record: %w", err)
	}
	if _, err := rec.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("play: --record: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("play: --record: %w", err)
	}
	return nil
}

// clockSeed is a seed for a game nobody asked to reproduce.
func clockSeed() uint64 {
	var b [8]byte
	if f, err := os.Open("/dev/urandom"); err == nil {
		_, _ = io.ReadFull(f, b[:])
		f.Close()
	}
	s := uint64(0)
	for _, x := range b {
		s = s<<8 | uint64(x)
	}
	if s == 0 {
		s = 1
	}
	return s
}

// playSession is one terminal game.
type playSession struct {
	narrator
	in     *bufio.Scanner
	out    io.Writer
	seed   uint64 // the game seed: the agents are reseeded from it
	agents []agent.Agent
	rec    *env.Record // every throw and move, for --record
}

// narrator tells a game in words from one player's side: the terminal game
// prints it, the web game (play --web) shows it as the game log.
//
// Every text of the game names the seats one way: the player is "You" and
// every other seat its agent and letter, "greedy (B)". Where the board's
// letters need a key (the line-up, the board summary) the player is
// "You (A)".
type narrator struct {
	me     int
	names  []string
	noPool bool // rules pool=off: yut and mo earn their throw after the move
}

// who names a seat for the narration: "You", or "greedy (B)".
func (p *narrator) who(seat int) string {
	if seat == p.me {
		return "You"
	}
	return fmt.Sprintf("%s (%s)", p.names[seat], env.SeatGlyph(seat))
}

// keyed names a seat with its letter on the board: "You (A)", "greedy (B)".
func (p *narrator) keyed(seat int) string {
	if seat == p.me {
		return "You (" + env.SeatGlyph(seat) + ")"
	}
	return p.who(seat)
}

// of names a seat as the owner of pieces in a move's description
// ("captures 2 of greedy (B)", "captures 1 of yours").
func (p *narrator) of(seat int) string {
	if seat == p.me {
		return "yours"
	}
	return p.who(seat)
}

// describe says what action a does in s, the seats named as in the narration.
func (p *narrator) describe(s *env.State, a env.Action) string {
	return obs.DescribeNamed(s, a, p.of)
}

// lineup names the seats of the game: "You (A) against greedy (B)", "You
// (C) against mc:3 (A) and mc:3 (B)".
func (p *narrator) lineup() string {
	var others []string
	for seat := range p.names {
		if seat != p.me {
			others = append(others, p.keyed(seat))
		}
	}
	switch n := len(others); n {
	case 0:
		return p.keyed(p.me)
	case 1:
		return p.keyed(p.me) + " against " + others[0]
	default:
		return p.keyed(p.me) + " against " + strings.Join(others[:n-1], ", ") + " and " + others[n-1]
	}
}

// board draws the position for the player: the board of env.Render, then a
// line per seat in words (pieces in hand, finished and where each stack
// stands and goes; > marks the seat to move) and whose turn it is with the
// throws to use.
func (p *narrator) board(s *env.State) string {
	var b strings.Builder
	b.WriteString(s.RenderBoard())
	b.WriteByte('\n')
	r := s.Rules()
	for seat := 0; seat < r.Players; seat++ {
		mark := "  "
		if seat == s.ToMove() && !s.IsOver() {
			mark = "> "
		}
		fmt.Fprintf(&b, "%s%s: %d in hand, %d finished", mark, p.keyed(seat), s.Hand(seat), s.Finished(seat))
		if pl := s.Place(seat); pl > 0 {
			fmt.Fprintf(&b, ", %s place", render.Ordinal(pl))
		}
		if m := s.MissedTurns(seat); m == 1 {
			b.WriteString(", misses the next turn (obstacle)")
		} else if m > 1 {
			fmt.Fprintf(&b, ", misses the next %d turns (obstacles)", m)
		}
		var stacks []string
		for st := env.Station(0); int(st) < r.NumPlaces(); st++ {
			if owner, h, route, ok := s.StackAt(st); ok && owner == seat {
				stacks = append(stacks, stackWords(r, st, route, h, len(stacks) == 0))
			}
		}
		if len(stacks) == 0 {
			b.WriteString("; nothing on the board\n")
		} else {
			fmt.Fprintf(&b, "; on the board: %s\n", strings.Join(stacks, ", "))
		}
	}
	var pool []string
	for t, n := range s.Pool() {
		for range n {
			pool = append(pool, env.Throw(t).String())
		}
	}
	switch turn := p.who(s.ToMove()) + " to move"; {
	case s.IsOver():
	case s.IsChance():
		if s.ToMove() == p.me {
			b.WriteString("Your throw.\n")
		} else {
			fmt.Fprintf(&b, "%s to throw.\n", p.who(s.ToMove()))
		}
	default:
		if s.ToMove() == p.me {
			turn = "Your move"
		}
		fmt.Fprintf(&b, "%s; throws to use: %s.\n", turn, strings.Join(pool, ", "))
	}
	return b.String()
}

// stackWords says where a stack of height h stands on station st and, where
// its route decides it, which way it goes on: "1 piece at 3", "a stack of 2
// at 5 (takes the shortcut to the centre)". first: the first stack of its
// seat's list ("1 at 7" after it).
func stackWords(r env.Rules, st env.Station, route env.Route, h int, first bool) string {
	var b strings.Builder
	switch {
	case h > 1:
		fmt.Fprintf(&b, "a stack of %d at ", h)
	case first:
		b.WriteString("1 piece at ")
	default:
		b.WriteString("1 at ")
	}
	if r.Board == env.BoardLine {
		fmt.Fprintf(&b, "%d", st)
		if int(st) == r.Spaces-1 {
			b.WriteString(" (the last space: its next move finishes it)")
		}
		return b.String()
	}
	if st == env.Home {
		b.WriteString("HOME")
	} else {
		fmt.Fprintf(&b, "%d", st)
	}
	switch {
	case st == env.Home && r.Finish == env.FinishWrap:
		b.WriteString(" (goes round the ring again)")
	case st == env.Home:
		b.WriteString(" (its next move forward finishes it)")
	case (st == env.CornerC1 || st == env.CornerC2) && route == env.RouteOuter:
		b.WriteString(" (stays on the outer ring: no shortcut)")
	case st == env.CornerC1 || st == env.CornerC2:
		b.WriteString(" (takes the shortcut to the centre)")
	case st == env.Centre && route == env.RouteC1:
		b.WriteString(" (goes on down to 15, the long way)")
	case st == env.Centre:
		b.WriteString(" (takes the short way home)")
	}
	return b.String()
}

func (p *playSession) play(s *env.State) error {
	var buf [env.NumActions]env.Action
	for !s.IsOver() {
		if s.IsChance() {
			ev, err := s.SampleThrow()
			if err != nil {
				return err
			}
			p.rec.Add(ev, s)
			fmt.Fprintln(p.out, p.explainThrow(ev))
			continue
		}
		seat := s.ToMove()
		var a env.Action
		if seat == p.me {
			legal := s.LegalActions(buf[:0])
			if len(legal) == 1 {
				a = legal[0]
				fmt.Fprint(p.out, "(your only move) ")
			} else {
				var err error
				if a, err = p.ask(s, legal); err != nil {
					return err
				}
			}
		} else {
			var err error
			if a, err = opponentAct(p.agents, p.seed, s); err != nil {
				return err
			}
		}
		desc := p.describe(s, a)
		ev, err := s.Apply(a)
		if err != nil {
			return err
		}
		p.rec.Add(ev, s)
		fmt.Fprintf(p.out, "%s: %s.%s\n", p.who(seat), desc, p.explainMove(ev))
	}
	fmt.Fprintln(p.out)
	fmt.Fprint(p.out, p.board(s))
	if w := s.Winner(); w == p.me {
		fmt.Fprintf(p.out, "You win after %d decisions!\n", s.Decisions())
	} else {
		fmt.Fprintf(p.out, "%s wins after %d decisions.\n", p.who(w), s.Decisions())
	}
	return nil
}

// ask shows the board and the numbered moves and reads the player's choice.
func (p *playSession) ask(s *env.State, legal []env.Action) (env.Action, error) {
	fmt.Fprintln(p.out)
	fmt.Fprint(p.out, p.board(s))
	p.listMoves(s, legal)
	for {
		fmt.Fprintf(p.out, "Your move [1-%d]: ", len(legal))
		if !p.in.Scan() {
			if err := p.in.Err(); err != nil {
				return 0, err
			}
			fmt.Fprintln(p.out)
			return 0, fmt.Errorf("input ended before the game did")
		}
		line := strings.TrimSpace(strings.ToLower(p.in.Text()))
		switch line {
		case "q", "quit", "exit":
			return 0, errQuit
		case "b", "board":
			fmt.Fprint(p.out, p.board(s))
			p.listMoves(s, legal)
			continue
		case "h", "help", "?":
			fmt.Fprintln(p.out, "Type the number of a move and Enter. b: board and moves again, q: quit.")
			fmt.Fprintf(p.out, "On the board a stack is its owner's letter and height (%s2 = two of your pieces); stations are numbered as in the key.\n", env.SeatGlyph(p.me))
			continue
		case "":
			continue
		}
		n, err := strconv.Atoi(line)
		if err != nil || n < 1 || n > len(legal) {
			fmt.Fprintf(p.out, "%q is not a move: type a number from 1 to %d (h for help).\n", line, len(legal))
			continue
		}
		return legal[n-1], nil
	}
}

func (p *playSession) listMoves(s *env.State, legal []env.Action) {
	fmt.Fprintln(p.out, "Your moves:")
	for i, a := range legal {
		fmt.Fprintf(p.out, "  %2d) %s\n", i+1, p.describe(s, a))
	}
}

// explainThrow narrates a throw.
func (p *narrator) explainThrow(ev env.Event) string {
	seat := int(ev.Seat)
	var b strings.Builder
	if seat == p.me {
		fmt.Fprintf(&b, "You throw %s (%s)", ev.Throw, stepsText(ev.Throw))
	} else {
		fmt.Fprintf(&b, "%s throws %s (%s)", p.who(seat), ev.Throw, stepsText(ev.Throw))
	}
	switch {
	case ev.BonusThrow && ev.Discarded > 0:
		fmt.Fprintf(&b, ": it has no legal use and is spent, but %s earns another throw", ev.Throw)
	case ev.BonusThrow:
		fmt.Fprintf(&b, ": %s earns another throw", ev.Throw)
	case ev.TurnEnded:
		fmt.Fprintf(&b, ": no result has a legal use, %d discarded; %s", ev.Discarded, p.next(int(ev.NextSeat)))
	}
	b.WriteByte('.')
	return b.String()
}

// explainMove narrates what a move did beyond its description.
func (p *narrator) explainMove(ev env.Event) string {
	var parts []string
	if ev.Captured > 0 {
		victim := int(ev.CapturedSeat)
		owner := p.who(victim) + "'s"
		if victim == p.me {
			owner = "your"
		}
		parts = append(parts, fmt.Sprintf("Captured %d of %s pieces: back to hand", ev.Captured, owner))
	}
	if ev.Finished > 0 {
		parts = append(parts, fmt.Sprintf("%d piece(s) finished", ev.Finished))
	}
	if ev.Pushed > 0 {
		parts = append(parts, fmt.Sprintf("An obstacle on %d pushed it back %d to %d", ev.PushedFrom, ev.Pushed, ev.To))
	}
	if ev.PushCaptured > 0 {
		parts = append(parts, fmt.Sprintf("Captured %d of %s's pieces where it was pushed", ev.PushCaptured, p.who(int(ev.PushCapturedSeat))))
	}
	if ev.LosesTurn {
		parts = append(parts, "An obstacle: the next turn is lost")
	}
	switch {
	case ev.BonusThrow && p.noPool && ev.Throw.Bonus():
		parts = append(parts, fmt.Sprintf("%s earns another throw", ev.Throw))
	case ev.BonusThrow && (ev.Captured > 0 || ev.PushCaptured > 0):
		parts = append(parts, "Capture bonus: another throw")
	}
	if ev.TurnsMissed > 0 {
		parts = append(parts, fmt.Sprintf("%d turn(s) missed because of obstacles", ev.TurnsMissed))
	}
	if ev.Discarded > 0 && !ev.GameOver {
		parts = append(parts, fmt.Sprintf("%d result(s) left with no legal use, discarded", ev.Discarded))
	}
	if ev.GameOver {
		parts = append(parts, "Game over")
	} else if ev.TurnEnded {
		parts = append(parts, p.next(int(ev.NextSeat)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ". ") + "."
}

// next says whose turn it is.
func (p *narrator) next(seat int) string {
	if seat == p.me {
		return "Your turn"
	}
	return p.who(seat) + " to play"
}

func stepsText(t env.Throw) string {
	switch t.Steps() {
	case -1:
		return "1 step back"
	case 1:
		return "1 step"
	}
	return fmt.Sprintf("%d steps", t.Steps())
}
