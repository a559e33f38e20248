package vecenv

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// Seed derives an independent 64-bit seed from a base seed and a path of
// indices (a splitmix64 finalizer per step). It is the one seed mixer of
// yutenv; the first index of a path says what the seed is for (1: an
// agent's decision, AgentSeed; 2: an env's later episode, EpisodeSeed; 3: a
// random learner seat, LearnerSeat). See the package documentation for the
// whole scheme.
func Seed(base uint64, path ...uint64) uint64 {
	x := base
	for _, p := range path {
		x = mix(x, p)
	}
	return x
}

// mix is one step of Seed.
func mix(x, p uint64) uint64 {
	x ^= p + 0x9e3779b97f4a7c15 + (x << 6) + (x >> 2)
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// SeedScheme numbers the seed scheme this package implements; dataset
// manifests record it (scheme 1, before it, seeded a run's game g with
// Seed(S, 0, g) and its agents per game).
const SeedScheme = 2

// GameSeed returns the game seed of game g of a run seeded base: base + g
// (wrapping at 2^64), as env g of a batch after SeedAll(base).
func GameSeed(base uint64, g int) uint64 { return base + uint64(g) }

// AgentSeed returns the seed the agent that moves seat at decision d of the
// game seeded x is reseeded with right before it acts: Seed(x, 1, seat, d),
// d being the state's decision counter before the move
// (env.State.Decisions). Every game runner uses it (the command line, a
// batch's opponents), so an agent plays the same moves wherever the game
// is played and whatever it played before. It allocates nothing.
func AgentSeed(x uint64, seat, d int) uint64 {
	return mix(mix(mix(x, 1), uint64(seat)), uint64(d))
}

// EpisodeSeed returns the game seed of episode k >= 1 of an env whose first
// episode after a reset had the game seed x0: Seed(x0, 2, k).
func EpisodeSeed(x0, k uint64) uint64 { return mix(mix(x0, 2), k) }

// LearnerSeat returns the learner seat of a single-mode episode with the
// game seed x when the seat is drawn (RandomSeat): floor(Seed(x, 3) *
// players / 2^64).
func LearnerSeat(x uint64, players int) int {
	hi, _ := bits.Mul64(mix(x, 3), uint64(players))
	return int(hi)
}

// Game returns the game with seed x between seats (one agent per seat,
// every one an agent.Reseeder) in which the agent moving seat j at
// decision d is reseeded with AgentSeed(x, j, d): the command line's game
// runner. Set Record or OnDecision on the result before playing it.
func Game(rules env.Rules, x uint64, start int, seats []agent.Agent) agent.Game {
	return agent.Game{Rules: rules, Seed: x, Start: start, Seats: seats,
		Reseed: func(seat, d int) uint64 { return AgentSeed(x, seat, d) }}
}

// Players hands a worker its agents: one per slot (a seat, or a side of a
// match), built once by agent.New and kept, so its buffers are reused. The
// agents are Reseeders: Game reseeds them before every decision.
type Players struct {
	slots map[playerKey]agent.Agent
}

type playerKey struct {
	slot int
	spec string
}

// Get returns the agent of spec for slot. It fails for an agent that is
// not an agent.Reseeder.
func (p *Players) Get(slot int, spec string) (agent.Agent, error) {
	k := playerKey{slot, spec}
	if a, ok := p.slots[k]; ok {
		return a, nil
	}
	a, err := agent.New(spec, 0)
	if err != nil {
		return nil, err
	}
	if _, ok := a.(agent.Reseeder); !ok {
		return nil, fmt.Errorf("agent %s: %w", spec, agent.ErrNotReseeder)
	}
	if p.slots == nil {
		p.slots = map[playerKey]agent.Agent{}
	}
	p.slots[k] = a
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
