package obs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

func TestActionCodecRoundTrip(t *testing.T) {
	assert.Equal(t, 180, ActionCount())
	names := ActionNames()
	require.Len(t, names, ActionCount())
	for id := 0; id < ActionCount(); id++ {
		a := env.Action(id)
		th, src := DecodeAction(a)
		assert.Equal(t, env.Throw(id/30), th)
		assert.Equal(t, id%30, src)
		back, err := EncodeAction(th, src)
		require.NoError(t, err)
		assert.Equal(t, a, back)
		assert.Equal(t, a.String(), names[id])
		parsed, err := env.ParseAction(names[id])
		require.NoError(t, err)
		assert.Equal(t, a, parsed)
	}
	assert.Equal(t, "gae@7", names[67])
	assert.Equal(t, "mo@enter", names[179])
}

func TestEncodeActionErrors(t *testing.T) {
	tests := []struct {
		name   string
		throw  env.Throw
		source int
	}{
		{"throw too big", 6, 0},
		{"throw way too big", 255, 3},
		{"negative source", env.Gae, -1},
		{"source too big", env.Gae, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeAction(tc.throw, tc.source)
			assert.ErrorIs(t, err, ErrBadAction)
		})
	}
	a, err := EncodeAction(env.Mo, env.EnterSource)
	require.NoError(t, err)
	assert.True(t, a.IsEnter())
}

func TestDescribe(t *testing.T) {
	o, c1, c2, cc1, cc2 := env.RouteOuter, env.RouteC1, env.RouteC2, env.RouteCentreC1, env.RouteCentreC2
	move := env.PhaseMove
	all := map[env.Throw]int{env.BackDo: 1, env.Do: 1, env.Gae: 1, env.Geol: 1, env.Yut: 1, env.Mo: 1}
	tests := []struct {
		name string
		pos  spec
		a    env.Action
		want string
	}{
		{"plain move", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 7, o, 1)}},
			env.NewAction(env.Gae, 7), "gae: stack at 7 -> 9"},
		{"enter onto C1", spec{phase: move, pool: all},
			env.EnterAction(env.Mo), "mo: enter -> 5, takes the C1 shortcut"},
		{"stack on HOME finishes", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 0, o, 2)}},
			env.NewAction(env.Do, 0), "do: stack of 2 at HOME -> finishes"},
		{"capture", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 3, o, 1), stack(1, 6, o, 2)}},
			env.NewAction(env.Geol, 3), "geol: stack at 3 -> 6, captures 2 of seat 1"},
		{"enter joins", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 1, o, 1)}},
			env.EnterAction(env.Do), "do: enter -> 1, joins own stack (height 2)"},
		{"back-do onto HOME", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 1, o, 1)}},
			env.NewAction(env.BackDo, 1), "back-do: stack at 1 -> HOME"},
		{"back-do from C3 via C1", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 15, c1, 1)}},
			env.NewAction(env.BackDo, 15), "back-do: stack at 15 -> 24"},
		{"back-do from C3 via OUTER", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 15, o, 1)}},
			env.NewAction(env.BackDo, 15), "back-do: stack at 15 -> 14"},
		{"back-do from HOME on C2", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 0, c2, 1)}},
			env.NewAction(env.BackDo, 0), "back-do: stack at HOME -> 28"},
		{"C2 shortcut", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 8, o, 1)}},
			env.NewAction(env.Gae, 8), "gae: stack at 8 -> 10, takes the C2 shortcut"},
		{"centre shortcut", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 5, c1, 3)}},
			env.NewAction(env.Geol, 5), "geol: stack of 3 at 5 -> 22, takes the centre shortcut"},
		{"passing the centre", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 21, c1, 1)}},
			env.NewAction(env.Geol, 21), "geol: stack at 21 -> 24"},
		{"centre route", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 22, cc1, 1)}},
			env.NewAction(env.Do, 22), "do: stack at 22 -> 27"},
		{"shortcut and capture", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 2, o, 1), stack(1, 5, c1, 1)}},
			env.NewAction(env.Geol, 2), "geol: stack at 2 -> 5, takes the C1 shortcut, captures 1 of seat 1"},
		{"finish wins", spec{phase: move, pool: all, finished: [4]int{3}, stacks: []env.Stack{stack(0, 28, cc2, 1)}},
			env.NewAction(env.Geol, 28), "geol: stack at 28 -> finishes, wins"},
		{"finish short of winning", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 19, o, 2)}},
			env.NewAction(env.Mo, 19), "mo: stack of 2 at 19 -> finishes"},
		{"second place", spec{rules: "players=3,end=rank", toMove: 2, phase: move, pool: all,
			finished: [4]int{4}, place: [4]int{1}, stacks: []env.Stack{stack(2, 27, cc1, 4)}},
			env.NewAction(env.Geol, 27), "geol: stack of 4 at 27 -> finishes, takes place 2"},
		{"stops on HOME", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 27, cc1, 1)}},
			env.NewAction(env.Gae, 27), "gae: stack at 27 -> HOME"},
		{"finish stop", spec{rules: "finish=stop", phase: move, pool: all, stacks: []env.Stack{stack(0, 18, o, 1)}},
			env.NewAction(env.Gae, 18), "gae: stack at 18 -> finishes"},
		{"back-do enters", spec{rules: "back_do_enters=on", phase: move, pool: all},
			env.EnterAction(env.BackDo), "back-do: enter -> HOME"},
		{"not in the pool", spec{phase: move, pool: map[env.Throw]int{env.Do: 1}, stacks: []env.Stack{stack(0, 7, o, 1)}},
			env.NewAction(env.Gae, 7), "gae: stack at 7 -> 9 (illegal: no gae in the pool)"},
		{"no stack there", spec{phase: move, pool: all, stacks: []env.Stack{stack(1, 7, o, 1)}},
			env.NewAction(env.Gae, 7), "gae: stack at 7 (illegal: seat 0 has no stack there)"},
		{"no piece in hand", spec{phase: move, pool: all, finished: [4]int{2}, stacks: []env.Stack{stack(0, 7, o, 2)}},
			env.EnterAction(env.Do), "do: enter -> 1 (illegal: no piece in hand)"},
		{"back-do cannot enter", spec{phase: move, pool: all},
			env.EnterAction(env.BackDo), "back-do: enter (illegal: back-do cannot enter a piece)"},
		{"back-do enters only from an empty board", spec{rules: "back_do_enters=on", phase: move, pool: all, stacks: []env.Stack{stack(0, 3, o, 1)}},
			env.EnterAction(env.BackDo), "back-do: enter -> HOME (illegal: back-do enters only with nothing on the board)"},
		{"chance node", spec{phase: env.PhaseThrow, stacks: []env.Stack{stack(0, 7, o, 1)}},
			env.NewAction(env.Gae, 7), "gae: stack at 7 -> 9 (illegal: the state is in phase throw, not move)"},
		{"out of range", spec{phase: move, pool: all}, env.Action(200), "action 200 (illegal: out of range 0..179)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.pos.state(t)
			assert.Equal(t, tc.want, Describe(&s, tc.a))
		})
	}
}

