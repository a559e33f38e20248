//go:build unix && !linux

package server

import (
	"os"

	"golang.org/x/sys/unix"
)

// regionFD returns a descriptor of a new 0600 file in the temporary
// folder, already removed: no other process can open it by name, and
// nothing is left behind whatever happens to either process.
func regionFD() (int, error) {
	f, err := os.CreateTemp("", "yutenv-shared-*")
	if err != nil {
		return -1, err
	}
	defer f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return -1, err
	}
	return unix.Dup(int(f.Fd()))
}

// sealRegion does nothing here: a plain file takes no seals, so a client
// could still shrink its region; a fault in it then ends that connection
// only (the connection's goroutine and the pool's workers panic on a fault
// instead of crashing, see vecenv.IsFault).
func sealRegion(int) error { return nil }
