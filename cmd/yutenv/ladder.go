package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/olekukonko/tablewriter"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/luck"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/stats"
	"github.com/yutenv/yutenv/vecenv"
)

func init() {
	commands["ladder"] = command{summary: "rate agents on a fixed Elo scale (random = 0) with intervals; resumable", run: runLadder}
}

const ladderArgs = `[--agents 'SPEC;SPEC;...'] [flags]

Plays a round robin between agents (by default every built-in agent at a few
budgets: the published scale of docs/BASELINES.md) and fits Bradley-Terry
ratings on the Elo scale by maximum likelihood, anchored at random = 0 (see
--anchor), with 95% Wald intervals from the observed Fisher information.
Every pair plays --games games with the same game seeds (game g uses seed
f(--seed, g/2), each seating once), seats balanced.

Finished games are saved to --state as they finish (atomic writes, at least
every few seconds and after every pair); rerunning the same command continues
where it stopped, and a state file of a different ladder (agents, rules,
games, seed or --luck) is refused. Ctrl-C saves and exits. Two-seat rules
only: a rating is a pairwise comparison, and a game of more seats is not one.

With --luck (on by default, as in yutenv eval) every game's throws are
valued, and a second fit rates the agents on their luck-adjusted results,
each pair counted as the binomial of as many games as give its adjusted
score's variance: the same scale, with intervals as wide as the luck left in
the games.`

// ladderAnchor is the default anchor of the scale.
const ladderAnchor = "random"

// errInterrupted is returned when a signal stopped the ladder.
var errInterrupted = errors.New("interrupted")

// ladderRating is one agent's line of the ladder.
type ladderRating struct {
	Agent string  `json:"agent"`
	Elo   float64 `json:"elo"`
	// Low and High bound the 95% interval of Elo; SE is its standard error
	// (relative to the anchor, whose own is 0).
	Low  float64 `json:"elo_low"`
	High float64 `json:"elo_high"`
	SE   float64 `json:"se"`
	// LuckElo and its interval and standard error are the fit of the
	// luck-adjusted results (absent with --luck off).
	LuckElo       *float64 `json:"luck_adjusted_elo,omitempty"`
	LuckLow       *float64 `json:"luck_adjusted_elo_low,omitempty"`
	LuckHigh      *float64 `json:"luck_adjusted_elo_high,omitempty"`
	LuckSE        *float64 `json:"luck_adjusted_se,omitempty"`
	Games         int      `json:"games"`
	Wins          int      `json:"wins"`
	WinRate       float64  `json:"win_rate"`
	MsPerDecision float64  `json:"ms_per_decision"`
}

// ladderReport is what "yutenv ladder --json FILE" writes (docs/FORMATS.md).
type ladderReport struct {
	Rules        string  `json:"rules"`
	Seed         uint64  `json:"seed"`
	GamesPerPair int     `json:"games_per_pair"`
	Anchor       string  `json:"anchor"`
	AnchorElo    float64 `json:"anchor_elo"`
	// Interval names how the intervals were computed.
	Interval string `json:"interval"`
	// Luck names the value function of the luck-adjusted fit (absent
	// with --luck off), and LuckInterval how its intervals were computed.
	Luck         string         `json:"luck,omitempty"`
	LuckInterval string         `json:"luck_interval,omitempty"`
	Agents       []string       `json:"agents"`
	Ratings      []ladderRating `json:"ratings"`
	Pairs        []evalMatch    `json:"pairs"`
	Version      string         `json:"version"`
}

// ladderInterval describes the intervals of the fit, in reports.
const ladderInterval = "95% Wald interval from the observed Fisher information of the Bradley-Terry MLE (one virtual draw per pair), relative to the anchor"

// ladderLuckInterval describes the intervals of the luck-adjusted fit.
const ladderLuckInterval = "the same fit of each pair's luck-adjusted score over its effective games (a binomial of the adjusted score's variance)"

type ladderFlags struct {
	games, workers int
	seed           uint64
	anchor         string
	anchorElo      float64
	jsonOut, png   string
	state          string
	luck           *luckCounter // nil: off
}

