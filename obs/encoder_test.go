package obs

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

func TestNewEncoderErrors(t *testing.T) {
	_, err := NewEncoder(env.Standard(), Tier(9))
	assert.ErrorIs(t, err, ErrBadTier)
	bad := env.Standard()
	bad.Players = 7
	_, err = NewEncoder(bad, Compact)
	assert.ErrorIs(t, err, env.ErrInvalidRules)
	assert.Contains(t, err.Error(), "players")
	for _, tier := range Tiers() {
		e, err := NewEncoder(envtest.Rules(t, "players=4,pieces=5"), tier)
		require.NoError(t, err)
		assert.Equal(t, tier, e.Tier())
		assert.Equal(t, spaces[tier].Size, e.Size())
		assert.Equal(t, 4, e.Rules().Players)
	}
}

// hit probabilities computed by hand at p = 0.6: P(a turn's first throw
// sequence contains a throw of the set) = 1 - qn / (1 - qb).
const (
	pHitGae    = 1 - 0.4992/0.8448 // 0.409091: qb = .1296+.0256, qn = 1-.1552-.3456
	pHitGeol   = pHitGae           // geol has the same probability as gae
	pHitBackDo = 1 - 0.8064/0.8448 // 0.045455
	pHitDo     = 1 - 0.7296/0.8448 // 0.136364
	pHitYut    = 1 - 0.8448/0.9744 // 0.133005
	pHitMo     = 1 - 0.8448/0.8704 // 0.029412
)

// goldenPositions are hand-built positions; TestGoldenValues checks facts
// about them by hand, TestGoldenFiles pins every value.
var goldenPositions = []struct {
	name string
	pos  spec
}{
	{"route-memory", spec{phase: env.PhaseMove, pool: map[env.Throw]int{env.BackDo: 1, env.Gae: 1},
		stacks: []env.Stack{
			stack(0, 15, env.RouteC1, 1), stack(0, 16, env.RouteOuter, 2),
			stack(1, 22, env.RouteCentreC2, 1), stack(1, 7, env.RouteOuter, 1),
		}}},
	{"capture-exposure", spec{rules: "pieces=2", phase: env.PhaseMove, pool: map[env.Throw]int{env.Gae: 1},
		stacks: []env.Stack{
			stack(0, 1, env.RouteOuter, 1),
			stack(1, 3, env.RouteOuter, 1), stack(1, 12, env.RouteOuter, 1),
		}}},
	{"three-seats-ranked", spec{rules: "players=3,end=rank", toMove: 2, phase: env.PhaseThrow,
		finished: [4]int{4, 1, 0}, place: [4]int{1, 0, 0},
		stacks: []env.Stack{
			stack(1, 27, env.RouteCentreC1, 2), stack(2, 24, env.RouteC1, 3),
		}}},
	{"game-over", spec{phase: env.PhaseOver, finished: [4]int{4, 0}, place: [4]int{1, 0},
		stacks: []env.Stack{stack(1, 9, env.RouteOuter, 2)}}},
}

func goldenState(t *testing.T, name string) env.State {
	t.Helper()
	for _, g := range goldenPositions {
		if g.name == name {
			return g.pos.state(t)
		}
	}
	t.Fatalf("no golden position %q", name)
	return env.State{}
}

