package agent

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/yutenv/yutenv/env"
)

func init() {
	registry["greedy"] = func(sp Spec, seed uint64) Agent {
		g := &Greedy{spec: sp}
		g.Reseed(seed)
		return g
	}
}

// Weights of the greedy score. A "piece-step" is one piece moved one
// station nearer to finishing; a piece in hand is 21 steps from finishing
// (a full lap on OUTER, passing HOME).
const (
	// GreedyWin is added when the move finishes the mover's last piece.
	GreedyWin = 1000.0
	// GreedyCapture is added per captured opponent piece.
	GreedyCapture = 20.0
	// GreedyCaptureProgress is added per captured piece per step it had
	// travelled (capturing an advanced stack is worth more).
	GreedyCaptureProgress = 1.0
	// GreedyFinish is added per piece that leaves the board.
	GreedyFinish = 10.0
	// GreedyAdvance is added per piece-step of progress (negative for back-do).
	GreedyAdvance = 1.0
	// GreedyStack is added per own piece the moving stack joins.
	GreedyStack = 3.0
	// GreedyExposureBase is the value of a piece at risk before its progress is added.
	GreedyExposureBase = 5.0
)

// Greedy is a one-move-deep heuristic. For every legal action it plays the
// move on a copy of the state and scores the result:
//
//	score = GreedyWin            if the move wins the game
//	      + captured pieces × (GreedyCapture + GreedyCaptureProgress × steps they had travelled)
//	      + finished pieces × GreedyFinish
//	      + GreedyAdvance × piece-steps gained (moved pieces × (steps to finish before − after))
//	      + GreedyStack × own pieces joined
//	      + exposure relief: danger(from) × value of the moved pieces before the move
//	      − exposure: danger(to) × value of the whole stack where it stops
//
// where danger(x) is the probability of one throw with which some opponent
// stack, or an opponent piece entering from hand, would stop on station x
// (a capture), and the value of h pieces that have travelled k steps is
// h × (GreedyExposureBase + k). A stack that finished or stands nowhere has no
// exposure. Ties are broken at random with the agent's generator.
type Greedy struct {
	spec   Spec
	r      rng
	scorer scorer
	buf    [env.NumActions]env.Action
}

// Name returns "greedy".
func (g *Greedy) Name() string { return g.spec.String() }

// Reseed restarts the agent's generator from seed.
func (g *Greedy) Reseed(seed uint64) { g.r.seed(seed, 0) }

// Act returns the highest-scoring legal action.
func (g *Greedy) Act(s *env.State) (env.Action, error) {
	legal := s.LegalActions(g.buf[:0])
	if len(legal) == 0 {
		return 0, fmt.Errorf("%w: phase %s", ErrNoMove, s.Phase())
	}
	return g.scorer.best(s, legal, &g.r), nil
}

// ActStats is Act; the greedy agent reports no search statistics.
func (g *Greedy) ActStats(s *env.State) (env.Action, Stats, error) {
	a, err := g.Act(s)
	return a, Stats{}, err
}

// GreedyScore returns the greedy score of playing a in s (see Greedy), or
// an error wrapping env.ErrIllegalAction if a is not legal.
func GreedyScore(s *env.State, a env.Action) (float64, error) {
	if !s.IsLegal(a) {
		c := *s
		_, err := c.Apply(a) // the engine says why
		return 0, err
	}
	var sc scorer
	sc.prepare(s)
	return sc.score(s, a), nil
}

// scorer evaluates moves for the greedy agent and greedy rollouts without
// allocating.
type scorer struct {
	rules env.Rules
	prob  [env.NumThrows]float64
	// reach[x] is the set of throws (bit t) with which an opponent of the
	// mover can stop on station x, in the state being scored.
	reach [env.NumStations]uint8
}

// prepare computes what score needs about s before any move.
func (sc *scorer) prepare(s *env.State) {
	if r := s.Rules(); r != sc.rules {
		sc.rules = r
		sc.prob = r.Probabilities()
	}
	sc.reach = [env.NumStations]uint8{}
	me := s.ToMove()
	for o := 0; o < sc.rules.Players; o++ {
		if o == me || s.Place(o) != 0 {
			continue
		}
		for b := s.Occupied(o); b != 0; b &= b - 1 {
			y := env.Station(bits.TrailingZeros32(b))
			_, _, route, _ := s.StackAt(y)
			for t := env.Throw(0); t < env.NumThrows; t++ {
				if to, _, fin, ok := env.Destination(sc.rules, y, route, t); ok && !fin {
					sc.reach[to] |= 1 << t
				}
			}
		}
		if s.Hand(o) > 0 {
			for t := env.Do; t < env.NumThrows; t++ {
				if to, _, fin, ok := env.EntryDestination(sc.rules, t); ok && !fin {
					sc.reach[to] |= 1 << t
				}
			}
		}
	}
}