func runLadder(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ladder", ladderArgs, stderr)
	var f ladderFlags
	list := fs.StringArray("agents", nil, "agent specs, separated by ';' (or repeat the flag); default: the built-in scale")
	takesSpecs(fs, "agents")
	fs.IntVar(&f.games, "games", 400, "games per pair of agents (rounded up to even: each game seed is played in both seatings)")
	rulesSpec := fs.String("rules", "standard", "rules, as key=value pairs (two seats)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the games' throws and of the agents")
	fs.StringVar(&f.anchor, "anchor", ladderAnchor, "the agent the scale is anchored at (one of --agents)")
	fs.Float64Var(&f.anchorElo, "anchor-elo", 0, "the anchor's rating")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "games played at once")
	fs.StringVar(&f.jsonOut, "json", "", "write the ratings and pairs as JSON to FILE")
	fs.StringVar(&f.png, "png", "", "plot the ratings with their intervals as a PNG to FILE")
	fs.StringVar(&f.state, "state", "yutenv-ladder.state", "the resumable state FILE ('' keeps no state)")
	luckValue := fs.String("luck", "", luckUsage)
	prog := addProgressFlags(fs)
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	if err := prog.check(); err != nil {
		return err
	}
	specs, err := ladderSpecs(*list)
	if err != nil {
		return err
	}
	if len(*list) == 0 {
		specs = playable(specs, rules)
	}
	if rules.Players != 2 {
		return fmt.Errorf("a ladder needs two-seat rules (a rating compares two agents), got %d seats; compare agents pairwise with yutenv eval --a --b", rules.Players)
	}
	if f.games < 1 || f.games > 10_000_000 {
		return fmt.Errorf("--games must be 1..10000000, got %d", f.games)
	}
	if err := checkOutputs("--json", f.jsonOut, "--png", f.png, "--state", f.state); err != nil {
		return err
	}
	if f.workers < 1 || f.workers > 1024 {
		return fmt.Errorf("--workers must be 1..1024, got %d", f.workers)
	}
	if math.IsNaN(f.anchorElo) || math.Abs(f.anchorElo) > 1e6 {
		return fmt.Errorf("--anchor-elo must be a number in -1e6..1e6, got %v", f.anchorElo)
	}
	canon, err := agent.ParseSpec(f.anchor)
	if err != nil {
		return fmt.Errorf("--anchor: %w", err)
	}
	anchor := slices.Index(specs, canon.String())
	if anchor < 0 {
		return fmt.Errorf("--anchor %s is not one of the agents %q", canon, specs)
	}
	lc, err := newLuckCounter(*luckValue, rules)
	if err != nil {
		return err
	}
	key := ladderKey{Agents: specs, Rules: rules.String(), Games: (f.games + 1) / 2 * 2, Seed: f.seed, Luck: luck.NameOff}
	if lc != nil {
		key.Luck = lc.name
	}
	st, err := loadLadderState(f.state, key, fs.Changed("luck"), stderr)
	if err != nil {
		return err
	}
	if st.Key.Luck != key.Luck { // the state's own, kept
		if lc, err = newLuckCounter(st.Key.Luck, rules); err != nil {
			return err
		}
	}
	f.luck = lc
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := playLadder(ctx, rules, st, f, prog, stderr); err != nil {
		return err
	}
	rep, err := ladderFit(st, anchor, f.anchorElo)
	if err != nil {
		return err
	}
	printLadder(stdout, rep)
	if f.jsonOut != "" {
		if err := writeAtomic(f.jsonOut, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(rep)
		}); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if f.png != "" {
		if err := writeAtomic(f.png, func(w io.Writer) error { return plotLadder(w, rep) }); err != nil {
			return fmt.Errorf("--png: %w", err)
		}
	}
	return nil
}

