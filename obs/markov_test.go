package obs

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

// keyFunc turns a state into the observation a learner sees, as a map key.
type keyFunc func(*env.State) string

// tierKey returns the key function of a tier's encoder.
func tierKey(t testing.TB, r env.Rules, tier Tier) keyFunc {
	e, err := NewEncoder(r, tier)
	require.NoError(t, err)
	buf := make([]float32, e.Size())
	var bytes []byte
	return func(s *env.State) string {
		e.Encode(s, s.ToMove(), buf)
		bytes = floatBytes(bytes[:0], buf)
		return hashKey(bytes)
	}
}

// floatBytes appends the bits of v to b.
func floatBytes(b []byte, v []float32) []byte {
	for _, f := range v {
		u := math.Float32bits(f)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return b
}

var hashSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// hashKey is a 128-bit hash of b: two observations with the same key are
// equal but for a chance of about 2^-128.
func hashKey(b []byte) string {
	var k [16]byte
	binary.LittleEndian.PutUint64(k[:8], maphash.Bytes(hashSeeds[0], b))
	binary.LittleEndian.PutUint64(k[8:], maphash.Bytes(hashSeeds[1], b))
	return string(k[:])
}

// positionKey identifies a state's position (everything but the generator
// and the counters).
func positionKey(s *env.State) string {
	r := s.Rules()
	b := []byte{byte(s.ToMove()), byte(s.Phase())}
	pool := s.Pool()
	b = append(b, pool[:]...)
	for i := 0; i < r.Players; i++ {
		b = append(b, byte(s.Hand(i)), byte(s.Finished(i)), byte(s.Place(i)))
	}
	for st := env.Station(0); st < env.NumStations; st++ {
		seat, h, route, ok := s.StackAt(st)
		if ok {
			b = append(b, byte(st), byte(seat), byte(h), byte(route))
		}
	}
	b = append(b, 0xff) // then the missed turns (skip obstacles)
	for i := 0; i < r.Players; i++ {
		b = append(b, byte(s.MissedTurns(i)))
	}
	return string(b)
}

// skipRules are rule sets with skip obstacles (and a push), on the line
// and on the cross board: there a state has missed turns.
var skipRules = []string{"kata,obstacles=4:skip+9:back2", "players=3,pieces=2,obstacles=7:skip+12:skip+9:back2"}

// missedTwins returns, for states of a game with skip obstacles, copies
// that differ from them in the missed turns of one seat only.
func missedTwins(t testing.TB, states []env.State, every int) []env.State {
	var out []env.State
	for i := 0; i < len(states); i += every {
		p := states[i].Position()
		n := p.Rules.Players
		if p.Phase == env.PhaseOver {
			continue
		}
		missed := make([]int, n)
		copy(missed, p.Missed)
		missed[(p.ToMove+1+i)%n]++
		p.Missed = missed
		out = append(out, mustState(t, p))
	}
	return out
}

// markovCheck groups states by key and checks that states with equal keys
// have the same legal-action mask, the same outcomes seen from the seat to
// move, and the same distribution over successor keys after every legal
// action and at every chance node. It returns how many pairs of distinct
// positions it compared and what it found wrong.
func markovCheck(states []env.State, key keyFunc) (pairs int, problems []string) {
	type member struct {
		s   *env.State
		pos string
	}
	groups := map[string][]member{}
	for i := range states {
		s := &states[i]
		k := key(s)
		pos := positionKey(s)
		dup := false
		for _, m := range groups[k] {
			if m.pos == pos {
				dup = true
				break
			}
		}
		if !dup && len(groups[k]) < 12 {
			groups[k] = append(groups[k], member{s, pos})
		}
	}
	for _, g := range groups {
		rep := g[0].s
		want := successors(rep, key)
		for _, m := range g[1:] {
			pairs++
			if why := sameFuture(rep, m.s, want, successors(m.s, key)); why != "" && len(problems) < 5 {
				problems = append(problems, fmt.Sprintf("%s\n  a: %+v\n  b: %+v", why, rep.Position(), m.s.Position()))
			}
		}
	}
	return pairs, problems
}

// future is what can follow a state: its mask, outcomes and, per action
// (or per chance node, action -1), a distribution over successor keys.
type future struct {
	mask     [env.NumActions]uint8
	outcomes [env.MaxPlayers]float64
	next     map[int]map[string]float64
}

func successors(s *env.State, key keyFunc) future {
	f := future{next: map[int]map[string]float64{}}
	s.Mask(f.mask[:])
	n := s.Rules().Players
	for k := 0; k < n; k++ {
		f.outcomes[k] = s.Outcome((s.ToMove() + k) % n)
	}
	switch s.Phase() {
	case env.PhaseThrow:
		d := map[string]float64{}
		for _, o := range s.ChanceOutcomes(nil) {
			c := *s
			if _, err := c.ApplyThrow(o.Throw); err != nil {
				panic(err)
			}
			d[key(&c)] += o.Prob
		}
		f.next[-1] = d
	case env.PhaseMove:
		for _, a := range s.LegalActions(nil) {
			c := *s
			if _, err := c.Apply(a); err != nil {
				panic(err)
			}
			f.next[int(a)] = map[string]float64{key(&c): 1}
		}
	}
	return f
}

func sameFuture(a, b *env.State, fa, fb future) string {
	if fa.mask != fb.mask {
		return "different masks"
	}
	if fa.outcomes != fb.outcomes {
		return fmt.Sprintf("different outcomes %v and %v", fa.outcomes, fb.outcomes)
	}
	if len(fa.next) != len(fb.next) {
		return "different numbers of moves"
	}
	for act, da := range fa.next {
		db := fb.next[act]
		if len(da) != len(db) {
			return fmt.Sprintf("after %d: %d and %d distinct successors", act, len(da), len(db))
		}
		for k, p := range da {
			if math.Abs(db[k]-p) > 1e-12 {
				if act < 0 {
					return "different successor distributions at the chance node"
				}
				return fmt.Sprintf("different successors after %v", env.Action(act))
			}
		}
	}
	return ""
}

// routeTwins are positions that differ only in the route of one stack, for
// every station two routes share, at a decision with every throw in the
// pool and at a chance node.
func routeTwins(t testing.TB) (same, differ [][2]env.State) {
	all := map[env.Throw]int{env.BackDo: 1, env.Do: 1, env.Gae: 1, env.Geol: 1, env.Yut: 1, env.Mo: 1}
	for ra := env.Route(0); ra < env.NumRoutes; ra++ {
		for rb := ra + 1; rb < env.NumRoutes; rb++ {
			for st := env.Station(0); st < env.NumStations; st++ {
				if !env.OnRoute(st, ra) || !env.OnRoute(st, rb) {
					continue
				}
				for _, ph := range []env.Phase{env.PhaseMove, env.PhaseThrow} {
					var pair [2]env.State
					for i, r := range []env.Route{ra, rb} {
						sp := spec{phase: ph, stacks: []env.Stack{stack(0, st, r, 2), stack(1, 3, env.RouteOuter, 1)}}
						if ph == env.PhaseMove {
							sp.pool = all
						}
						pair[i] = sp.state(t)
					}
					if laneOf[ra] == laneOf[rb] {
						same = append(same, pair)
					} else {
						differ = append(differ, pair)
					}
				}
			}
		}
	}
	return same, differ
}

func TestRouteTwins(t *testing.T) {
	same, differ := routeTwins(t)
	key := tierKey(t, env.Standard(), Compact)
	require.Len(t, same, 4*2, "C2 and CENTRE/C2 share 22, 27, 28 and HOME")
	for _, p := range same {
		assert.Equal(t, key(&p[0]), key(&p[1]), "%v", p[0].Position().Stacks)
	}
	require.NotEmpty(t, differ)
	for _, p := range differ {
		assert.NotEqual(t, key(&p[0]), key(&p[1]), "%v", p[0].Position().Stacks)
	}
}

// The compact tier is Markov-sufficient: two states it cannot tell apart
// have the same legal actions and the same distribution over successor
// observations, for every action and every chance outcome.
func TestCompactIsMarkovSufficient(t *testing.T) {
	same, differ := routeTwins(t)
	var twins []env.State
	for _, p := range append(same, differ...) {
		twins = append(twins, p[0], p[1])
	}
	tests := []struct {
		rules    string
		games    int
		minPairs int
	}{
		{"standard", 800, 1000},
		{"pieces=1", 1000, 2000},
		{"pieces=2,players=3,end=rank", 600, 1000},
		{"pieces=2,finish=stop,back_do_enters=on,capture_bonus_yut_mo=on", 800, 1000},
		{"pieces=2,back_do=off,flat_prob=0.5,players=4", 400, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.rules, func(t *testing.T) {
			r := envtest.Rules(t, tc.rules)
			states := randomStates(r, scaled(tc.games), 17)
			if tc.rules == "standard" {
				states = append(states, twins...)
			}
			pairs, problems := markovCheck(states, tierKey(t, r, Compact))
			assert.Empty(t, problems)
			assert.GreaterOrEqual(t, pairs, scaledMin(tc.minPairs), "too few states share an observation for the test to mean much")
			t.Logf("%d states, %d pairs of distinct positions with equal observations", len(states), pairs)
		})
	}
	// Under skip obstacles the turns each seat will miss are part of the
	// state: every tier must tell apart states that differ in them only.
	for _, spec := range skipRules {
		r := envtest.Rules(t, spec)
		states := randomStates(r, scaled(150), 29)
		states = append(states, missedTwins(t, states, 7)...)
		for _, tier := range Tiers() {
			t.Run("skip obstacles/"+spec+"/"+tier.String(), func(t *testing.T) {
				pairs, problems := markovCheck(states, tierKey(t, r, tier))
				assert.Empty(t, problems)
				t.Logf("%d states, %d pairs of distinct positions with equal observations", len(states), pairs)
			})
		}
	}
	t.Run("planes", func(t *testing.T) {
		r := envtest.Rules(t, "pieces=2,players=3,end=rank")
		states := append(randomStates(r, scaled(100), 19), twins...)
		pairs, problems := markovCheck(states, tierKey(t, r, Planes))
		assert.Empty(t, problems)
		assert.Greater(t, pairs, scaledMin(100))
	})
}

// Every tier is Markov-sufficient under every rule variant of env.Variants
// (boards, pools, capture bonus, obstacles, 2-4 players, the kata).
func TestEveryTierIsMarkovUnderEveryVariant(t *testing.T) {
	for i, v := range env.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			states := randomStates(v.Rules, scaled(32), 23)
			tiers := Tiers()
			if israce.Enabled || testing.Short() {
				tiers = tiers[i%len(tiers) : i%len(tiers)+1] // trimmed: each variant in one tier, in turn
			}
			for _, tier := range tiers {
				pairs, problems := markovCheck(states, tierKey(t, v.Rules, tier))
				assert.Empty(t, problems, "tier %s", tier)
				t.Logf("tier %s: %d states, %d pairs of distinct positions with equal observations", tier, len(states), pairs)
			}
		})
	}
}

