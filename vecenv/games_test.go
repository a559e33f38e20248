package vecenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

func TestSeed(t *testing.T) {
	seen := map[uint64]bool{}
	for g := uint64(0); g < 1000; g++ {
		for k := uint64(0); k < 3; k++ {
			s := Seed(1, k, g)
			assert.False(t, seen[s], "seed collision")
			seen[s] = true
		}
	}
	assert.Equal(t, Seed(5, 1, 2), Seed(5, 1, 2))
	assert.NotEqual(t, Seed(5, 1, 2), Seed(5, 2, 1))
}

// The seed values are part of the datasets' and evaluations' reproducibility:
// they must not change.
func TestSeedGolden(t *testing.T) {
	assert.Equal(t, uint64(1), Seed(1), "no path: the base")
	assert.Equal(t, Seed(Seed(7, 0), 3), Seed(7, 0, 3), "a path is a chain")
}

// Play runs every job once, whatever the workers, and InOrder hands them
// back in job order; an error of emit stops the run.
func TestPlayInOrder(t *testing.T) {
	for _, workers := range []int{1, 3} {
		stop := make(chan struct{})
		var got []int
		err := InOrder(Play(workers, 5, 40, stop, func(p *Players, j int) uint64 {
			a, err := p.Get(0, "random")
			require.NoError(t, err)
			res, err := Game(env.Standard(), GameSeed(9, j), env.AnySeat, []agent.Agent{a, a}).Play()
			require.NoError(t, err)
			return uint64(res.Decisions)
		}), 5, stop, func(j int, v uint64) error {
			got = append(got, j)
			assert.Positive(t, v)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, got, 35)
		for i, j := range got {
			assert.Equal(t, 5+i, j)
		}
	}
	stop := make(chan struct{})
	n := 0
	err := InOrder(Play(2, 0, 1000, stop, func(*Players, int) int { return 0 }), 0, stop, func(j, _ int) error {
		n++
		if j == 10 {
			return assert.AnError
		}
		return nil
	})
	assert.ErrorIs(t, err, assert.AnError)
	assert.Equal(t, 11, n)
}
