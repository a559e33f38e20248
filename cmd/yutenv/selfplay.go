package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

func init() {
	commands["selfplay"] = command{summary: "play agents against each other: game records, or training datasets with --tier", run: runSelfplay}
}

const selfplayArgs = `[flags]

Without --tier: plays --games games and writes their records as JSON lines
(docs/FORMATS.md) to --out (a file, written atomically; '-' or nothing for
stdout).

With --tier: writes a training dataset to the directory --out: every
decision as (observation, mask, action, search policy, value target, seat,
game, decision index) in .npz shards with the game records alongside and a
dsManifest (docs/DATASETS.md). Shards are written atomically; a killed run
resumes where it stopped when run again with the same flags, and a larger
--games extends a finished dataset.

--agents gives one spec per seat, separated by ';' (or commas: option items
hold '=', agent names never do), or one spec for every seat.`

// errDataset is wrapped by errors about an existing dataset directory.
var errDataset = errors.New("dataset")

// selfplayConfig is what a run needs to play its games.
type selfplayConfig struct {
	rules   env.Rules
	specs   []string // canonical spec of every seat
	seed    uint64
	workers int
	enc     *obs.Encoder // nil: records only
}

func runSelfplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("selfplay", selfplayArgs, stderr)
	agentsFlag := fs.String("agents", "random", "agent spec of every seat (';'-separated), or one spec for all seats")
	games := fs.Int("games", 100, "games to play (with --tier: the dataset's total, counting games already written)")
	seed := fs.Uint64("seed", 1, "seed of the run: every game's and agent's seed derives from it")
	rulesSpec := fs.String("rules", "standard", "rules, as key=value pairs (e.g. players=3)")
	out := fs.String("out", "-", "records file ('-' = stdout), or with --tier the dataset directory")
	tierName := fs.String("tier", "", "observation tier (compact, tactical, planes): write a dataset instead of records")
	shardGames := fs.Int("shard-games", 100, "games per dataset shard")
	workers := fs.Int("workers", runtime.NumCPU(), "games played at once")
	quiet := fs.Bool("quiet", false, "no progress bar")
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	specs, err := seatSpecs(*agentsFlag, rules.Players)
	if err != nil {
		return err
	}
	switch {
	case *games < 1 || *games > 100_000_000:
		return fmt.Errorf("--games must be 1..100000000, got %d", *games)
	case *workers < 1 || *workers > 1024:
		return fmt.Errorf("--workers must be 1..1024, got %d", *workers)
	case *shardGames < 1 || *shardGames > 1_000_000:
		return fmt.Errorf("--shard-games must be 1..1000000, got %d", *shardGames)
	}
	cfg := selfplayConfig{rules: rules, specs: specs, seed: *seed, workers: *workers}
	if *tierName == "" {
		return selfplayRecords(cfg, *games, *out, stdout, stderr, *quiet)
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
	return writeDataset(cfg, *games, *shardGames, *out, stdout, stderr, *quiet)
}

// seatSpecs turns --agents into one canonical spec per seat.
func seatSpecs(list string, seats int) ([]string, error) {
	raw, err := agent.SplitSpecs(list)
	if err != nil {
		return nil, err
	}
	if len(raw) == 1 {
		for len(raw) < seats {
			raw = append(raw, raw[0])
		}
	}
	if len(raw) != seats {
		return nil, fmt.Errorf("--agents has %d specs for %d seats: give one per seat or one for all", len(raw), seats)
	}
	out := make([]string, seats)
	for i, s := range raw {
		sp, err := agent.ParseSpec(s)
		if err != nil {
			return nil, err
		}
		out[i] = sp.String()
	}
	return out, nil
}

// spGame is one finished game and, for datasets, its decisions.
type spGame struct {
	index int
	rec   *env.Record
	cols  *dsColumns
	err   error
}

// dsColumns holds the dataset rows of one game or one shard.
type dsColumns struct {
	obsSize     int
	obs         []float32
	mask        []uint8
	action      []int32
	policy      []float32
	value       []float32
	searchValue []float32
	seat        []int8
	game        []int64
	decision    []int32
	rows        int
}

