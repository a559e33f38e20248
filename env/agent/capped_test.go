package agent

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
)

// decisionState returns a state at a decision with at least two legal actions.
func decisionState(t *testing.T, seed uint64) env.State {
	t.Helper()
	s, err := env.New(env.Standard(), seed, env.AnySeat)
	require.NoError(t, err)
	for s.Advance(); s.NumLegalActions() < 2; s.Advance() {
		a, _ := New("random", seed)
		act, err := a.Act(&s)
		require.NoError(t, err)
		_, err = s.Apply(act)
		require.NoError(t, err)
	}
	return s
}

// Playout cap randomization (fast=N): each decision runs the full search
// with probability full_prob and the fast one otherwise, marks the fast ones,
// and draws the same way after the same reseed.
func TestCappedDrawsItsSearches(t *testing.T) {
	if israce.Enabled {
		t.Skip("shares of 1,600 searches in one goroutine; the run without -race counts them")
	}
	for _, tt := range []struct {
		spec     string
		low, hig float64 // bounds on the share of full searches over 200 decisions
	}{
		{"mcts:32,fast=4,full_prob=0.5", 0.4, 0.6},
		{"mcts:32,fast=4", 0.17, 0.33},
		{"mcts:32,fast=4,full_prob=1", 1, 1},
		{"mcts:32,fast=4,full_prob=0", 0, 0},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			a, err := New(tt.spec, 7)
			require.NoError(t, err)
			sp, err := ParseSpec(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, sp.String(), a.Name())
			s := decisionState(t, 3)
			var draws []bool
			full := 0
			for i := range 200 {
				a.(Reseeder).Reseed(uint64(i))
				_, st, err := a.ActStats(&s)
				require.NoError(t, err)
				want := 32
				if st.Fast {
					want = 4
				} else {
					full++
				}
				assert.Equal(t, want, st.Simulations, "decision %d (fast %v)", i, st.Fast)
				draws = append(draws, st.Fast)
			}
			share := float64(full) / 200
			assert.GreaterOrEqual(t, share, tt.low)
			assert.LessOrEqual(t, share, tt.hig)
			for i := range 200 { // the same seeds draw the same searches
				a.(Reseeder).Reseed(uint64(i))
				_, st, err := a.ActStats(&s)
				require.NoError(t, err)
				assert.Equal(t, draws[i], st.Fast, "decision %d", i)
			}
		})
	}
}

// A capped agent passes its interrupt flag to both searches.
func TestCappedInterrupt(t *testing.T) {
	a, err := New("mcts:5000,fast=2000,full_prob=0.5", 1)
	require.NoError(t, err)
	var flag atomic.Bool
	flag.Store(true)
	a.(Interruptible).SetInterrupt(&flag)
	s := decisionState(t, 3)
	fast := map[bool]bool{}
	for i := range 20 {
		a.(Reseeder).Reseed(uint64(i))
		_, st, err := a.ActStats(&s)
		assert.ErrorIs(t, err, ErrInterrupted)
		fast[st.Fast] = true
	}
	assert.Len(t, fast, 2, "both searches were drawn and interrupted")
}

// SearchBytes counts a capped agent's fast search too.
func TestCappedSearchBytes(t *testing.T) {
	full, err := ParseSpec("mcts:400")
	require.NoError(t, err)
	capped, err := ParseSpec("mcts:400,fast=100")
	require.NoError(t, err)
	fast, err := ParseSpec("mcts:100")
	require.NoError(t, err)
	assert.Equal(t, SearchBytes(full)+SearchBytes(fast), SearchBytes(capped))
}

// NewCapped draws with the caller's rule, from the seed of the latest Reseed.
func TestNewCappedWithItsOwnDraw(t *testing.T) {
	full, err := New("mcts:16", 1)
	require.NoError(t, err)
	fast, err := New("mcts:2", 1)
	require.NoError(t, err)
	a, err := NewCapped("both", full, fast, func(seed uint64) bool { return seed%2 == 0 })
	require.NoError(t, err)
	assert.Equal(t, "both", a.Name())
	s := decisionState(t, 3)
	for seed := range uint64(6) {
		a.(Reseeder).Reseed(seed)
		_, st, err := a.ActStats(&s)
		require.NoError(t, err)
		assert.Equal(t, seed%2 == 1, st.Fast, "seed %d", seed)
		assert.Equal(t, map[bool]int{false: 16, true: 2}[st.Fast], st.Simulations)
	}
	_, err = NewCapped("x", full, notReseeder{}, nil)
	assert.ErrorIs(t, err, ErrNotReseeder)
}

// notReseeder is an agent without Reseed.
type notReseeder struct{}

func (notReseeder) Name() string                                   { return "x" }
func (notReseeder) Act(*env.State) (env.Action, error)             { return 0, nil }
func (notReseeder) ActStats(*env.State) (env.Action, Stats, error) { return 0, Stats{}, nil }
