package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

func init() {
	commands["selfplay"] = command{summary: "play agents against each other: game records, or training datasets with --tier", run: runSelfplay}
}

const selfplayArgs = `[flags]

Without --tier: plays --games games and writes their records as JSON lines
(docs/FORMATS.md) to --out (a file, written atomically; '-' or nothing for
stdout). A folder as --out is refused before any game is played: a dataset
folder needs --tier.

With --tier: writes a training dataset to the directory --out: every
decision as (observation, mask, action, search policy, value target, seat,
game, decision index) in .npz shards with the game records alongside and a
manifest.json (docs/DATASETS.md). Shards are written atomically; a killed run
resumes where it stopped when run again with the same flags, and a larger
--games extends a finished dataset.

With --first-game G (a multiple of --shard-games) the dataset directory holds
games G .. G+games-1 only, its shards numbered as in a dataset of all games
from 0: the part of a distributed run (yutenv.az.distributed in Python) that
one worker plays; merged parts are the dataset one run would have written.

--agents gives one spec per seat, separated by ';' (or commas: option items
hold '=', agent names never do), or one spec for every seat. A search with
playout cap randomization (option fast=N, e.g. mcts:64,fast=8) makes the
dataset also record every row's root visits and policy_target (0 for the
rows of its fast searches, whose policy is not a training target).`

// selfplayConfig is what a run needs to play its games.
type selfplayConfig struct {
	rules   env.Rules
	specs   []string // canonical spec of every seat
	seed    uint64
	workers int
	enc     *obs.Encoder // nil: records only
	// capped: some seat searches with playout cap randomization (fast=N),
	// so a dataset records visits and every row's policy_target.
	capped bool
}

func runSelfplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("selfplay", selfplayArgs, stderr)
	agentsFlag := fs.String("agents", "random", "agent spec of every seat (';'-separated), or one spec for all seats")
	takesSpecs(fs, "agents")
	games := fs.Int("games", 100, "games to play (with --tier: the dataset's total, counting games already written)")
	seed := fs.Uint64("seed", 1, "seed of the run: every game's and agent's seed derives from it")
	rulesSpec := fs.String("rules", "standard", "rules, as key=value pairs (e.g. players=3)")
	out := fs.String("out", "-", "records file ('-' = stdout); with --tier, the dataset directory")
	tierName := fs.String("tier", "", "observation tier (compact, tactical, planes): write a dataset instead of records")
	shardGames := fs.Int("shard-games", 100, "games per dataset shard")
	firstGame := fs.Int("first-game", 0, "with --tier: the first game of the dataset (one part of a distributed run)")
	workers := fs.Int("workers", runtime.NumCPU(), "games played at once")
	prog := addProgressFlags(fs)
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	specs, capped, err := seatSpecs(*agentsFlag, rules.Players)
	if err != nil {
		return err
	}
	if err := prog.check(); err != nil {
		return err
	}
	switch {
	case *games < 1 || *games > 100_000_000:
		return fmt.Errorf("--games must be 1..100000000, got %d", *games)
	case *workers < 1 || *workers > 1024:
		return fmt.Errorf("--workers must be 1..1024, got %d", *workers)
	case *shardGames < 1 || *shardGames > 1_000_000:
		return fmt.Errorf("--shard-games must be 1..1000000, got %d", *shardGames)
	case *firstGame < 0 || *firstGame > 100_000_000 || *firstGame%*shardGames != 0:
		return fmt.Errorf("--first-game must be a multiple of --shard-games in 0..100000000, got %d", *firstGame)
	case *firstGame != 0 && *tierName == "":
		return fmt.Errorf("--first-game needs --tier (it makes one part of a dataset)")
	}
	cfg := selfplayConfig{rules: rules, specs: specs, seed: *seed, workers: *workers, capped: capped}
	if *tierName == "" {
		if err := checkRecordsOut(*out); err != nil {
			return err
		}
		return selfplayRecords(cfg, *games, *out, stdout, stderr, prog)
	}
	tier, err := obs.ParseTier(*tierName)
	if err != nil {
		return err
	}
	if *out == "-" || *out == "" {
		return fmt.Errorf("--tier writes a dataset directory: give it with --out DIR")
	}
	if cfg.enc, err = obs.NewEncoder(rules, tier); err != nil {
		return err
	}
	return writeDataset(cfg, *firstGame, *games, *shardGames, *out, stdout, stderr, prog)
}

