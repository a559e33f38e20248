// Package solve computes optimal play of small two-seat Yut Nori variants
// exactly: it lists every state reachable from the start (chance nodes
// and decisions, with the pool of throws the seat to move still holds),
// through the engine's own moves and throws, and runs value iteration
// until no state's value changes by more than a tolerance (1e-13 by
// default). A state's value is the probability that the seat to move
// wins when both seats play optimally; chance nodes average over the
// exact throw probabilities of the rules, and an optimal action is the
// one whose successor has the highest value (Table.Best).
//
// It leaves out the sure wins: the states whose mover can finish all its
// pieces with the throws its pool already holds (value 1, found by a small
// search over the mover's own moves, surewin.go). Pools long enough to
// reach the cap below are almost all sure wins, so the pool no longer
// multiplies the states: the kata has 83,716 (under a second), pieces=1
// on the cross 37,484 (a tenth of a second) and pieces=2 on the cross 53.6
// million (4.5 minutes, 5.2 GiB); larger variants are refused with
// ErrTooBig (docs/BASELINES.md, "Exactly solved variants"). Under pool=on
// a turn's yut and mo chain without end, so the pool is capped
// (Options.PoolCap): the solved values are those of the game in which a
// turn whose pool reaches the cap throws no more yut or mo, which a turn
// reaches with probability below 1e-12 by default.
//
// Tables are saved to and loaded from a versioned, checksummed file
// (docs/FORMATS.md, "Solved tables"), and agent spec "optimal:PATH"
// (registered when this package is linked) plays from one:
//
//	r, _ := env.ParseRules("kata")
//	t, err := solve.Solve(r, solve.Options{})
//	if err != nil { ... }              // ErrUnsupported, ErrTooBig, ...
//	fmt.Println(t.Len(), t.Residual, t.Start()) // states, residual, first seat's P(win)
//	if err := t.Save("kata.ysolve"); err != nil { ... }
//
//	t, err = solve.Load("kata.ysolve") // a damaged file is refused, naming it
//	a, _, err := t.Best(&s)            // the optimal action of decision s
//
// The command "yutenv solve --rules kata --out kata.ysolve" does the same.
package solve
