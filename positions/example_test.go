package positions_test

import (
	"fmt"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/positions"
	"github.com/yutenv/yutenv/vecenv"
)

// Four new games, a throw sampled in each, then what each game waits for
// and what its seat to move has to play.
func Example() {
	g, err := positions.NewGame(env.Standard())
	if err != nil {
		panic(err)
	}
	pool := vecenv.NewPool(2)
	defer pool.Close()
	const n = 4
	states := make([]byte, n*env.PackedSize) // game seeds 11 to 14, seat 0 first
	if err := g.Initial(11, 0, states); err != nil {
		panic(err)
	}
	throws := []byte{0xff, 0xff, 0xff, 0xff} // -1: each state samples with its own generator
	if err := g.Apply(pool, states, nil, throws, states); err != nil {
		panic(err)
	}
	q := positions.Query{Phase: make([]byte, n), ToMove: make([]byte, n), Mask: make([]byte, n*env.NumActions)}
	if err := g.Query(pool, states, &q); err != nil {
		panic(err)
	}
	for i := range n {
		s, err := g.Unpack(states[i*env.PackedSize : (i+1)*env.PackedSize])
		if err != nil {
			panic(err)
		}
		legal := 0
		for _, m := range q.Mask[i*env.NumActions : (i+1)*env.NumActions] {
			legal += int(m)
		}
		for t, k := range s.Pool() {
			if k > 0 {
				fmt.Printf("game %d: %s, seat %d to move a %s, %d legal action(s)\n", i, env.Phase(q.Phase[i]), q.ToMove[i], env.Throw(t), legal)
			}
		}
	}
	// Output:
	// game 0: move, seat 0 to move a geol, 1 legal action(s)
	// game 1: move, seat 0 to move a do, 1 legal action(s)
	// game 2: move, seat 0 to move a do, 1 legal action(s)
	// game 3: move, seat 0 to move a geol, 1 legal action(s)
}
