// Package vecenv holds the reinforcement-learning environment semantics of
// yutenv, independent of any transport: a Batch is N Yut Nori envs stepped
// together, with
//
//   - two modes: Single (one learner seat, the other seats played by an
//     opponent agent inside the batch) and Multi (every seat external; each
//     row is for the seat to move);
//   - Gymnasium's two autoreset modes, NextStep and SameStep (the terminal
//     row then goes to Rows.FinalObs, FinalMask, FinalToMove);
//   - reward schemes RewardWin (the terminal outcome) and RewardProgress
//     (plus potential-based shaping by race progress, which sums to zero
//     over an episode), truncation after Config.MaxDecisions steps, and an
//     illegal-action policy (IllegalError or IllegalPenalty);
//   - per-env seeds (Batch.Seeds) from which every episode's game and the
//     opponents' agents derive.
//
// Reset and Step write the rows of every env into buffers the batch
// reuses (Batch.Rows), spread over a Pool of worker goroutines shared by
// every batch; the hot path allocates nothing. Observe shows any seat its
// own view and mask of every env.
//
// Games outside a batch (the command line's selfplay and eval) run on Play,
// which spreads numbered games over worker goroutines, each with its own
// Players (agents kept per seat and reseeded game after game), and InOrder,
// which hands the results back in game order. Seed is the one seed mixer:
// game g of a run seeded S throws with Seed(S, 0, g) and its seat-i agent is
// seeded Seed(S, 1, g, i). A batch follows Gymnasium instead: SeedAll(S)
// gives env i the game seed S + i (docs/PROTOCOL.md, "Seeds and
// determinism"); filling Seeds()[i] with Seed(S, 0, g) replays the throws of
// the command line's game g.
//
// The socket server (package server) is a transport over this package.
//
// Usage:
//
//	b, err := vecenv.New(vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 64, Opponent: "random"})
//	if err != nil { ... }
//	pool := vecenv.NewPool(runtime.GOMAXPROCS(0))
//	defer pool.Close()
//	b.SeedAll(42) // env i plays game seed 42+i
//	err = b.Reset(pool, vecenv.ResetOptions{Start: env.AnySeat})
//	for {
//		rows := b.Rows() // rows.Obs, rows.Mask, ...
//		... fill b.Actions() from rows.Obs and rows.Mask ...
//		if err := b.CheckActions(); err != nil { ... }
//		err = b.Step(pool, false)
//	}
package vecenv
