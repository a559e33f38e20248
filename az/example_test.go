package az_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// Example plays two games, answering every batch of leaves with uniform
// priors and value 0 (a real client answers with its network).
func Example() {
	dir, _ := os.MkdirTemp("", "az")
	defer os.RemoveAll(dir)
	run, err := az.Start(az.Config{Rules: env.Standard(), Tier: obs.Compact, Sims: 8, C: 1.5,
		Games: 2, InFlight: 2, Out: filepath.Join(dir, "selfplay")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer run.Close()
	var priors, values []float32
	for {
		b, err := run.Next(priors, values)
		if err != nil {
			fmt.Println(err)
			return
		}
		if b.N == 0 {
			break
		}
		priors, values = make([]float32, b.N*env.NumActions), make([]float32, b.N)
	}
	fmt.Println(run.Summary().Games, "games written")
	// Output: 2 games written
}
