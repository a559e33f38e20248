package agent

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// constEval answers every leaf with the same priors (uniform unless set)
// and value, and counts its calls.
type constEval struct {
	value  float64
	prior  map[env.Action]float32
	calls  int
	err    error
	phases []env.Phase
}

func (c *constEval) Evaluate(s *env.State, priors []float32) (float64, error) {
	c.calls++
	c.phases = append(c.phases, s.Phase())
	for i := range priors {
		priors[i] = 1
		if p, ok := c.prior[env.Action(i)]; ok {
			priors[i] = p
		}
	}
	return c.value, c.err
}

// TestEvaluatorHandWorked checks the visit counts of a search with a
// constant evaluator against a hand-worked position. Seat 0 has one piece
// left, on 19, and throws back-do and gae in its pool: back-do (edge 0,
// action 19) leaves a decision (value 0 from the evaluator), gae (edge 1,
// action 79) wins (+1). With uniform priors 1/2 and c = 2 the PUCT score is
// Q + sqrt(N)/(1+n):
//
//	sim 1 (N=0): both 0, the first edge: back-do    -> (1, 0)
//	sim 2 (N=1): 0+1/2 vs fpu 0+1/1: gae (wins)      -> (1, 1)
//	sims 3..8 (N=2..7): gae, as 1+sqrtN/N > sqrtN/2 -> (1, 7)
//	sim 9 (N=8): 2.83/2=1.41 > 1+2.83/8=1.35: back-do -> (2, 7)
func TestEvaluatorHandWorked(t *testing.T) {
	s := position(t, env.Position{
		Pool:     [6]int{env.BackDo: 1, env.Gae: 1},
		Hand:     [4]int{0, 1},
		Finished: [4]int{3, 0},
		Stacks:   []env.Stack{{Seat: 0, Station: 19, Height: 1}, {Seat: 1, Station: 17, Height: 3}},
	})
	back, win := env.NewAction(env.BackDo, 19), env.NewAction(env.Gae, 19)
	for _, tc := range []struct {
		sims       int
		back, win  float32
		calls      int
		value      float64
		playedBack bool
	}{
		{1, 1, 0, 2, 0, true},
		{3, 1, 2, 2, 2.0 / 3, false},
		{8, 1, 7, 2, 7.0 / 8, false},
		{9, 2, 7, -1, 7.0 / 9, false},
	} {
		t.Run("", func(t *testing.T) {
			sp, err := ParseSpec("mcts:1,c=2")
			require.NoError(t, err)
			sp.N = tc.sims
			ev := &constEval{}
			m, err := NewMCTS(sp, 1, MCTSOptions{Evaluator: ev})
			require.NoError(t, err)
			a, st, err := m.ActStats(&s)
			require.NoError(t, err)
			assert.Equal(t, tc.back, st.Visits[back])
			assert.Equal(t, tc.win, st.Visits[win])
			assert.InDelta(t, tc.value, st.Value, 1e-12)
			if tc.calls >= 0 {
				assert.Equal(t, tc.calls, ev.calls, "the root and back-do's decision; the win is terminal")
			}
			for _, ph := range ev.phases {
				assert.Equal(t, env.PhaseMove, ph, "the evaluator sees decisions only")
			}
			if tc.playedBack {
				assert.Equal(t, back, a)
			} else {
				assert.Equal(t, win, a)
			}
		})
	}
}

// TestEvaluatorPriorsSteer checks that the evaluator's priors, not the
// greedy ones, guide the search: all the prior on one action gets every
// visit after the first simulation.
func TestEvaluatorPriorsSteer(t *testing.T) {
	s := decisionWith(t, 5, 2)
	legal := s.LegalActions(nil)
	last := legal[len(legal)-1]
	ev := &constEval{prior: map[env.Action]float32{}}
	for _, a := range legal {
		ev.prior[a] = 0
	}
	ev.prior[last] = 5 // unnormalised on purpose
	sp, err := ParseSpec("mcts:40")
	require.NoError(t, err)
	m, err := NewMCTS(sp, 1, MCTSOptions{Evaluator: ev})
	require.NoError(t, err)
	a, st, err := m.ActStats(&s)
	require.NoError(t, err)
	assert.Equal(t, last, a)
	assert.Equal(t, float32(39), st.Visits[last], "the first simulation takes edge 0 (all scores 0)")
}

