package stats

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWilson(t *testing.T) {
	tests := []struct {
		wins, n int
		lo, hi  float64
	}{
		{50, 100, 0.40383, 0.59617},
		{0, 10, 0, 0.27753},
		{10, 10, 0.72247, 1},
		{1718, 2000, 0.84307, 0.87357},
		{0, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d", tt.wins, tt.n), func(t *testing.T) {
			lo, hi := Wilson(tt.wins, tt.n, Z95)
			assert.InDelta(t, tt.lo, lo, 1e-4)
			assert.InDelta(t, tt.hi, hi, 1e-4)
		})
	}
}

func TestEloDiff(t *testing.T) {
	assert.InDelta(t, 0, EloDiff(0.5), 1e-12)
	assert.InDelta(t, 190.85, EloDiff(0.75), 0.01)
	assert.InDelta(t, -190.85, EloDiff(0.25), 0.01)
	assert.True(t, math.IsInf(EloDiff(1), 1))
	assert.True(t, math.IsInf(EloDiff(0), -1))
}

func TestBradleyTerryElo(t *testing.T) {
	// Two players, 75% for player 1 (with one virtual draw): the fit is the
	// Elo difference of the win rate.
	elo := BradleyTerryElo([]float64{25.5, 75.5}, [][]float64{{0, 101}, {101, 0}})
	assert.Equal(t, 0.0, elo[0])
	assert.InDelta(t, EloDiff(75.5/101), elo[1], 1e-6)
}

func ExampleWilson() {
	lo, hi := Wilson(60, 100, Z95)
	fmt.Printf("%.3f..%.3f, Elo %+.0f\n", lo, hi, EloDiff(0.6))
	// Output: 0.502..0.691, Elo +70
}
