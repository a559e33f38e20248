package env_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

func TestPackedRoundTrip(t *testing.T) {
	for _, spec := range propertyRules {
		for _, d := range []int{0, 5, 30, 400} {
			t.Run(spec, func(t *testing.T) {
				s := midGame(t, spec, uint64(d)+7, d)
				b := s.AppendPacked(nil)
				require.Len(t, b, env.PackedSize)
				var back env.State
				back, err := env.New(s.Rules(), 0, 0)
				require.NoError(t, err)
				require.NoError(t, back.Unpack(b))
				assert.Equal(t, s, back, "unpack(pack(s)) == s, generator and counters included")
				// Both play on identically.
				playSteps(t, &s, 40, nil)
				playSteps(t, &back, 40, nil)
				assert.Equal(t, s, back)
			})
		}
	}
}

func TestUnpackRefuses(t *testing.T) {
	s := midGame(t, "standard", 3, 10)
	good := s.AppendPacked(nil)
	edit := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short", good[:10], env.ErrCorrupt},
		{"long", append(append([]byte(nil), good...), 0), env.ErrCorrupt},
		{"version", edit(func(b []byte) { b[0] = 9 }), env.ErrVersion},
		{"phase", edit(func(b []byte) { b[2] = 3 }), env.ErrCorrupt},
		{"seat", edit(func(b []byte) { b[1] = 2 }), env.ErrCorrupt},
		{"start", edit(func(b []byte) { b[3] = 3 }), env.ErrCorrupt},
		{"hand", edit(func(b []byte) { b[4+env.NumThrows]++ }), env.ErrCorrupt},
		{"ghost seat", edit(func(b []byte) { b[4+env.NumThrows+3] = 1 }), env.ErrCorrupt},
		{"stray owner byte", edit(func(b []byte) {
			for st := range env.NumStations {
				if b[22+2*st] == 0 {
					b[22+2*st+1] = 0x10
					return
				}
			}
		}), env.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s
			err := got.Unpack(c.b)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
			assert.Equal(t, s, got, "a refused unpack leaves the state alone")
		})
	}
}

func TestUnpackDoesNotAllocate(t *testing.T) {
	s := midGame(t, "standard", 3, 10)
	b := s.AppendPacked(nil)
	buf := make([]byte, 0, env.PackedSize)
	allocs := testing.AllocsPerRun(100, func() {
		if err := s.Unpack(b); err != nil {
			t.Fatal(err)
		}
		buf = s.AppendPacked(buf[:0])
	})
	assert.Zero(t, allocs)
}

