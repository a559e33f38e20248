package nnet

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// evalCache remembers the network's answers for recent observations: a
// direct-mapped table of agent.EvalCacheEntries(sims) entries keyed by a
// 64-bit hash of the encoded observation (which alone decides the net's
// output). A search meets the same observation again through
// transpositions (two throws of one turn played in either order) and,
// far more often, in the next decisions, whose subtrees the previous
// search already evaluated: in games of 200 simulations a decision about
// one evaluation in six is answered from it (BenchmarkGameSideBySide,
// docs/BENCHMARKS.md). Answers are the
// very priors and value the net gives, so a search plays the same with or
// without it (up to a 64-bit hash collision).
type evalCache struct {
	seed    maphash.Seed
	buf     []byte
	entries []evalEntry
	hits    int64
	misses  int64
}

// evalEntry is one remembered answer: the legal actions, in the order of
// State.LegalActions, and their priors. A hit needs the same legal actions
// too, so an answer is never given to a position it was not made for.
type evalEntry struct {
	key    uint64
	value  float32
	n      uint8 // legal actions; 0: empty
	legal  [agent.EvalCacheLegal]uint8
	priors [agent.EvalCacheLegal]float32
}

func newEvalCache(entries, obsSize int) *evalCache {
	return &evalCache{seed: maphash.MakeSeed(), buf: make([]byte, 4*obsSize), entries: make([]evalEntry, entries)}
}

// key hashes the observation x.
func (c *evalCache) key(x []float32) uint64 {
	b := c.buf[:4*len(x)]
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return maphash.Bytes(c.seed, b)
}

// get writes the remembered priors of key into priors (legal: the state's
// legal actions) and returns the value, or ok = false.
func (c *evalCache) get(key uint64, legal []env.Action, priors []float32) (v float32, ok bool) {
	e := &c.entries[key&uint64(len(c.entries)-1)]
	if e.n == 0 || e.key != key || int(e.n) != len(legal) {
		c.misses++
		return 0, false
	}
	for i, a := range legal {
		if e.legal[i] != uint8(a) {
			c.misses++
			return 0, false
		}
	}
	c.hits++
	for i, a := range legal {
		priors[a] = e.priors[i]
	}
	return e.value, true
}

// put remembers the answer for key (positions with more than
// agent.EvalCacheLegal legal actions are not kept).
func (c *evalCache) put(key uint64, legal []env.Action, priors []float32, v float32) {
	if len(legal) == 0 || len(legal) > agent.EvalCacheLegal {
		return
	}
	e := &c.entries[key&uint64(len(c.entries)-1)]
	e.key, e.value, e.n = key, v, uint8(len(legal))
	for i, a := range legal {
		e.legal[i], e.priors[i] = uint8(a), priors[a]
	}
}
