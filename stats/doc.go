// Package stats holds the statistics yutenv reports about matches between
// agents: the Wilson score interval of a win rate, the Elo difference a win
// rate implies, and Elo ratings from a Bradley-Terry fit of a round robin:
// BradleyTerryElo (eval's ranking) and BradleyTerry, the maximum-likelihood
// fit with Wald intervals from the observed Fisher information that
// "yutenv ladder" publishes. The command line's eval and ladder use it;
// yutenv.stats in Python computes the same figures.
//
// Usage:
//
//	lo, hi := stats.Wilson(60, 100, stats.Z95) // 95% interval of 60 wins in 100 games
//	elo := stats.EloDiff(0.6)                    // about +70
package stats