func TestGoldenValues(t *testing.T) {
	const eps = 1e-5
	t.Run("route-memory/compact", func(t *testing.T) {
		s := goldenState(t, "route-memory")
		o := encode(t, Compact, &s)
		want := map[string]float32{
			"board[self,15@C1]":    0.25,
			"board[self,16@OUTER]": 0.5,
			"board[opp1,22@C2]":    0.25, // CENTRE/C2 shares the C2 cell
			"board[opp1,7@OUTER]":  0.25,
			"hand[self]":           0.25,
			"hand[opp1]":           0.5,
			"seats[self,present]":  1,
			"seats[opp1,present]":  1,
			"pool[back-do]":        1,
			"pool[gae]":            1,
			"phase[move]":          1,
			"rules[players]":       0.5,
			"rules[pieces]":        0.8,
			"rules[flat_prob]":     0.6,
			"rules[back_do]":       1,
			"to_move[self]":        1,
		}
		assertValues(t, Compact, o, want, true)
	})
	t.Run("route-memory/tactical", func(t *testing.T) {
		s := goldenState(t, "route-memory")
		o := encode(t, Tactical, &s)
		assertValues(t, Tactical, o, map[string]float32{
			// back-do from C3 returns up the C1 diagonal: 24 is 7 steps from finishing.
			"actions[back-do@15,legal]":    1,
			"actions[back-do@15,moved]":    0.25,
			"actions[back-do@15,distance]": 7.0 / 20,
			// the pair on 16 came round the outside and backs to 15 on OUTER.
			"actions[back-do@16,distance]": 6.0 / 20,
			"actions[back-do@16,moved]":    0.5,
			"actions[gae@16,distance]":     3.0 / 20,
			"actions[gae@15,distance]":     4.0 / 20,
			"actions[gae@enter,enter]":     1,
			"actions[gae@enter,distance]":  19.0 / 20,
			// seat 1 enters with gae onto 2.
			"actions[gae@enter,exposure]": pHitGae,
			"threat[2]":                   pHitGae,
			// seat 1's stack on 22 (CENTRE/C2): back-do 26, do 27, gae 28, geol HOME.
			"threat[26]":   pHitBackDo,
			"threat[27]":   pHitDo,
			"threat[HOME]": pHitGeol,
			// its stack on 7: geol takes it to 10, mo to 12.
			"threat[10]": pHitGeol,
			"threat[12]": pHitMo,
			// hand (do -> 1) and the stack on 7 (back-do -> 6) do not add up elsewhere.
			"threat[1]":  pHitDo,
			"threat[6]":  pHitBackDo,
			"threat[11]": pHitYut,
			"threat[5]":  pHitMo,
			"threat[4]":  pHitYut,
			"threat[9]":  pHitGae,
			// 8 is hit by do from 7, 3 by geol from hand: separate throws.
			"threat[8]": pHitDo,
			"threat[3]": pHitGeol,
		}, false)
		assert.InDelta(t, 0, at(t, Tactical, o, "actions[gae@16,exposure]"), eps, "nothing of seat 1 reaches 18")
		assert.Zero(t, at(t, Tactical, o, "actions[gae@7,legal]"), "7 is seat 1's")
		assert.Zero(t, at(t, Tactical, o, "actions[do@16,legal]"), "no do in the pool")
		assert.Zero(t, at(t, Tactical, o, "actions[back-do@enter,legal]"))
	})
	t.Run("capture-exposure/tactical", func(t *testing.T) {
		s := goldenState(t, "capture-exposure")
		o := encode(t, Tactical, &s)
		assertValues(t, Tactical, o, map[string]float32{
			"actions[gae@1,captures]": 0.5,
			"actions[gae@1,moved]":    0.5,
			// seat 1 has nothing in hand now, but after the capture it can
			// enter with geol onto 3.
			"actions[gae@1,exposure]":     pHitGeol,
			"threat[3]":                   0,
			"actions[gae@enter,enter]":    1,
			"actions[gae@enter,exposure]": pHitBackDo, // back-do from 3 onto 2
			"threat[13]":                  pHitDo,
			"threat[16]":                  pHitYut,
			"threat[17]":                  pHitMo,
			"threat[11]":                  pHitBackDo,
		}, false)
		assert.Zero(t, at(t, Tactical, o, "threat[1]"))
	})
	t.Run("three-seats-ranked/compact", func(t *testing.T) {
		s := goldenState(t, "three-seats-ranked")
		o := encode(t, Compact, &s)
		assertValues(t, Compact, o, map[string]float32{
			// seat 2 to move; then seat 0 (ranked first), then seat 1.
			"board[self,24@C1]":        0.75,
			"board[opp2,27@CENTRE/C1]": 0.5,
			"hand[self]":               0.25,
			"hand[opp2]":               0.25,
			"finished[opp1]":           1,
			"finished[opp2]":           0.25,
			"seats[self,present]":      1,
			"seats[opp1,present]":      1,
			"seats[opp2,present]":      1,
			"seats[opp1,place]":        0.25,
			"phase[throw]":             1,
			"rules[players]":           0.75,
			"rules[pieces]":            0.8,
			"rules[flat_prob]":         0.6,
			"rules[back_do]":           1,
			"rules[end_rank]":          1,
			"to_move[self]":            1,
		}, true)
	})
	t.Run("three-seats-ranked/planes", func(t *testing.T) {
		s := goldenState(t, "three-seats-ranked")
		o := encode(t, Planes, &s)
		assertValues(t, Planes, o, map[string]float32{
			"planes[height/self,24]":    0.75,
			"planes[lane/C1,24]":        1,
			"planes[height/opp2,27]":    0.5,
			"planes[lane/CENTRE/C1,27]": 1,
			"globals[finished/opp1]":    1,
			"globals[place/opp1]":       0.25,
			"globals[present/opp3]":     0,
			"globals[phase/throw]":      1,
			// only seat 1 still plays against seat 2: its 27 (CENTRE) stack
			// reaches 28 by do, HOME by gae, 22 by back-do...
			"planes[threat,28]":   pHitDo,
			"planes[threat,HOME]": pHitGae,
			"planes[threat,26]":   0,
		}, false)
		assert.InDelta(t, pHitBackDo, at(t, Planes, o, "planes[threat,22]"), 1e-5, "back-do from 27 on CENTRE goes to 22")
		assert.Zero(t, at(t, Planes, o, "planes[threat,23]"), "nothing reaches 23")
	})
	t.Run("game-over/tactical", func(t *testing.T) {
		s := goldenState(t, "game-over")
		o := encode(t, Tactical, &s)
		assert.Equal(t, float32(1), at(t, Tactical, o, "phase[over]"))
		for i := offThreat; i < sizeTactical; i++ {
			require.Zero(t, o[i], spaces[Tactical].Label(i))
		}
	})
}

