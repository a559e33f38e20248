// Package protocol declares the yutenv socket protocol (docs/PROTOCOL.md)
// once, for the server (package server), the Go client (package client)
// and the generators of docs/PROTOCOL.md's tables and of the Python
// module yutenv/_protocol.py (cmd/genpy):
//
//   - every method as a typed descriptor, Method[P, R]: its name, doc, the
//     budgets it draws on and its params and result structs, whose msgpack
//     tags are the keys on the wire (Hello, Make, Step, ...; Methods lists
//     them in id order);
//   - the error codes (Code) and when each is sent (CodeInfos);
//   - the framing: a big-endian uint32 length, then a msgpack body
//     (BeginFrame, EndFrame, ReadHeader).
//
// It holds no behaviour of either side. The server binds one handler to
// each descriptor, type-checked through its params type, and a test fails
// when a declared method has no handler or two; the client calls a method
// by its descriptor:
//
//	g, err := client.Do(c, protocol.Game, &protocol.GameParams{})
//	if err != nil { ... }
//	n := 4
//	st, err := client.Do(c, protocol.Initial, &protocol.InitialParams{Game: &g.Game, N: &n})
//	// st.States holds 4 packed states; protocol.Keys(protocol.Initial.Params)
//	// lists the params' keys: game, seed, n, start.
package protocol
