package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"time"

	"github.com/olekukonko/tablewriter"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/stats"
	"github.com/yutenv/yutenv/vecenv"
)

func init() {
	commands["eval"] = command{summary: "measure agents against each other: win rates, intervals, Elo, speed", run: runEval}
}

const evalArgs = `--a SPEC --b SPEC [flags]
       yutenv eval --agents 'SPEC;SPEC;...' [flags]

Plays --games games between two agents (--a, --b) or, with --agents, between
every pair of a list (a round robin, --games per pair), on all cores, seat
orders balanced (the agent specs are below). Separate the specs of --agents
with ';' (quote it for the shell), or repeat --agents. Beside the raw win
rate it reports a luck-adjusted score: each game's luck (the throws' value
swings, --luck) times a coefficient fitted on the other half of the games
taken out of its outcome, or the raw result when that would not narrow the
interval (docs/BASELINES.md, "Luck-adjusted results").`

// evalMatch is the result of the games between two agents, and what
// "yutenv eval --json" prints for --a/--b (docs/BASELINES.md).
type evalMatch struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Games int    `json:"games"`
	// WinsA and WinsB count the games each agent won (with more than two
	// seats, A plays one seat and B every other one, and WinsB counts the
	// games any B seat won).
	WinsA int `json:"wins_a"`
	WinsB int `json:"wins_b"`
	// WinRateA is WinsA/Games, with its 95% Wilson score interval.
	WinRateA  float64 `json:"win_rate_a"`
	WilsonLow float64 `json:"win_rate_a_low"`
	WilsonHi  float64 `json:"win_rate_a_high"`
	// ChanceRate is A's expected win rate if both agents were equal: 1/seats.
	ChanceRate float64 `json:"chance_rate"`
	// Elo is A's rating minus B's from the win rate (two seats only), with
	// the interval mapped from the Wilson interval; null when infinite or
	// not defined.
	Elo     *float64 `json:"elo_diff"`
	EloLow  *float64 `json:"elo_diff_low"`
	EloHigh *float64 `json:"elo_diff_high"`
	// MeanOutcomeA is A's mean outcome in [-1, 1].
	MeanOutcomeA float64 `json:"mean_outcome_a"`
	// DecisionsPerGame counts the decisions of all seats; the per-agent
	// numbers count each agent's own.
	DecisionsPerGame  float64 `json:"decisions_per_game"`
	ADecisionsPerGame float64 `json:"a_decisions_per_game"`
	BDecisionsPerGame float64 `json:"b_decisions_per_game"`
	// MsPerDecisionA and B are the mean wall-clock milliseconds one call of
	// the agent took, over all its decisions (forced ones included).
	MsPerDecisionA float64 `json:"ms_per_decision_a"`
	MsPerDecisionB float64 `json:"ms_per_decision_b"`
	// The luck-adjusted result (--luck; absent with --luck off).
	evalLuck

	outcomeA   float64
	decisions  int
	decA, decB int
	timeA      time.Duration
	timeB      time.Duration
}

// evalRank is one line of a round robin's ranking.
type evalRank struct {
	Agent   string  `json:"agent"`
	Games   int     `json:"games"`
	Wins    int     `json:"wins"`
	WinRate float64 `json:"win_rate"`
	// Elo is from a Bradley-Terry fit of all games, the first agent of the
	// list anchored at 0 (one virtual draw per pair keeps it finite).
	Elo           float64 `json:"elo"`
	MsPerDecision float64 `json:"ms_per_decision"`
}