// danger is the probability of the throws in mask.
func (sc *scorer) danger(mask uint8) float64 {
	d := 0.0
	for t := 0; mask != 0; t, mask = t+1, mask>>1 {
		if mask&1 != 0 {
			d += sc.prob[t]
		}
	}
	return d
}

// dangerAfter computes which throws of the mover's opponents stop on x in
// s (the state after the move); me is the seat that moved.
func (sc *scorer) dangerAfter(s *env.State, me int, x env.Station) float64 {
	var mask uint8
	for o := 0; o < sc.rules.Players; o++ {
		if o == me || s.Place(o) != 0 {
			continue
		}
		for b := s.Occupied(o); b != 0; b &= b - 1 {
			y := env.Station(bits.TrailingZeros32(b))
			_, _, route, _ := s.StackAt(y)
			for t := env.Throw(0); t < env.NumThrows; t++ {
				if to, _, fin, ok := env.Destination(sc.rules, y, route, t); ok && !fin && to == x {
					mask |= 1 << t
				}
			}
		}
		if s.Hand(o) > 0 {
			for t := env.Do; t < env.NumThrows; t++ {
				if to, _, fin, ok := env.EntryDestination(sc.rules, t); ok && !fin && to == x {
					mask |= 1 << t
				}
			}
		}
	}
	return sc.danger(mask)
}

// score scores legal action a in s; prepare(s) must have been called.
func (sc *scorer) score(s *env.State, a env.Action) float64 {
	me := s.ToMove()
	lapSteps := sc.rules.LapSteps() // steps from hand to finished
	remBefore, h, exposedBefore := lapSteps, 1, 0.0
	if !a.IsEnter() {
		_, height, route, _ := s.StackAt(a.Station())
		h = height
		remBefore = sc.rules.StepsToFinish(a.Station(), route)
		exposedBefore = float64(sc.danger(sc.reach[a.Station()]) * float64(h) * (GreedyExposureBase + float64(lapSteps-remBefore)))
	}
	capRem := 0 // steps to finish of the stack the move captures, if any
	if to, _, fin, ok := destinationOf(s, a); ok && !fin {
		if seat, _, r, occupied := s.StackAt(to); occupied && seat != me {
			capRem = sc.rules.StepsToFinish(to, r)
		}
	}
	c := *s
	ev, err := c.Apply(a)
	if err != nil {
		return math.Inf(-1)
	}
	// Every product below is rounded by float64(…) before it is summed: arm64
	// (and GOAMD64=v3) would fuse it into an FMA, which rounds once, and a
	// rollout could then play another move (docs/COMPATIBILITY.md, "Seeds").
	score := 0.0
	if ev.Placed {
		score += GreedyWin
	}
	if ev.Captured > 0 {
		score += float64(float64(ev.Captured) * (GreedyCapture + float64(GreedyCaptureProgress*float64(lapSteps-capRem))))
	}
	score += float64(GreedyFinish * float64(ev.Finished))
	remAfter := 0
	if ev.Finished == 0 {
		remAfter = sc.rules.StepsToFinish(ev.To, ev.ToRoute)
	}
	score += float64(GreedyAdvance * float64(h*(remBefore-remAfter)))
	if ev.Joined {
		score += float64(GreedyStack * float64(int(ev.Height)-h))
	}
	score += exposedBefore
	if ev.Finished == 0 {
		// The opponents' stacks are those of s unless the move captured one.
		danger := sc.danger(sc.reach[ev.To])
		if ev.Captured > 0 {
			danger = sc.dangerAfter(&c, me, ev.To)
		}
		score -= float64(danger * float64(ev.Height) * (GreedyExposureBase + float64(lapSteps-remAfter)))
	}
	return score
}

// destinationOf is where legal action a in s stops.
func destinationOf(s *env.State, a env.Action) (env.Station, env.Route, bool, bool) {
	if a.IsEnter() {
		return env.EntryDestination(s.Rules(), a.Throw())
	}
	_, _, route, _ := s.StackAt(a.Station())
	return env.Destination(s.Rules(), a.Station(), route, a.Throw())
}

// best returns the highest-scoring of the legal actions (not empty), ties
// broken uniformly at random with r.
func (sc *scorer) best(s *env.State, legal []env.Action, r *rng) env.Action {
	if len(legal) == 1 {
		return legal[0]
	}
	sc.prepare(s)
	best, bestScore, ties := legal[0], math.Inf(-1), 0
	for _, a := range legal {
		v := sc.score(s, a)
		switch {
		case v > bestScore:
			best, bestScore, ties = a, v, 1
		case v == bestScore:
			ties++
			if r.intn(ties) == 0 {
				best = a
			}
		}
	}
	return best
}
