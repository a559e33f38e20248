package grade_test

import (
	"context"
	"fmt"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/grade"
)

// Grade 20 games of the random agent against greedy, with flat Monte Carlo
// (50 rollouts per move) as the reference.
func Example() {
	m := grade.Match{Rules: env.Standard(), Agent: "random", Opponent: "greedy", Games: 20, Seed: 1}
	rep, err := grade.Run(context.Background(), m, grade.Options{Reference: "mc:50", Workers: 2, Worst: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d decisions graded by %s (%d forced left out)\n", rep.Decisions, rep.Reference, rep.Forced)
	fmt.Printf("mean loss %.3f [%.3f, %.3f], errors %.0f%%, blunders %.0f%%\n", rep.Mean, *rep.MeanLow, *rep.MeanHigh, 100*rep.ErrorRate, 100*rep.BlunderRate)
	w := rep.Worst[0]
	fmt.Printf("worst: game %d, decision %d: %s instead of %s loses %.2f\n", w.Game, w.Decision, w.Move, w.BestMove, w.Loss)
	// Output:
	// 358 decisions graded by mc:50 (68 forced left out)
	// mean loss 0.106 [0.079, 0.132], errors 50%, blunders 32%
	// worst: game 6, decision 52: geol@21 instead of yut@21 loses 1.20
}
