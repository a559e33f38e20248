// Package server is the Yut Nori environment server: the process Python
// trainers talk to over a stream socket (TCP or Unix), speaking the protocol
// of docs/PROTOCOL.md: length-prefixed msgpack frames carrying
// {id, method, params} requests and {id, result} or {id, error} responses.
//
// A connection says hello (with a token when the server has one), makes
// handles (a batch of N envs sharing rules, observation tier, mode,
// opponent, autoreset and illegal-action policy), resets them with seeds and
// steps them with N actions at a time. Chance is resolved inside the server
// with each env's seeded generator, opponents of single mode play inside the
// server, and results come back as raw little-endian arrays: observations
// from package obs, the 180-entry legal-action masks, rewards,
// terminated/truncated flags and the seat to move.
//
// A handle is a vecenv.Batch: the environment semantics (modes, autoreset,
// rewards, truncation, seeds) live in package vecenv, and this package is
// the transport over it. Large batches are stepped in parallel by one
// vecenv.Pool of workers; each handle reuses its buffers, so a step
// allocates nothing per env. observe shows any seat its own view and mask.
// Every map is read by one reader that refuses repeated keys, and array
// lengths are checked against what they may hold before anything is
// allocated for them.
//
// The state methods (game, initial, apply, query, describe, position,
// state_save, state_load, analyse) are stateless: the client holds game
// states as packed bytes (env.State.AppendPacked) and sends many in one bin,
// for its own search or to have a built-in agent label them. Every packed
// state is checked on arrival; a bad one is refused naming its row.
//
// Frames are
// length-checked before they are read and walked without recursion before
// anything is decoded; every bad input gets an error response or closes
// that one connection, never the server.
//
// A connection must complete hello within Config.HandshakeTimeout.
// Connections still in handshake have their own budget
// (Config.MaxHandshakes; past it the oldest is dropped) and do not count
// against Config.MaxConns, so clients that connect and stall cannot lock
// authenticated ones out; what they make the server log is rate limited
// (docs/PROTOCOL.md, Abuse).
//
// Serving:
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
// A Go client (the tests and benchmarks use it):
//
//	c, err := client.Dial(addr, time.Second) // package client
//	if err != nil { ... }
//	c.Hello("")
//	res, _ := c.Call("make", map[string]any{"n": 256, "opponent": "random"})
//	c.Call("reset", map[string]any{"handle": res["handle"], "seed": 1})
//	r, err := c.Step(1, actions, -1) // r.Obs, r.Mask, r.Reward, ... as raw bytes
//
// The yutenv binary serves with "yutenv serve"; see its --help.
package server