// assertValues checks the named values; with exact, every other value must be 0.
func assertValues(t *testing.T, tier Tier, o []float32, want map[string]float32, exact bool) {
	t.Helper()
	sp := spaces[tier]
	seen := map[string]bool{}
	for i, v := range o {
		l := sp.Label(i)
		if w, ok := want[l]; ok {
			seen[l] = true
			assert.InDelta(t, w, v, 1e-5, l)
		} else if exact {
			assert.Zero(t, v, l)
		}
	}
	for l := range want {
		assert.True(t, seen[l], "no element %q", l)
	}
}

// Every tier's facts agree with the engine: legal actions with the mask,
// and the tactical move features with the Event that Apply reports.
func TestFeaturesMatchEngine(t *testing.T) {
	for _, spec := range []string{"standard", "players=4,pieces=5", "players=3,pieces=2,finish=stop,back_do_enters=on,end=rank", "back_do=off,capture_bonus_yut_mo=on",
		"kata", "kata,spaces=29,finish=wrap,players=3,pieces=4,obstacles=4:skip+9:back3+11:back1+12:back2", "finish=exact,pool=off,obstacles=3:skip+6:back2+8:back3+23:back4",
		"finish=wrap,pieces=2", "kata,players=4,obstacles=2:back2+5:back1+7:back4"} {
		t.Run(spec, func(t *testing.T) {
			r := envtest.Rules(t, spec)
			tac, err := NewEncoder(r, Tactical)
			require.NoError(t, err)
			pl, err := NewEncoder(r, Planes)
			require.NoError(t, err)
			o := make([]float32, tac.Size())
			p := make([]float32, pl.Size())
			mask := make([]uint8, env.NumActions)
			inv := 1 / float32(r.Pieces)
			checked := 0
			playRandom(r, scaled(200), 5, func(s *env.State) {
				tac.Encode(s, s.ToMove(), o)
				pl.Encode(s, s.ToMove(), p)
				s.Mask(mask)
				for a := 0; a < env.NumActions; a++ {
					f := o[offActions+a*numActionFeatures:][:numActionFeatures]
					var planeLegal float32
					if env.Action(a).IsEnter() {
						planeLegal = p[offGlobals+gEnter+a/30]
					} else {
						planeLegal = p[(chLegal+a/30)*env.NumStations+a%30]
					}
					if f[featLegal] != float32(mask[a]) || planeLegal != float32(mask[a]) {
						t.Fatalf("%v: mask %d, tactical legal %v, planes legal %v", env.Action(a), mask[a], f[featLegal], planeLegal)
					}
					var want [numActionFeatures]float32
					if mask[a] == 1 {
						c := *s
						ev, err := c.Apply(env.Action(a))
						require.NoError(t, err)
						want = featuresFromEvent(r, ev, inv)
						checked++
						want[featExposure] = f[featExposure] // checked against a brute force below
					}
					if [numActionFeatures]float32(f) != want {
						t.Fatalf("%v: features %v, want %v from the engine", env.Action(a), f, want)
					}
				}
			})
			assert.Greater(t, checked, scaled(10000)*r.Pieces*r.NumPlaces()/(4*env.NumStations))
			t.Logf("%d legal actions checked", checked)
		})
	}
}

