package agent

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yutenv/yutenv/env"
)

func init() {
	registry["mc"] = func(sp Spec, seed uint64) Agent {
		m := &MC{spec: sp, workers: make([]mcWorker, sp.Workers)}
		for i := range m.workers {
			m.workers[i].roll.policy = sp.Rollout
		}
		m.Reseed(seed)
		return m
	}
}

// MC is flat Monte Carlo: for every legal action it plays N simulated games
// from the state after the action (chance sampled with the agent's
// generator, both sides played by the rollout policy) and picks the action
// with the best mean outcome for the mover. Ties go to the lowest action id.
// With workers=W the rollouts of every action are split over W goroutines,
// each with its own generator, so the result does not depend on scheduling.
type MC struct {
	spec    Spec
	workers []mcWorker
	legal   [env.NumActions]env.Action
	after   [env.NumActions]env.State // the state after each legal action
	policy  [env.NumActions]float32
	q       [env.NumActions]float64
	stop    *atomic.Bool // polled after every round of rollouts (SetInterrupt); nil: never
}

// mcWorker holds one goroutine's rollouts and sums, by legal-action index.
type mcWorker struct {
	roll roller
	sum  [env.NumActions][env.MaxPlayers]float64
	n    [env.NumActions]int
}

// Name returns the canonical spec, e.g. "mc:100".
func (m *MC) Name() string { return m.spec.String() }

// Reseed restarts every worker's generator from seed.
func (m *MC) Reseed(seed uint64) {
	for i := range m.workers {
		m.workers[i].roll.r.seed(seed, uint64(i)+1)
	}
}

// Act returns the action with the best mean rollout outcome.
func (m *MC) Act(s *env.State) (env.Action, error) {
	a, _, err := m.ActStats(s)
	return a, err
}

// ActStats returns the action and its statistics: a one-hot Policy on the
// chosen action, Value the chosen action's mean outcome for the mover,
// Values every seat's mean outcome after it, Q every legal action's mean
// outcome for the mover, and the rollouts spent.
func (m *MC) ActStats(s *env.State) (env.Action, Stats, error) {
	legal, forced, err := opening(s, &m.legal, &m.policy)
	if err != nil {
		return 0, Stats{}, err
	}
	if forced {
		return legal[0], Stats{Policy: m.policy[:]}, nil
	}
	for i, a := range legal {
		m.after[i] = *s
		if _, err := m.after[i].Apply(a); err != nil {
			return 0, Stats{}, fmt.Errorf("agent %s: legal action %v refused: %w", m.Name(), a, err)
		}
	}
	deadline := deadlineAfter(m.spec.Time)
	if len(m.workers) == 1 {
		m.workers[0].run(m.after[:len(legal)], 0, 1, m.spec.N, deadline, m.stop)
	} else {
		var wg sync.WaitGroup
		for w := range m.workers {
			wg.Add(1)
			go func(w int, deadline time.Time) {
				defer wg.Done()
				m.workers[w].run(m.after[:len(legal)], w, len(m.workers), m.spec.N, deadline, m.stop)
			}(w, deadline)
		}
		wg.Wait()
	}
	if m.stop != nil && m.stop.Load() {
		return 0, Stats{}, ErrInterrupted
	}
	me := s.ToMove()
	best, bestMean, sims := 0, 0.0, 0
	var bestSum [env.MaxPlayers]float64
	bestN := 0
	clear(m.q[:])
	for i, a := range legal {
		var sum [env.MaxPlayers]float64
		n := 0
		for w := range m.workers {
			for p := range sum {
				sum[p] += m.workers[w].sum[i][p]
			}
			n += m.workers[w].n[i]
		}
		sims += n
		mean := sum[me] / float64(n)
		m.q[a] = mean
		if i == 0 || mean > bestMean {
			best, bestMean, bestSum, bestN = i, mean, sum, n
		}
	}
	st := Stats{Policy: m.policy[:], Value: bestMean, Simulations: sims, Q: m.q[:]}
	for p := 0; p < s.Rules().Players; p++ {
		st.Values[p] = bestSum[p] / float64(bestN)
	}
	m.policy[legal[best]] = 1
	return legal[best], st, nil
}

// run plays rollouts r = w, w+W, w+2W, ... < n for every state in after
// (one round covers every action), stopping after a round once the
// deadline (if not zero) has passed or the interrupt flag (if not nil) is up.
func (mw *mcWorker) run(after []env.State, w, workers, n int, deadline time.Time, stop *atomic.Bool) {
	for i := range after {
		mw.sum[i] = [env.MaxPlayers]float64{}
		mw.n[i] = 0
	}
	for r := w; r < n; r += workers {
		for i := range after {
			c := after[i]
			v := mw.roll.play(&c)
			for p := range v {
				mw.sum[i][p] += v[p]
			}
			mw.n[i]++
		}
		if !deadline.IsZero() && time.Now().After(deadline) || stop != nil && stop.Load() {
			return
		}
	}
}
