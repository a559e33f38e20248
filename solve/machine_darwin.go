package solve

import "golang.org/x/sys/unix"

// MachineBytes returns the machine's total physical memory (sysctl
// hw.memsize) and true, or 0 and false where it cannot be read.
func MachineBytes() (int64, bool) {
	b, err := unix.SysctlUint64("hw.memsize")
	if err != nil || b == 0 {
		return 0, false
	}
	return int64(min(b, 1<<62)), true
}