// evalReport is what "yutenv eval --json" prints for a round robin.
type evalReport struct {
	Rules   string      `json:"rules"`
	Seed    uint64      `json:"seed"`
	Workers int         `json:"workers"`
	Seconds float64     `json:"seconds"`
	Games   int         `json:"games"`
	Matches []evalMatch `json:"matches"`
	Ranking []evalRank  `json:"ranking,omitempty"`
	Version string      `json:"version"`
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", evalArgs, stderr)
	a := fs.String("a", "", "first agent spec")
	b := fs.String("b", "", "second agent spec")
	list := fs.StringArray("agents", nil, "agent specs for a round robin, separated by ';' (or repeat the flag)")
	takesSpecs(fs, "a", "b", "agents")
	games := fs.Int("games", 2000, "games per pair of agents (rounded up to a multiple of the seat count)")
	rulesSpec := fs.String("rules", "standard", "rules, as key=value pairs (e.g. players=3,end=rank)")
	seed := fs.Uint64("seed", 1, "seed of the games' throws and of the agents")
	firstGame := fs.Int("first-game", 0, "play games G.. of the run (a multiple of the seat count): one part of a distributed evaluation")
	workers := fs.Int("workers", runtime.NumCPU(), "games played at once")
	asJSON := fs.Bool("json", false, "print one JSON object instead of tables")
	luckValue := fs.String("luck", "", luckUsage)
	prog := addProgressFlags(fs)
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	specs, err := evalSpecs(*a, *b, *list)
	if err != nil {
		return err
	}
	if *games < 1 || *games > 10_000_000 {
		return fmt.Errorf("--games must be 1..10000000, got %d", *games)
	}
	if *workers < 1 || *workers > 1024 {
		return fmt.Errorf("--workers must be 1..1024, got %d", *workers)
	}
	roundRobin := len(*list) > 0
	if roundRobin && rules.Players != 2 {
		return fmt.Errorf("a round robin (--agents) needs two-seat rules; for %d seats compare agents pairwise with --a and --b", rules.Players)
	}
	n := rules.Players
	if *firstGame < 0 || *firstGame > 100_000_000 || *firstGame%n != 0 {
		return fmt.Errorf("--first-game must be a multiple of the seat count (%d) in 0..100000000, got %d", n, *firstGame)
	}
	perPair := (*games + n - 1) / n * n
	var pairs [][2]int
	for i := range specs {
		for j := i + 1; j < len(specs); j++ {
			pairs = append(pairs, [2]int{i, j})
		}
	}
	if err := prog.check(); err != nil {
		return err
	}
	lc, err := newLuckCounter(*luckValue, rules)
	if err != nil {
		return err
	}
	bar := prog.start(stderr, len(pairs)*perPair, "eval", "games")
	t0 := time.Now()
	matches, err := playMatches(rules, specs, pairs, *firstGame, perPair, *seed, *workers, lc, bar)
	bar.Finish()
	if err != nil {
		return err
	}
	rep := evalReport{Rules: rules.String(), Seed: *seed, Workers: *workers, Seconds: time.Since(t0).Seconds(),
		Games: len(pairs) * perPair, Matches: matches, Version: Version}
	if roundRobin {
		rep.Ranking = rankAgents(specs, pairs, matches)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if !roundRobin {
			m := struct {
				evalMatch
				Rules   string  `json:"rules"`
				Seed    uint64  `json:"seed"`
				Workers int     `json:"workers"`
				Seconds float64 `json:"seconds"`
				Version string  `json:"version"`
			}{matches[0], rep.Rules, rep.Seed, rep.Workers, rep.Seconds, Version}
			return enc.Encode(m)
		}
		return enc.Encode(rep)
	}
	printEval(stdout, rep, perPair, roundRobin)
	return nil
}

// evalSpecs checks the agent flags and returns the canonical specs.
func evalSpecs(a, b string, list []string) ([]string, error) {
	var raw []string
	switch {
	case len(list) > 0 && (a != "" || b != ""):
		return nil, fmt.Errorf("give either --a and --b or --agents, not both")
	case len(list) > 0:
		var err error
		if raw, err = agentList(list); err != nil {
			return nil, err
		}
	case a == "" || b == "":
		return nil, fmt.Errorf("give --a and --b (or --agents 'a;b;c'); see yutenv eval --help")
	default:
		raw = []string{a, b}
	}
	return canonicalSpecs(raw)
}

// agentList splits the --agents flags ('a;b;c', repeatable) into specs,
// at least two.
func agentList(list []string) ([]string, error) {
	var raw []string
	for _, l := range list {
		specs, err := agent.SplitSpecs(l)
		if err != nil {
			return nil, err
		}
		raw = append(raw, specs...)
	}
	if len(raw) < 2 {
		return nil, fmt.Errorf("--agents needs at least two specs, got %d", len(raw))
	}
	return raw, nil
}

// canonicalSpecs parses specs and returns their canonical spellings.
func canonicalSpecs(raw []string) ([]string, error) {
	out := make([]string, len(raw))
	for i, s := range raw {
		sp, err := agent.ParseSpec(s)
		if err != nil {
			return nil, err
		}
		out[i] = sp.String()
	}
	return out, nil
}

// evalGame is one game of a match and its result.
type evalGame struct {
	pair, game int
	res        agent.Result
	aSeat      int
	luckA      float64 // A's luck, when counted
	err        error
}

