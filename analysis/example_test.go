package analysis_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/yutenv/yutenv/analysis"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// mcts:50's move and value at three positions of one game, each a decision
// with a choice: the same answers on any number of workers.
func Example() {
	s, err := env.New(env.Standard(), 3, 0)
	if err != nil {
		panic(err)
	}
	var packed []byte
	var buf [env.NumActions]env.Action
	for len(packed) < 3*env.PackedSize && !s.IsOver() {
		s.Advance() // the throws due, sampled from the game's own generator
		legal := s.LegalActions(buf[:0])
		if len(legal) > 1 {
			packed = s.AppendPacked(packed) // a decision worth asking about
		}
		if len(legal) > 0 {
			if _, err := s.Apply(legal[0]); err != nil {
				panic(err)
			}
		}
	}
	sp, err := agent.ParseSpec("mcts:50")
	if err != nil {
		panic(err)
	}
	proto, err := env.New(env.Standard(), 0, 0) // the rules the states are read under
	if err != nil {
		panic(err)
	}
	n := len(packed) / env.PackedSize
	out := analysis.NewOut(n, proto.Rules().Players)
	if err := analysis.Analyse(context.Background(), &proto, packed, sp, 1, 2, out); err != nil {
		panic(err)
	}
	for i := range n {
		a := env.Action(binary.LittleEndian.Uint32(out.Actions[4*i:]))
		v := math.Float32frombits(binary.LittleEndian.Uint32(out.Value[4*i:]))
		fmt.Printf("position %d: %v, value %+.2f\n", i, a, v)
	}
	// Output:
	// position 0: geol@enter, value +0.12
	// position 1: geol@3, value +0.08
	// position 2: gae@4, value +0.40
}
