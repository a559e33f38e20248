//go:build unix

package server

import (
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// canPassFD reports whether c can pass a file descriptor (a Unix socket).
func canPassFD(c *conn) bool {
	_, ok := c.nc.(*net.UnixConn)
	return ok
}

// newRegion maps a new shared region of size bytes (rounded up to pages),
// zeroed, and returns it with a descriptor to pass to the client and the
// function that unmaps it. The region has no name anyone else could open:
// on Linux a memfd, elsewhere a 0600 file removed before it is returned.
// On Linux its size is sealed (sealRegion): a client cannot shrink it.
func newRegion(size int) (mem []byte, fd int, unmap func() error, err error) {
	page := os.Getpagesize()
	size = (size + page - 1) / page * page
	fd, err = regionFD()
	if err != nil {
		return nil, -1, nil, err
	}
	if err = unix.Ftruncate(fd, int64(size)); err == nil {
		err = sealRegion(fd)
	}
	if err == nil {
		mem, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	}
	if err != nil {
		unix.Close(fd)
		return nil, -1, nil, err
	}
	return mem, fd, func() error { return unix.Munmap(mem) }, nil
}

func closeFD(fd int) { unix.Close(fd) }

// writeWithFD writes out to c with fd passed alongside (SCM_RIGHTS), then
// closes fd: the client's copy keeps the region.
func writeWithFD(c *conn, out []byte, fd int) error {
	defer unix.Close(fd)
	uc := c.nc.(*net.UnixConn)
	n, _, err := uc.WriteMsgUnix(out, syscall.UnixRights(fd), nil)
	if err == nil && n < len(out) {
		_, err = uc.Write(out[n:])
	}
	return err
}

// peeker checks a connection's socket for bytes without reading them. It
// is made once per connection (the poll of a shared region checks many
// times a millisecond), so that a check allocates nothing.
type peeker struct {
	raw  syscall.RawConn
	fds  [1]unix.PollFd
	fn   func(fd uintptr) bool
	seen bool
}

// readable reports whether a frame's bytes wait to be read: buffered, or
// in the socket (data or end of file: a poll that does not block).
func (c *conn) readable() bool {
	if c.r.Buffered() > 0 {
		return true
	}
	p := c.peek
	if p == nil {
		sc, ok := c.nc.(syscall.Conn)
		if !ok {
			return true
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return true
		}
		p = &peeker{raw: raw}
		p.fn = func(fd uintptr) bool {
			p.fds[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
			n, err := unix.Poll(p.fds[:], 0)
			p.seen = err != nil || (n > 0 && p.fds[0].Revents != 0)
			return true
		}
		c.peek = p
	}
	if err := p.raw.Read(p.fn); err != nil {
		return true
	}
	return p.seen
}
