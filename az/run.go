package az

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// Errors a run reports; the server maps them to protocol codes.
var (
	// ErrConfig is wrapped by every error about a Config.
	ErrConfig = errors.New("self-play config")
	// ErrAnswer is wrapped by every error about an answer to a batch
	// (wrong length, a value outside [-1, 1], an answer without a batch).
	ErrAnswer = errors.New("evaluator answer")
	// ErrTimeout: the evaluator did not answer a batch within EvalTimeout;
	// the run was cancelled.
	ErrTimeout = errors.New("evaluator timeout")
	// ErrClosed: the run was closed (or failed before) and plays no more.
	ErrClosed = errors.New("self-play run closed")
)

// AnswerError is a refused answer: Field is "priors", "values" or
// "priors/values" (both missing or both unexpected). It wraps ErrAnswer.
type AnswerError struct{ Field, Msg string }

// Error returns "ErrAnswer: field: msg".
func (e *AnswerError) Error() string { return fmt.Sprintf("%v: %s: %s", ErrAnswer, e.Field, e.Msg) }

// Unwrap returns ErrAnswer.
func (e *AnswerError) Unwrap() error { return ErrAnswer }

// Limits on a Config (they keep a request from outside bounded).
const (
	MaxInFlight = 4096
	MaxGames    = 100_000_000
	MaxSims     = agent.MaxN
)

// Config is one network-guided self-play run.
type Config struct {
	Rules env.Rules
	Tier  obs.Tier
	// Sims is the MCTS simulations per decision; C the PUCT constant.
	Sims int
	C    float64
	// DirichletAlpha and DirichletFrac: root noise (alpha 0: none).
	DirichletAlpha, DirichletFrac float64
	// TempMoves: the first TempMoves decisions of every game are sampled in
	// proportion to visits (temperature 1), the rest are the most visited.
	TempMoves int
	// Gumbel searches with Gumbel root selection and sequential halving
	// over GumbelM root actions (0: agent.DefaultGumbelM), and records the
	// improved policy of completed Q-values as the policy target
	// (agent.MCTSOptions.Gumbel). The Gumbel numbers explore: Dirichlet
	// noise and TempMoves must be off; C is not used.
	Gumbel  bool
	GumbelM int
	// FastSims > 0 turns on playout cap randomization (pcr.go): each
	// decision is a full search of Sims with probability FullProb, drawn
	// by FullSearch from its agent seed, and otherwise a fast search of
	// FastSims simulations without root noise or temperature whose row has
	// no policy target (the dataset's array policy_target). 0: off.
	FastSims int
	FullProb float64
	// Seed: game g has the game seed vecenv.GameSeed(Seed, g) = Seed+g,
	// and the search that moves seat j at decision d is reseeded with
	// vecenv.AgentSeed(Seed+g, j, d): yutenv's one seed scheme, as for
	// `yutenv selfplay --seed`.
	Seed uint64
	// FirstGame is the first game the run plays: it plays games
	// FirstGame..FirstGame+Games-1 and writes them to a dataset holding
	// that range (dataset.Config.FirstGame; shards named as in one whole
	// run). It must be a multiple of ShardGames: one part of a distributed
	// run, as `yutenv selfplay --first-game`.
	FirstGame int
	// Games is the number of games; InFlight how many are played at once
	// (a batch holds at most one leaf per game in flight); MaxBatch caps a
	// batch (0: InFlight).
	Games, InFlight, MaxBatch int
	// EvalTimeout cancels the run when a batch is not answered in time (0: never).
	EvalTimeout time.Duration
	// Out is the dataset directory (package dataset, with visits); ShardGames its games per shard.
	Out        string
	ShardGames int
	// Software is recorded in the manifest.
	Software string
}

