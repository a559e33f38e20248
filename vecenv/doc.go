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
//     opponents' moves derive (the seed scheme below).
//
// Reset and Step write the rows of every env into buffers the batch
// reuses (Batch.Rows), spread over a Pool of worker goroutines shared by
// every batch; the hot path allocates nothing. Observe shows any seat its
// own view and mask of every env.
//
// Games outside a batch (the command line's selfplay and eval) run on Play,
// which spreads numbered games over worker goroutines, each with its own
// Players (agents kept per seat), and InOrder, which hands the results back
// in game order; Game builds the game itself.
//
// # One seed scheme
//
// Seed is the one seed mixer, and one scheme (SeedScheme, docs/PROTOCOL.md,
// "Seeds and determinism") names every game, wherever it is played:
//
//   - A game is named by its game seed x: env.New(rules, x, start).
//   - The agent that moves seat j at decision d of game x (d is the
//     state's decision counter before the move) is reseeded with
//     AgentSeed(x, j, d) = Seed(x, 1, j, d) right before it acts: by Game
//     (the command line's runner) and by a batch's opponents alike, so an
//     agent plays the same moves whichever worker holds it and whatever it
//     played before.
//   - Game g of a run seeded S has the game seed GameSeed(S, g) = S + g;
//     SeedAll(S) gives env i of a batch the game seed S + i for its first
//     episode (Gymnasium's convention). So game g of "yutenv selfplay --seed
//     S" and env g of a batch reset with seed S play the same game given
//     the same agents. Episode k >= 1 of an env whose first episode had the
//     game seed x0 has the game seed EpisodeSeed(x0, k) = Seed(x0, 2, k),
//     and a drawn learner seat is LearnerSeat(x, players), from Seed(x, 3).
//   - Network self-play with playout cap randomization (package az) draws
//     whether the decision of agent seed a is a full search from Seed(a, 4)
//     (az.FullSearch).
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
