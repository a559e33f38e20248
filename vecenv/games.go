package vecenv

import (
	"sync"

	"github.com/yutenv/yutenv/env/agent"
)

// Seed derives an independent 64-bit seed from a base seed and a path of
// indices (a splitmix64 finalizer per step), so that every game and every
// agent of a run gets its own reproducible seed whatever the number of
// workers and the order the games are played in. It is the one seed mixer
// of yutenv: the command line's games are numbered by it (game g of a run
// seeded S throws with Seed(S, 0, g), seat i's agent is seeded Seed(S, 1,
// g, i); see the package documentation).
func Seed(base uint64, path ...uint64) uint64 {
	x := base
	for _, p := range path {
		x ^= p + 0x9e3779b97f4a7c15 + (x << 6) + (x >> 2)
		x += 0x9e3779b97f4a7c15
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
		x = (x ^ (x >> 27)) * 0x94d049bb133111eb
		x ^= x >> 31
	}
	return x
}

// Players hands a worker its agents: one per slot (a seat, or a side of a
// match), built once by agent.New and reseeded game after game when the
// agent is an agent.Reseeder, so its buffers are reused.
type Players struct {
	slots map[playerKey]agent.Agent
}

type playerKey struct {
	slot int
	spec string
}

// Get returns the agent of spec for slot, seeded with seed.
func (p *Players) Get(slot int, spec string, seed uint64) (agent.Agent, error) {
	k := playerKey{slot, spec}
	if a, ok := p.slots[k]; ok {
		a.(agent.Reseeder).Reseed(seed) // only Reseeders are kept
		return a, nil
	}
	a, err := agent.New(spec, seed)
	if err != nil {
		return nil, err
	}
	if _, ok := a.(agent.Reseeder); ok {
		if p.slots == nil {
			p.slots = map[playerKey]agent.Agent{}
		}
		p.slots[k] = a
	}
	return a, nil
}

// Done is the result of one job of Play.
type Done[T any] struct {
	Job   int
	Value T
}

// Play runs play for every job in [first, last) on workers goroutines, each
// with its own Players, and sends the results to the returned channel in
// any order; the channel is closed when every job is done. Closing stop
// ends the run early (the jobs not started are skipped, and the results
// not yet received are dropped).
func Play[T any](workers, first, last int, stop <-chan struct{}, play func(p *Players, job int) T) <-chan Done[T] {
	workers = max(workers, 1)
	jobs := make(chan int)
	results := make(chan Done[T], workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p Players
			for j := range jobs {
				select {
				case results <- Done[T]{j, play(&p, j)}:
				case <-stop:
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for j := first; j < last; j++ {
			select {
			case jobs <- j:
			case <-stop:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	return results
}

// InOrder receives Play's results in any order and calls emit on them in
// job order from first on. At the first error of emit it closes stop,
// drains the rest, and returns the error.
func InOrder[T any](results <-chan Done[T], first int, stop chan struct{}, emit func(job int, v T) error) error {
	pending := map[int]T{}
	next := first
	var firstErr error
	for d := range results {
		if firstErr != nil {
			continue
		}
		pending[d.Job] = d.Value
		for {
			v, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if err := emit(next, v); err != nil {
				firstErr = err
				close(stop)
				break
			}
			next++
		}
	}
	return firstErr
}