// checkRecordsOut refuses, before any game is played, an --out that cannot
// be the records file of a run without --tier: a folder (an existing one, or
// a name ending in a path separator, which reads as one), or a file in a
// folder that does not exist.
func checkRecordsOut(out string) error {
	if out == "-" || out == "" {
		return nil
	}
	st, err := os.Stat(out)
	isDir := err == nil && st.IsDir()
	if isDir || strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		return fmt.Errorf("--out %s names a folder, but without --tier --out is the file the game records are written to "+
			"(JSON lines, docs/FORMATS.md); to write a training dataset folder add --tier compact, tactical or planes "+
			"(docs/DATASETS.md), or give a file name such as --out games.jsonl", out)
	}
	parent := filepath.Dir(out)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fmt.Errorf("--out %s: the folder %s does not exist (without --tier, --out is the records file; create its folder first)", out, parent)
	}
	return nil
}

// seatSpecs turns --agents into one canonical spec per seat, and says
// whether any seat searches with playout cap randomization (fast=N).
func seatSpecs(list string, seats int) (specs []string, capped bool, err error) {
	raw, err := agent.SplitSpecs(list)
	if err != nil {
		return nil, false, err
	}
	if len(raw) == 1 {
		for len(raw) < seats {
			raw = append(raw, raw[0])
		}
	}
	if len(raw) != seats {
		return nil, false, fmt.Errorf("--agents has %d specs for %d seats: give one per seat or one for all", len(raw), seats)
	}
	specs = make([]string, seats)
	for i, s := range raw {
		sp, err := agent.ParseSpec(s)
		if err != nil {
			return nil, false, err
		}
		specs[i] = sp.String()
		capped = capped || sp.Fast > 0
	}
	return specs, capped, nil
}

// spGame is one finished game and, for datasets, its decisions.
type spGame struct {
	rec  *env.Record
	cols *dataset.Columns
	err  error
}

// selfplayGames plays games [first, last) on cfg.workers goroutines and sends
// them to the returned channel in any order; closing stop ends the run
// early. Game g has the game seed vecenv.GameSeed(seed, g) = seed + g and
// its agents are reseeded before every decision by vecenv.Game's rule, so a
// game is the same whoever plays it and whenever (a time budget in a spec
// aside), and is the game env g of a server batch reset with the same seed
// plays given the same agents.
func selfplayGames(cfg selfplayConfig, first, last int, stop <-chan struct{}) <-chan vecenv.Done[spGame] {
	return vecenv.Play(cfg.workers, first, last, stop, func(p *vecenv.Players, g int) spGame {
		seats := make([]agent.Agent, len(cfg.specs))
		for i, spec := range cfg.specs {
			a, err := p.Get(i, spec)
			if err != nil {
				return spGame{err: err}
			}
			seats[i] = a
		}
		var pg spGame
		game := vecenv.Game(cfg.rules, vecenv.GameSeed(cfg.seed, g), env.AnySeat, seats)
		game.Record = true
		if cfg.enc != nil {
			pg.cols = cfg.newColumns()
			buf := make([]float32, cfg.enc.Size())
			game.OnDecision = func(s *env.State, a env.Action, st agent.Stats) error {
				pg.cols.AddTargetDecision(cfg.enc, buf, s, a, st, g, !st.Fast)
				return nil
			}
			game.OnEnd = func(s *env.State) error {
				pg.cols.EndGame(cfg.enc, s)
				return nil
			}
		}
		res, err := game.Play()
		pg.rec, pg.err = res.Record, err
		return pg
	})
}

