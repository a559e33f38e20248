package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/olekukonko/tablewriter"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/server"
	"github.com/yutenv/yutenv/vecenv"
)

func init() {
	commands["bench"] = command{summary: "measure random-playout throughput of the engine", run: runBench}
}

// benchResult is what `yutenv bench --json` prints.
type benchResult struct {
	Rules               string  `json:"rules"`
	Workers             int     `json:"workers"`
	Seconds             float64 `json:"seconds"`
	Games               int64   `json:"games"`
	Decisions           int64   `json:"decisions"`
	Throws              int64   `json:"throws"`
	GamesPerSec         float64 `json:"games_per_sec"`
	DecisionsPerSec     float64 `json:"decisions_per_sec"`
	GamesPerSecCore     float64 `json:"games_per_sec_per_core"`
	DecisionsPerSecCore float64 `json:"decisions_per_sec_per_core"`
	DecisionsPerGame    float64 `json:"decisions_per_game"`
	AllocsPerDecision   float64 `json:"allocs_per_decision"`
	BytesPerDecision    float64 `json:"bytes_per_decision"`
	GoVersion           string  `json:"go_version"`
	CPUs                int     `json:"cpus"`
	// NetKernel is the kernel of the network's layers on this machine
	// (nnet.Kernel), AZForwardMicros one forward pass of the shipped
	// network az on one core, on the observations of random positions.
	NetKernel       string  `json:"net_kernel"`
	AZForwardMicros float64 `json:"az_forward_us"`
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "[flags]", stderr)
	dur := fs.Duration("time", 3*time.Second, "how long to play")
	workers := fs.Int("workers", 1, "goroutines playing at once (1 = one core)")
	rulesSpec := fs.String("rules", "standard", "rules, as key=value pairs (see docs)")
	seed := fs.Uint64("seed", 1, "first game seed")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	batch := fs.Int("batch", 0, "instead of playouts, step a batch of this many envs in process (the reference of python -m yutenv.bench --go; --workers defaults to every core)")
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	if *workers < 1 || *workers > 1024 {
		return fmt.Errorf("--workers must be 1..1024, got %d", *workers)
	}
	if *dur <= 0 || *dur > time.Hour {
		return fmt.Errorf("--time must be more than 0 and at most 1h, got %v", *dur)
	}
	if *batch != 0 {
		if fs.Changed("rules") || fs.Changed("seed") {
			return errors.New("--batch steps the reference batch (standard rules, seeds 0..N-1): --rules and --seed do not apply")
		}
		w := runtime.GOMAXPROCS(0)
		if fs.Changed("workers") {
			w = *workers
		}
		return benchBatch(stdout, *batch, w, *dur, *asJSON)
	}
	res := benchPlayouts(rules, *seed, *workers, *dur)
	res.Rules = rules.String()
	res.NetKernel = nnet.Kernel()
	if res.AZForwardMicros, err = benchAZForward(*seed, 2000); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	t := tablewriter.NewWriter(stdout)
	t.SetHeader([]string{"measure", "value"})
	t.SetAlignment(tablewriter.ALIGN_RIGHT)
	rows := [][]string{
		{"rules", res.Rules},
		{"workers", fmt.Sprint(res.Workers)},
		{"games", fmt.Sprint(res.Games)},
		{"games/s", fmt.Sprintf("%.0f", res.GamesPerSec)},
		{"games/s per core", fmt.Sprintf("%.0f", res.GamesPerSecCore)},
		{"decisions/s", fmt.Sprintf("%.0f", res.DecisionsPerSec)},
		{"decisions/s per core", fmt.Sprintf("%.0f", res.DecisionsPerSecCore)},
		{"decisions/game", fmt.Sprintf("%.1f", res.DecisionsPerGame)},
		{"allocs/decision", fmt.Sprintf("%.4f", res.AllocsPerDecision)},
		{"bytes/decision", fmt.Sprintf("%.2f", res.BytesPerDecision)},
		{"network kernel", res.NetKernel},
		{"az forward pass (µs)", fmt.Sprintf("%.1f", res.AZForwardMicros)},
	}
	t.AppendBulk(rows)
	t.Render()
	return nil
}

