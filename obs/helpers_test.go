package obs

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

// playRandom plays games with uniformly random legal actions and sampled
// throws and calls visit on every state met: chance nodes, decisions and
// the final state.
func playRandom(r env.Rules, games int, seed uint64, visit func(*env.State)) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var buf [env.NumActions]env.Action
	for g := 0; g < games; g++ {
		s, err := env.New(r, seed*1000+uint64(g), env.AnySeat)
		if err != nil {
			panic(err)
		}
		for steps := 0; steps < 5000; steps++ {
			visit(&s)
			switch s.Phase() {
			case env.PhaseThrow:
				if _, err := s.SampleThrow(); err != nil {
					panic(err)
				}
				continue
			case env.PhaseMove:
				legal := s.LegalActions(buf[:0])
				if _, err := s.Apply(legal[rng.IntN(len(legal))]); err != nil {
					panic(err)
				}
				continue
			}
			break
		}
	}
}

// randomStates returns every state met in random games.
func randomStates(r env.Rules, games int, seed uint64) []env.State {
	var out []env.State
	playRandom(r, games, seed, func(s *env.State) { out = append(out, *s) })
	return out
}

// mustState builds a state from a position or fails the test.
func mustState(t testing.TB, p env.Position) env.State {
	t.Helper()
	s, err := env.FromPosition(p, 1)
	require.NoError(t, err)
	return s
}

// encode returns a fresh observation of s in tier tier.
func encode(t testing.TB, tier Tier, s *env.State) []float32 {
	t.Helper()
	e, err := NewEncoder(s.Rules(), tier)
	require.NoError(t, err)
	buf := make([]float32, e.Size())
	e.Encode(s, s.ToMove(), buf)
	return buf
}

// at returns the value of the element called label ("board[self,7@OUTER]").
func at(t testing.TB, tier Tier, obs []float32, label string) float32 {
	t.Helper()
	sp := spaces[tier]
	for i := range obs {
		if sp.Label(i) == label {
			return obs[i]
		}
	}
	t.Fatalf("no element %q in tier %s", label, tier)
	return 0
}

// spec is a compact way to write a test position; hands are whatever
// pieces are neither on the board nor finished.
type spec struct {
	rules    string
	toMove   int
	phase    env.Phase
	pool     map[env.Throw]int
	stacks   []env.Stack
	finished [env.MaxPlayers]int
	place    [env.MaxPlayers]int
}

func (p spec) state(t testing.TB) env.State {
	t.Helper()
	r := envtest.Rules(t, p.rules)
	pos := env.Position{Rules: r, ToMove: p.toMove, Phase: p.phase, Finished: p.finished, Place: p.place, Stacks: p.stacks}
	for th, n := range p.pool {
		pos.Pool[th] = n
	}
	for i := 0; i < r.Players; i++ {
		pos.Hand[i] = r.Pieces - p.finished[i]
	}
	for _, st := range p.stacks {
		pos.Hand[st.Seat] -= st.Height
	}
	return mustState(t, pos)
}

// stack is shorthand for env.Stack.
func stack(seat int, st env.Station, r env.Route, h int) env.Stack {
	return env.Stack{Seat: seat, Station: st, Route: r, Height: h}
}

// requireSameObs is require.Equal for observations, with slices.Equal on
// the passing path: testify's reflect.DeepEqual over thousands of floats
// costs most of these tests' time, tenfold under -race (which checks every
// pointer it steps). The two agree on floats: NaN is unequal, -0 is 0.
func requireSameObs(t testing.TB, want, got []float32, msgAndArgs ...any) {
	t.Helper()
	if !slices.Equal(want, got) {
		require.Equal(t, want, got, msgAndArgs...)
	}
}

// scaled returns n, or fewer random games for the property tests, which
// then still run every check: n/8 under -short, n/32 under -race (which slows
// the engine tenfold and has nothing to find in them: they run in one
// goroutine), at least 1. Plain "go test ./obs" runs them in full.
func scaled(n int) int {
	switch {
	case israce.Enabled:
		return max(1, n/32)
	case testing.Short():
		return max(1, n/8)
	}
	return n
}

// fewGames is n, or 1 under -race, for the tests that check every state of
// a few games: they run in one goroutine, where the race detector has
// nothing to find.
func fewGames(n int) int { return israce.Scale(n, 1) }

// scaledMin is the matching lower bound for a count that grows more slowly
// than the number of games (pairs of positions that look alike).
func scaledMin(n int) int {
	switch {
	case israce.Enabled:
		return max(1, n/64)
	case testing.Short():
		return max(1, n/16)
	}
	return n
}