// playable drops from the built-in scale's specs the agents that do not
// play rules (the shipped network az under rules it was not trained for),
// saying so on stderr.
func playable(specs []string, rules env.Rules) []string {
	out := specs[:0:0]
	for _, s := range specs {
		sp, err := agent.ParseSpec(s)
		if err == nil {
			err = nnet.CheckSpecRules(sp, rules)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ladder: leaving out %s: %v\n", s, err)
			continue
		}
		out = append(out, s)
	}
	return out
}

// ladderSpecs returns the canonical specs of --agents, or the built-in
// scale's, refusing duplicates.
func ladderSpecs(list []string) ([]string, error) {
	raw := agent.LadderSpecs()
	if len(list) > 0 {
		var err error
		if raw, err = agentList(list); err != nil {
			return nil, err
		}
	}
	out, err := canonicalSpecs(raw)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if slices.Contains(out[:i], out[i]) {
			return nil, fmt.Errorf("agent %s is listed twice", out[i])
		}
	}
	return out, nil
}

// ladderPairs returns every pair i < j of k agents, in a fixed order.
func ladderPairs(k int) [][2]int {
	var pairs [][2]int
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			pairs = append(pairs, [2]int{i, j})
		}
	}
	return pairs
}

// ladderJob is one game to play: pair p, game g.
type ladderJob struct{ p, g int }

// ladderResult is a played game, or its error.
type ladderResult struct {
	job  ladderJob
	game ladderGame
	err  error
}

// playLadder plays the games the state lacks, saving the state as they
// finish; a cancelled ctx saves and returns errInterrupted.
func playLadder(ctx context.Context, rules env.Rules, st *ladderState, f ladderFlags, prog *progressMode, stderr io.Writer) error {
	pairs := ladderPairs(len(st.Key.Agents))
	var jobs []ladderJob
	done := 0
	for p := range pairs {
		have := make(map[int64]bool, len(st.Pairs[p]))
		for _, g := range st.Pairs[p] {
			have[g[0]] = true
		}
		done += len(have)
		for g := 0; g < st.Key.Games; g++ {
			if !have[int64(g)] {
				jobs = append(jobs, ladderJob{p, g})
			}
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	if done > 0 {
		fmt.Fprintf(stderr, "ladder: continuing %s: %d of %d games done\n", f.state, done, done+len(jobs))
	}
	specs, seed := st.Key.Agents, st.Key.Seed
	stopc := make(chan struct{})
	defer close(stopc)
	results := vecenv.Play(f.workers, 0, len(jobs), stopc, func(pl *vecenv.Players, j int) ladderResult {
		job := jobs[j]
		r := ladderResult{job: job}
		a, err := pl.Get(0, specs[pairs[job.p][0]])
		if err != nil {
			r.err = err
			return r
		}
		b, err := pl.Get(1, specs[pairs[job.p][1]])
		if err != nil {
			r.err = err
			return r
		}
		aSeat := job.g % 2
		seats := []agent.Agent{b, b}
		seats[aSeat] = a
		game := vecenv.Game(rules, vecenv.GameSeed(seed, job.g/2), env.AnySeat, seats)
		var acc *luck.Accountant
		if f.luck != nil {
			if acc, r.err = f.luck.get(); r.err != nil {
				return r
			}
			defer f.luck.put(acc)
			game.OnThrow = acc.Throw
		}
		res, err := game.Play()
		if err != nil {
			r.err = err
			return r
		}
		won, lk := int64(0), int64(0)
		if res.Winner == aSeat {
			won = 1
		}
		if acc != nil {
			lk = int64(math.Round(acc.Luck()[aSeat] * ladderLuckScale))
		}
		r.game = ladderGame{int64(job.g), won, int64(res.SeatDecisions[aSeat]), int64(res.SeatDecisions[1-aSeat]),
			int64(res.SeatTime[aSeat]), int64(res.SeatTime[1-aSeat]), lk}
		return r
	})
	bar := prog.start(stderr, len(jobs), "ladder", "games")
	defer bar.Finish()
	left := make([]int, len(pairs))
	for _, j := range jobs {
		left[j.p]++
	}
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			if err := st.save(f.state); err != nil {
				return err
			}
			return fmt.Errorf("%w: %d of %d games saved in %s; rerun the same command to continue",
				errInterrupted, st.played(), len(pairs)*st.Key.Games, orDash(f.state))
		case d, ok := <-results:
			if !ok {
				return st.save(f.state)
			}
			r := d.Value
			if r.err != nil {
				_ = st.save(f.state)
				a, b := specs[pairs[r.job.p][0]], specs[pairs[r.job.p][1]]
				return fmt.Errorf("%s vs %s, game %d: %w", a, b, r.job.g, r.err)
			}
			st.Pairs[r.job.p] = append(st.Pairs[r.job.p], r.game)
			left[r.job.p]--
			bar.Add(1)
			if left[r.job.p] == 0 || time.Since(last) >= ladderSaveEvery {
				if err := st.save(f.state); err != nil {
					return err
				}
				last = time.Now()
			}
		}
	}
}