// check validates c and fills the defaults.
func (c *Config) check() error {
	if c.MaxBatch == 0 {
		c.MaxBatch = c.InFlight
	}
	if c.ShardGames == 0 {
		c.ShardGames = 100
	}
	if c.Gumbel && c.GumbelM == 0 {
		c.GumbelM = agent.DefaultGumbelM
	}
	switch {
	case c.Sims < 1 || c.Sims > MaxSims:
		return fmt.Errorf("%w: sims must be 1..%d, got %d", ErrConfig, MaxSims, c.Sims)
	case math.IsNaN(c.C) || c.C < 0 || c.C > agent.MaxC:
		return fmt.Errorf("%w: c must be 0..%g, got %g", ErrConfig, agent.MaxC, c.C)
	case c.FirstGame < 0 || c.FirstGame > MaxGames || c.FirstGame%c.ShardGames != 0:
		return fmt.Errorf("%w: first_game must be a multiple of shard_games %d in 0..%d, got %d", ErrConfig, c.ShardGames, MaxGames, c.FirstGame)
	case c.Games < 1 || c.Games > MaxGames:
		return fmt.Errorf("%w: games must be 1..%d, got %d", ErrConfig, MaxGames, c.Games)
	case c.InFlight < 1 || c.InFlight > MaxInFlight:
		return fmt.Errorf("%w: games_in_flight must be 1..%d, got %d", ErrConfig, MaxInFlight, c.InFlight)
	case c.MaxBatch < 1 || c.MaxBatch > MaxInFlight:
		return fmt.Errorf("%w: max_batch must be 1..%d, got %d", ErrConfig, MaxInFlight, c.MaxBatch)
	case c.TempMoves < 0:
		return fmt.Errorf("%w: temperature_moves must be >= 0, got %d", ErrConfig, c.TempMoves)
	case c.GumbelM < 0 || c.GumbelM > agent.MaxGumbelM || (c.GumbelM > 0 && !c.Gumbel):
		return fmt.Errorf("%w: gumbel_m must be 1..%d, with gumbel; got %d", ErrConfig, agent.MaxGumbelM, c.GumbelM)
	case c.Gumbel && (c.TempMoves > 0 || c.DirichletAlpha > 0 && c.DirichletFrac > 0):
		return fmt.Errorf("%w: gumbel explores with its Gumbel numbers: set temperature_moves 0 and dirichlet_alpha 0 (got %d and %g)", ErrConfig, c.TempMoves, c.DirichletAlpha)
	case c.FastSims < 0 || c.FastSims > c.Sims:
		return fmt.Errorf("%w: fast_sims must be 0..sims (%d), got %d", ErrConfig, c.Sims, c.FastSims)
	case !(c.FullProb >= 0 && c.FullProb <= 1):
		return fmt.Errorf("%w: full_prob must be 0..1, got %g", ErrConfig, c.FullProb)
	case c.EvalTimeout < 0:
		return fmt.Errorf("%w: eval_timeout must be >= 0, got %v", ErrConfig, c.EvalTimeout)
	case c.ShardGames < 1 || c.ShardGames > 1_000_000:
		return fmt.Errorf("%w: shard_games must be 1..1000000, got %d", ErrConfig, c.ShardGames)
	case c.Out == "":
		return fmt.Errorf("%w: out (the dataset directory) is required", ErrConfig)
	}
	return nil
}

// SearchSpec is the spec recorded as every seat's agent in the manifest.
// With playout cap randomization it ends in ",fast=N,full_prob=P".
func (c *Config) SearchSpec() string {
	var s string
	if c.Gumbel {
		s = fmt.Sprintf("az:%d,gumbel=1,m=%d", c.Sims, c.GumbelM)
	} else {
		s = fmt.Sprintf("az:%d,c=%g,dirichlet=%g/%g,temperature_moves=%d", c.Sims, c.C, c.DirichletAlpha, c.DirichletFrac, c.TempMoves)
	}
	if c.FastSims > 0 {
		s += fmt.Sprintf(",fast=%d,full_prob=%g", c.FastSims, c.FullProb)
	}
	return s
}

// request is one leaf of one game, waiting for its answer.
type request struct {
	s      *env.State
	priors []float32
	reply  chan float64
}

// event is what a worker tells the collector.
type event struct {
	req  *request // a leaf to evaluate, or
	game *played  // a finished game, or
	wait *gate    // the worker waits to start a game, or
	exit bool     // the worker has no more games
}

// gate is a worker waiting to start game g until fewer than a window of
// finished games wait for an earlier one (Run.window).
type gate struct {
	g    int
	open chan struct{}
}

// played is one finished game.
type played struct {
	g    int // its index in the run: game FirstGame+g
	rec  *env.Record
	cols *dataset.Columns
	err  error
}

// Batch is a set of leaves to evaluate: Obs holds N observations of the
// run's tier (N×ObsSize, the seat to move's view) and Mask their legal
// actions (N×180, 1 = legal). Both are the run's buffers, valid until the
// next call of Next.
type Batch struct {
	N    int
	Obs  []float32
	Mask []uint8
}

