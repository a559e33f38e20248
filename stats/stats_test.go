package stats

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// btData returns the expected wins of a round robin of n games per pair
// between players of the given Elo ratings: the data whose Bradley-Terry
// MLE is exactly those ratings.
func btData(elo []float64, n float64) ([]float64, [][]float64) {
	k := len(elo)
	wins := make([]float64, k)
	games := make([][]float64, k)
	for i := range games {
		games[i] = make([]float64, k)
		for j := range games[i] {
			if i != j {
				games[i][j] = n
				wins[i] += n / (1 + math.Pow(10, (elo[j]-elo[i])/400))
			}
		}
	}
	return wins, games
}

func TestBradleyTerry(t *testing.T) {
	tests := []struct {
		name      string
		elo       []float64
		anchor    int
		anchorElo float64
	}{
		{"two players", []float64{0, 200}, 0, 0},
		{"four players anchored at the first", []float64{0, 100, 350, -50}, 0, 0},
		{"anchored at the third, rated 1000", []float64{0, 100, 350, -50}, 2, 1000},
		{"large gaps", []float64{0, 800, 1500}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wins, games := btData(tt.elo, 400)
			r, err := BradleyTerry(wins, games, tt.anchor, tt.anchorElo, Z95)
			require.NoError(t, err)
			require.Len(t, r, len(tt.elo))
			for i, x := range r {
				want := tt.elo[i] - tt.elo[tt.anchor] + tt.anchorElo
				assert.InDelta(t, want, x.Elo, 1e-6, "player %d", i)
				assert.InDelta(t, x.Elo-Z95*x.SE, x.Low, 1e-9)
				assert.InDelta(t, x.Elo+Z95*x.SE, x.High, 1e-9)
				if i == tt.anchor {
					assert.Zero(t, x.SE)
				} else {
					assert.Greater(t, x.SE, 0.0)
				}
			}
		})
	}
}

func TestBradleyTerryTwoPlayerSE(t *testing.T) {
	// With two players the information is n·p·(1-p): the delta method's
	// standard error of the Elo difference of a win rate.
	n, p := 1000.0, 0.75
	r, err := BradleyTerry([]float64{n * (1 - p), n * p}, [][]float64{{0, n}, {n, 0}}, 0, 0, Z95)
	require.NoError(t, err)
	assert.InDelta(t, EloDiff(p), r[1].Elo, 1e-6)
	assert.InDelta(t, EloPerNat/math.Sqrt(n*p*(1-p)), r[1].SE, 1e-6)
}

func TestBradleyTerryIntervalsShrink(t *testing.T) {
	elo := []float64{0, 150, 300}
	var prev []Rating
	for _, n := range []float64{100, 400, 1600} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			wins, games := btData(elo, n)
			r, err := BradleyTerry(wins, games, 0, 0, Z95)
			require.NoError(t, err)
			if prev != nil {
				for i := 1; i < len(r); i++ {
					// Four times the games: half the standard error.
					assert.InDelta(t, prev[i].SE/2, r[i].SE, 1e-6)
				}
			}
			prev = r
		})
	}
}

func TestBradleyTerryPerfectWinner(t *testing.T) {
	// Player 1 won all 100 games; one virtual draw keeps its rating finite.
	r, err := BradleyTerry([]float64{0.5, 100.5}, [][]float64{{0, 101}, {101, 0}}, 0, 0, Z95)
	require.NoError(t, err)
	assert.False(t, math.IsInf(r[1].Elo, 0) || math.IsNaN(r[1].Elo))
	assert.InDelta(t, EloDiff(100.5/101), r[1].Elo, 1e-6)
	assert.Greater(t, r[1].Elo, 800.0)
	assert.False(t, math.IsInf(r[1].High, 0) || math.IsNaN(r[1].High))
}

func TestBradleyTerryErrors(t *testing.T) {
	tests := []struct {
		name   string
		wins   []float64
		games  [][]float64
		anchor int
	}{
		{"anchor out of range", []float64{1, 1}, [][]float64{{0, 2}, {2, 0}}, 2},
		{"ragged games", []float64{1, 1}, [][]float64{{0, 2}, {2}}, 0},
		{"no wins", []float64{0, 2}, [][]float64{{0, 2}, {2, 0}}, 0},
		{"not connected", []float64{1, 1, 1, 1}, [][]float64{{0, 2, 0, 0}, {2, 0, 0, 0}, {0, 0, 0, 2}, {0, 0, 2, 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BradleyTerry(tt.wins, tt.games, tt.anchor, 0, Z95)
			assert.ErrorIs(t, err, ErrFit)
		})
	}
}
