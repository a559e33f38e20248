package obs

import (
	"testing"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// benchStates returns decision states from random games under spec.
func benchStates(b *testing.B, spec string) []env.State {
	r := envtest.Rules(b, spec)
	var out []env.State
	playRandom(r, 40, 31, func(s *env.State) {
		if s.Phase() == env.PhaseMove {
			out = append(out, *s)
		}
	})
	return out
}

// BenchmarkEncode measures one observation of a decision state from random
// standard games, per tier (ns/op is per observation; allocs/op must be 0).
func BenchmarkEncode(b *testing.B) {
	benchEncode(b, "standard")
}

// BenchmarkEncode4p is BenchmarkEncode for four seats of five pieces, where
// the threat features have the most opponents to consider.
func BenchmarkEncode4p(b *testing.B) {
	benchEncode(b, "players=4,pieces=5")
}

func benchEncode(b *testing.B, spec string) {
	states := benchStates(b, spec)
	for _, tier := range Tiers() {
		b.Run(tier.String(), func(b *testing.B) {
			e, err := NewEncoder(states[0].Rules(), tier)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]float32, e.Size())
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				e.Encode(&states[i%len(states)], states[i%len(states)].ToMove(), buf)
				i++
			}
		})
	}
}

// BenchmarkDescribe measures the human string of one legal action (not a hot path).
func BenchmarkDescribe(b *testing.B) {
	states := benchStates(b, "standard")
	var acts []env.Action
	var from []*env.State
	for i := range states {
		for _, a := range states[i].LegalActions(nil) {
			acts = append(acts, a)
			from = append(from, &states[i])
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = Describe(from[i%len(acts)], acts[i%len(acts)])
		i++
	}
}