// Summary is the progress of a run.
type Summary struct {
	Games, Decisions int
	Leaves, Batches  int64
	Done             bool
	Out              string
}

// Run is a self-play run whose leaves are evaluated by the caller: Next
// hands out a batch and takes its answer. Next is not safe for concurrent
// use (a server connection serves one request at a time).
type Run struct {
	cfg     Config
	enc     *obs.Encoder
	man     *dataset.Manifest
	events  chan event
	cancel  chan struct{}
	stop    sync.Once
	cause   atomic.Pointer[error]
	timer   *time.Timer
	armed   bool         // the timer runs for the batch handed out
	next    atomic.Int64 // the next game to start
	live    int          // workers not yet exited
	pending []*request   // the batch handed out, awaiting its answer
	batch   Batch
	done    map[int]*played // finished games waiting for an earlier one
	shard   *dataset.ShardWriter
	// flushed is the number of games written, to a shard or to the shard
	// being written (it only grows; workers read it).
	flushed atomic.Int64
	gated   []*gate // workers waiting to start a game (they are not live)
	sum     Summary
	wg      sync.WaitGroup
}

// Start opens the dataset (resuming one made by the same config) and starts
// the games; the first Next hands out the first batch.
func Start(cfg Config) (*Run, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	enc, err := obs.NewEncoder(cfg.Rules, cfg.Tier)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	agents := make([]string, cfg.Rules.Players)
	for i := range agents {
		agents[i] = cfg.SearchSpec()
	}
	man, err := dataset.Open(cfg.Out, dataset.Config{Rules: cfg.Rules, Agents: agents, Space: enc.Space(), Seed: cfg.Seed, SeedScheme: vecenv.SeedScheme,
		ShardGames: cfg.ShardGames, Software: cfg.Software, Visits: true, PolicyTargets: cfg.FastSims > 0, FirstGame: cfg.FirstGame}, cfg.Games)
	if err != nil {
		return nil, err
	}
	r := &Run{
		cfg: cfg, enc: enc, man: man,
		events: make(chan event, 2*cfg.InFlight+1),
		cancel: make(chan struct{}),
		done:   map[int]*played{},
	}
	r.flushed.Store(int64(man.Games))
	r.sum = Summary{Games: man.Games, Decisions: int(man.Decisions), Out: cfg.Out}
	r.next.Store(int64(man.Games))
	workers := min(cfg.InFlight, cfg.Games-man.Games)
	r.live = max(workers, 0)
	sp, _ := agent.DefaultSpec("mcts")
	sp.N, sp.C = cfg.Sims, cfg.C
	for range r.live {
		r.wg.Add(1)
		go r.work(sp)
	}
	return r, nil
}

// Config returns the run's config (with defaults filled in).
func (r *Run) Config() Config { return r.cfg }

// ObsSize is the length of one observation.
func (r *Run) ObsSize() int { return r.enc.Size() }

// Summary returns the run's progress.
func (r *Run) Summary() Summary { return r.sum }

// fail stops the run with err (the first cause wins).
func (r *Run) fail(err error) {
	r.stop.Do(func() {
		r.cause.Store(&err)
		close(r.cancel)
	})
}

// err is the reason the run stopped, or nil.
func (r *Run) err() error {
	if p := r.cause.Load(); p != nil {
		return *p
	}
	return nil
}

// Close cancels the run, waits for its games to stop and removes the
// temporary files of the shard being written (the finished shards stay).
func (r *Run) Close() {
	r.fail(ErrClosed)
	if r.timer != nil {
		r.timer.Stop()
	}
	r.wg.Wait()
	if r.shard != nil {
		r.shard.Abort()
		r.shard = nil
	}
}

// window is how far ahead of the first game not yet written a worker may
// start a game: the finished games kept in memory, waiting for an earlier
// one, are fewer than InFlight.
func (r *Run) window() int { return r.cfg.InFlight }

// send passes an event to the collector unless the run is cancelled.
func (r *Run) send(ev event) bool {
	select {
	case r.events <- ev:
		return true
	case <-r.cancel:
		return false
	}
}

// worker is one game slot's evaluator: it hands its leaves to the collector.
type worker struct {
	r   *Run
	req request
}

// Evaluate implements agent.Evaluator by waiting for the batch's answer.
func (w *worker) Evaluate(s *env.State, priors []float32) (float64, error) {
	w.req.s, w.req.priors = s, priors
	if !w.r.send(event{req: &w.req}) {
		return 0, ErrClosed
	}
	select {
	case v := <-w.req.reply:
		return v, nil
	case <-w.r.cancel:
		return 0, ErrClosed
	}
}

