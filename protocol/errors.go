package protocol

import (
	"fmt"
	"slices"
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

// CodeInfo documents an error code for docs/PROTOCOL.md's table.
type CodeInfo struct {
	// Code is the code.
	Code Code
	// When says when the server sends it (Markdown).
	When string
	// Connection says what becomes of the connection: kept or closed.
	Connection string
}

// codeInfos documents every error code, in the order of docs/PROTOCOL.md
// (whose table of codes is generated from it).
var codeInfos = [...]CodeInfo{
	{CodeBadFrame, "the body is not one well-formed msgpack map (see [Frames](#frames))",
		"kept"},
	{CodeFrameTooLarge, "declared length is 0 or above `max_frame`",
		"closed"},
	{CodeBadRequest, "a missing, mistyped, unknown or out-of-range field; a bad opponent spec; a wrong number of actions; an env index out of range",
		"kept"},
	{CodeUnknownMethod, "`method` is not one of this document's methods",
		"kept"},
	{CodeHandshakeRequired, "the first request on a connection was not `hello` (kept); no successful `hello` within `--handshake-timeout` of connecting (sent with `id` nil, then closed)",
		"kept / closed"},
	{CodeUnauthorized, "the server has a token and `hello` did not present it, or presented a wrong one",
		"closed"},
	{CodeVersionMismatch, "`hello.protocol` is not a version this server speaks (it speaks `1`)",
		"kept"},
	{CodeInvalidRules, "the rules config failed validation (the message names the field and its allowed values)",
		"kept"},
	{CodeUnknownHandle, "no handle with that id on this connection (never made, or closed)",
		"kept"},
	{CodeNeedsReset, "`step`, `save`, `load`, `render` or `observe` on a handle that was never `reset`",
		"kept"},
	{CodeIllegalAction, "with `illegal: \"error\"`, an action is not legal; the message names the env index, the action and why; **no env of the batch was changed**",
		"kept"},
	{CodeLimitExceeded, "a server limit: envs per connection, envs in total, an opponent search above `--max-opponent-sims`, an `analyse` above `--max-analyse-sims` or with more agent workers than `--analyse-workers`, a self-play run above `--max-selfplay-bytes` (alone, or with the runs already held), the in-flight memory budget `--max-inflight-bytes` (a frame too large for it or that waited past the idle deadline, answered with `id` nil after its body was dropped; a large reply while a large frame holds the budget), a batch whose results would exceed `max_frame`, connections: `--max-conns` reached (sent with `id` nil right after accept, or as the answer to `hello` if the limit filled meanwhile), or the connection was the oldest still in handshake when `--max-handshakes` was reached (`id` nil); also a result that turned out larger than `max_frame` (possible only with info on: the request *was* carried out, the message says so)",
		"kept (closed for the connection limits)"},
	{CodeBadState, "`load`: the blob is damaged, of an unknown version, or for other rules than the handle's",
		"kept"},
	{CodeUnsupported, "a valid request for something this server does not do (for example `render` as an image)",
		"kept"},
	{CodeShuttingDown, "the server is shutting down",
		"closed"},
	{CodeEvalTimeout, "a self-play run's batch was not answered within its `eval_timeout`; the run is cancelled (its finished shards stay)",
		"kept"},
	{CodeBadNet, "an agent spec `net:NAME` (`make`'s opponent, `analyse`'s agent) names no network this server may open (one message for every reason: see [Networks](#networks)), or the file is not a valid network (the message says why), or the network's output was NaN or infinite while it played (`step`, `reset`, `analyse`)",
		"kept"},
	{CodeInternal, "a bug in the server (it was logged); the handle concerned should be closed",
		"kept"},
}

// Codes lists every error code, in the order of docs/PROTOCOL.md.
func Codes() []Code {
	codes := make([]Code, len(codeInfos))
	for i, c := range codeInfos {
		codes[i] = c.Code
	}
	return codes
}

// CodeInfos documents every error code, in the order of docs/PROTOCOL.md.
func CodeInfos() []CodeInfo { return slices.Clone(codeInfos[:]) }

// Error is an error response: the server sends it as {code, message}, and
// the Go client returns it for a response that carries one. Use errors.As to get
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

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