// appendRows adds every row of o.
func (c *dsColumns) appendRows(o *dsColumns) {
	c.obs = append(c.obs, o.obs...)
	c.mask = append(c.mask, o.mask...)
	c.action = append(c.action, o.action...)
	c.policy = append(c.policy, o.policy...)
	c.value = append(c.value, o.value...)
	c.searchValue = append(c.searchValue, o.searchValue...)
	c.seat = append(c.seat, o.seat...)
	c.game = append(c.game, o.game...)
	c.decision = append(c.decision, o.decision...)
	c.rows += o.rows
}

// selfplayGames plays games [first, last) on cfg.workers goroutines and sends
// them to the returned channel in any order; closing stop ends the run
// early. Game g's throws come from mixSeed(seed, 0, g) and seat i's agent
// from mixSeed(seed, 1, g, i), so a game is the same whoever plays it and
// whenever (a time budget in a spec aside).
func selfplayGames(cfg selfplayConfig, first, last int, stop <-chan struct{}) <-chan spGame {
	jobs := make(chan int)
	results := make(chan spGame, cfg.workers)
	var wg sync.WaitGroup
	for w := 0; w < cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seats := make([]agent.Agent, len(cfg.specs))
			var err error
			for i, spec := range cfg.specs {
				if seats[i], err = agent.New(spec, 0); err != nil { // specs were checked: cannot happen
					results <- spGame{index: first, err: err}
					return
				}
			}
			var obsBuf []float32
			if cfg.enc != nil {
				obsBuf = make([]float32, cfg.enc.Size())
			}
			for g := range jobs {
				for i, a := range seats {
					sd := mixSeed(cfg.seed, 1, uint64(g), uint64(i))
					if r, ok := a.(agent.Reseeder); ok {
						r.Reseed(sd) // keeps the agent's buffers
					} else if seats[i], err = agent.New(cfg.specs[i], sd); err != nil {
						break
					}
				}
				if err != nil {
					results <- spGame{index: g, err: err}
					return
				}
				pg := spGame{index: g}
				game := agent.Game{Rules: cfg.rules, Seed: mixSeed(cfg.seed, 0, uint64(g)), Start: env.AnySeat, Seats: seats, Record: true}
				if cfg.enc != nil {
					pg.cols = &dsColumns{obsSize: cfg.enc.Size()}
					game.OnDecision = func(s *env.State, a env.Action, st agent.Stats) error {
						pg.cols.addDecision(cfg.enc, obsBuf, s, a, st, g)
						return nil
					}
				}
				res, err := game.Play()
				pg.rec, pg.err = res.Record, err
				if err == nil && pg.cols != nil {
					for i := range pg.cols.value {
						pg.cols.value[i] = float32(res.Outcomes[pg.cols.seat[i]])
					}
				}
				select {
				case results <- pg:
				case <-stop:
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for g := first; g < last; g++ {
			select {
			case jobs <- g:
			case <-stop:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	return results
}

// addDecision appends the row of one decision (its value is filled in
// when the game ends).
func (c *dsColumns) addDecision(enc *obs.Encoder, buf []float32, s *env.State, a env.Action, st agent.Stats, game int) {
	enc.Encode(s, s.ToMove(), buf)
	c.obs = append(c.obs, buf...)
	var mask [env.NumActions]uint8
	s.Mask(mask[:])
	c.mask = append(c.mask, mask[:]...)
	c.action = append(c.action, int32(a))
	if st.Policy != nil {
		c.policy = append(c.policy, st.Policy...)
	} else { // no search: the played action, one-hot
		var onehot [env.NumActions]float32
		onehot[a] = 1
		c.policy = append(c.policy, onehot[:]...)
	}
	c.value = append(c.value, 0)
	c.searchValue = append(c.searchValue, float32(st.Value))
	c.seat = append(c.seat, int8(s.ToMove()))
	c.game = append(c.game, int64(game))
	c.decision = append(c.decision, int32(s.Decisions()))
	c.rows++
}

// selfplayInOrder receives games in any order and calls emit on them in index
// order from first on. It stops at the first error (a game's or emit's).
func selfplayInOrder(results <-chan spGame, first int, stop chan struct{}, emit func(spGame) error) error {
	pending := map[int]spGame{}
	next := first
	var firstErr error
	for pg := range results {
		if firstErr != nil {
			continue
		}
		if pg.err != nil {
			firstErr = fmt.Errorf("game %d: %w", pg.index, pg.err)
			close(stop)
			continue
		}
		pending[pg.index] = pg
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if err := emit(p); err != nil {
				firstErr = err
				close(stop)
				break
			}
		}
	}
	return firstErr
}

// selfplayRecords plays games and writes their records in game order.
func selfplayRecords(cfg selfplayConfig, games int, out string, stdout, stderr io.Writer, quiet bool) error {
	var w io.Writer = stdout
	var af *atomicOut
	if out != "-" && out != "" {
		var err error
		if af, err = createAtomic(out); err != nil {
			return err
		}
		defer af.abort()
		w = af
	}
	bw := bufio.NewWriter(w)
	var bar *progressbar.ProgressBar
	if !quiet {
		bar = newProgress(stderr, games, "selfplay", "games")
	}
	stop := make(chan struct{})
	err := selfplayInOrder(selfplayGames(cfg, 0, games, stop), 0, stop, func(pg spGame) error {
		if bar != nil {
			_ = bar.Add(1)
		}
		_, err := pg.rec.WriteTo(bw)
		return err
	})
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if af != nil {
		return af.commit()
	}
	return nil
}

// atomicOut is a file written under a temporary name and renamed into
// place by commit, so readers see the whole file or nothing.
type atomicOut struct {
	*os.File
	path string
	done bool
}

// tmpSuffix marks files being written; a run removes stale ones it finds.
const tmpSuffix = ".tmp"

func createAtomic(path string) (*atomicOut, error) {
	f, err := os.Create(path + tmpSuffix)
	if err != nil {
		return nil, err
	}
	return &atomicOut{File: f, path: path}, nil
}

// commit flushes the file to disk and renames it into place.
func (a *atomicOut) commit() error {
	if err := a.Sync(); err != nil {
		return err
	}
	if err := a.Close(); err != nil {
		return err
	}
	if err := os.Rename(a.Name(), a.path); err != nil {
		return err
	}
	a.done = true
	return syncDir(filepath.Dir(a.path))
}

// abort removes the temporary file unless commit succeeded.
func (a *atomicOut) abort() {
	if !a.done {
		a.Close()
		os.Remove(a.Name())
	}
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// writeDataset plays the games a dataset still lacks and writes its shards.
func writeDataset(cfg selfplayConfig, games, shardGames int, dir string, stdout, stderr io.Writer, quiet bool) error {
	m, err := dsOpen(dir, cfg, games, shardGames)
	if err != nil {
		return err
	}
	first := m.Games
	if first >= games {
		fmt.Fprintf(stdout, "%s: complete, %d games, %d decisions in %d shards\n", dir, m.Games, m.Decisions, len(m.Shards))
		return nil
	}
	if first > 0 {
		fmt.Fprintf(stderr, "%s: resuming after %d games in %d shards\n", dir, m.Games, len(m.Shards))
	}
	var bar *progressbar.ProgressBar
	if !quiet {
		bar = newProgress(stderr, games-first, "selfplay", "games")
	}
	t0 := time.Now()
	shard := &dsColumns{obsSize: cfg.enc.Size()}
	var recs []*env.Record
	shardEnd := func(start int) int { return min(start+m.ShardGames, games) }
	shardStart, end := first, shardEnd(first)
	stop := make(chan struct{})
	err = selfplayInOrder(selfplayGames(cfg, first, games, stop), first, stop, func(pg spGame) error {
		shard.appendRows(pg.cols)
		recs = append(recs, pg.rec)
		if bar != nil {
			_ = bar.Add(1)
		}
		if pg.index+1 < end {
			return nil
		}
		if err := m.addShard(dir, shardStart, shard, recs); err != nil {
			return err
		}
		shard, recs = &dsColumns{obsSize: cfg.enc.Size()}, nil
		shardStart, end = pg.index+1, shardEnd(pg.index+1)
		return nil
	})
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d games, %d decisions in %d shards (%d games played in %.1f s)\n",
		dir, m.Games, m.Decisions, len(m.Shards), m.Games-first, time.Since(t0).Seconds())
	return nil
}
