// Package agent holds the baseline players of Yut Nori: random, greedy,
// flat Monte Carlo (mc) and Monte Carlo tree search with chance nodes
// (mcts). Every learned policy is measured against them, and their
// searches produce the policy and value targets of self-play datasets.
//
// An agent is named by a spec string, parsed in one place (ParseSpec) and
// used the same way by the CLI, the server's opponents and Python:
//
//	random                        uniform over the legal actions
//	greedy                        one-move heuristic (see Greedy for its scoring)
//	mc:100                        100 rollouts per legal action, best mean outcome
//	mc:100,rollout=greedy         the same with greedy rollouts
//	mcts:400                      400 simulations per decision: PUCT with greedy priors, random rollouts
//	mcts:400,prior=none           plain UCT
//	mcts:200,c=1.4,rollout=random,time=50ms,workers=2
//	mcts:400,temp=1               moves sampled from the visit counts (self-play)
//	mcts:400,fast=50              playout cap randomization (self-play): a quarter of the
//	                              decisions search 400, the others 50 (Stats.Fast)
//
// Lists of specs (--agents) are separated by ';' (SplitSpecs).
//
// Every agent is deterministic given its seed (a time budget aside), works
// for any valid rules (2 to 4 seats), never reads the game's own generator,
// and allocates nothing per decision once its pools are sized:
//
//	a, err := agent.New("mcts:400", 1)
//	if err != nil { ... }
//	s, _ := env.New(env.Standard(), 7, env.AnySeat)
//	s.Advance()                       // throw until a decision
//	act, st, err := a.ActStats(&s)    // st.Policy: visits over the 180 actions
//	fmt.Println(act, st.Value, st.Simulations)
//
// Game plays whole games between agents, with per-seat timing and an
// optional record:
//
//	res, err := agent.Game{Rules: env.Standard(), Seed: 1, Start: env.AnySeat,
//		Seats: []agent.Agent{a, b}}.Play()
package agent
