package solve

import "golang.org/x/sys/unix"

// MachineBytes returns the machine's total physical memory and true, or
// 0 and false where it cannot be read. On Linux it is sysinfo(2)'s total
// RAM, the MemTotal of /proc/meminfo.
func MachineBytes() (int64, bool) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 0, false
	}
	unit := max(uint64(si.Unit), 1)
	return int64(min(uint64(si.Totalram)*unit, 1<<62)), true
}
