package server

import (
	"errors"

	"github.com/yutenv/yutenv/protocol"
)

// Error is a protocol error response (protocol.Error).
type Error = protocol.Error

// errorf builds an *Error with a formatted message.
var errorf = protocol.Errorf

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("server closed")

// ErrConfig is wrapped by every error about a bad Config or listen address.
var ErrConfig = errors.New("bad server config")