// playMatches plays games firstGame..firstGame+perPair-1 of every pair on
// workers goroutines (firstGame is a multiple of the seat count: a part of a
// longer run plays exactly that run's games). Game g of a pair is in group k = g/seats, whose games share the game seed
// vecenv.GameSeed(seed, k) = seed + k, the same in every pair (common random
// numbers); agent A sits in seat g%seats and B in all the others, and the
// agents are reseeded before every decision by vecenv.Game's rule. With lc
// not nil, the luck of every game's throws is counted with its value.
func playMatches(rules env.Rules, specs []string, pairs [][2]int, firstGame, perPair int, seed uint64, workers int, lc *luckCounter, bar *progress) ([]evalMatch, error) {
	n := rules.Players
	stop := make(chan struct{})
	defer close(stop)
	// Job j is game j%perPair of pair j/perPair.
	results := vecenv.Play(workers, 0, len(pairs)*perPair, stop, func(pl *vecenv.Players, j int) evalGame {
		p, g := j/perPair, firstGame+j%perPair
		out := evalGame{pair: p, game: g, aSeat: g % n}
		a, err := pl.Get(0, specs[pairs[p][0]])
		if err != nil {
			out.err = err
			return out
		}
		b, err := pl.Get(1, specs[pairs[p][1]])
		if err != nil {
			out.err = err
			return out
		}
		seats := make([]agent.Agent, n)
		for i := range seats {
			seats[i] = b
		}
		seats[out.aSeat] = a
		game := vecenv.Game(rules, vecenv.GameSeed(seed, g/n), env.AnySeat, seats)
		if lc == nil {
			out.res, out.err = game.Play()
			return out
		}
		acc, err := lc.get()
		if err != nil {
			out.err = err
			return out
		}
		defer lc.put(acc)
		game.OnThrow = acc.Throw
		out.res, out.err = game.Play()
		out.luckA = acc.Luck()[out.aSeat]
		return out
	})

	matches := make([]evalMatch, len(pairs))
	for p, pr := range pairs {
		matches[p] = evalMatch{A: specs[pr[0]], B: specs[pr[1]], ChanceRate: 1 / float64(n)}
		if lc != nil {
			matches[p].Luck = lc.name
		}
	}
	var firstErr error
	for d := range results {
		r := d.Value
		if r.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s vs %s, game %d: %w", matches[r.pair].A, matches[r.pair].B, r.game, r.err)
			}
			continue
		}
		m := &matches[r.pair]
		m.Games++
		if r.res.Winner == r.aSeat {
			m.WinsA++
		} else {
			m.WinsB++
		}
		m.outcomeA += r.res.Outcomes[r.aSeat]
		if lc != nil {
			m.cv.Add(luckFold(r.game, n), r.res.Outcomes[r.aSeat], r.luckA)
		}
		m.decisions += r.res.Decisions
		for seat := 0; seat < n; seat++ {
			if seat == r.aSeat {
				m.decA += r.res.SeatDecisions[seat]
				m.timeA += r.res.SeatTime[seat]
			} else {
				m.decB += r.res.SeatDecisions[seat]
				m.timeB += r.res.SeatTime[seat]
			}
		}
		bar.Add(1)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	for i := range matches {
		matches[i].finish(n)
	}
	return matches, nil
}

// finish computes the rates, intervals and means of a match.
func (m *evalMatch) finish(seats int) {
	g := float64(m.Games)
	m.WinRateA = float64(m.WinsA) / g
	m.WilsonLow, m.WilsonHi = stats.Wilson(m.WinsA, m.Games, stats.Z95)
	m.MeanOutcomeA = m.outcomeA / g
	m.DecisionsPerGame = float64(m.decisions) / g
	m.ADecisionsPerGame = float64(m.decA) / g
	m.BDecisionsPerGame = float64(m.decB) / g
	m.MsPerDecisionA = msPer(m.timeA, m.decA)
	m.MsPerDecisionB = msPer(m.timeB, m.decB)
	if seats == 2 {
		m.Elo, m.EloLow, m.EloHigh = finite(stats.EloDiff(m.WinRateA)), finite(stats.EloDiff(m.WilsonLow)), finite(stats.EloDiff(m.WilsonHi))
	}
	m.finishLuck(seats)
}

func msPer(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return d.Seconds() * 1000 / float64(n)
}

func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// btCounts returns the wins and games of k agents' round robin for a
// Bradley-Terry fit, with one virtual draw per pair (half a win each way),
// which keeps the ratings finite when an agent won or lost every game.
func btCounts(k int, pairs [][2]int, matches []evalMatch) ([]float64, [][]float64) {
	wins := make([]float64, k)
	games := make([][]float64, k)
	for i := range games {
		games[i] = make([]float64, k)
	}
	for p, pr := range pairs {
		m := matches[p]
		i, j := pr[0], pr[1]
		wins[i] += float64(m.WinsA) + 0.5
		wins[j] += float64(m.WinsB) + 0.5
		games[i][j] += float64(m.Games) + 1
		games[j][i] += float64(m.Games) + 1
	}
	return wins, games
}

