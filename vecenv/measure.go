package vecenv

import (
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// ReferenceConfig is the batch of n envs whose in-process step is the
// reference the Go-Python seam is measured against (BenchmarkBatchStep,
// `yutenv bench --batch`, `python -m yutenv.bench --go`): standard rules,
// the compact tier, the random opponent, the learner's first legal action
// in every env (FirstLegal).
func ReferenceConfig(n int) Config {
	return Config{Rules: env.Standard(), Tier: obs.Compact, N: n, Opponent: "random"}
}

// StepTiming is what MeasureSteps measured.
type StepTiming struct {
	Envs    int     // envs in the batch
	Workers int     // the pool's workers
	Steps   int     // batch steps made
	Seconds float64 // time spent in them (FirstLegal included, as in BenchmarkBatchStep)
}

// MicrosPerStep is the mean time of one batch step in microseconds.
func (t StepTiming) MicrosPerStep() float64 { return t.Seconds * 1e6 / float64(t.Steps) }

// EnvStepsPerSec is the env steps (one learner decision each) per second.
func (t StepTiming) EnvStepsPerSec() float64 { return float64(t.Envs*t.Steps) / t.Seconds }

// MeasureSteps resets a batch of cfg (seeds 0..N-1) and steps it with
// the first legal actions over a pool of workers for about d (at least
// one step), as BenchmarkBatchStep does.
func MeasureSteps(cfg Config, workers int, d time.Duration) (StepTiming, error) {
	b, err := New(cfg)
	if err != nil {
		return StepTiming{}, err
	}
	p := NewPool(workers)
	defer p.Close()
	b.SeedAll(0)
	if err := b.Reset(p, ResetOptions{Start: env.AnySeat}); err != nil {
		return StepTiming{}, err
	}
	t := StepTiming{Envs: cfg.N, Workers: p.workers}
	start := time.Now()
	deadline := start.Add(d)
	for {
		for range 8 {
			FirstLegal(b.Rows().Mask, b.Actions())
			if err := b.Step(p, false); err != nil {
				return t, err
			}
		}
		t.Steps += 8
		if now := time.Now(); !now.Before(deadline) {
			t.Seconds = now.Sub(start).Seconds()
			return t, nil
		}
	}
}