// work plays games until none are left or the run is cancelled.
func (r *Run) work(sp agent.Spec) {
	defer r.wg.Done()
	w := &worker{r: r, req: request{reply: make(chan float64, 1)}}
	m, err := agent.NewMCTS(sp, 0, agent.MCTSOptions{Evaluator: w, DirichletAlpha: r.cfg.DirichletAlpha,
		DirichletFrac: r.cfg.DirichletFrac, TempMoves: r.cfg.TempMoves, Gumbel: r.cfg.Gumbel, GumbelM: r.cfg.GumbelM})
	if err != nil {
		r.fail(err)
		return
	}
	var seat agent.Agent = m
	pcr := r.cfg.FastSims > 0
	if pcr {
		fsp := sp
		fsp.N = r.cfg.FastSims
		fast, err := agent.NewMCTS(fsp, 0, agent.MCTSOptions{Evaluator: w, Gumbel: r.cfg.Gumbel, GumbelM: r.cfg.GumbelM})
		if err == nil {
			prob := r.cfg.FullProb
			seat, err = agent.NewCapped(m.Name(), m, fast, func(seed uint64) bool { return FullSearch(seed, prob) })
		}
		if err != nil {
			r.fail(err)
			return
		}
	}
	buf := make([]float32, r.enc.Size())
	for {
		g := int(r.next.Add(1) - 1)
		if g >= r.cfg.Games {
			r.send(event{exit: true})
			return
		}
		if g >= int(r.flushed.Load())+r.window() {
			gt := &gate{g: g, open: make(chan struct{}, 1)}
			if !r.send(event{wait: gt}) {
				return
			}
			select {
			case <-gt.open:
			case <-r.cancel:
				return
			}
		}
		p := &played{g: g, cols: dataset.NewVisitColumns(r.enc.Size())}
		if pcr {
			p.cols = dataset.NewTargetColumns(r.enc.Size())
		}
		gg := r.cfg.FirstGame + g // the game's global index
		seats := make([]agent.Agent, r.cfg.Rules.Players)
		for i := range seats {
			seats[i] = seat
		}
		game := vecenv.Game(r.cfg.Rules, vecenv.GameSeed(r.cfg.Seed, gg), env.AnySeat, seats)
		game.Record = true
		game.OnDecision = func(s *env.State, a env.Action, st agent.Stats) error {
			if pcr {
				p.cols.AddTargetDecision(r.enc, buf, s, a, st, gg, !st.Fast)
				return nil
			}
			p.cols.AddDecision(r.enc, buf, s, a, st, gg)
			return nil
		}
		game.OnEnd = func(s *env.State) error {
			p.cols.EndGame(r.enc, s)
			return nil
		}
		res, err := game.Play()
		p.rec, p.err = res.Record, err
		if !r.send(event{game: p}) {
			return
		}
	}
}

// Next answers the batch handed out by the previous call (priors: N×180
// floats, values: N floats in [-1, 1]; both nil on the first call) and
// returns the next batch. A batch of N = 0 means the run is done: every
// game is in the dataset. Games finished meanwhile are written to the
// dataset in game order, one shard at a time.
func (r *Run) Next(priors, values []float32) (*Batch, error) {
	if err := r.err(); err != nil {
		return nil, err
	}
	if r.armed {
		r.armed = false
		if !r.timer.Stop() {
			<-r.cancel // the timeout fired: it is failing the run
			return nil, r.err()
		}
	}
	if err := r.answer(priors, values); err != nil {
		return nil, err
	}
	return r.gather()
}

// answer checks and distributes the answer to the pending batch.
func (r *Run) answer(priors, values []float32) error {
	n := len(r.pending)
	switch {
	case n == 0 && (priors != nil || values != nil):
		return &AnswerError{"priors/values", "there is no batch to answer (priors and values go with the call after a batch)"}
	case n > 0 && priors == nil && values == nil:
		return &AnswerError{"priors/values", fmt.Sprintf("the batch of %d leaves needs priors and values", n)}
	case len(priors) != n*env.NumActions:
		return &AnswerError{"priors", fmt.Sprintf("%d floats, want %d (%d leaves × %d actions)", len(priors), n*env.NumActions, n, env.NumActions)}
	case len(values) != n:
		return &AnswerError{"values", fmt.Sprintf("%d floats, want %d (one per leaf)", len(values), n)}
	}
	for i, v := range values {
		if !(v >= -1 && v <= 1) {
			return &AnswerError{"values", fmt.Sprintf("values[%d] = %g is not a number in [-1, 1]", i, v)}
		}
	}
	for i, q := range r.pending {
		copy(q.priors[:env.NumActions], priors[i*env.NumActions:(i+1)*env.NumActions])
		q.reply <- float64(values[i])
	}
	r.pending = r.pending[:0]
	return nil
}

