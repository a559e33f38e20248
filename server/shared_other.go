//go:build !unix

package server

import "errors"

func canPassFD(*conn) bool { return false }

func newRegion(int) ([]byte, int, func() error, error) {
	return nil, -1, nil, errShareUnsupported
}

func closeFD(int) {}

func writeWithFD(*conn, []byte, int) error { return errors.New("cannot pass a descriptor here") }

// peeker is unused where regions cannot be shared.
type peeker struct{}

func (c *conn) readable() bool { return true }
