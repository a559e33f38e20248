package vecenv_test

import (
	"fmt"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// Four envs against random opponents, each learner playing its first legal
// action, until every env has finished an episode.
func Example() {
	b, err := vecenv.New(vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 4, Seat: 0, Opponent: "random"})
	if err != nil {
		panic(err)
	}
	for i := range b.Seeds() {
		b.Seeds()[i] = uint64(100 + i)
	}
	if err := b.Reset(nil, vecenv.ResetOptions{Start: env.AnySeat}); err != nil {
		panic(err)
	}
	done := make([]bool, b.N())
	ended := 0
	for ended < b.N() {
		vecenv.FirstLegal(b.Rows().Mask, b.Actions())
		if err := b.CheckActions(); err != nil {
			panic(err)
		}
		if err := b.Step(nil, false); err != nil {
			panic(err)
		}
		for i, t := range b.Rows().Terminated {
			if t == 1 && !done[i] {
				done[i] = true
				ended++
			}
		}
	}
	fmt.Println("observation size", b.ObsSize(), "- episodes ended:", ended)
	// Output: observation size 213 - episodes ended: 4
}