// gather waits for leaves until the batch is full or every live game is
// waiting, writing finished games meanwhile, and encodes the batch.
func (r *Run) gather() (*Batch, error) {
	for len(r.pending) < r.cfg.MaxBatch && (r.live > len(r.pending)) {
		var ev event
		select {
		case ev = <-r.events:
		case <-r.cancel:
			return nil, r.err()
		}
		switch {
		case ev.req != nil:
			r.pending = append(r.pending, ev.req)
		case ev.exit:
			r.live--
		case ev.wait != nil:
			if ev.wait.g < int(r.flushed.Load())+r.window() {
				ev.wait.open <- struct{}{}
			} else {
				r.live-- // not live until its gate opens (finished)
				r.gated = append(r.gated, ev.wait)
			}
		case ev.game != nil:
			if ev.game.err != nil {
				err := fmt.Errorf("game %d: %w", r.cfg.FirstGame+ev.game.g, ev.game.err)
				r.fail(err)
				return nil, err
			}
			if err := r.finished(ev.game); err != nil {
				r.fail(err)
				return nil, err
			}
		}
	}
	n, d := len(r.pending), r.enc.Size()
	if cap(r.batch.Obs) < n*d {
		r.batch.Obs = make([]float32, r.cfg.MaxBatch*d)
		r.batch.Mask = make([]uint8, r.cfg.MaxBatch*env.NumActions)
	}
	r.batch.N, r.batch.Obs, r.batch.Mask = n, r.batch.Obs[:n*d], r.batch.Mask[:n*env.NumActions]
	for i, q := range r.pending {
		r.enc.Encode(q.s, q.s.ToMove(), r.batch.Obs[i*d:(i+1)*d])
		q.s.Mask(r.batch.Mask[i*env.NumActions : (i+1)*env.NumActions])
	}
	if n == 0 {
		r.sum.Done = true
		r.wg.Wait()
		return &r.batch, nil
	}
	r.sum.Leaves += int64(n)
	r.sum.Batches++
	if r.cfg.EvalTimeout > 0 {
		if r.timer == nil {
			r.timer = time.AfterFunc(r.cfg.EvalTimeout, r.timeout)
		} else {
			r.timer.Reset(r.cfg.EvalTimeout)
		}
		r.armed = true
	}
	return &r.batch, nil
}

func (r *Run) timeout() {
	r.fail(fmt.Errorf("%w: the batch was not answered within eval_timeout %v; the run was cancelled", ErrTimeout, r.cfg.EvalTimeout))
}

// finished keeps a game and writes every game now in order to the shard
// being written (on disk), finishing each shard once it is complete, and
// opens the gates of the workers now within the window.
func (r *Run) finished(p *played) error {
	r.done[p.g] = p
	for {
		q, ok := r.done[int(r.flushed.Load())]
		if !ok {
			break
		}
		delete(r.done, q.g)
		if r.shard == nil {
			sw, err := r.man.NewShardWriter(r.cfg.Out, r.man.FirstGame+r.man.Games, r.enc.Size(), true)
			if err != nil {
				return err
			}
			r.shard = sw
		}
		if err := r.shard.Add(q.cols, q.rec); err != nil {
			return err
		}
		r.flushed.Add(1)
		end := min(r.man.Games+r.man.ShardGames, r.cfg.Games)
		if q.g+1 < end {
			continue
		}
		sw := r.shard
		r.shard = nil
		if err := sw.Finish(); err != nil {
			return err
		}
		r.sum.Games, r.sum.Decisions = r.man.Games, int(r.man.Decisions)
	}
	waiting := r.gated[:0]
	for _, gt := range r.gated {
		if gt.g < int(r.flushed.Load())+r.window() {
			r.live++
			gt.open <- struct{}{}
		} else {
			waiting = append(waiting, gt)
		}
	}
	r.gated = waiting
	return nil
}
