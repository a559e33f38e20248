package stats

import "math"

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959964

// Wilson returns the Wilson score interval of wins successes out of n trials
// at normal quantile z (Z95 for 95%). With n = 0 it is [0, 1].
func Wilson(wins, n int, z float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	p, nf := float64(wins)/float64(n), float64(n)
	z2 := z * z
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / (1 + z2/nf)
	return math.Max(0, centre-half), math.Min(1, centre+half)
}

// EloDiff is the rating difference that gives win probability p: +Inf at
// p = 1, -Inf at p = 0, NaN outside [0, 1].
func EloDiff(p float64) float64 { return 400 * math.Log10(p/(1-p)) }

// BradleyTerryElo fits Bradley-Terry strengths by the minorization-
// maximization iteration to wins[i] (games player i won, draws counted as
// halves) and games[i][j] (games between i and j, symmetric) and returns
// each player's Elo rating, player 0 anchored at 0. A player with no games
// keeps strength 1 (Elo 0 next to player 0). Give every pair at least one
// virtual draw to keep ratings finite when a player won or lost everything.
func BradleyTerryElo(wins []float64, games [][]float64) []float64 {
	k := len(wins)
	gamma := mmFit(wins, games)
	elo := make([]float64, k)
	for i := range elo {
		elo[i] = 400 * math.Log10(gamma[i]/gamma[0])
	}
	return elo
}
