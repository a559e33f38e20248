package positions

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

func newPool(t testing.TB) *vecenv.Pool {
	t.Helper()
	p := vecenv.NewPool(2)
	t.Cleanup(p.Close)
	return p
}

func newGame(t testing.TB, rules string) *Game {
	t.Helper()
	r, err := env.ParseRules(rules)
	require.NoError(t, err)
	g, err := NewGame(r)
	require.NoError(t, err)
	return g
}

func row(packed []byte, i int) []byte { return packed[i*env.PackedSize : (i+1)*env.PackedSize] }

// pick returns the rows idx of packed, in order.
func pick(packed []byte, idx []int) []byte {
	var out []byte
	for _, i := range idx {
		out = append(out, row(packed, i)...)
	}
	return out
}

func i32(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// TestFollowTheEngine plays games through Initial and Apply and checks
// every packed state and every Query against the engine's own State.
func TestFollowTheEngine(t *testing.T) {
	p := newPool(t)
	for _, rules := range []string{"standard", "players=4,pieces=5,end=rank,back_do_enters=on", "kata,obstacles=4:skip+9:back2"} {
		t.Run(rules, func(t *testing.T) {
			if israce.Enabled && strings.HasPrefix(rules, "players=4") {
				t.Skip("the longest games, two thirds of the test's time; the pool's goroutines are the same under the other rules")
			}
			g := newGame(t, rules)
			n := israce.Scale(200, 130) // above two pool chunks, and nearer under -race
			packed := make([]byte, n*env.PackedSize)
			require.NoError(t, g.Initial(5, 0, packed))
			want := make([]env.State, n)
			for i := range want {
				var err error
				want[i], err = env.New(g.Rules(), 5+uint64(i), 0)
				require.NoError(t, err)
			}
			enc, err := g.Encoder(obs.Compact)
			require.NoError(t, err)
			players, d := g.Rules().Players, enc.Size()
			var buf [env.NumActions]env.Action
			for step := 0; ; step++ {
				q := Query{Phase: make([]byte, n), ToMove: make([]byte, n), Mask: make([]byte, n*env.NumActions),
					Returns: make([]byte, 4*n*players), Obs: make([]byte, 4*n*d), Encoder: enc, Seat: -1}
				require.NoError(t, g.Query(p, packed, &q))
				var chance, moves []int
				o := make([]float32, d)
				for i := range want {
					require.Equal(t, want[i].AppendPacked(nil), row(packed, i), "state %d step %d", i, step)
					assert.Equal(t, uint8(want[i].Phase()), q.Phase[i])
					assert.Equal(t, uint8(want[i].ToMove()), q.ToMove[i])
					var m [env.NumActions]uint8
					want[i].Mask(m[:])
					assert.Equal(t, m[:], q.Mask[i*env.NumActions:(i+1)*env.NumActions])
					for s := range players {
						got := math.Float32frombits(binary.LittleEndian.Uint32(q.Returns[4*(i*players+s):]))
						assert.Equal(t, float32(want[i].Outcome(s)), got)
					}
					enc.Encode(&want[i], want[i].ToMove(), o)
					assert.Equal(t, math.Float32bits(o[d-1]), binary.LittleEndian.Uint32(q.Obs[4*(i*d+d-1):]))
					switch want[i].Phase() {
					case env.PhaseThrow:
						chance = append(chance, i)
					case env.PhaseMove:
						moves = append(moves, i)
					}
				}
				if len(chance)+len(moves) == 0 {
					break
				}
				if len(chance) > 0 {
					throws := make([]byte, len(chance))
					for k, i := range chance {
						throws[k] = 0xff // -1: sample with the state's own generator
						if k%3 == 1 {
							throws[k] = uint8(env.Gae)
							_, err = want[i].ApplyThrow(env.Gae)
						} else {
							_, err = want[i].SampleThrow()
						}
						require.NoError(t, err)
					}
					in := pick(packed, chance)
					out := make([]byte, len(in))
					require.NoError(t, g.Apply(p, in, nil, throws, out))
					for k, i := range chance {
						copy(row(packed, i), row(out, k))
					}
				}
				if len(moves) > 0 {
					actions := make([]int32, len(moves))
					for k, i := range moves {
						legal := want[i].LegalActions(buf[:0])
						actions[k] = int32(legal[(step+i)%len(legal)])
						_, err := want[i].Apply(env.Action(actions[k]))
						require.NoError(t, err)
					}
					in := pick(packed, moves)
					out := make([]byte, len(in))
					require.NoError(t, g.Apply(p, in, i32(actions...), nil, out))
					for k, i := range moves {
						copy(row(packed, i), row(out, k))
					}
				}
			}
		})
	}
}

// TestRefuseBadRows checks that the lowest failing row is reported, with
// the engine's error, and that wrong sizes are refused before any row.
func TestRefuseBadRows(t *testing.T) {
	p := newPool(t)
	g := newGame(t, "standard")
	packed := make([]byte, 300*env.PackedSize) // above two pool chunks
	require.NoError(t, g.Initial(1, 0, packed))
	corrupt := append([]byte(nil), packed...)
	for _, i := range []int{250, 70, 180} {
		row(corrupt, i)[0] = 0xee
	}
	at := func(i int) []byte { // the states at a decision (throw gae applied) but row i
		out := make([]byte, len(packed))
		throws := make([]byte, len(packed)/env.PackedSize)
		for k := range throws {
			throws[k] = uint8(env.Gae)
		}
		require.NoError(t, g.Apply(p, packed, nil, throws, out))
		if i >= 0 {
			copy(row(out, i), row(packed, i))
		}
		return out
	}
	n := len(packed) / env.PackedSize
	out := make([]byte, len(packed))
	tests := []struct {
		name string
		err  func() error
		row  int
		is   error
	}{
		{"corrupt rows", func() error { return g.Apply(p, corrupt, nil, make([]byte, n), out) }, 70, env.ErrVersion},
		{"action in the throw phase", func() error { return g.Apply(p, packed, make([]byte, 4*n), nil, out) }, 0, env.ErrWrongPhase},
		{"action out of range", func() error {
			a := make([]int32, n)
			for k := range a {
				a[k] = int32(env.EnterAction(env.Gae))
			}
			a[123], a[200] = env.NumActions, -1
			return g.Apply(p, at(-1), i32(a...), nil, out)
		}, 123, env.ErrIllegalAction},
		{"not a decision", func() error { return g.CheckDecisions(p, at(111)) }, 111, env.ErrBadInput},
		{"query corrupt", func() error { return g.Query(p, corrupt, &Query{Phase: make([]byte, n)}) }, 70, env.ErrVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			var re *RowError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.row, re.Row)
			assert.ErrorIs(t, err, tt.is)
		})
	}
	sizes := []struct {
		name string
		err  error
	}{
		{"ragged states", g.Apply(p, packed[:7], nil, []byte{0}, out)},
		{"short actions", g.Apply(p, packed, i32(1), nil, out)},
		{"short throws", g.Apply(p, packed, nil, []byte{0}, out)},
		{"ragged query", g.Query(p, packed[:7], &Query{})},
	}
	for _, tt := range sizes {
		t.Run(tt.name, func(t *testing.T) { assert.ErrorIs(t, tt.err, ErrSize) })
	}
}

