//go:build race

package solve

// raceEnabled: the race detector slows value iteration some tenfold, so
// TestSolveResidual solves only the kata under it; the run without it
// (make test runs both) solves every variant.
const raceEnabled = true
