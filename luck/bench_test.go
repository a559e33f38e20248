package luck

import (
	"testing"

	"github.com/yutenv/yutenv/env"
)

// benchThrows counts the luck of throws at a fixed set of chance nodes.
func benchThrows(b *testing.B, v Value, r env.Rules) {
	nodes := chanceNodes(&testing.T{}, r, 64, 5)
	a := New(v)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := &nodes[i%len(nodes)]
		if err := a.Throw(s, env.Gae); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkThrowProgress(b *testing.B) { benchThrows(b, Progress{}, env.Standard()) }

func BenchmarkThrowAZ(b *testing.B) {
	v, r, err := AZ()
	if err != nil {
		b.Fatal(err)
	}
	benchThrows(b, v, r)
}
