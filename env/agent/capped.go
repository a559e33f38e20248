package agent

import (
	"sync/atomic"

	"github.com/yutenv/yutenv/env"
)

// DefaultFullProb is the share of full searches under playout cap
// randomization (spec option full_prob, with fast=N), KataGo's 1/4.
const DefaultFullProb = 0.25

// cappedStream is the generator stream of capped's draws ("cap").
const cappedStream = 0x636170

// searcher is an agent that can be reseeded: what capped holds.
type searcher interface {
	Agent
	Reseeder
}

// capped is a search agent with playout cap randomization (KataGo: Wu,
// "Accelerating self-play learning in Go", 2019; spec option fast=N): before
// every decision it draws from its generator whether the decision runs the
// full search (probability FullProb) or a fast one of Fast simulations
// without temperature. A fast decision's Stats.Fast is set: its policy is
// not a training target, its value and outcome are. Self-play datasets
// record the flag (policy_target); in a match the agent is simply a mix of
// its two searches.
type capped struct {
	name       string
	full, fast searcher
	prob       float64
	r          rng
	// isFull, if set, draws instead of r: from the seed of the latest Reseed.
	isFull func(seed uint64) bool
	seed   uint64
}

// NewCapped returns an agent with playout cap randomization over the two
// searches full and fast (both Reseeders), named name: before each
// decision isFull(seed), seed the agent's latest Reseed, says whether the
// decision runs the full search; a fast decision's Stats.Fast is set. It is
// how a caller with its own rule for the draw (package az's self-play,
// whose draw is part of the protocol) uses the agent that spec option
// fast=N builds.
func NewCapped(name string, full, fast Agent, isFull func(seed uint64) bool) (Agent, error) {
	c, err := makeCapped(name, full, fast, isFull, 0, 0)
	if err != nil {
		return nil, err // not a nil *capped in a non-nil Agent
	}
	return c, nil
}

// newCapped builds the agent of spec sp (sp.Fast > 0) from its two
// searches, each built by build: the full one without the cap, the fast one
// of Fast simulations without temperature.
func newCapped(sp Spec, seed uint64, build func(Spec, uint64) (Agent, error)) (Agent, error) {
	fullSp, fastSp := sp, sp
	fullSp.Fast, fullSp.FullProb = 0, 0
	fastSp.Fast, fastSp.FullProb, fastSp.N, fastSp.Temp = 0, 0, sp.Fast, 0
	full, err := build(fullSp, seed)
	if err != nil {
		return nil, err
	}
	fast, err := build(fastSp, seed)
	if err != nil {
		return nil, err
	}
	c, err := makeCapped(sp.String(), full, fast, nil, sp.FullProb, seed)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// makeCapped checks that both searches can be reseeded and builds the agent.
func makeCapped(name string, full, fast Agent, isFull func(uint64) bool, prob float64, seed uint64) (*capped, error) {
	c := &capped{name: name, isFull: isFull, prob: prob, seed: seed}
	var ok bool
	if c.full, ok = full.(searcher); !ok {
		return nil, ErrNotReseeder
	}
	if c.fast, ok = fast.(searcher); !ok {
		return nil, ErrNotReseeder
	}
	c.r.seed(seed, cappedStream)
	return c, nil
}

// Name returns the spec, with its fast and full_prob options.
func (c *capped) Name() string { return c.name }

// Reseed reseeds both searches and the draw.
func (c *capped) Reseed(seed uint64) {
	c.full.Reseed(seed)
	c.fast.Reseed(seed)
	c.r.seed(seed, cappedStream)
	c.seed = seed
}

// SetInterrupt makes both searches poll flag.
func (c *capped) SetInterrupt(flag *atomic.Bool) {
	for _, s := range []searcher{c.full, c.fast} {
		if it, ok := s.(Interruptible); ok {
			it.SetInterrupt(flag)
		}
	}
}

// Act returns the action of the drawn search.
func (c *capped) Act(s *env.State) (env.Action, error) {
	a, _, err := c.ActStats(s)
	return a, err
}

// ActStats draws the search, runs it and marks a fast decision's Stats.
func (c *capped) ActStats(s *env.State) (env.Action, Stats, error) {
	full := false
	if c.isFull != nil {
		full = c.isFull(c.seed)
	} else {
		full = c.r.float64() < c.prob
	}
	if full {
		return c.full.ActStats(s)
	}
	a, st, err := c.fast.ActStats(s)
	st.Fast = true
	return a, st, err
}
