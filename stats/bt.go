package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// EloPerNat converts a difference of natural-log Bradley-Terry strengths
// into Elo points: 400/ln 10.
const EloPerNat = 400 / math.Ln10

// ErrFit is wrapped by every error of BradleyTerry: the data cannot be fit.
var ErrFit = errors.New("stats: bradley-terry fit")

// Rating is one player's Bradley-Terry rating on the Elo scale, relative
// to the anchor player, with its interval.
type Rating struct {
	// Elo is the maximum-likelihood rating (the anchor's is exactly its
	// given anchor rating).
	Elo float64
	// SE is the standard error of Elo minus the anchor's, from the observed
	// Fisher information (0 for the anchor).
	SE float64
	// Low and High bound the Wald interval Elo ± z·SE.
	Low, High float64
}

// BradleyTerry fits Bradley-Terry strengths to wins[i] (games player i
// won, draws counted as halves) and games[i][j] (games between i and j,
// symmetric) by maximum likelihood, and returns every player's Elo rating
// with player anchor rated anchorElo.
//
// The intervals are Wald intervals at normal quantile z (Z95 for 95%): the
// covariance of the log-strengths relative to the anchor is the inverse of
// the observed Fisher information with the anchor's row and column removed,
// so each interval says how well the player is placed relative to the
// anchor (whose own interval has zero width). They shrink as 1/sqrt(games).
//
// Every player must be connected to the anchor by games, and a player who
// won or lost every game has an infinite MLE: give every pair at least one
// virtual draw (half a win each way) to keep ratings finite, as yutenv's
// ladder does. Errors wrap ErrFit.
func BradleyTerry(wins []float64, games [][]float64, anchor int, anchorElo, z float64) ([]Rating, error) {
	k := len(wins)
	if anchor < 0 || anchor >= k || len(games) != k {
		return nil, fmt.Errorf("%w: %d players, %d rows of games, anchor %d", ErrFit, k, len(games), anchor)
	}
	for i := range games {
		if len(games[i]) != k {
			return nil, fmt.Errorf("%w: row %d of games has %d entries, want %d", ErrFit, i, len(games[i]), k)
		}
		if wins[i] <= 0 {
			return nil, fmt.Errorf("%w: player %d has no wins (add virtual draws)", ErrFit, i)
		}
	}
	if !connected(games, anchor) {
		return nil, fmt.Errorf("%w: a player is not connected to the anchor by games", ErrFit)
	}
	gamma := mmFit(wins, games)
	theta := make([]float64, k)
	for i := range theta {
		theta[i] = math.Log(gamma[i] / gamma[anchor])
	}
	// Observed Fisher information of the log-strengths, anchor removed.
	idx := make([]int, 0, k-1)
	for i := 0; i < k; i++ {
		if i != anchor {
			idx = append(idx, i)
		}
	}
	out := make([]Rating, k)
	out[anchor] = Rating{Elo: anchorElo, Low: anchorElo, High: anchorElo}
	if k == 1 {
		return out, nil
	}
	info := mat.NewSymDense(k-1, nil)
	for a, i := range idx {
		for b, j := range idx {
			if b < a {
				continue
			}
			if i == j {
				s := 0.0
				for m := 0; m < k; m++ {
					if m != i && games[i][m] > 0 {
						p := 1 / (1 + math.Exp(theta[m]-theta[i]))
						s += float64(games[i][m] * p * (1 - p)) // rounded: no FMA, the same bits on every machine
					}
				}
				info.SetSym(a, a, s)
			} else if games[i][j] > 0 {
				p := 1 / (1 + math.Exp(theta[j]-theta[i]))
				info.SetSym(a, b, -games[i][j]*p*(1-p))
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(info) {
		return nil, fmt.Errorf("%w: a player is not connected to the anchor by games", ErrFit)
	}
	var cov mat.SymDense
	if err := ch.InverseTo(&cov); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFit, err)
	}
	for a, i := range idx {
		elo := anchorElo + float64(EloPerNat*theta[i]) // float64(): no FMA (docs/COMPATIBILITY.md)
		se := EloPerNat * math.Sqrt(cov.At(a, a))
		out[i] = Rating{Elo: elo, SE: se, Low: elo - float64(z*se), High: elo + float64(z*se)}
	}
	return out, nil
}

// connected reports whether every player is linked to player from by a
// chain of pairs that played games.
func connected(games [][]float64, from int) bool {
	seen := make([]bool, len(games))
	seen[from] = true
	todo := []int{from}
	n := 1
	for len(todo) > 0 {
		i := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for j, g := range games[i] {
			if g > 0 && !seen[j] {
				seen[j] = true
				n++
				todo = append(todo, j)
			}
		}
	}
	return n == len(games)
}

// mmFit returns the Bradley-Terry strengths by the minorization-
// maximization iteration (Hunter 2004), up to a common factor.
func mmFit(wins []float64, games [][]float64) []float64 {
	gamma := make([]float64, len(wins))
	for i := range gamma {
		gamma[i] = 1
	}
	for iter := 0; iter < 100000; iter++ {
		change := 0.0
		for i := range gamma {
			den := 0.0
			for j := range gamma {
				if j != i && games[i][j] > 0 {
					den += games[i][j] / (gamma[i] + gamma[j])
				}
			}
			if den > 0 {
				next := wins[i] / den
				change = math.Max(change, math.Abs(math.Log(next/gamma[i])))
				gamma[i] = next
			}
		}
		if change < 1e-12 {
			break
		}
	}
	return gamma
}
