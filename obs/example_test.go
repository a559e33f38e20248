package obs_test

import (
	"fmt"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// Encode a decision state in each tier and show the layout.
func Example() {
	rules := env.Standard()
	s, err := env.New(rules, 42, 0)
	if err != nil {
		panic(err)
	}
	s.Advance() // throw until the first decision

	for _, tier := range obs.Tiers() {
		enc, err := obs.NewEncoder(rules, tier)
		if err != nil {
			panic(err)
		}
		buf := make([]float32, enc.Size()) // reuse it: Encode does not allocate
		enc.Encode(&s, s.ToMove(), buf)
		sp := enc.Space()
		fmt.Printf("%s: %d float32 in [%g, %g]\n", sp.Tier, sp.Size, sp.Low, sp.High)
		for _, p := range sp.Parts {
			fmt.Printf("  %-8s offset %4d shape %v\n", p.Name, p.Offset, p.Shape)
		}
	}
	// Output:
	// compact: 213 float32 in [0, 255]
	//   board    offset    0 shape [4 43]
	//   hand     offset  172 shape [4]
	//   finished offset  176 shape [4]
	//   seats    offset  180 shape [4 2]
	//   pool     offset  188 shape [6]
	//   phase    offset  194 shape [3]
	//   rules    offset  197 shape [8]
	//   missed   offset  205 shape [4]
	//   to_move  offset  209 shape [4]
	// tactical: 2042 float32 in [0, 255]
	//   board    offset    0 shape [4 43]
	//   hand     offset  172 shape [4]
	//   finished offset  176 shape [4]
	//   seats    offset  180 shape [4 2]
	//   pool     offset  188 shape [6]
	//   phase    offset  194 shape [3]
	//   rules    offset  197 shape [8]
	//   missed   offset  205 shape [4]
	//   to_move  offset  209 shape [4]
	//   threat   offset  213 shape [29]
	//   actions  offset  242 shape [180 10]
	// planes: 598 float32 in [0, 255]
	//   planes   offset    0 shape [19 29]
	//   globals  offset  551 shape [47]
}

// Describe every legal action of a position built by hand.
func ExampleDescribe() {
	s, err := env.FromPosition(env.Position{
		Rules:  env.Standard(),
		ToMove: 0,
		Phase:  env.PhaseMove,
		Pool:   [6]int{env.Gae: 1, env.Mo: 1},
		Hand:   [4]int{2, 3},
		Stacks: []env.Stack{
			{Seat: 0, Station: 3, Route: env.RouteOuter, Height: 2},
			{Seat: 1, Station: 5, Route: env.RouteC1, Height: 1},
		},
	}, 1)
	if err != nil {
		panic(err)
	}
	for _, a := range s.LegalActions(nil) {
		fmt.Printf("%-8v %s\n", a, obs.Describe(&s, a))
	}
	// Output:
	// gae@3    gae: stack of 2 at 3 -> 5, takes the C1 shortcut, captures 1 of seat 1
	// gae@enter gae: enter -> 2
	// mo@3     mo: stack of 2 at 3 -> 8
	// mo@enter mo: enter -> 5, takes the C1 shortcut, captures 1 of seat 1
}

// Decode an action id and build one.
func ExampleDecodeAction() {
	t, source := obs.DecodeAction(67)
	fmt.Println(t, source)
	a, err := obs.EncodeAction(env.Mo, env.EnterSource)
	fmt.Println(a, uint8(a), err)
	_, err = obs.EncodeAction(env.Gae, 31)
	fmt.Println(err)
	// Output:
	// gae 7
	// mo@enter 179 <nil>
	// bad action: source 31 out of range 0..29 (29 = enter)
}

// The board graph for a graph network: directed (from, to) station pairs.
func ExampleAdjacency() {
	edges := obs.Adjacency()
	fmt.Println(len(edges), edges[:3], obs.AdjacencyRoutes()[20])
	// Output:
	// 32 [[0 1] [1 2] [2 3]] C1
}