// rankAgents fits Bradley-Terry strengths to a round robin's results and
// returns the agents by decreasing Elo.
func rankAgents(specs []string, pairs [][2]int, matches []evalMatch) []evalRank {
	k := len(specs)
	ranks := make([]evalRank, k)
	var dec, ms = make([]int, k), make([]time.Duration, k)
	for p, pr := range pairs {
		m := matches[p]
		i, j := pr[0], pr[1]
		ranks[i].Games += m.Games
		ranks[j].Games += m.Games
		ranks[i].Wins += m.WinsA
		ranks[j].Wins += m.WinsB
		dec[i] += m.decA
		dec[j] += m.decB
		ms[i] += m.timeA
		ms[j] += m.timeB
	}
	wins, games := btCounts(k, pairs, matches)
	elo := stats.BradleyTerryElo(wins, games)
	for i := range ranks {
		ranks[i].Agent = specs[i]
		ranks[i].WinRate = float64(ranks[i].Wins) / float64(ranks[i].Games)
		ranks[i].Elo = elo[i]
		ranks[i].MsPerDecision = msPer(ms[i], dec[i])
	}
	sort.SliceStable(ranks, func(a, b int) bool { return ranks[a].Elo > ranks[b].Elo })
	return ranks
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func eloText(x *float64) string {
	if x == nil {
		return "inf"
	}
	return fmt.Sprintf("%+.0f", *x)
}

// printEval writes the tables of an evaluation.
func printEval(w io.Writer, rep evalReport, perPair int, roundRobin bool) {
	fmt.Fprintf(w, "rules %s, %d games per pair (seat orders balanced), seed %d, %d workers, %.1f s\n",
		rep.Rules, perPair, rep.Seed, rep.Workers, rep.Seconds)
	t := tablewriter.NewWriter(w)
	t.SetAutoFormatHeaders(false)
	t.SetAlignment(tablewriter.ALIGN_RIGHT)
	if !roundRobin {
		m := rep.Matches[0]
		elo := "n/a (more than 2 seats)"
		if m.ChanceRate == 0.5 {
			elo = fmt.Sprintf("%s [%s, %s]", eloText(m.Elo), eloText(m.EloLow), eloText(m.EloHigh))
		}
		t.SetHeader([]string{"agent", "wins", "win rate", "95% Wilson", "Elo diff (95%)", "decisions/game", "ms/decision"})
		t.Append([]string{m.A, fmt.Sprint(m.WinsA), pct(m.WinRateA), fmt.Sprintf("[%s, %s]", pct(m.WilsonLow), pct(m.WilsonHi)),
			elo, fmt.Sprintf("%.1f", m.ADecisionsPerGame), fmt.Sprintf("%.4g", m.MsPerDecisionA)})
		lo, hi := 1-m.WilsonHi, 1-m.WilsonLow
		t.Append([]string{m.B, fmt.Sprint(m.WinsB), pct(1 - m.WinRateA), fmt.Sprintf("[%s, %s]", pct(lo), pct(hi)),
			"", fmt.Sprintf("%.1f", m.BDecisionsPerGame), fmt.Sprintf("%.4g", m.MsPerDecisionB)})
		t.Render()
		fmt.Fprintf(w, "%d games, %.1f decisions per game; %s wins %s (chance: %s)\n",
			m.Games, m.DecisionsPerGame, m.A, pct(m.WinRateA), pct(m.ChanceRate))
		printLuck(w, rep.Matches)
		return
	}
	t.SetHeader([]string{"a", "b", "wins a", "wins b", "win rate a", "95% Wilson", "Elo diff (95%)", "decisions/game"})
	for _, m := range rep.Matches {
		t.Append([]string{m.A, m.B, fmt.Sprint(m.WinsA), fmt.Sprint(m.WinsB), pct(m.WinRateA),
			fmt.Sprintf("[%s, %s]", pct(m.WilsonLow), pct(m.WilsonHi)),
			fmt.Sprintf("%s [%s, %s]", eloText(m.Elo), eloText(m.EloLow), eloText(m.EloHigh)),
			fmt.Sprintf("%.1f", m.DecisionsPerGame)})
	}
	t.Render()
	printLuck(w, rep.Matches)
	fmt.Fprintln(w, "\nranking (Bradley-Terry Elo, first agent of the list = 0):")
	r := tablewriter.NewWriter(w)
	r.SetAutoFormatHeaders(false)
	r.SetAlignment(tablewriter.ALIGN_RIGHT)
	r.SetHeader([]string{"rank", "agent", "games", "wins", "win rate", "Elo", "ms/decision"})
	for i, x := range rep.Ranking {
		r.Append([]string{fmt.Sprint(i + 1), x.Agent, fmt.Sprint(x.Games), fmt.Sprint(x.Wins), pct(x.WinRate),
			fmt.Sprintf("%+.0f", x.Elo), fmt.Sprintf("%.4g", x.MsPerDecision)})
	}
	r.Render()
}
