// Package positions works on game states held as packed bytes
// (env.PackedSize each, env.State.AppendPacked), many to one slice: new
// games, actions and throws applied to every state, queries of phase, seat
// to move, legal mask, returns and observations, readable descriptions
// and saved-state blobs. It is the work of the server's state methods
// (docs/PROTOCOL.md, "Positions and search"), usable without a server:
// the server only reads the params and frames the results.
//
// A Game is the rule set the states are read under. Functions over many
// states run on a vecenv.Pool and report the lowest failing row as a
// *RowError.
//
// # Usage
//
// New games, a throw sampled for each, then who is to move in each:
//
//	g, err := positions.NewGame(env.Standard())
//	pool := vecenv.NewPool(runtime.NumCPU())
//	defer pool.Close()
//	states := make([]byte, 4*env.PackedSize) // four games, seeds 7 to 10
//	err = g.Initial(7, 0, states)
//	throws := []byte{0xff, 0xff, 0xff, 0xff} // -1: each state samples its own
//	err = g.Apply(pool, states, nil, throws, states)
//	q := positions.Query{ToMove: make([]byte, 4)}
//	err = g.Query(pool, states, &q)
//
// The package's Example shows it whole.
package positions
