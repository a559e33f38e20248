package server

import (
	"errors"
	"fmt"
)

// Code is a protocol error code, sent as a string in {error: {code, message}}.
// docs/PROTOCOL.md lists when each is sent and whether the connection stays open.
type Code string

// The error codes of protocol version 1.
const (
	// CodeBadFrame: the frame body is not one well-formed msgpack map.
	CodeBadFrame Code = "bad_frame"
	// CodeFrameTooLarge: the declared frame length is 0 or above the maximum; the connection is closed.
	CodeFrameTooLarge Code = "frame_too_large"
	// CodeBadRequest: a missing, mistyped, unknown or out-of-range field.
	CodeBadRequest Code = "bad_request"
	// CodeUnknownMethod: the method is not part of the protocol.
	CodeUnknownMethod Code = "unknown_method"
	// CodeHandshakeRequired: the first request on a connection was not hello.
	CodeHandshakeRequired Code = "handshake_required"
	// CodeUnauthorized: the token is missing or wrong; the connection is closed.
	CodeUnauthorized Code = "unauthorized"
	// CodeVersionMismatch: the client speaks a protocol version this server does not.
	CodeVersionMismatch Code = "version_mismatch"
	// CodeInvalidRules: the rules configuration failed validation.
	CodeInvalidRules Code = "invalid_rules"
	// CodeUnknownHandle: no handle with that id on this connection.
	CodeUnknownHandle Code = "unknown_handle"
	// CodeNeedsReset: step on a handle that was never reset.
	CodeNeedsReset Code = "needs_reset"
	// CodeIllegalAction: an action is not legal (illegal policy "error"); no env changed.
	CodeIllegalAction Code = "illegal_action"
	// CodeLimitExceeded: a server limit would be exceeded.
	CodeLimitExceeded Code = "limit_exceeded"
	// CodeBadState: a saved state blob could not be loaded.
	CodeBadState Code = "bad_state"
	// CodeUnsupported: a valid request this server cannot serve.
	CodeUnsupported Code = "unsupported"
	// CodeShuttingDown: the server is shutting down; the connection is closed.
	CodeShuttingDown Code = "shutting_down"
	// CodeEvalTimeout: a self-play run's batch was not answered within its
	// eval_timeout; the run was cancelled (its finished shards stay).
	CodeEvalTimeout Code = "eval_timeout"
	// CodeBadNet: an agent's network (net:NAME) is refused: the name is not
	// a regular file inside the server's network folders (one message for
	// every reason, so a client learns nothing of other files), or the file
	// is not a valid network, or the network's output was NaN or infinite.
	CodeBadNet Code = "bad_net"
	// CodeInternal: a bug in the server.
	CodeInternal Code = "internal"
)

// Codes lists every error code, in the order of docs/PROTOCOL.md.
func Codes() []Code {
	return []Code{CodeBadFrame, CodeFrameTooLarge, CodeBadRequest, CodeUnknownMethod, CodeHandshakeRequired,
		CodeUnauthorized, CodeVersionMismatch, CodeInvalidRules, CodeUnknownHandle, CodeNeedsReset,
		CodeIllegalAction, CodeLimitExceeded, CodeBadState, CodeUnsupported, CodeShuttingDown, CodeEvalTimeout, CodeBadNet, CodeInternal}
}

// Error is an error response: the server sends it as {code, message}, and
// Client returns it for a response that carries one. Use errors.As to get
// the code.
type Error struct {
	Code    Code
	Message string
}

// Error returns "code: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is makes errors.Is(err, &Error{Code: c}) match any error with code c.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// errorf builds an *Error with a formatted message.
func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("server closed")

// ErrConfig is wrapped by every error about a bad Config or listen address.
var ErrConfig = errors.New("bad server config")