func TestEvaluatorErrors(t *testing.T) {
	s := decisionWith(t, 5, 2)
	sp, err := ParseSpec("mcts:20,workers=2")
	require.NoError(t, err)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		ev   *constEval
		want error
	}{
		{"error", &constEval{err: boom}, boom},
		{"nan", &constEval{value: math.NaN()}, ErrEvaluator},
		{"range", &constEval{value: 1.5}, ErrEvaluator},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp1 := sp
			sp1.Workers = 1
			m, err := NewMCTS(sp1, 1, MCTSOptions{Evaluator: tc.ev})
			require.NoError(t, err)
			_, err = m.Act(&s)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	_, err = NewMCTS(sp, 1, MCTSOptions{DirichletFrac: 2})
	assert.ErrorIs(t, err, ErrSpec)
	_, err = NewMCTS(Spec{Name: "greedy"}, 1, MCTSOptions{})
	assert.ErrorIs(t, err, ErrSpec)
}

// TestEvaluatorNoiseAndTemperature checks Dirichlet noise changes the
// search reproducibly (same seed, same visits) and the temperature
// schedule samples early moves.
func TestEvaluatorNoiseAndTemperature(t *testing.T) {
	s := decisionWith(t, 9, 3)
	sp, err := ParseSpec("mcts:64")
	require.NoError(t, err)
	run := func(opt MCTSOptions, seed uint64) []float32 {
		opt.Evaluator = &constEval{}
		m, err := NewMCTS(sp, seed, opt)
		require.NoError(t, err)
		_, st, err := m.ActStats(&s)
		require.NoError(t, err)
		return append([]float32(nil), st.Visits...)
	}
	plain := run(MCTSOptions{}, 1)
	noisy := run(MCTSOptions{DirichletAlpha: 0.3, DirichletFrac: 0.5}, 1)
	assert.Equal(t, noisy, run(MCTSOptions{DirichletAlpha: 0.3, DirichletFrac: 0.5}, 1), "same seed, same noise")
	assert.NotEqual(t, plain, noisy, "noise moves visits")
	assert.NotEqual(t, noisy, run(MCTSOptions{DirichletAlpha: 0.3, DirichletFrac: 0.5}, 2), "another seed, other noise")

	greedy := func(opt MCTSOptions) []float32 {
		m, err := NewMCTS(sp, 1, opt)
		require.NoError(t, err)
		_, st, err := m.ActStats(&s)
		require.NoError(t, err)
		return append([]float32(nil), st.Visits...)
	}
	assert.NotEqual(t, greedy(MCTSOptions{}), greedy(MCTSOptions{DirichletAlpha: 0.3, DirichletFrac: 0.5}),
		"noise also perturbs the greedy priors")

	played := map[env.Action]bool{}
	for seed := uint64(0); seed < 40; seed++ {
		m, err := NewMCTS(sp, seed, MCTSOptions{Evaluator: &constEval{}, TempMoves: 1000})
		require.NoError(t, err)
		a, err := m.Act(&s)
		require.NoError(t, err)
		played[a] = true
	}
	assert.Greater(t, len(played), 1, "temperature 1 samples among the visited actions")
}

func TestGammaMean(t *testing.T) {
	var r rng
	r.seed(3, 0)
	for _, alpha := range []float64{0.3, 1, 2.5} {
		sum := 0.0
		const n = 20000
		for range n {
			g := r.gamma(alpha)
			require.True(t, g >= 0 && !math.IsInf(g, 0))
			sum += g
		}
		assert.InDelta(t, alpha, sum/n, 0.05*alpha+0.02, "Gamma(alpha) has mean alpha")
	}
}

// decisionWith plays a standard game from seed (first legal actions) to
// its first decision with at least k legal actions.
func decisionWith(t *testing.T, seed uint64, k int) env.State {
	t.Helper()
	s, err := env.New(env.Standard(), seed, env.AnySeat)
	require.NoError(t, err)
	for s.Phase() != env.PhaseMove || len(s.LegalActions(nil)) < k {
		if s.Phase() == env.PhaseThrow {
			_, err = s.SampleThrow()
		} else {
			_, err = s.Apply(s.LegalActions(nil)[0])
		}
		require.NoError(t, err)
	}
	return s
}