func TestDescribeNamed(t *testing.T) {
	o, c1 := env.RouteOuter, env.RouteC1
	move := env.PhaseMove
	all := map[env.Throw]int{env.BackDo: 1, env.Do: 1, env.Gae: 1, env.Geol: 1, env.Yut: 1, env.Mo: 1}
	names := func(seat int) string { return []string{"yours", "greedy (B)", "mc:3 (C)"}[seat] }
	tests := []struct {
		name string
		pos  spec
		a    env.Action
		seat func(int) string
		want string
	}{
		{"capture names the victim", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 3, o, 1), stack(1, 6, o, 2)}},
			env.NewAction(env.Geol, 3), names, "geol: stack at 3 -> 6, captures 2 of greedy (B)"},
		{"capture of the player", spec{phase: move, pool: all, toMove: 1, stacks: []env.Stack{stack(1, 3, o, 1), stack(0, 6, o, 1)}},
			env.NewAction(env.Geol, 3), names, "geol: stack at 3 -> 6, captures 1 of yours"},
		{"shortcut and capture", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 2, o, 1), stack(1, 5, c1, 1)}},
			env.NewAction(env.Geol, 2), names, "geol: stack at 2 -> 5, takes the C1 shortcut, captures 1 of greedy (B)"},
		{"third seat", spec{rules: "players=3", phase: move, pool: all, stacks: []env.Stack{stack(0, 7, o, 1), stack(2, 9, o, 1)}},
			env.NewAction(env.Gae, 7), names, "gae: stack at 7 -> 9, captures 1 of mc:3 (C)"},
		{"no seat named", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 7, o, 1)}},
			env.NewAction(env.Gae, 7), names, "gae: stack at 7 -> 9"},
		{"illegal: no stack there", spec{phase: move, pool: all, stacks: []env.Stack{stack(1, 7, o, 1)}},
			env.NewAction(env.Gae, 7), func(int) string { return "You" }, "gae: stack at 7 (illegal: You has no stack there)"},
		{"nil name is Describe's", spec{phase: move, pool: all, stacks: []env.Stack{stack(0, 3, o, 1), stack(1, 6, o, 2)}},
			env.NewAction(env.Geol, 3), nil, "geol: stack at 3 -> 6, captures 2 of seat 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.pos.state(t)
			assert.Equal(t, tc.want, DescribeNamed(&s, tc.a, tc.seat))
		})
	}
}