// featuresFromEvent is what the tactical features of a move must be, given
// what the engine reports it did (all but exposure).
func featuresFromEvent(r env.Rules, ev env.Event, inv float32) (f [numActionFeatures]float32) {
	f[featLegal] = 1
	f[featEnter] = b2f(ev.Entered)
	f[featMoved] = float32(ev.Moved) * inv
	f[featCaptures] = float32(ev.Captured+ev.PushCaptured) * inv
	f[featFinishes] = float32(ev.Finished) * inv
	f[featPlaces] = b2f(ev.Placed)
	f[featShortcut] = b2f(ev.Shortcut)
	if ev.Joined {
		f[featJoins] = float32(ev.Height) * inv
	}
	if ev.Finished == 0 {
		f[featDistance] = float32(r.StepsToFinish(ev.To, ev.ToRoute)) / float32(max(20, r.LapSteps()-1))
	}
	return f
}

// The threat and exposure features agree with a brute force that asks the
// engine itself, seat by seat and throw by throw, which opponent moves land
// on a station, and sums the probabilities of throw sequences by enumeration.
func TestThreatMatchesBruteForce(t *testing.T) {
	for _, spec := range []string{"standard", "players=4,pieces=3", "players=3,pieces=2,finish=stop,back_do_enters=on,end=rank", "back_do=off,flat_prob=0.5",
		"players=3,obstacles=3:back2+8:back1+22:back3+12:skip", "board=line,spaces=12,finish=wrap,obstacles=2:back2+6:back4"} {
		t.Run(spec, func(t *testing.T) {
			r := envtest.Rules(t, spec)
			tac, err := NewEncoder(r, Tactical)
			require.NoError(t, err)
			o := make([]float32, tac.Size())
			var buf [env.NumActions]env.Action
			n := 0
			playRandom(r, scaled(40), 9, func(s *env.State) {
				if s.IsOver() {
					return
				}
				tac.Encode(s, s.ToMove(), o)
				me := s.ToMove()
				want := bruteThreat(t, s, me)
				for st := range want {
					require.InDelta(t, want[st], o[offThreat+st], 1e-5, "threat on %v", env.Station(st))
				}
				for _, a := range s.LegalActions(buf[:0]) {
					c := *s
					ev, err := c.Apply(a)
					require.NoError(t, err)
					f := o[offActions+int(a)*numActionFeatures:][:numActionFeatures]
					if ev.Finished > 0 {
						require.Zero(t, f[featExposure])
						continue
					}
					want := bruteThreat(t, &c, me)[ev.To]
					require.InDelta(t, want, f[featExposure], 1e-5, "exposure of %v (%v)", a, ev)
					n++
				}
			})
			assert.Greater(t, n, scaled(1000), "too few actions checked")
		})
	}
}

// bruteThreat returns, for every station, the probability that some seat
// other than me, still playing, can land on it with one result of its next
// turn's first throw sequence, found by trying every throw with the engine.
func bruteThreat(t *testing.T, s *env.State, me int) [env.NumStations]float64 {
	t.Helper()
	r := s.Rules()
	pr := r.Probabilities()
	var miss [env.NumStations]float64
	for st := range miss {
		miss[st] = 1
	}
	for seat := 0; seat < r.Players; seat++ {
		if seat == me || s.Place(seat) != 0 {
			continue
		}
		var hits [env.NumStations]uint8
		for th := env.Throw(0); th < env.NumThrows; th++ {
			if pr[th] == 0 {
				continue
			}
			pos := s.Position()
			pos.ToMove, pos.Phase, pos.Pool = seat, env.PhaseMove, [env.NumThrows]int{}
			pos.Pool[th] = 1
			c, err := env.FromPosition(pos, 1)
			if err != nil {
				require.True(t, errors.Is(err, env.ErrCorrupt), err)
				continue // the result has no use: seat can do nothing with it
			}
			for _, a := range c.LegalActions(nil) {
				d := c
				ev, err := d.Apply(a)
				require.NoError(t, err)
				if ev.Finished == 0 {
					hits[ev.To] |= 1 << th
				}
				if ev.Pushed > 0 { // it stopped on the obstacle first, capturing there too
					hits[ev.PushedFrom] |= 1 << th
				}
			}
		}
		for st := range miss {
			miss[st] *= 1 - sequenceHit(pr, hits[st])
		}
	}
	var out [env.NumStations]float64
	for st := range out {
		out[st] = 1 - miss[st]
	}
	return out
}