// TestDescribeFromDescLoad round-trips a position with missed turns (skip
// obstacles) through FromDesc, Describe, the saved blob and Load.
func TestDescribeFromDescLoad(t *testing.T) {
	g := newGame(t, "kata,obstacles=4:skip+9:back2")
	d := env.PositionDesc{Phase: "throw", Pool: [6]int{},
		Stacks: []env.StackDesc{{Seat: 0, Station: 5, Route: "LINE", Height: 1}}, Missed: []int{0, 2}}
	packed, err := g.FromDesc(&d, 1)
	require.NoError(t, err)
	s, err := g.Unpack(packed)
	require.NoError(t, err)
	desc, err := Describe(&s)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2}, desc.Position.Missed)
	assert.Contains(t, desc.JSON, "missed")
	assert.NotEmpty(t, desc.Text)
	blob, err := s.MarshalBinary()
	require.NoError(t, err)
	back, rules, err := g.Load(blob)
	require.NoError(t, err)
	assert.Equal(t, packed, back)
	assert.Equal(t, g.Rules(), rules)
	_, _, err = newGame(t, "standard").Load(blob)
	assert.ErrorIs(t, err, ErrRules)
	_, _, err = (*Game)(nil).Load(blob)
	assert.NoError(t, err, "no game: any rules")
}
