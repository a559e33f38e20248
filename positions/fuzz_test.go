package positions

import (
	"errors"
	"testing"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// FuzzStates feeds arbitrary packed states, actions and throws to Apply,
// Query and CheckDecisions: nothing may panic, and every refusal is a
// *RowError or a *SizeError.
func FuzzStates(f *testing.F) {
	g, err := NewGame(env.Standard())
	if err != nil {
		f.Fatal(err)
	}
	good := make([]byte, 2*env.PackedSize)
	if err := g.Initial(3, 0, good); err != nil {
		f.Fatal(err)
	}
	f.Add(good, []byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte{0xff, 3})
	f.Add(good[:env.PackedSize+3], []byte{1}, []byte{})
	bad := append([]byte(nil), good...)
	bad[5] ^= 0x40
	f.Add(bad, []byte{7, 0, 0, 0, 9, 0, 0, 0}, []byte{4, 0x80})
	enc, err := g.Encoder(obs.Compact)
	if err != nil {
		f.Fatal(err)
	}
	p := newPool(f)
	f.Fuzz(func(t *testing.T, states, actions, throws []byte) {
		check := func(err error) {
			var re *RowError
			var se *SizeError
			if err != nil && !errors.As(err, &re) && !errors.As(err, &se) {
				t.Fatalf("refusal of type %T: %v", err, err)
			}
		}
		out := make([]byte, len(states))
		check(g.Apply(p, states, actions, nil, out))
		check(g.Apply(p, states, nil, throws, out))
		n := len(states) / env.PackedSize
		check(g.Query(p, states, &Query{Phase: make([]byte, n), ToMove: make([]byte, n), Mask: make([]byte, n*env.NumActions),
			Returns: make([]byte, 4*n*2), Obs: make([]byte, 4*n*enc.Size()), Encoder: enc, Seat: -1}))
		check(g.CheckDecisions(p, states))
	})
}
