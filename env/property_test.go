package env_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

// maxDecisions bounds the decisions of a game between random players. Measured
// over 20,000 random games of each of the longest rule sets (4 seats, 5
// pieces, end=rank, p = 0.5 / 0.6 / 0.65): median 194-229 decisions, 99.9th
// percentile 310-376, maximum 422 (standard rules: median 47, maximum 107).
// The tail falls off geometrically (each turn finishes pieces with a steady
// probability), so 2,000, almost five times the longest game seen, is a wide
// margin. It is a bound on random play, not on the rules: players who back
// off HOME and capture each other on purpose could play for ever.
const maxDecisions = 2000

// propertyRules are all the rule sets the property tests play: the names
// of env.Variants, which cover every option's values.
var propertyRules = variantNames(func(env.Variant) bool { return true })

// variantNames returns the names (rules strings) of the variants keep keeps.
func variantNames(keep func(env.Variant) bool) []string {
	var out []string
	for _, v := range env.Variants() {
		if keep(v) {
			out = append(out, v.Name)
		}
	}
	return out
}

// trimmed reports whether the property tests play fewer games: under -race
// or -short. Plain "go test ./env" runs them in full.
func trimmed() bool { return israce.Enabled || testing.Short() }

// chooser picks actions as a function of the seed and the state alone, so a
// copy of a state replays exactly the same choices.
func chooser(seed uint64) func(s *env.State, legal []env.Action) env.Action {
	return func(s *env.State, legal []env.Action) env.Action {
		r := rand.New(rand.NewPCG(seed, uint64(s.Decisions())<<32|uint64(s.Throws())))
		return legal[r.IntN(len(legal))]
	}
}

// playOut plays s to its end with the state's own throws and choose, and
// returns every event. It stops early (and fails) past maxDecisions.
func playOut(t *testing.T, s *env.State, choose func(*env.State, []env.Action) env.Action, check func(*env.State)) []env.Event {
	t.Helper()
	var evs []env.Event
	var buf [env.NumActions]env.Action
	for !s.IsOver() {
		if s.Decisions() > maxDecisions {
			t.Fatalf("the game did not end within %d decisions", maxDecisions)
		}
		var ev env.Event
		var err error
		if s.IsChance() {
			ev, err = s.SampleThrow()
		} else {
			ev, err = s.Apply(choose(s, s.LegalActions(buf[:0])))
		}
		require.NoError(t, err)
		evs = append(evs, ev)
		if check != nil {
			check(s)
		}
	}
	return evs
}

// checkInvariants checks everything that must hold in every reachable state.
// It is called after every step of thousands of games, so it uses plain
// comparisons and reports with t.Fatalf.
func checkInvariants(t *testing.T, s *env.State) {
	t.Helper()
	r := s.Rules()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), s.Render())
	}

	// Pieces are conserved; one stack per station, of one seat; the
	// occupancy sets agree with the stacks.
	var occ [env.MaxPlayers]uint32
	var board [env.MaxPlayers]int
	for st := env.Station(0); st < env.NumStations; st++ {
		if seat, h, route, ok := s.StackAt(st); ok {
			if seat < 0 || seat >= r.Players || h < 1 || h > r.Pieces || !r.OnBoard(st, route) {
				fail("bad stack on %d: seat %d height %d route %v", st, seat, h, route)
			}
			occ[seat] |= 1 << st
			board[seat] += h
		}
	}
	for seat := 0; seat < r.Players; seat++ {
		if n := s.Hand(seat) + board[seat] + s.Finished(seat); n != r.Pieces {
			fail("seat %d has %d pieces, want %d", seat, n, r.Pieces)
		}
		if occ[seat] != s.Occupied(seat) {
			fail("Occupied(%d) = %b, stacks say %b", seat, s.Occupied(seat), occ[seat])
		}
		for other := seat + 1; other < r.Players; other++ {
			if occ[seat]&occ[other] != 0 {
				fail("seats %d and %d share a station", seat, other)
			}
		}
	}

	// The legal actions, the mask, the count and IsLegal agree.
	var buf [env.NumActions]env.Action
	legal := s.LegalActions(buf[:0])
	var mask [env.NumActions]uint8
	s.Mask(mask[:])
	if len(legal) != s.NumLegalActions() {
		fail("NumLegalActions %d, LegalActions %v", s.NumLegalActions(), legal)
	}
	var inList [256]bool
	for i, a := range legal {
		if !a.Valid() || (i > 0 && legal[i-1] >= a) {
			fail("legal actions %v not valid and increasing", legal)
		}
		inList[a] = true
	}
	// IsLegal formats an error for each illegal action, which is slow, so
	// every action is asked only at every ninth step.
	all := (s.Decisions()+s.Throws())%9 == 0
	for a := 0; a < 256; a++ {
		if (all || inList[a]) && s.IsLegal(env.Action(a)) != inList[a] {
			fail("IsLegal(%v) = %v, LegalActions %v", env.Action(a), !inList[a], legal)
		}
		if a < env.NumActions && (mask[a] == 1) != inList[a] {
			fail("mask[%d] = %d, LegalActions %v", a, mask[a], legal)
		}
	}
	switch s.Phase() {
	case env.PhaseMove:
		if len(legal) == 0 {
			fail("a decision without a legal action")
		}
	case env.PhaseThrow:
		if len(legal) != 0 || len(s.ChanceOutcomes(nil)) == 0 {
			fail("a chance node with legal actions or without outcomes")
		}
	case env.PhaseOver:
		if len(legal) != 0 || s.Winner() < 0 || s.Place(s.Winner()) != 1 {
			fail("a finished game with legal actions or without a winner")
		}
	}
	if !s.IsOver() && s.Place(s.ToMove()) != 0 {
		fail("seat %d is to move but has already finished", s.ToMove())
	}

	// Every reachable position is one FromPosition accepts, unchanged.
	p := s.Position()
	back, err := env.FromPosition(p, 1)
	if err != nil {
		fail("FromPosition refuses a reachable position: %v", err)
	}
	if !reflect.DeepEqual(p, back.Position()) {
		fail("FromPosition changed the position: %+v", back.Position())
	}
}

