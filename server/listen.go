package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Listen opens a listener for an address in the form --listen accepts:
// "unix:/path" or "host:port". A Unix socket file is made private to the
// owner (mode 0600); a stale socket file nobody listens on is replaced, any
// other existing file is refused. It returns the listener and the address
// in the same form, with the real port when port 0 was asked for.
func Listen(addr string) (net.Listener, string, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return nil, "", fmt.Errorf("%w: empty Unix socket path in %q", ErrConfig, addr)
		}
		if err := removeStaleSocket(path); err != nil {
			return nil, "", err
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			return nil, "", err
		}
		if err := os.Chmod(path, 0o600); err != nil {
			l.Close()
			return nil, "", err
		}
		return l, "unix:" + path, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, "", fmt.Errorf("%w: listen address %q is neither host:port nor unix:/path", ErrConfig, addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	return l, l.Addr().String(), nil
}

// removeStaleSocket deletes path if it is a socket nobody accepts on.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%w: %s exists and is not a socket", ErrConfig, path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%w: another server is listening on %s", ErrConfig, path)
	}
	return os.Remove(path)
}

// NeedsToken reports whether listening on addr requires a token: any TCP
// address but a loopback one (127.0.0.0/8, ::1, localhost). Unix sockets do not.
func NeedsToken(addr string) bool {
	if strings.HasPrefix(addr, "unix:") {
		return false
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
