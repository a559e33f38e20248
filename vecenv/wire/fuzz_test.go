package wire_test

import (
	"testing"

	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// FuzzParams reads arbitrary params maps (that pass the server's frame
// check, msgp.CheckMap) as reset's, step's, make's rules and seat: no
// input may panic, and what a reader accepts it accepts again the same.
func FuzzParams(f *testing.F) {
	for _, v := range []msgp.Obj{
		{{"handle", 1}, {"seed", []any{1, 2}}, {"options", msgp.Obj{{"start", 1}, {"seat", "random"}}}, {"info", true}},
		{{"handle", 1}, {"actions", []byte{1, 0, 0, 0}}, {"info", false}},
		{{"handle", 1}, {"actions", []any{3, -1}}},
		{{"players", 3}, {"board", "line"}, {"p", 0.5}, {"backdo", false}},
		{{"seed", []any{1, "x"}}, {"options", msgp.Obj{{"speed", 1}}}},
	} {
		f.Add(msgp.AppendValue(nil, v))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if msgp.CheckMap(p) != nil {
			return
		}
		var r msgp.Reader
		var a, a2 wire.ResetArgs
		if wire.ReadReset(p, &r, &a) == nil {
			if wire.ReadReset(p, &r, &a2) != nil || a.Options != a2.Options || a.SeedCount() != a2.SeedCount() {
				t.Fatalf("reset params read differently twice: %x", p)
			}
		}
		var s wire.StepArgs
		if wire.ReadStep(p, &s) == nil {
			_ = s.Actions(make([]int32, 2))
		}
		rr := msgp.NewReader(p)
		_, _ = wire.Rules(&rr)
		_, _, _, _ = wire.MakeConfig(&protocol.MakeParams{Rules: p, Seat: p})
	})
}
