package nnet_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/nnet"
)

// Example plays the golden tiny network, with a short search, against random.
func Example() {
	n, err := nnet.Load(filepath.Join("testdata", "go-tiny.ynet"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n.Tier, len(n.Trunk), "hidden layers")
	a, err := agent.New("net:"+filepath.Join("testdata", "go-tiny.ynet")+",sims=8", 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	r, _ := agent.New("random", 2)
	res, err := agent.Game{Rules: env.Standard(), Seed: 1, Start: env.AnySeat, Seats: []agent.Agent{a, r}}.Play()
	fmt.Println(err == nil && res.Decisions > 0)
	// Output:
	// compact 2 hidden layers
	// true
}