// The check can fail: an observation that forgets route memory (it keeps
// each stack's station and height but not its lane) is caught.
func TestMarkovCheckCatchesLostRouteMemory(t *testing.T) {
	r := env.Standard()
	compact := tierKey(t, r, Compact)
	cellStation := map[int]int{}
	for rt := range cellOf {
		for st, c := range cellOf[rt] {
			if c >= 0 {
				cellStation[int(c)] = st
			}
		}
	}
	enc, err := NewEncoder(r, Compact)
	require.NoError(t, err)
	o := make([]float32, enc.Size())
	lossy := func(s *env.State) string {
		enc.Encode(s, s.ToMove(), o)
		var board [numSeats * env.NumStations]float32
		for k := 0; k < numSeats; k++ {
			for c := 0; c < numCells; c++ {
				board[k*env.NumStations+cellStation[c]] += o[offBoard+k*numCells+c]
			}
		}
		return hashKey(floatBytes(floatBytes(nil, board[:]), o[offHand:]))
	}
	same, differ := routeTwins(t)
	var states []env.State
	for _, p := range append(same, differ...) {
		states = append(states, p[0], p[1])
	}
	_, problems := markovCheck(states, lossy)
	assert.NotEmpty(t, problems)
	_, problems = markovCheck(states, compact)
	assert.Empty(t, problems)
}