func TestPropertyRandomGames(t *testing.T) {
	games := 20
	switch {
	case israce.Enabled:
		games = 2 // properties of games in one goroutine, where the race detector has nothing to find
	case testing.Short():
		games = 5
	}
	for _, spec := range propertyRules {
		t.Run(spec, func(t *testing.T) {
			r := envtest.Rules(t, spec)
			for g := 0; g < games; g++ {
				seed := uint64(g)*7919 + 17
				start := env.AnySeat
				if g%3 == 0 {
					start = g % r.Players
				}
				s, err := env.New(r, seed, start)
				require.NoError(t, err)
				rec := env.NewRecord(r, seed, start)
				choose := chooser(seed)

				// Snapshots part-way through, to replay from later.
				snapAt := 1 + g%40
				var snap env.State
				var blob []byte
				var evsBefore int
				var evs []env.Event
				var buf [env.NumActions]env.Action
				for !s.IsOver() {
					if s.Decisions() > maxDecisions {
						t.Fatalf("game %d did not end within %d decisions", g, maxDecisions)
					}
					if s.Decisions() == snapAt && blob == nil {
						snap, evsBefore = s, len(evs)
						blob, err = s.MarshalBinary()
						require.NoError(t, err)
					}
					var ev env.Event
					if s.IsChance() {
						ev, err = s.SampleThrow()
					} else {
						ev, err = s.Apply(choose(&s, s.LegalActions(buf[:0])))
					}
					require.NoError(t, err)
					evs = append(evs, ev)
					rec.Add(ev, &s)
					checkInvariants(t, &s)
				}
				require.GreaterOrEqual(t, s.Winner(), 0, "game %d ended without a winner", g)

				// A copy and a restored blob replay identically.
				if blob != nil {
					restored, err := env.UnmarshalState(blob)
					require.NoError(t, err)
					require.Equal(t, snap, restored)
					for name, c := range map[string]env.State{"copy": snap, "restored": restored} {
						got := playOut(t, &c, choose, nil)
						assert.Equal(t, evs[evsBefore:], got, "game %d: %s replays the same events", g, name)
						assert.Equal(t, s, c, "game %d: %s ends in the same state", g, name)
					}
				}

				// The record replays to the same end.
				final, err := rec.Replay(nil)
				require.NoError(t, err)
				assert.Equal(t, s.Position(), final.Position())
				assert.Equal(t, s.JSON(), final.JSON())
				assert.Equal(t, []int{s.Decisions(), s.Throws()}, []int{final.Decisions(), final.Throws()})
				require.NotNil(t, rec.Result)
				assert.Equal(t, s.Winner(), rec.Result.Winner)
			}
		})
	}
}

// TestPropertyOutcomes checks the outcome values of finished games: +1 for
// the winner, the places spread evenly under end=rank, -1 for seats not ranked.
func TestPropertyOutcomes(t *testing.T) {
	for _, spec := range []string{"standard", "players=4", "players=4,end=rank", "players=3,end=rank"} {
		r := envtest.Rules(t, spec)
		for g := uint64(0); g < 20; g++ {
			s, err := env.New(r, g, env.AnySeat)
			require.NoError(t, err)
			playOut(t, &s, chooser(g), nil)
			sum := 0.0
			for seat := 0; seat < r.Players; seat++ {
				o := s.Outcome(seat)
				sum += o
				switch p := s.Place(seat); {
				case p == 1:
					assert.Equal(t, 1.0, o)
				case p == 0 || p == r.Players:
					assert.Equal(t, -1.0, o)
				default:
					assert.InDelta(t, 1-2*float64(p-1)/float64(r.Players-1), o, 1e-12)
				}
			}
			if r.End == env.EndRank || r.Players == 2 {
				assert.InDelta(t, 0, sum, 1e-12, fmt.Sprintf("%s: outcomes sum to zero", spec))
			}
		}
	}
}
