// Package server is the transport of the Yut Nori environment: the process
// Python trainers talk to over a stream socket (TCP or Unix), speaking the
// protocol of docs/PROTOCOL.md (declared in package protocol):
// length-prefixed msgpack frames carrying {id, method, params} requests
// and {id, result} or {id, error} responses.
//
// It keeps framing, auth (hello and its token), the one limits policy that
// computes every request's budget (Limits, Budget, the in-flight memory
// budget), dispatch (one handler bound to each protocol method) and the
// connections' lifecycle. The work is the domain packages': a handle is a
// vecenv.Batch (its params and replies in vecenv/wire), the state methods
// are adapters over package positions, analyse runs analysis jobs on the
// server's search cores, and self-play runs are package az's.
//
// Frames are length-checked before they are read and walked without
// recursion before anything is decoded; every map is read by one reader
// that refuses repeated keys, and array lengths are checked against what
// they may hold before anything is allocated for them. Every bad input gets
// an error response or closes that one connection, never the server.
//
// A connection must complete hello within Config.HandshakeTimeout.
// Connections still in handshake have their own budget
// (Config.MaxHandshakes; past it the oldest is dropped) and do not count
// against Config.MaxConns, so clients that connect and stall cannot lock
// authenticated ones out; what they make the server log is rate limited
// (docs/PROTOCOL.md, Abuse).
//
// Serving (package client is the Go client):
//
//	srv, err := server.New(server.Config{Version: "0.1.0"})
//	if err != nil { ... }
//	l, addr, err := server.Listen("unix:/tmp/yut.sock")
//	if err != nil { ... }
//	go srv.Serve(l) // returns ErrServerClosed after Shutdown
//	fmt.Println("listening on", addr)
//	...
//	srv.Shutdown(ctx) // finish requests in flight, close connections
//
// The yutenv binary serves with "yutenv serve"; see its --help.
package server
