//go:build race

package server

// raceEnabled: the race detector keeps shadow memory several times the
// program's, so TestMemoryBound, which measures resident memory, skips.
const raceEnabled = true
