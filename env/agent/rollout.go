package agent

import (
	"github.com/yutenv/yutenv/env"
)

// maxRolloutSteps bounds a simulated game (throws plus decisions). Real
// games end far sooner (a random game averages under 50 decisions); a
// rollout that reaches the bound counts as a draw, all seats 0.
const maxRolloutSteps = 100_000

// roller plays simulated games to their end for mc and mcts. It resolves
// chance with its own generator and the rules' throw probabilities, never
// with the state's generator (which would reveal the real game's future
// throws), and allocates nothing.
type roller struct {
	r      rng
	policy Rollout
	rules  env.Rules
	ready  bool
	thr    [env.NumThrows]uint64 // cumulative 53-bit thresholds of the throws
	scorer scorer
	buf    [env.NumActions]env.Action
	ev     env.Event // scratch: what a simulated move did (unread)
}

// setRules prepares the throw thresholds for rules r.
func (p *roller) setRules(r env.Rules) {
	if p.ready && r == p.rules {
		return
	}
	p.rules, p.ready = r, true
	pr := r.Probabilities()
	cum := 0.0
	for t := range pr {
		cum += pr[t]
		v := cum * (1 << 53)
		if v > 1<<53 || t == env.NumThrows-1 {
			v = 1 << 53
		}
		p.thr[t] = uint64(v)
	}
}

// throw samples a throw result.
func (p *roller) throw() env.Throw {
	x := p.r.uint64() >> 11
	for t := 0; t < env.NumThrows-1; t++ {
		if x < p.thr[t] {
			return env.Throw(t)
		}
	}
	return env.Mo
}

// choose picks the rollout policy's action in s (a decision).
func (p *roller) choose(s *env.State) env.Action {
	legal := s.LegalActions(p.buf[:0])
	if p.policy == RolloutGreedy {
		return p.scorer.best(s, legal, &p.r)
	}
	return legal[p.r.intn(len(legal))]
}

// play plays s to its end in place and returns every seat's outcome.
func (p *roller) play(s *env.State) (v [env.MaxPlayers]float64) {
	p.setRules(s.Rules())
	for step := 0; step < maxRolloutSteps; step++ {
		switch s.Phase() {
		case env.PhaseOver:
			for i := 0; i < p.rules.Players; i++ {
				v[i] = s.Outcome(i)
			}
			return v
		case env.PhaseThrow:
			if err := s.ApplyThrowTo(p.throw(), &p.ev); err != nil {
				return v // a pool of 255 equal results: cannot happen in play
			}
		default:
			if err := s.ApplyTo(p.choose(s), &p.ev); err != nil {
				return v // a legal action refused: an engine bug, counted as a draw
			}
		}
	}
	return v
}

// outcomes returns every seat's outcome of a finished game.
func outcomes(s *env.State) (v [env.MaxPlayers]float64) {
	for i := 0; i < s.Rules().Players; i++ {
		v[i] = s.Outcome(i)
	}
	return v
}
