// Package analysis asks a built-in agent (package env/agent) for its
// action, search policy and value at many packed states at once: the work
// of the server's analyse method, usable without a server.
//
// State i is searched by an agent reseeded to seed+i, so the answer does
// not depend on how the states were split among workers. A worker takes
// turns (Job.Turn): a turn builds an agent and searches up to a chunk of
// states, claimed one at a time, so a scheduler (the server's cores, or
// Analyse's plain workers) can hand the cores to other work between
// turns. An agent's panic becomes the row's error; the first failing row
// (the lowest) stops the job; Stop (a cancelled request) interrupts the
// searches within 16 simulations.
//
// # Usage
//
// An agent's answer at every packed state of a slice (here mcts:50's, on
// two workers):
//
//	sp, err := agent.ParseSpec("mcts:50")
//	proto, err := env.New(env.Standard(), 0, 0) // the rules the states are read under
//	out := analysis.NewOut(n, proto.Rules().Players)
//	err = analysis.Analyse(ctx, &proto, packed, sp, seed, 2, out)
//	// out.Actions: one little-endian int32 a state; out.Policy, out.Value
//	// and out.Values: the search's policy and values.
//
// The package's Example shows it whole.
package analysis
