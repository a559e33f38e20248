//go:build !race

package env_test

// raceEnabled: the race detector slows the engine some tenfold, so the
// property tests play fewer games (see trimmed).
const raceEnabled = false
