package server

import "golang.org/x/sys/unix"

// sealRegions says whether newRegion seals its memfd. Only a test turns it
// off, to check what a region that can still shrink does to the server.
var sealRegions = true

// regionFD returns an anonymous memory file (memfd): it lives in no file
// system, so nothing is left behind whatever happens to either process. It
// allows seals, which sealRegion adds once the file has its size.
func regionFD() (int, error) {
	return unix.MemfdCreate("yutenv-shared", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
}

// sealRegion fixes the region's size for good before its descriptor is
// passed: the client can neither shrink it (the server's next write into
// a page past the end would be a SIGBUS) nor grow it, and no one can lift
// the seals.
func sealRegion(fd int) error {
	if !sealRegions {
		return nil
	}
	_, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL)
	return err
}
