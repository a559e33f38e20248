// Package stats holds the statistics yutenv reports about matches between
// agents: the Wilson score interval of a win rate, the Elo difference a win
// rate implies, and Elo ratings from a Bradley-Terry fit of a round robin.
// The command line's eval uses it; yutenv.evaluate in Python computes the
// same Wilson interval.
//
// Usage:
//
//	lo, hi := stats.Wilson(60, 100, stats.Z95) // 95% interval of 60 wins in 100 games
//	elo := stats.EloDiff(0.6)                    // about +70
package stats