func FuzzUnpack(f *testing.F) {
	for i, spec := range []string{"standard", "players=4,pieces=5,end=rank"} {
		for _, d := range []int{0, 3, 40, 500} {
			s := midGame(f, spec, uint64(i*10+d), d)
			f.Add(uint8(i), s.AppendPacked(nil))
		}
	}
	f.Add(uint8(0), []byte{})
	// a version 2 state with missed turns (skip obstacles), and its version 1 cut
	mid := midGame(f, "standard", 5, 12)
	p := mid.Position()
	p.Missed = []int{0, 3}
	withMissed, err := env.FromPosition(p, 5)
	if err != nil {
		f.Fatal(err)
	}
	v2 := withMissed.AppendPacked(nil)
	f.Add(uint8(0), v2)
	f.Add(uint8(0), append([]byte{1}, v2[1:env.PackedSizeV1]...))
	f.Fuzz(func(t *testing.T, rules uint8, b []byte) {
		spec := propertyRules[int(rules)%len(propertyRules)]
		s, err := env.New(envtest.Rules(t, spec), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		before := s
		if err := s.Unpack(b); err != nil {
			if !errors.Is(err, env.ErrCorrupt) && !errors.Is(err, env.ErrVersion) {
				t.Fatalf("error wraps neither ErrCorrupt nor ErrVersion: %v", err)
			}
			if s != before {
				t.Fatal("a refused unpack changed the state")
			}
			return
		}
		// An accepted packed state is canonical: it packs to the same bytes
		// (a version 1 state to the same bytes as version 2, nobody missing a turn).
		want := b
		if b[0] == 1 {
			want = append(append([]byte{env.PackedVersion}, b[1:]...), make([]byte, env.PackedSize-env.PackedSizeV1)...)
		}
		if again := s.AppendPacked(nil); string(again) != string(want) {
			t.Fatalf("repacked %x, want %x", again, want)
		}
		checkInvariants(t, &s)
		playSteps(t, &s, 60, nil)
	})
}

func BenchmarkPacked(b *testing.B) {
	s := midGame(b, "standard", 3, 10)
	buf := s.AppendPacked(nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Unpack(buf); err != nil {
			b.Fatal(err)
		}
		buf = s.AppendPacked(buf[:0])
	}
}

func ExampleState_AppendPacked() {
	s, _ := env.New(env.Standard(), 7, 0)
	_, _ = s.ApplyThrow(env.Gae)
	packed := s.AppendPacked(nil) // env.PackedSize bytes: no rules, generator included

	back, _ := env.New(env.Standard(), 0, 0) // a state of the same rules to read into
	if err := back.Unpack(packed); err != nil {
		fmt.Println(err)
	}
	fmt.Println(len(packed), back == s, back.LegalActions(nil))
	// Output: 108 true [gae@enter]
}

// PackedFields tiles the packed bytes, and each field holds what its name
// says: the offsets other languages read (yutenv's Python, generated) are
// the ones AppendPacked writes.
func TestPackedFields(t *testing.T) {
	fields := env.PackedFields()
	at := map[string]env.PackedField{}
	end := 0
	for _, f := range fields {
		assert.Equal(t, end, f.Offset, "%s starts where the field before it ends", f.Name)
		assert.Positive(t, f.Size, f.Name)
		end = f.Offset + f.Size
		at[f.Name] = f
	}
	assert.Equal(t, env.PackedSize, end, "the fields cover every byte")
	assert.Equal(t, env.PackedSizeV1, at["missed"].Offset, "version 1 is version 2 without the missed turns")

	p := env.Position{
		Rules: envtest.Rules(t, "players=3,obstacles=4:skip"), ToMove: 2, Phase: env.PhaseMove,
		Pool: [env.NumThrows]int{env.Mo: 1}, Hand: [env.MaxPlayers]int{1, 4, 2}, Finished: [env.MaxPlayers]int{2, 0, 0},
		Stacks: []env.Stack{{Seat: 0, Station: 7, Route: env.RouteOuter, Height: 1}, {Seat: 2, Station: 22, Route: env.RouteCentreC2, Height: 2}},
		Missed: []int{0, 3, 0},
	}
	s, err := env.FromPosition(p, 1)
	require.NoError(t, err)
	b := s.AppendPacked(nil)
	field := func(name string) []byte { return b[at[name].Offset : at[name].Offset+at[name].Size] }
	assert.Equal(t, []byte{env.PackedVersion}, field("version"))
	assert.Equal(t, []byte{2}, field("seat"))
	assert.Equal(t, []byte{uint8(env.PhaseMove)}, field("phase"))
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 1}, field("pool"))
	assert.Equal(t, []byte{1, 4, 2, 0}, field("hand"))
	assert.Equal(t, []byte{2, 0, 0, 0}, field("finished"))
	assert.Equal(t, []byte{0, 0, 0, 0}, field("place"))
	assert.Equal(t, []byte{0, 3, 0, 0}, field("missed"))
	cells := field("cells")
	assert.Equal(t, []byte{1, 0<<4 | uint8(env.RouteOuter)}, cells[2*7:2*7+2])
	assert.Equal(t, []byte{2, 2<<4 | uint8(env.RouteCentreC2)}, cells[2*22:2*22+2])
}