// ladderFit turns the finished games into the pairs' results and the fit.
func ladderFit(st *ladderState, anchor int, anchorElo float64) (ladderReport, error) {
	specs := st.Key.Agents
	pairs := ladderPairs(len(specs))
	matches := make([]evalMatch, len(pairs))
	lucky := st.Key.Luck != luck.NameOff
	for p, pr := range pairs {
		m := evalMatch{A: specs[pr[0]], B: specs[pr[1]], ChanceRate: 0.5}
		if lucky {
			m.Luck = st.Key.Luck
		}
		for _, g := range st.Pairs[p] {
			if lucky {
				m.cv.Add(luckFold(int(g[0]), 2), float64(2*g[1]-1), g.luck())
			}
			m.Games++
			m.WinsA += int(g[1])
			m.WinsB += 1 - int(g[1])
			m.outcomeA += float64(2*g[1] - 1)
			m.decA += int(g[2])
			m.decB += int(g[3])
			m.decisions += int(g[2] + g[3])
			m.timeA += time.Duration(g[4])
			m.timeB += time.Duration(g[5])
		}
		m.finish(2)
		matches[p] = m
	}
	ranks := rankAgents(specs, pairs, matches)
	wins, games := btCounts(len(specs), pairs, matches)
	fit, err := stats.BradleyTerry(wins, games, anchor, anchorElo, stats.Z95)
	if err != nil {
		return ladderReport{}, err
	}
	var luckFit []stats.Rating
	if lucky {
		wins, games := btLuckCounts(len(specs), pairs, matches)
		if luckFit, err = stats.BradleyTerry(wins, games, anchor, anchorElo, stats.Z95); err != nil {
			return ladderReport{}, fmt.Errorf("the luck-adjusted fit: %w", err)
		}
	}
	out := make([]ladderRating, len(ranks))
	for i, r := range ranks {
		k := slices.Index(specs, r.Agent)
		x := fit[k]
		out[i] = ladderRating{Agent: r.Agent, Elo: x.Elo, Low: x.Low, High: x.High, SE: x.SE,
			Games: r.Games, Wins: r.Wins, WinRate: r.WinRate, MsPerDecision: r.MsPerDecision}
		if luckFit != nil {
			y := luckFit[k]
			out[i].LuckElo, out[i].LuckLow, out[i].LuckHigh, out[i].LuckSE = &y.Elo, &y.Low, &y.High, &y.SE
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Elo > out[b].Elo })
	rep := ladderReport{Rules: st.Key.Rules, Seed: st.Key.Seed, GamesPerPair: st.Key.Games, Anchor: specs[anchor],
		AnchorElo: anchorElo, Interval: ladderInterval, Agents: specs, Ratings: out, Pairs: matches, Version: Version}
	if lucky {
		rep.Luck, rep.LuckInterval = st.Key.Luck, ladderLuckInterval
	}
	return rep, nil
}

