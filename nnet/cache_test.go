package nnet

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// TestCachingEvaluatorPlaysAsTheNet plays games with two searches of one
// seed, one valuing leaves through the cache and one through the bare
// evaluator: every decision and policy is the same, and the cache answers
// a good share of the leaves (observations recur across decisions).
func TestCachingEvaluatorPlaysAsTheNet(t *testing.T) {
	n := randomNet(5, 32, 32)
	for _, tc := range []struct {
		rules  string
		sims   int
		gumbel bool
	}{
		{"standard", 48, false},
		{"standard", 16, true},
		{"players=3", 24, false},
	} {
		t.Run(fmt.Sprintf("%s/sims=%d,gumbel=%v", tc.rules, tc.sims, tc.gumbel), func(t *testing.T) {
			rules, err := env.ParseRules(tc.rules)
			require.NoError(t, err)
			n.Rules = tc.rules // a network plays only the rules it records
			sp, err := agent.ParseSpec("mcts:1")
			require.NoError(t, err)
			sp.N = tc.sims
			cached := NewCachingEvaluator(n, agent.EvalCacheEntries(tc.sims))
			withCache, err := agent.NewMCTS(sp, 9, agent.MCTSOptions{Evaluator: cached, Gumbel: tc.gumbel})
			require.NoError(t, err)
			bare, err := agent.NewMCTS(sp, 9, agent.MCTSOptions{Evaluator: NewEvaluator(n), Gumbel: tc.gumbel})
			require.NoError(t, err)
			for g := uint64(1); g <= 2; g++ {
				s, err := env.New(rules, g, env.AnySeat)
				require.NoError(t, err)
				for s.Advance(); !s.IsOver(); s.Advance() {
					a, st, err := withCache.ActStats(&s)
					require.NoError(t, err)
					policy := append([]float32(nil), st.Policy...)
					b, st2, err := bare.ActStats(&s)
					require.NoError(t, err)
					require.Equal(t, b, a, "decision %d", s.Decisions())
					require.Equal(t, st2.Policy, policy, "decision %d", s.Decisions())
					_, err = s.Apply(a)
					require.NoError(t, err)
				}
			}
			hits, misses := cached.CacheStats()
			t.Logf("cache: %d hits, %d misses", hits, misses)
			assert.Greater(t, float64(hits), 0.1*float64(hits+misses), "at least a tenth of the leaves come from the cache")
		})
	}
}

// TestCachingEvaluatorAllocatesNothing: a hit and a miss allocate nothing.
func TestCachingEvaluatorAllocatesNothing(t *testing.T) {
	n := randomNet(5, 32)
	ev := NewCachingEvaluator(n, 64)
	pos := []env.State{}
	for seed := uint64(1); len(pos) < 100; seed++ {
		s, err := env.New(env.Standard(), seed, env.AnySeat)
		require.NoError(t, err)
		for s.Advance(); !s.IsOver() && len(pos) < 100; s.Advance() {
			pos = append(pos, s)
			var buf [env.NumActions]env.Action
			_, err := s.Apply(s.LegalActions(buf[:0])[0])
			require.NoError(t, err)
		}
	}
	priors := make([]float32, env.NumActions)
	_, err := ev.Evaluate(&pos[0], priors) // builds the encoder and the table
	require.NoError(t, err)
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := ev.Evaluate(&pos[i%len(pos)], priors); err != nil {
			t.Fatal(err)
		}
		i++
	})
	assert.Zero(t, allocs)
	hits, misses := ev.CacheStats()
	assert.Positive(t, hits)
	assert.Positive(t, misses)
}

func TestCachingEvaluatorSizes(t *testing.T) {
	n := randomNet(5, 8)
	for _, tc := range []struct{ entries, want int }{{0, 0}, {-3, 0}, {1, 1}, {100, 128}, {1 << 40, agent.EvalCacheMaxEntries}} {
		t.Run(fmt.Sprint(tc.entries), func(t *testing.T) {
			assert.Equal(t, tc.want, NewCachingEvaluator(n, tc.entries).cached)
		})
	}
}

func TestEvalCacheEntries(t *testing.T) {
	for _, tc := range []struct{ sims, want int }{{0, 0}, {1, 64}, {16, 64}, {17, 128}, {200, 1024}, {100000, 1024}} {
		t.Run(fmt.Sprint(tc.sims), func(t *testing.T) {
			assert.Equal(t, tc.want, agent.EvalCacheEntries(tc.sims))
		})
	}
}

// TestEvalCacheNeedsTheSameLegalActions: an answer is only given back for
// the key and legal actions it was made for.
func TestEvalCacheNeedsTheSameLegalActions(t *testing.T) {
	c := newEvalCache(64, 4)
	priors := make([]float32, env.NumActions)
	priors[3], priors[7] = 0.25, 0.75
	c.put(99, []env.Action{3, 7}, priors, 0.5)
	for _, tc := range []struct {
		name  string
		key   uint64
		legal []env.Action
		hit   bool
	}{
		{"same", 99, []env.Action{3, 7}, true},
		{"other key", 99 + 64, []env.Action{3, 7}, false},
		{"other actions", 99, []env.Action{3, 8}, false},
		{"fewer actions", 99, []env.Action{3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]float32, env.NumActions)
			v, ok := c.get(tc.key, tc.legal, got)
			assert.Equal(t, tc.hit, ok)
			if tc.hit {
				assert.Equal(t, float32(0.5), v)
				assert.Equal(t, priors, got)
			}
		})
	}
	many := make([]env.Action, agent.EvalCacheLegal+1)
	for i := range many {
		many[i] = env.Action(i)
	}
	c.put(5, many, priors, 0.1)
	_, ok := c.get(5, many, priors)
	assert.False(t, ok, "positions with more than EvalCacheLegal legal actions are not kept")
}
