package agent

import (
	"fmt"
	"math/rand/v2"

	"github.com/yutenv/yutenv/env"
)

func init() {
	registry["random"] = func(spec string, seed uint64) (Agent, error) {
		if spec != "random" {
			return nil, fmt.Errorf("%w: %q: random takes no options", ErrSpec, spec)
		}
		return &Random{rng: newRNG(seed)}, nil
	}
}

// Random picks uniformly among the legal actions.
type Random struct {
	rng *rand.Rand
	buf [env.NumActions]env.Action
}

// Name returns "random".
func (r *Random) Name() string { return "random" }

// Act picks a uniformly random legal action.
func (r *Random) Act(s *env.State) (env.Action, error) {
	legal := s.LegalActions(r.buf[:0])
	if len(legal) == 0 {
		return 0, fmt.Errorf("%w: phase %s", ErrNoMove, s.Phase())
	}
	return legal[r.rng.IntN(len(legal))], nil
}

// ActStats is Act; a random agent has no statistics.
func (r *Random) ActStats(s *env.State) (env.Action, Stats, error) {
	a, err := r.Act(s)
	return a, Stats{}, err
}