// newColumns returns empty dataset columns for cfg's games: with visits and
// policy targets when a seat searches with playout cap randomization.
func (cfg selfplayConfig) newColumns() *dataset.Columns {
	if cfg.capped {
		return dataset.NewTargetColumns(cfg.enc.Size())
	}
	return dataset.NewColumns(cfg.enc.Size())
}

// selfplayInOrder calls emit on the games in game order from first on and
// stops at the first error (a game's or emit's).
func selfplayInOrder(results <-chan vecenv.Done[spGame], first int, stop chan struct{}, emit func(g int, pg spGame) error) error {
	return vecenv.InOrder(results, first, stop, func(g int, pg spGame) error {
		if pg.err != nil {
			return fmt.Errorf("game %d: %w", g, pg.err)
		}
		return emit(g, pg)
	})
}

// selfplayRecords plays games and writes their records in game order.
func selfplayRecords(cfg selfplayConfig, games int, out string, stdout, stderr io.Writer, prog *progressMode) error {
	var w io.Writer = stdout
	var af *userfile.Atomic
	if out != "-" && out != "" {
		var err error
		if af, err = userfile.CreateAtomic(out); err != nil {
			return err
		}
		defer af.Abort()
		w = af
	}
	bw := bufio.NewWriter(w)
	bar := prog.start(stderr, games, "selfplay", "games")
	stop := make(chan struct{})
	err := selfplayInOrder(selfplayGames(cfg, 0, games, stop), 0, stop, func(_ int, pg spGame) error {
		bar.Add(1)
		_, err := pg.rec.WriteTo(bw)
		return err
	})
	bar.Finish()
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if af != nil {
		return af.Commit()
	}
	return nil
}

// writeDataset plays the games a dataset of games [firstGame,
// firstGame+games) still lacks and writes its shards.
func writeDataset(cfg selfplayConfig, firstGame, games, shardGames int, dir string, stdout, stderr io.Writer, prog *progressMode) error {
	sp := cfg.enc.Space()
	m, err := dataset.Open(dir, dataset.Config{Rules: cfg.rules, Agents: cfg.specs, Space: sp, Seed: cfg.seed, SeedScheme: vecenv.SeedScheme,
		ShardGames: shardGames, Software: "yutenv " + Version, FirstGame: firstGame, Visits: cfg.capped, PolicyTargets: cfg.capped}, games)
	if err != nil {
		return err
	}
	// Games [first, last) are still to play (global game indices).
	first, last := m.FirstGame+m.Games, m.FirstGame+games
	if first >= last {
		fmt.Fprintf(stdout, "%s: complete, %d games, %d decisions in %d shards\n", dir, m.Games, m.Decisions, len(m.Shards))
		return nil
	}
	if m.Games > 0 {
		fmt.Fprintf(stderr, "%s: resuming after %d games in %d shards\n", dir, m.Games, len(m.Shards))
	}
	bar := prog.start(stderr, last-first, "selfplay", "games")
	t0 := time.Now()
	played := m.Games
	shard := cfg.newColumns()
	var recs []*env.Record
	shardEnd := func(start int) int { return min(start+m.ShardGames, last) }
	shardStart, end := first, shardEnd(first)
	stop := make(chan struct{})
	err = selfplayInOrder(selfplayGames(cfg, first, last, stop), first, stop, func(g int, pg spGame) error {
		shard.Append(pg.cols)
		recs = append(recs, pg.rec)
		bar.Add(1)
		if g+1 < end {
			return nil
		}
		if err := m.AddShard(dir, shardStart, shard, recs); err != nil {
			return err
		}
		shard, recs = cfg.newColumns(), nil
		shardStart, end = g+1, shardEnd(g+1)
		return nil
	})
	bar.Finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d games, %d decisions in %d shards (%d games played in %.1f s)\n",
		dir, m.Games, m.Decisions, len(m.Shards), m.Games-played, time.Since(t0).Seconds())
	return nil
}
