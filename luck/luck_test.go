package luck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/israce"
)

// chanceNodes plays random games under r and returns up to n of their
// chance nodes.
func chanceNodes(t *testing.T, r env.Rules, n int, seed uint64) []env.State {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []env.State
	var legal []env.Action
	for g := uint64(0); len(out) < n; g++ {
		s, err := env.New(r, seed*1000+g, env.AnySeat)
		if err != nil {
			t.Fatal(err)
		}
		for !s.IsOver() && len(out) < n {
			if s.IsChance() {
				if rng.IntN(3) == 0 {
					out = append(out, s)
				}
				if _, err := s.SampleThrow(); err != nil {
					t.Fatal(err)
				}
				continue
			}
			legal = s.LegalActions(legal[:0])
			if _, err := s.Apply(legal[rng.IntN(len(legal))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// TestThrowLuckHasZeroMean: at any chance node, the luck of the throws
// averages to zero under the throw probabilities, for every seat.
func TestThrowLuckHasZeroMean(t *testing.T) {
	cases := []struct {
		name  string
		rules string
		v     func(t *testing.T) Value
		n     int
	}{
		{"progress", "standard", func(*testing.T) Value { return Progress{} }, 400},
		{"progress 3 seats, pool off", "players=3,pool=off", func(*testing.T) Value { return Progress{} }, 400},
		{"progress no back-do", "back_do=off,end=rank,players=4", func(*testing.T) Value { return Progress{} }, 400},
		{"az", "", func(t *testing.T) Value {
			v, _, err := AZ()
			if err != nil {
				t.Fatal(err)
			}
			return v
		}, 60},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.Standard()
			if c.rules == "" {
				_, az, err := AZ()
				if err != nil {
					t.Fatal(err)
				}
				r = az
			} else if c.rules != "standard" {
				var err error
				if r, err = env.ParseRules(c.rules); err != nil {
					t.Fatal(err)
				}
			}
			a := New(c.v(t))
			var luck [env.NumThrows][env.MaxPlayers]float64
			for i, s := range chanceNodes(t, r, c.n, 3) {
				if err := a.ThrowLuck(&s, &luck); err != nil {
					t.Fatal(err)
				}
				pr := r.Probabilities()
				spread := 0.0
				for p := 0; p < r.Players; p++ {
					var m float64
					for th := range pr {
						m += pr[th] * luck[th][p]
						spread = max(spread, math.Abs(luck[th][p]))
					}
					if math.Abs(m) > 1e-12 {
						t.Fatalf("state %d, seat %d: expected luck %g, want 0", i, p, m)
					}
				}
				if i == 0 && spread == 0 {
					t.Errorf("state %d: no throw has any luck: the value ignores the throws", i)
				}
			}
		})
	}
}

// sample is the luck of a set of games between two agents, greedy's.
type sample struct {
	games                   int
	raw, adj, luck, ownLuck []float64 // per game; ownLuck per throw, summed per game
	throws                  int
}

// playSample plays games greedy (seat g%2) against random under the
// standard rules, counting the luck with a.
func playSample(t *testing.T, a *Accountant, games int) sample {
	t.Helper()
	r := env.Standard()
	var sm sample
	for g := 0; g < games; g++ {
		x, err := agent.New("greedy", uint64(g))
		if err != nil {
			t.Fatal(err)
		}
		y, err := agent.New("random", uint64(g))
		if err != nil {
			t.Fatal(err)
		}
		seats := []agent.Agent{x, y}
		if g%2 == 1 {
			seats[0], seats[1] = y, x
		}
		a.Reset()
		res, err := agent.Game{Rules: r, Seed: uint64(g) + 1e6, Start: env.AnySeat, Seats: seats, OnThrow: a.Throw}.Play()
		if err != nil {
			t.Fatal(err)
		}
		l, me := a.Luck(), g%2
		sm.games++
		sm.raw = append(sm.raw, res.Outcomes[me])
		sm.adj = append(sm.adj, res.Outcomes[me]-l[me])
		sm.luck = append(sm.luck, l[me])
		sm.ownLuck = append(sm.ownLuck, a.OwnLuck())
		sm.throws += a.Throws()
	}
	return sm
}

func meanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// z is the tolerance of the checks, in standard errors: a correct
// accountant fails one of the three by chance with probability about 1e-4
// (for a fixed sample it passes or fails for good).
const z = 4

// check returns an error if the sample shows a biased luck: seat 0's mean
// luck (the gap between its mean adjusted and mean raw results) or the
// throwers' mean luck away from zero by more than z standard errors, or
// the adjusted mean away from the raw one by more than z standard errors
// of their difference as two estimates.
func (sm sample) check() error {
	raw, rawSE := meanSE(sm.raw)
	adj, adjSE := meanSE(sm.adj)
	luck, luckSE := meanSE(sm.luck)
	own, ownSE := meanSE(sm.ownLuck)
	switch {
	case math.Abs(luck) > z*luckSE:
		return fmt.Errorf("greedy's mean luck %.4f, more than %d standard errors (%.4f) from 0", luck, z, luckSE)
	case math.Abs(own) > z*ownSE:
		return fmt.Errorf("the throwers' mean luck per game %.4f, more than %d standard errors (%.4f) from 0", own, z, ownSE)
	case math.Abs(adj-raw) > z*math.Hypot(rawSE, adjSE):
		return fmt.Errorf("mean adjusted result %.4f vs raw %.4f: more than %d standard errors (%.4f) apart", adj, raw, z, math.Hypot(rawSE, adjSE))
	}
	return nil
}

// sampleGames is the games of the unbiasedness tests: a tenth under the race
// detector, which slows the games some tenfold (they play in one goroutine).
func sampleGames() int { return israce.Scale(4000, 400) }

// TestAdjustedResultIsUnbiased plays a fixed sample of games and checks
// that the luck has mean zero, so that the adjusted result estimates the
// same expected outcome as the raw one, with less variance.
func TestAdjustedResultIsUnbiased(t *testing.T) {
	sm := playSample(t, New(Progress{}), sampleGames())
	if err := sm.check(); err != nil {
		t.Fatal(err)
	}
	raw, rawSE := meanSE(sm.raw)
	adj, adjSE := meanSE(sm.adj)
	t.Logf("%d games, %d throws: raw %.4f ± %.4f, adjusted %.4f ± %.4f, variance ratio %.2f",
		sm.games, sm.throws, raw, rawSE, adj, adjSE, rawSE*rawSE/(adjSE*adjSE))
	if adjSE >= rawSE {
		t.Errorf("the adjusted result's standard error %.4f is not below the raw one's %.4f", adjSE, rawSE)
	}
}

// TestCheckDetectsWrongProbabilities: the same check fails for luck
// measured with wrong throw probabilities (sticks a little more likely to
// land flat than the rules say).
func TestCheckDetectsWrongProbabilities(t *testing.T) {
	a := New(Progress{})
	a.probs = func(r env.Rules) [env.NumThrows]float64 { return env.ThrowProbabilities(r.FlatProb+0.03, r.BackDo) }
	sm := playSample(t, a, sampleGames())
	err := sm.check()
	if err == nil {
		t.Fatal("luck with wrong probabilities passed the check")
	}
	t.Logf("detected: %v", err)
}
