package agent

import (
	"fmt"

	"github.com/yutenv/yutenv/env"
)

func init() {
	registry["random"] = func(sp Spec, seed uint64) Agent {
		r := &Random{spec: sp}
		r.Reseed(seed)
		return r
	}
}

// Random picks uniformly among the legal actions.
type Random struct {
	spec Spec
	r    rng
	buf  [env.NumActions]env.Action
}

// Name returns "random".
func (r *Random) Name() string { return r.spec.String() }

// Reseed restarts the agent's generator from seed.
func (r *Random) Reseed(seed uint64) { r.r.seed(seed, 0) }

// Act picks a uniformly random legal action.
func (r *Random) Act(s *env.State) (env.Action, error) {
	legal := s.LegalActions(r.buf[:0])
	if len(legal) == 0 {
		return 0, fmt.Errorf("%w: phase %s", ErrNoMove, s.Phase())
	}
	return legal[r.r.intn(len(legal))], nil
}

// ActStats is Act; a random agent has no statistics.
func (r *Random) ActStats(s *env.State) (env.Action, Stats, error) {
	a, err := r.Act(s)
	return a, Stats{}, err
}
