// Package client is a Go client of the yutenv socket protocol
// (docs/PROTOCOL.md), used by the server's tests and benchmarks and usable
// by Go programs. It names methods by their declarations in package
// protocol, never by strings of its own: Do sends a method's typed params
// and decodes its typed result; Call is the untyped form (msgpack maps in
// and out); Step, SendStep and RecvStep are the allocation-free fast path
// of step, with results as raw little-endian arrays.
//
//	c, err := client.Dial("unix:/tmp/yut.sock", time.Second)
//	if err != nil { ... }
//	defer c.Close()
//	if _, err := c.Hello(""); err != nil { ... }
//	n := 256
//	h, err := client.Do(c, protocol.Make, &protocol.MakeParams{N: &n})
//	if err != nil { ... }
//	c.Call("reset", map[string]any{"handle": h.Handle, "seed": 1})
//	r, err := c.Step(h.Handle, actions, -1) // r.Obs, r.Mask, r.Reward, ... as raw bytes
package client
