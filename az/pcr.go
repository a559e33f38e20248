package az

import "github.com/yutenv/yutenv/vecenv"

// Playout cap randomization (KataGo: Wu, "Accelerating self-play learning
// in Go", 2019). With FastSims > 0, every decision draws whether it is a
// full search (probability FullProb: Sims simulations, with the run's
// exploration, and its row records a policy target) or a fast one
// (FastSims simulations, no Dirichlet noise and no temperature: the most
// visited action is played, as KataGo's fast searches do; under Gumbel the
// fast search is the same Gumbel search with FastSims simulations, whose
// Gumbel numbers are its only exploration). A fast row's policy is not a
// target (the dataset's policy_target is 0); its value targets are kept.

// pcrPath is the seed path index of the playout-cap draw: the decision's
// agent seed s (vecenv.AgentSeed) draws vecenv.Seed(s, pcrPath).
const pcrPath = 4

// FullSearch reports whether the decision whose agent seed is seed
// (vecenv.AgentSeed of the game seed, the seat and the decision) runs the
// full search under playout cap randomization with probability fullProb:
// Seed(seed, 4) / 2^64 < fullProb. The same seed always draws the same.
func FullSearch(seed uint64, fullProb float64) bool {
	u := float64(vecenv.Seed(seed, pcrPath)>>11) / (1 << 53)
	return u < fullProb
}
