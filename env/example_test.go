package env_test

import (
	"fmt"

	"github.com/yutenv/yutenv/env"
)

// The kata's one-dimensional Yut: the same engine on a line of 15 spaces.
func Example_kata() {
	r, err := env.ParseRules("kata")
	if err != nil {
		panic(err)
	}
	s, err := env.New(r, 1, 0)
	if err != nil {
		panic(err)
	}
	if _, err := s.ApplyThrow(env.Geol); err != nil { // explicit throws, as in the kata
		panic(err)
	}
	ev, err := s.Apply(env.EnterAction(env.Geol))
	if err != nil {
		panic(err)
	}
	fmt.Println(ev)
	fmt.Println(s.KataBoard())
	// Output:
	// seat 0: geol enters a piece to space 2; seat 1 to play
	// [[],[],[A1],[],[],[],[],[],[],[],[],[],[],[],[]]
}
