//go:build !race

package luck

// raceEnabled: the race detector slows the games some tenfold, so the
// unbiasedness tests play fewer games.
const raceEnabled = false
