// Package grade scores the decisions of a policy against a reference
// search: how much equity each choice gave away.
//
// At every decision of the graded seat the reference (an agent spec whose
// statistics value every legal action, agent.Stats.Q: "az,sims=N",
// "mcts:N", "mc:N", "optimal:PATH") searches the state before the move,
// and the decision's loss is
//
//	loss = Q(best) − Q(chosen) ≥ 0
//
// where Q(a) is the reference's estimate of the mover's expected outcome
// after action a, on the outcome scale of agent.Stats: in [-1, 1], +1 a
// win and -1 a loss (with two seats an outcome of 2p − 1 for a win
// probability p, so a loss of 0.02 is one percentage point of winning
// chances), and best the legal action of the highest Q (the lowest action
// id on a tie). A choice of the reference's best loses exactly 0. A forced
// decision (one legal action) is not searched: it is counted apart
// (Report.Forced) and left out of every figure.
//
// The reference searching game x's decision d of seat j is reseeded with
// vecenv.AgentSeed(x, j, d), the seed the agent in that seat had there
// (the yutenv game runner's seed scheme), so a report depends on the seed
// alone, not on the workers, and a reference of the graded agent's own
// spec reproduces its choices (mc, optimal: a loss of 0 throughout).
//
// The decisions come from a Source: games played now between the graded
// agent and an opponent (Match), or game records (Records: yutenv's own
// records, and the records every dataset shard holds).
//
// # The interval of the mean loss
//
// Report.MeanLow and Report.MeanHigh bound the mean loss's 95% interval,
// Report.MeanSE is its standard error. The decisions of one game are not
// independent (a game gone wrong holds many costly decisions), so the game
// is the unit: game g contributes its graded decisions' summed loss L_g and
// their number D_g (0 and 0 for a game with none), and over G games the
// mean loss is the ratio
//
//	m = ΣL_g / ΣD_g
//
// whose variance, by the delta method clustered by game, is estimated as
//
//	se² = G/(G−1) · Σ(L_g − m·D_g)² / (ΣD_g)²
//
// The interval is m ± Z·se, Z = stats.Z95, its low end raised to 0 (a loss
// is never negative). Five sums over the games (ΣL, ΣD, ΣL², ΣD², ΣL·D)
// give it, Σ(L − mD)² being ΣL² − 2mΣLD + m²ΣD², so a report's memory stays
// bounded. It needs two games with a graded decision each: a report of one
// such game (or none) has no interval (a single game says nothing of how
// games vary).
//
// An agent's per-game spread, se·√G, is what its se would be over one game:
// over n games its se is se·√(G/n).
//
// # Separating two agents
//
// Separate compares two reports (yutenv grade --compare ranks saved ones
// and compares each with the next). Two agents graded in their own games
// (independent samples) differ by d = m_b − m_a with the interval
// d ± Z·√(se_a² + se_b²); they are separated when it leaves out 0. The
// games each would need to separate a difference of |d| are roughly
//
//	n = ⌈Z² · (se_a²·G_a + se_b²·G_b) / d²⌉
//
// the n at which Z times the difference's se equals |d|: if the true
// difference is d, n games each separate the two about half the time (4n
// games nearly always). It reads d off the reports, themselves noisy.
//
// Usage:
//
//	m := grade.Match{Rules: env.Standard(), Agent: "greedy", Opponent: "greedy", Games: 200, Seed: 1}
//	rep, err := grade.Run(ctx, m, grade.Options{Reference: "az,sims=200", Workers: 2, Worst: 5})
//	if err != nil { ... }
//	fmt.Printf("%d decisions, mean loss %.4f, %.1f%% errors\n", rep.Decisions, rep.Mean, 100*rep.ErrorRate)
//	s, err := grade.Separate(rep, other) // another agent's report, same reference
//	if err == nil && !s.Separated { ... } // about *s.GamesToSeparate games each would tell them apart
package grade
