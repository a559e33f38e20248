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
// Usage:
//
//	m := grade.Match{Rules: env.Standard(), Agent: "greedy", Opponent: "greedy", Games: 200, Seed: 1}
//	rep, err := grade.Run(ctx, m, grade.Options{Reference: "az,sims=200", Workers: 2, Worst: 5})
//	if err != nil { ... }
//	fmt.Printf("%d decisions, mean loss %.4f, %.1f%% errors\n", rep.Decisions, rep.Mean, 100*rep.ErrorRate)
package grade
