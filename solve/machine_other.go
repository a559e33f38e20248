//go:build !linux && !darwin

package solve

// MachineBytes returns 0 and false: this build does not read the
// machine's physical memory, and Solve skips that check.
func MachineBytes() (int64, bool) { return 0, false }