// benchPlayouts plays random games on workers goroutines for about d.
func benchPlayouts(rules env.Rules, seed uint64, workers int, d time.Duration) benchResult {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	deadline := start.Add(d)
	var mu sync.Mutex
	var games, decisions, throws int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			var g, dec, th int64
			for i := uint64(0); ; i++ {
				s, err := env.New(rules, seed+i*uint64(workers)+uint64(w), env.AnySeat)
				if err != nil {
					break // rules were validated: cannot happen
				}
				dec += int64(env.RandomPlayout(&s, rng, 0))
				th += int64(s.Throws())
				g++
				if g%64 == 0 && time.Now().After(deadline) {
					break
				}
			}
			mu.Lock()
			games, decisions, throws = games+g, decisions+dec, throws+th
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	allocs := float64(after.Mallocs - before.Mallocs)
	bytes := float64(after.TotalAlloc - before.TotalAlloc)
	r := benchResult{
		Workers: workers, Seconds: el, Games: games, Decisions: decisions, Throws: throws,
		GamesPerSec: float64(games) / el, DecisionsPerSec: float64(decisions) / el,
		DecisionsPerGame:  float64(decisions) / float64(games),
		AllocsPerDecision: allocs / float64(decisions), BytesPerDecision: bytes / float64(decisions),
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
	}
	r.GamesPerSecCore = r.GamesPerSec / float64(min(workers, runtime.NumCPU()))
	r.DecisionsPerSecCore = r.DecisionsPerSec / float64(min(workers, runtime.NumCPU()))
	return r
}

// benchAZForward returns the mean time in microseconds of n forward passes
// of the shipped network az, one core, over the observations of 64
// positions of random games under its rules (seeded by seed).
func benchAZForward(seed uint64, n int) (float64, error) {
	az, err := nnet.AZ()
	if err != nil {
		return 0, err
	}
	enc, err := obs.NewEncoder(az.Rules, az.Net.Tier)
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	var xs [][]float32
	for g := uint64(0); len(xs) < 64; g++ {
		s, err := env.New(az.Rules, seed+g, env.AnySeat)
		if err != nil {
			return 0, err
		}
		env.RandomPlayout(&s, rng, 1+rng.IntN(30)) // stop somewhere in the game
		if s.IsOver() {
			continue
		}
		x := make([]float32, enc.Size())
		enc.Encode(&s, s.ToMove(), x)
		xs = append(xs, x)
	}
	sc, logits := az.Net.NewScratch(), make([]float32, env.NumActions)
	az.Net.Forward(sc, xs[0], logits) // builds the transposed weights
	start := time.Now()
	for i := 0; i < n; i++ {
		az.Net.Forward(sc, xs[i%len(xs)], logits)
	}
	return float64(time.Since(start).Nanoseconds()) / 1e3 / float64(n), nil
}

// batchResult is what `yutenv bench --batch N --json` prints.
type batchResult struct {
	Envs           int     `json:"envs"`
	Workers        int     `json:"workers"`
	Steps          int     `json:"steps"`
	Seconds        float64 `json:"seconds"`
	MicrosPerStep  float64 `json:"us_per_step"`
	EnvStepsPerSec float64 `json:"env_steps_per_sec"`
	CPUs           int     `json:"cpus"`
}

// benchBatch steps the reference batch of n envs in process (no socket, no
// Python) on workers (checked by runBench) for about d: the figure the
// Go-Python seam is compared with.
func benchBatch(stdout io.Writer, n, workers int, d time.Duration, asJSON bool) error {
	if n < 1 || n > server.DefaultMaxEnvsPerConn {
		return fmt.Errorf("--batch must be 1..%d (the envs a connection may hold), got %d", server.DefaultMaxEnvsPerConn, n)
	}
	t, err := vecenv.MeasureSteps(vecenv.ReferenceConfig(n), workers, d)
	if err != nil {
		return err
	}
	r := batchResult{Envs: n, Workers: t.Workers, Steps: t.Steps, Seconds: t.Seconds,
		MicrosPerStep: t.MicrosPerStep(), EnvStepsPerSec: t.EnvStepsPerSec(), CPUs: runtime.NumCPU()}
	if asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	tw := tablewriter.NewWriter(stdout)
	tw.SetHeader([]string{"measure", "value"})
	tw.SetAlignment(tablewriter.ALIGN_RIGHT)
	tw.AppendBulk([][]string{
		{"envs", fmt.Sprint(r.Envs)},
		{"workers", fmt.Sprint(r.Workers)},
		{"batch steps", fmt.Sprint(r.Steps)},
		{"µs per batch step", fmt.Sprintf("%.2f", r.MicrosPerStep)},
		{"env steps/s", fmt.Sprintf("%.0f", r.EnvStepsPerSec)},
	})
	tw.Render()
	return nil
}
