//go:build !race

package obs

// raceEnabled: the race detector slows the engine some tenfold, so the
// property tests play fewer games (see scaled).
const raceEnabled = false
