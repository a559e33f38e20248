package wire_test

import (
	"fmt"
	"sort"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// The rows of a reset of two envs, as a reply's result carries them: a
// msgpack map whose values are bin (raw little-endian bytes, which Python
// reads with np.frombuffer).
func Example() {
	b, err := vecenv.New(vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 2, Seat: 0, Opponent: "random"})
	if err != nil {
		panic(err)
	}
	if err := b.Reset(nil, vecenv.ResetOptions{Start: env.AnySeat}); err != nil {
		panic(err)
	}
	rows := b.Rows()
	out := []byte{0x80 | byte(wire.RowKeys(rows))} // a fixmap header of RowKeys keys
	out = wire.AppendRows(out, rows)

	var m map[string][]byte
	if err := msgpack.Unmarshal(out, &m); err != nil {
		panic(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s: %d bytes\n", k, len(m[k]))
	}
	// Output:
	// mask: 360 bytes
	// obs: 1704 bytes
	// to_move: 2 bytes
}
