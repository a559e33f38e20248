//go:build race

package vecenv

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put back on purpose, so a pooled worker is sometimes new: the allocation
// tests skip.
const raceEnabled = true
