package agent

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// TestInterrupt: a raised flag stops every searching agent with
// ErrInterrupted; a lowered one changes nothing.
func TestInterrupt(t *testing.T) {
	s, err := env.New(env.Standard(), 3, env.AnySeat)
	require.NoError(t, err)
	for s.Phase() != env.PhaseMove || s.NumLegalActions() < 2 {
		s.Advance()
		var buf [env.NumActions]env.Action
		if legal := s.LegalActions(buf[:0]); len(legal) == 1 {
			_, err := s.Apply(legal[0])
			require.NoError(t, err)
		}
	}
	for _, spec := range []string{"mcts:5000", "mcts:5000,workers=2", "mc:500", "mc:500,workers=2"} {
		t.Run(spec, func(t *testing.T) {
			var flag atomic.Bool
			ag, err := New(spec, 1)
			require.NoError(t, err)
			ag.(Interruptible).SetInterrupt(&flag)
			_, st, err := ag.ActStats(&s)
			require.NoError(t, err)
			assert.Positive(t, st.Simulations)
			flag.Store(true)
			_, _, err = ag.ActStats(&s)
			assert.ErrorIs(t, err, ErrInterrupted)
		})
	}
}

// TestSearchBytes: an mcts search's memory grows with its simulations.
func TestSearchBytes(t *testing.T) {
	small := SearchBytes(Spec{Name: "mcts", N: 10})
	big := SearchBytes(Spec{Name: "mcts", N: 2010})
	assert.Equal(t, 2000*(nodeBytes+edgesPerNode*edgeBytes), big-small)
	assert.Equal(t, int64(agentBytes), SearchBytes(Spec{Name: "greedy"}))
}