// Describe is DescribeNamed with seats named "seat N", for every action
// (legal or not) of many random states: naming changes nothing else.
func TestDescribeNamedIsDescribe(t *testing.T) {
	seatN := func(seat int) string { return fmt.Sprintf("seat %d", seat) }
	marked := func(seat int) string { return fmt.Sprintf("<%d>", seat) }
	specs := []string{"standard", "players=4,pieces=5,finish=stop", "kata"}
	if israce.Enabled {
		specs = specs[:1] // 182 actions a state in one goroutine: the standard game alone under -race
	}
	for _, spec := range specs {
		r := envtest.Rules(t, spec)
		playRandom(r, scaled(4), 5, func(s *env.State) {
			for a := env.Action(0); a < env.NumActions+2; a++ {
				// Plain comparisons, testify only to report: its reflection and
				// call-stack walks cost most of the test's time on 182 actions a state.
				d := Describe(s, a)
				if named := DescribeNamed(s, a, seatN); named != d {
					require.Equal(t, d, named, "action %d", a)
				}
				n := DescribeNamed(s, a, marked)
				if strings.Contains(n, "seat ") {
					assert.NotContains(t, n, "seat ", n)
				}
				for seat := 0; seat < r.Players; seat++ {
					d = strings.ReplaceAll(d, fmt.Sprintf("seat %d", seat), fmt.Sprintf("<%d>", seat))
				}
				if n != d {
					require.Equal(t, d, n, "action %d", a)
				}
			}
		})
	}
}

// Describe agrees with what the engine does, for every legal action of many
// random states.
func TestDescribeMatchesEngine(t *testing.T) {
	var buf [env.NumActions]env.Action
	for _, spec := range []string{"standard", "players=4,pieces=5,finish=stop", "players=3,back_do_enters=on,end=rank"} {
		r := envtest.Rules(t, spec)
		playRandom(r, 20, 11, func(s *env.State) {
			for _, a := range s.LegalActions(buf[:0]) {
				d := Describe(s, a)
				c := *s
				ev, err := c.Apply(a)
				require.NoError(t, err)
				assert.NotContains(t, d, "illegal", d)
				if ev.Finished > 0 {
					assert.Contains(t, d, "-> finishes", d)
				} else {
					assert.Contains(t, d, "-> "+stationName(ev.To), d)
				}
				assert.Equal(t, ev.Shortcut, contains(d, "shortcut"), d)
				assert.Equal(t, ev.Captured > 0, contains(d, "captures"), d)
				assert.Equal(t, ev.Joined, contains(d, "joins"), d)
				assert.Equal(t, ev.Placed, contains(d, ", wins") || contains(d, "takes place"), d)
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestAdjacency(t *testing.T) {
	adj := Adjacency()
	routes := AdjacencyRoutes()
	require.Len(t, routes, len(adj))
	require.Len(t, adj, len(env.Edges()))
	set := map[[2]int]string{}
	for i, e := range adj {
		_, dup := set[e]
		assert.False(t, dup, "edge %v twice", e)
		set[e] = routes[i]
		assert.GreaterOrEqual(t, e[0], 0)
		assert.Less(t, e[1], env.NumStations)
	}
	for _, want := range []struct {
		edge  [2]int
		route string
	}{
		{[2]int{0, 1}, "OUTER"}, {[2]int{19, 0}, "OUTER"}, {[2]int{4, 5}, "OUTER"},
		{[2]int{5, 20}, "C1"}, {[2]int{22, 23}, "C1"}, {[2]int{24, 15}, "C1"},
		{[2]int{10, 25}, "C2"}, {[2]int{26, 22}, "C2"}, {[2]int{22, 27}, "C2"}, {[2]int{28, 0}, "C2"},
	} {
		assert.Equal(t, want.route, set[want.edge], "edge %v", want.edge)
	}
	// Every station but HOME has an edge in and every station has an edge out.
	in, out := map[int]bool{}, map[int]bool{}
	for _, e := range adj {
		out[e[0]], in[e[1]] = true, true
	}
	for s := 0; s < env.NumStations; s++ {
		assert.True(t, in[s], "station %d has no edge in", s)
		assert.True(t, out[s], "station %d has no edge out", s)
	}
	// 20 outer + 6 from C1 + 6 from C2 (their paths meet at 22 and again at HOME).
	assert.Len(t, adj, 20+6+6)
	assert.Equal(t, "HOME", StationNames()[0])
}

func FuzzDescribe(f *testing.F) {
	f.Add(uint64(1), uint8(67), uint16(10))
	f.Add(uint64(9), uint8(255), uint16(0))
	f.Add(uint64(3), uint8(179), uint16(300))
	f.Fuzz(func(t *testing.T, seed uint64, action uint8, steps uint16) {
		s, err := env.New(env.Standard(), seed, env.AnySeat)
		require.NoError(t, err)
		var buf [env.NumActions]env.Action
		for i := 0; i < int(steps%400) && !s.IsOver(); i++ {
			if s.IsChance() {
				_, err := s.SampleThrow()
				require.NoError(t, err)
				continue
			}
			legal := s.LegalActions(buf[:0])
			_, err := s.Apply(legal[int(seed>>8+uint64(i))%len(legal)])
			require.NoError(t, err)
		}
		d := Describe(&s, env.Action(action))
		assert.NotEmpty(t, d)
		assert.Equal(t, s.IsLegal(env.Action(action)), !contains(d, "(illegal"), d)
	})
}
