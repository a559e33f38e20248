package agent

import (
	"fmt"
	"time"

	"github.com/yutenv/yutenv/env"
)

// opening starts a search agent's decision: the legal actions of s (into
// buf) and, when only one is legal, forced = true with policy one-hot on it,
// so the agent answers without searching. policy is cleared either way.
func opening(s *env.State, buf *[env.NumActions]env.Action, policy *[env.NumActions]float32) (legal []env.Action, forced bool, err error) {
	legal = s.LegalActions(buf[:0])
	if len(legal) == 0 {
		return nil, false, fmt.Errorf("%w: phase %s", ErrNoMove, s.Phase())
	}
	clear(policy[:])
	if len(legal) == 1 {
		policy[legal[0]] = 1
		return legal, true, nil
	}
	return legal, false, nil
}

// deadlineAfter returns the wall-clock deadline of a time budget, or the zero
// time (no deadline) when the budget is 0.
func deadlineAfter(budget time.Duration) time.Time {
	if budget <= 0 {
		return time.Time{}
	}
	return time.Now().Add(budget)
}