// sequenceHit sums, over throw sequences (bonus throws, then one that is not
// yut or mo) of up to 12 throws, the probability that one of them is in the
// set hits (bit t for throw t).
func sequenceHit(pr [env.NumThrows]float64, hits uint8) float64 {
	key := sequenceKey{pr, hits}
	if v, ok := sequenceCache.Load(key); ok {
		return v.(float64)
	}
	var rec func(depth int, p float64) float64
	rec = func(depth int, p float64) float64 {
		if depth == 12 || p < 1e-15 {
			return 0
		}
		total := 0.0
		for th := env.Throw(0); th < env.NumThrows; th++ {
			q := p * pr[th]
			switch {
			case q == 0:
			case hits&(1<<th) != 0:
				total += q
			case th.Bonus():
				total += rec(depth+1, q)
			}
		}
		return total
	}
	v := rec(0, 1)
	sequenceCache.Store(key, v)
	return v
}

type sequenceKey struct {
	pr   [env.NumThrows]float64
	hits uint8
}

var sequenceCache sync.Map

// Encoding a state with an encoder built for other rules gives exactly what
// the matching encoder gives.
func TestEncodeUsesTheStatesRules(t *testing.T) {
	std := env.Standard()
	for _, spec := range []string{"players=3,pieces=2,end=rank", "back_do=off,flat_prob=0.5,finish=stop"} {
		r := envtest.Rules(t, spec)
		states := randomStates(r, fewGames(3), 2)
		for _, tier := range Tiers() {
			t.Run(spec+"/"+tier.String(), func(t *testing.T) {
				other, err := NewEncoder(std, tier)
				require.NoError(t, err)
				own, err := NewEncoder(r, tier)
				require.NoError(t, err)
				a, b := make([]float32, own.Size()), make([]float32, own.Size())
				for i := range states {
					other.Encode(&states[i], states[i].ToMove(), a)
					own.Encode(&states[i], states[i].ToMove(), b)
					requireSameObs(t, b, a)
				}
			})
		}
	}
}

// Encode overwrites the buffer whatever it held, and leaves the rest alone.
func TestEncodeOverwrites(t *testing.T) {
	states := randomStates(env.Standard(), 2, 3)
	for _, tier := range Tiers() {
		t.Run(tier.String(), func(t *testing.T) {
			e, err := NewEncoder(env.Standard(), tier)
			require.NoError(t, err)
			clean := make([]float32, e.Size())
			dirty := make([]float32, e.Size()+3)
			for i := range states {
				for j := range dirty {
					dirty[j] = float32(math.NaN())
				}
				e.Encode(&states[i], states[i].ToMove(), clean)
				e.Encode(&states[i], states[i].ToMove(), dirty)
				requireSameObs(t, clean, dirty[:e.Size()])
				for _, v := range dirty[e.Size():] {
					require.True(t, math.IsNaN(float64(v)), "Encode wrote past Size()")
				}
			}
			assert.Panics(t, func() { e.Encode(&states[0], states[0].ToMove(), make([]float32, e.Size()-1)) })
		})
	}
}

func TestEncodeDoesNotAllocate(t *testing.T) {
	for _, spec := range []string{"players=3", "kata,players=3,obstacles=2:back2+6:back3+9:skip"} {
		testEncodeDoesNotAllocate(t, envtest.Rules(t, spec))
	}
}

func testEncodeDoesNotAllocate(t *testing.T, r env.Rules) {
	states := randomStates(r, 2, 4)
	for _, tier := range Tiers() {
		t.Run(r.String()+"/"+tier.String(), func(t *testing.T) {
			e, err := NewEncoder(r, tier)
			require.NoError(t, err)
			other, err := NewEncoder(env.Standard(), tier) // rebuilds its tables per call
			require.NoError(t, err)
			buf := make([]float32, e.Size())
			i := 0
			allocs := testing.AllocsPerRun(200, func() {
				e.Encode(&states[i%len(states)], states[i%len(states)].ToMove(), buf)
				other.Encode(&states[i%len(states)], states[i%len(states)].ToMove(), buf)
				i++
			})
			assert.Zero(t, allocs)
		})
	}
}

// One encoder serves many goroutines (run with -race).
func TestEncoderConcurrent(t *testing.T) {
	states := randomStates(env.Standard(), 2, 5)
	for _, tier := range Tiers() {
		e, err := NewEncoder(env.Standard(), tier)
		require.NoError(t, err)
		want := make([][]float32, len(states))
		for i := range states {
			want[i] = make([]float32, e.Size())
			e.Encode(&states[i], states[i].ToMove(), want[i])
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]float32, e.Size())
				for i := range states {
					e.Encode(&states[i], states[i].ToMove(), buf)
					if !slices.Equal(want[i], buf) { // testify's reflection only to report
						assert.Equal(t, want[i], buf)
					}
				}
			}()
		}
		wg.Wait()
	}
}
