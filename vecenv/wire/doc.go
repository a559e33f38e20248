// Package wire encodes a vecenv.Batch's replies in msgpack for the socket
// protocol, allocation-free: the rows of a reset or step (obs, mask,
// to_move, rewards, flags, the final_* rows of a same-step autoreset), its
// seeds, and the info list (one map per env, with its engine events). The
// server only reads params, checks the budget, calls the batch and frames
// what this package appends; the keys it writes are the ones step's and
// reset's result structs declare (docs/PROTOCOL.md).
//
// # Usage
//
// A server's step, after it has read the request's params and stepped its
// batch b, appends the reply's result to its frame:
//
//	out = wire.AppendRows(out, b.Rows())
//
// The package's Example decodes what it writes.
package wire
