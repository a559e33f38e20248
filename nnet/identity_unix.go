//go:build unix

package nnet

import (
	"os"
	"syscall"
)

// identity returns the identity of a file from its fstat.
func identity(st os.FileInfo) (fileID, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(sys.Dev), ino: uint64(sys.Ino), size: st.Size(), mtime: st.ModTime().UnixNano()}, true //nolint:unconvert // Dev and Ino differ in type between platforms
}