// btLuckCounts is btCounts for the luck-adjusted results: each pair counts
// its adjusted score s of n' games won, n' chosen so that a binomial of n'
// games has the variance of the adjusted score (s(1-s) over the square of
// its standard error, luckSE: from its interval before that is bounded to
// a score's range), plus the same virtual
// draw. A pair without a usable adjusted result (fewer than two games, no
// variance left, or s clamped to 0 or 1) counts its raw games and wins.
func btLuckCounts(k int, pairs [][2]int, matches []evalMatch) ([]float64, [][]float64) {
	wins := make([]float64, k)
	games := make([][]float64, k)
	for i := range games {
		games[i] = make([]float64, k)
	}
	for p, pr := range pairs {
		m := matches[p]
		n, won := float64(m.Games), float64(m.WinsA)
		if m.LuckAdjustedScoreA != nil {
			s, se := *m.LuckAdjustedScoreA, m.luckSE
			if s > 0 && s < 1 && se > 0 {
				n = s * (1 - s) / (se * se)
				won = s * n
			}
		}
		i, j := pr[0], pr[1]
		wins[i] += won + 0.5
		wins[j] += n - won + 0.5
		games[i][j] += n + 1
		games[j][i] += n + 1
	}
	return wins, games
}

// printLadder writes the ladder's tables.
func printLadder(w io.Writer, rep ladderReport) {
	fmt.Fprintf(w, "rules %s, %d games per pair (seats balanced, the same game seeds for every pair), seed %d\n",
		rep.Rules, rep.GamesPerPair, rep.Seed)
	fmt.Fprintf(w, "Bradley-Terry Elo, %s = %+.0f; %s\n", rep.Anchor, rep.AnchorElo, rep.Interval)
	r := tablewriter.NewWriter(w)
	r.SetAutoFormatHeaders(false)
	r.SetAlignment(tablewriter.ALIGN_RIGHT)
	head := []string{"rank", "agent", "Elo", "95% interval", "games", "wins", "win rate", "ms/decision"}
	if rep.Luck != "" {
		head = slices.Insert(head, 4, "luck-adjusted", "95% interval")
	}
	r.SetHeader(head)
	for i, x := range rep.Ratings {
		row := []string{fmt.Sprint(i + 1), x.Agent, fmt.Sprintf("%+.0f", x.Elo), fmt.Sprintf("[%+.0f, %+.0f]", x.Low, x.High),
			fmt.Sprint(x.Games), fmt.Sprint(x.Wins), pct(x.WinRate), fmt.Sprintf("%.4g", x.MsPerDecision)}
		if x.LuckElo != nil {
			row = slices.Insert(row, 4, fmt.Sprintf("%+.0f", *x.LuckElo), fmt.Sprintf("[%+.0f, %+.0f]", *x.LuckLow, *x.LuckHigh))
		}
		r.Append(row)
	}
	r.Render()
	if rep.Luck != "" {
		fmt.Fprintf(w, "luck-adjusted: value %s; %s\n", rep.Luck, rep.LuckInterval)
	}
	fmt.Fprintln(w, "\npairs:")
	t := tablewriter.NewWriter(w)
	t.SetAutoFormatHeaders(false)
	t.SetAlignment(tablewriter.ALIGN_RIGHT)
	head = []string{"a", "b", "games", "wins a", "wins b", "win rate a", "95% Wilson"}
	if rep.Luck != "" {
		head = append(head, "luck-adjusted a", "95% interval", "variance ratio")
	}
	t.SetHeader(head)
	for _, m := range rep.Pairs {
		row := []string{m.A, m.B, fmt.Sprint(m.Games), fmt.Sprint(m.WinsA), fmt.Sprint(m.WinsB), pct(m.WinRateA),
			fmt.Sprintf("[%s, %s]", pct(m.WilsonLow), pct(m.WilsonHi))}
		if rep.Luck != "" {
			row = append(row, "", "", "")
			if m.LuckAdjustedScoreA != nil {
				row[7], row[8] = pct(*m.LuckAdjustedScoreA), fmt.Sprintf("[%s, %s]", pct(*m.LuckAdjustedLow), pct(*m.LuckAdjustedHigh))
			}
			if m.LuckVarianceRatio != nil {
				row[9] = fmt.Sprintf("%.2f", *m.LuckVarianceRatio)
			}
		}
		t.Append(row)
	}
	t.Render()
}
