package server

import (
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// Results of the methods off the hot path are typed structs encoded by
// msgpack/v5: fields in declaration order, integers in their smallest
// form (msgp.AppendEncoded), as the hand-written writers of the hot path
// (step, reset) do.

// result appends v, the result of method, to the reply being built.
func (c *conn) result(method string, v any) *Error {
	out, err := msgp.AppendEncoded(c.out, v)
	if err != nil {
		return errorf(protocol.CodeInternal, "%s: encoding the result: %v", method, err)
	}
	c.out = out
	return nil
}
