package agent

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

func TestGumbelSchedule(t *testing.T) {
	tests := []struct {
		m, sims int
		want    []int32
	}{
		{1, 3, []int32{0, 1, 2}},
		{2, 5, []int32{0, 0, 1, 1, 2}},
		// log2 4 = 2 phases: 8/(2×4) = 1 round over 4, then 8/(2×2) = 2 rounds over 2.
		{4, 8, []int32{0, 0, 0, 0, 1, 1, 2, 2}},
		// 10/(2×3) = 1 round over 3, then rounds over 2 (never fewer) until the budget ends.
		{3, 10, []int32{0, 0, 0, 1, 1, 2, 2, 3, 3, 4}},
		// fewer simulations than actions: each visits a new action.
		{16, 5, []int32{0, 0, 0, 0, 0}},
		{16, 16, []int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{4, 0, []int32{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("m=%d,sims=%d", tt.m, tt.sims), func(t *testing.T) {
			got := GumbelSchedule(make([]int32, 3), tt.m, tt.sims)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("m=16,sims=200 halves 16, 8, 4, 2", func(t *testing.T) {
		got := GumbelSchedule(nil, 16, 200)
		require.Len(t, got, 200)
		// Phase 1: 200/(4×16) = 3 rounds over 16 actions; phase 2: 200/(4×8) = 6 over 8.
		for k := 0; k < 48; k++ {
			assert.Equal(t, int32(k/16), got[k], "simulation %d", k)
		}
		for k := 48; k < 96; k++ {
			assert.Equal(t, int32(3+(k-48)/8), got[k], "simulation %d", k)
		}
	})
}

// handTree returns a tree whose root (a decision of seat me) has three
// edges with priors 0.5, 0.3 and 0.2: the first visited twice with mean
// outcome 0.5 for the mover, the second once with -0.5, the third never;
// the root's evaluator value is 0.2.
func handTree(t *testing.T) (*tree, int) {
	s := position(t, env.Position{Pool: [6]int{env.Gae: 1}, Hand: [4]int{4, 4}})
	tr := &tree{}
	tr.newNode(&s)
	me := s.ToMove()
	root := &tr.nodes[0]
	root.first, root.count, root.raw = 0, 3, 0.2
	child := func(n int32, q float64) int32 {
		c := tr.newNode(&s)
		tr.nodes[c].n = n
		tr.nodes[c].w[me] = q * float64(n)
		tr.nodes[c].w[1-me] = -q * float64(n)
		return c
	}
	tr.edges = append(tr.edges,
		edge{child: child(2, 0.5), prob: 0.5},
		edge{child: child(1, -0.5), prob: 0.3},
		edge{child: -1, prob: 0.2})
	return tr, me
}

// TestGumbelCompletedQ checks σ(q̂) and the improved policy on a hand-made
// tree against the formulas worked by hand:
//
//	mixed value = (0.2 + 3 × (0.5×0.5 + 0.3×(-0.5)) / 0.8) / 4 = 0.14375
//	q = (0.5, -0.5, 0.14375), rescaled (1, 0, 0.64375)
//	σ = (50 + 2) × 0.1 × q̂ = (5.2, 0, 3.3475)
//	π' = softmax(log 0.5 + 5.2, log 0.3, log 0.2 + 3.3475)
func TestGumbelCompletedQ(t *testing.T) {
	tr, me := handTree(t)
	maxN := tr.completedQ(0)
	assert.Equal(t, int32(2), maxN)
	want := []float64{5.2, 0, 0.64375 * 5.2}
	for e, w := range want {
		assert.InDelta(t, w, tr.sigma[e], 1e-6, "sigma[%d]", e)
	}
	assert.InDelta(t, math.Log(0.3), tr.logit[1], 1e-6)
	tr.improved(0)
	z := []float64{math.Exp(math.Log(0.5) + 5.2), math.Exp(math.Log(0.3)), math.Exp(math.Log(0.2) + 0.64375*5.2)}
	sum := z[0] + z[1] + z[2]
	for e := range z {
		assert.InDelta(t, z[e]/sum, tr.qs[e], 1e-6, "improved[%d]", e)
	}

	t.Run("interior rule", func(t *testing.T) {
		// π' - N/(1+ΣN): (0.938, 0.003, 0.059) - (2, 1, 0)/4 = (0.438, -0.247, 0.059): the first edge.
		assert.Equal(t, int32(0), tr.gumbelInterior(0))
		// With the second edge's mean at +0.9 it leads q̂: π' ≈ (0.009, 0.985, 0.006) - (2, 1, 0)/4.
		tr.nodes[2].w[me], tr.nodes[2].w[1-me] = 0.9, -0.9
		assert.Equal(t, int32(1), tr.gumbelInterior(0))
	})
	t.Run("no visits: every q is the evaluator's value", func(t *testing.T) {
		tr, _ := handTree(t)
		tr.nodes[1].n, tr.nodes[2].n = 0, 0
		assert.Equal(t, int32(0), tr.completedQ(0))
		for e := range 3 {
			assert.Zero(t, tr.sigma[e], "equal q̂ rescale to 0")
		}
	})
}

// valueEval values a decision by the mover's lead in finished pieces and
// prefers low action ids, so that searches have something to find.
type valueEval struct{ calls int }

func (v *valueEval) Evaluate(s *env.State, priors []float32) (float64, error) {
	v.calls++
	for i := range priors {
		priors[i] = 1 / float32(1+i%7)
	}
	me := s.ToMove()
	lead := 0
	for p := 0; p < s.Rules().Players; p++ {
		if p != me {
			lead = max(lead, s.Finished(p)+s.Rules().Pieces-s.Hand(p))
		}
	}
	return math.Tanh(float64(s.Finished(me)+s.Rules().Pieces-s.Hand(me)-lead) / 4), nil
}

func gumbelMCTS(t *testing.T, sims, m int, seed uint64) *MCTS {
	t.Helper()
	sp, err := ParseSpec(fmt.Sprintf("mcts:%d", sims))
	require.NoError(t, err)
	g, err := NewMCTS(sp, seed, MCTSOptions{Evaluator: &valueEval{}, Gumbel: true, GumbelM: m})
	require.NoError(t, err)
	return g
}

// TestGumbelGames plays whole games with Gumbel searches on every seat:
// every action is legal, the policy is a distribution over the legal
// actions, the root visits follow sequential halving (at most m actions
// visited, as many as the schedule reaches), and a seed gives the same game.
func TestGumbelGames(t *testing.T) {
	for _, tc := range []struct {
		rules     string
		sims, m   int
		seed      uint64
		allocFree bool
	}{
		{"standard", 16, 4, 1, true},
		{"standard", 5, 16, 2, false},
		{"players=3", 24, 2, 3, false},
		{"kata", 8, 1, 4, false},
	} {
		t.Run(fmt.Sprintf("%s/sims=%d,m=%d", tc.rules, tc.sims, tc.m), func(t *testing.T) {
			play := func() []env.Action {
				rules := envtest.Rules(t, tc.rules)
				g := gumbelMCTS(t, tc.sims, tc.m, tc.seed)
				s, err := env.New(rules, tc.seed, env.AnySeat)
				require.NoError(t, err)
				var played []env.Action
				var buf [env.NumActions]env.Action
				for s.Advance(); !s.IsOver(); s.Advance() {
					a, st, err := g.ActStats(&s)
					require.NoError(t, err)
					require.True(t, s.IsLegal(a), "action %d is legal", a)
					legal := s.LegalActions(buf[:0])
					total, visited := 0.0, 0
					for x, p := range st.Policy {
						if !s.IsLegal(env.Action(x)) {
							require.Zero(t, p, "no policy on the illegal action %d", x)
							if st.Visits != nil {
								require.Zero(t, st.Visits[x])
							}
						}
						total += float64(p)
					}
					assert.InDelta(t, 1, total, 1e-5)
					if len(legal) > 1 {
						for _, x := range legal {
							if st.Visits[x] > 0 {
								visited++
							}
						}
						assert.Equal(t, min(tc.m, len(legal), tc.sims), visited, "the root visits its Gumbel-Top-m")
						checkQ(t, &s, st)
						if tc.allocFree {
							allocs := testing.AllocsPerRun(3, func() {
								_, _, _ = g.ActStats(&s)
							})
							assert.Zero(t, allocs, "a Gumbel decision allocates nothing")
						}
					}
					played = append(played, a)
					_, err = s.Apply(a)
					require.NoError(t, err)
				}
				return played
			}
			first := play()
			assert.Equal(t, first, play(), "the same seed plays the same game")
		})
	}
}

func TestGumbelRefusals(t *testing.T) {
	sp, err := ParseSpec("mcts:16")
	require.NoError(t, err)
	ev := &valueEval{}
	with := func(f func(*Spec, *MCTSOptions)) (Spec, MCTSOptions) {
		s, o := sp, MCTSOptions{Evaluator: ev, Gumbel: true}
		f(&s, &o)
		return s, o
	}
	for name, f := range map[string]func(*Spec, *MCTSOptions){
		"no evaluator":     func(_ *Spec, o *MCTSOptions) { o.Evaluator = nil },
		"workers":          func(s *Spec, _ *MCTSOptions) { s.Workers = 2 },
		"temp":             func(s *Spec, _ *MCTSOptions) { s.Temp = 1 },
		"temperature move": func(_ *Spec, o *MCTSOptions) { o.TempMoves = 10 },
		"dirichlet":        func(_ *Spec, o *MCTSOptions) { o.DirichletAlpha, o.DirichletFrac = 0.3, 0.25 },
		"time":             func(s *Spec, _ *MCTSOptions) { s.Time = 1 },
		"m":                func(_ *Spec, o *MCTSOptions) { o.GumbelM = 181 },
	} {
		t.Run(name, func(t *testing.T) {
			s, o := with(f)
			_, err := NewMCTS(s, 1, o)
			assert.ErrorIs(t, err, ErrSpec)
		})
	}
}
