//go:build race

package israce

// Enabled reports whether the program was built with the race detector.
const Enabled = true
