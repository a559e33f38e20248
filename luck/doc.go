// Package luck measures the luck of a game's throws, so that a match can be
// scored by a luck-adjusted result (backgammon's variance reduction, as in
// gnubg): the luck of a throw, for each seat, is W(the position after the
// throw drawn) minus the expectation of W over the throws, with the rules'
// exact probabilities. Its sum over a game has expectation zero whatever W
// is, so a seat's outcome minus its summed luck is an unbiased estimate of
// its expected outcome; a W close to the true value only lowers the
// variance.
//
// W is built from a Value (a position's estimated outcome for every seat,
// on the outcome scale [-1, 1] of env.State.Outcome): at a decision it is
// the Value, at the end of the game the outcome, and at a chance node (a
// bonus throw, or the next seat's throw after a turn without a move) the
// expectation over the throws of W of the children, to a depth of
// Accountant.Depth chance nodes, past which the heuristic Progress stands
// in.
//
// For resolves a value function's name ("auto", "az", "progress", "off", or
// "net:PATH", a network file's value head: the command line's --luck and
// the env option luck) for a set of rules, opening a network file with the
// caller's Loader (LoadFile, or a server's folder policy):
//
//	name, value, err := luck.For("auto", rules, luck.LoadFile) // "az" under the standard rules
//	if err != nil { ... }                       // az under other rules, an unknown name
//	v, _ := value()                             // one per goroutine
//	acc := luck.New(v)
//	game.OnThrow = acc.Throw                    // agent.Game: every throw counted
//	res, _ := game.Play()
//	adjusted := res.Outcomes[0] - acc.Luck()[0] // seat 0's luck-adjusted outcome
//	_ = name
//
// The vector envs (package vecenv) take the same accountant through
// Config.Luck, and report each seat's luck per episode.
package luck
