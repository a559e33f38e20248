// Package az runs network-guided self-play (AlphaZero-style) whose network
// lives outside the process: many games search at once, each in its own
// goroutine, and every leaf that needs a prior and a value is gathered
// with the other games' into one batch for the caller (the server's
// selfplay_next method, answered by a Python client's network).
//
// A batch holds at most one leaf per game in flight (no virtual loss: a
// game's search waits for its leaf's answer), and is handed out as soon as
// it is full (MaxBatch) or every live game is waiting. Chance nodes stay
// exact: the evaluator sees decisions only (agent.MCTSOptions). Finished
// games are written to a dataset (package dataset, with the raw visit
// counts) in game order, one shard at a time, so a run is reproducible
// from its seed whatever the batching, provided the evaluator is a
// function of its inputs.
//
//	run, err := az.Start(az.Config{Rules: env.Standard(), Tier: obs.Compact, Sims: 64, C: 1.5,
//		Games: 100, InFlight: 64, Out: "selfplay"})
//	defer run.Close()
//	var priors, values []float32
//	for {
//		b, err := run.Next(priors, values) // answer the last batch, get the next
//		if err != nil || b.N == 0 {
//			break
//		}
//		priors, values = evaluate(b.Obs, b.Mask, b.N)
//	}
package az
