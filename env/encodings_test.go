package env

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file checks that every encoding of a state carries every field of
// State, driven by State's own struct fields: adding a field to State makes
// TestEveryEncodingCarriesEveryField fail until the field has a variant
// below and every encoding either carries it or says why it need not.

// encodingRules are the rules of the base state: three seats, ranked
// ending (so a place can be set mid-game) and both kinds of obstacle.
const encodingRules = "players=3,end=rank,obstacles=7:skip+9:back2"

// basePosition is a mid-game position under encodingRules in which every
// field of State is away from its zero value.
func basePosition(r Rules) Position {
	p := Position{Rules: r, ToMove: 0, Phase: PhaseMove, Pool: [NumThrows]int{Gae: 1, Yut: 1},
		Stacks: []Stack{{Seat: 0, Station: 3, Route: RouteOuter, Height: 1}, {Seat: 1, Station: 6, Route: RouteOuter, Height: 2}},
		Missed: []int{0, 1, 0}}
	p.Hand = [MaxPlayers]int{3, 2, 3}
	p.Finished = [MaxPlayers]int{0, 0, 1}
	return p
}

// encodingState builds a state from p with the generator, start seat and
// counters of the base state.
func encodingState(t *testing.T, p Position) State {
	t.Helper()
	s, err := FromPosition(p, 11)
	require.NoError(t, err)
	s.start, s.decisions, s.throws = 1, 17, 23
	return s
}

// fieldVariant makes, from the base position and state, a state that
// differs from the base in its field (and in nothing else but what the
// field's consistency ties to it, said in why).
type fieldVariant struct {
	why  string
	make func(t *testing.T, p Position, base State) State
}

// stateVariants has one variant per field of State that is not derived.
var stateVariants = map[string]fieldVariant{
	"rules": {"other rules (a longer push)", func(t *testing.T, p Position, base State) State {
		p.Rules.Obstacles[9] = 3
		return encodingState(t, p)
	}},
	"rng": {"another seed", func(t *testing.T, _ Position, base State) State {
		base.rng.Seed(99, 100)
		return base
	}},
	"cells": {"a stack one station further on", func(t *testing.T, p Position, _ State) State {
		p.Stacks[1].Station = 8
		return encodingState(t, p)
	}},
	"hand": {"a piece back in hand instead of on the board (cells change with it)", func(t *testing.T, p Position, _ State) State {
		p.Stacks = p.Stacks[1:]
		p.Hand[0]++
		return encodingState(t, p)
	}},
	"finished": {"a piece finished instead of in hand", func(t *testing.T, p Position, _ State) State {
		p.Hand[0]--
		p.Finished[0]++
		return encodingState(t, p)
	}},
	"place": {"seat 2 ranked first (its last piece finished with it)", func(t *testing.T, p Position, _ State) State {
		p.Hand[2], p.Finished[2], p.Place[2] = 0, p.Rules.Pieces, 1
		return encodingState(t, p)
	}},
	"missed": {"seat 2 misses two turns (skip obstacles)", func(t *testing.T, p Position, _ State) State {
		p.Missed = []int{0, 1, 2}
		return encodingState(t, p)
	}},
	"pool": {"another result waiting", func(t *testing.T, p Position, _ State) State {
		p.Pool[Do]++
		return encodingState(t, p)
	}},
	"seat": {"another seat to move", func(t *testing.T, p Position, _ State) State {
		p.ToMove = 1
		return encodingState(t, p)
	}},
	"phase": {"a throw due (after the yut) instead of a decision", func(t *testing.T, p Position, _ State) State {
		p.Phase = PhaseThrow
		return encodingState(t, p)
	}},
	"start": {"another first seat", func(t *testing.T, _ Position, base State) State {
		base.start = 2
		return base
	}},
	"decisions": {"another decision count", func(t *testing.T, _ Position, base State) State {
		base.decisions++
		return base
	}},
	"throws": {"another throw count", func(t *testing.T, _ Position, base State) State {
		base.throws++
		return base
	}},
}

// derivedFields are fields of State computed from others: no state differs
// in them alone, and every encoding rebuilds them from what it carries.
var derivedFields = map[string]string{
	"layout":   "index of the move tables, from rules",
	"thr":      "throw thresholds, from rules",
	"occ":      "occupancy bits, from cells",
	"poolSize": "sum of pool",
	"ranked":   "number of non-zero places",
}

// stateEncoding is one encoding of a state. decode rebuilds a state from
// enc's output, taking what the encoding does not carry (notCarried) from
// like, as its real callers do; nil when the encoding is only compared
// (never read back).
type stateEncoding struct {
	name       string
	encode     func(t *testing.T, s State) []byte
	decode     func(t *testing.T, b []byte, like State) State
	notCarried map[string]string // field: why the encoding may leave it out
}

var stateEncodings = []stateEncoding{
	{
		name:   "packed",
		encode: func(_ *testing.T, s State) []byte { return s.AppendPacked(nil) },
		decode: func(t *testing.T, b []byte, like State) State {
			s, err := New(like.rules, 0, 0)
			require.NoError(t, err)
			require.NoError(t, s.Unpack(b))
			return s
		},
		notCarried: map[string]string{"rules": "a packed state is read into a state of its game (Game, state methods' game id)"},
	},
	{
		name: "position desc",
		encode: func(t *testing.T, s State) []byte {
			b, err := json.Marshal(Describe(s.Position()))
			require.NoError(t, err)
			return b
		},
		decode: func(t *testing.T, b []byte, like State) State {
			var d PositionDesc
			require.NoError(t, json.Unmarshal(b, &d))
			p, err := d.Position(like.rules)
			require.NoError(t, err)
			s, err := FromPosition(p, 0)
			require.NoError(t, err)
			s.rng, s.start, s.decisions, s.throws = like.rng, like.start, like.decisions, like.throws
			return s
		},
		notCarried: map[string]string{
			"rules":     "a description is read under the rules given with it",
			"rng":       "a position is built with a seed of the caller's",
			"start":     "history, not position",
			"decisions": "history, not position",
			"throws":    "history, not position",
		},
	},
	{
		name: "save",
		encode: func(t *testing.T, s State) []byte {
			b, err := s.MarshalBinary()
			require.NoError(t, err)
			return b
		},
		decode: func(t *testing.T, b []byte, _ State) State {
			s, err := UnmarshalState(b)
			require.NoError(t, err)
			return s
		},
	},
	{
		name: "state JSON",
		encode: func(t *testing.T, s State) []byte {
			b, err := json.Marshal(s.JSON())
			require.NoError(t, err)
			return b
		},
		notCarried: map[string]string{
			"rules":     "the JSON form is compared with another implementation under rules both know",
			"rng":       "compared positions, not generators",
			"start":     "history, not position",
			"decisions": "history, not position",
			"throws":    "history, not position",
		},
	},
}

// Every encoding carries every field of State: a state that differs from
// the base in one field only stays distinct once encoded and comes back
// whole, for every field the encoding does not explicitly leave out.
func TestEveryEncodingCarriesEveryField(t *testing.T) {
	typ := reflect.TypeFor[State]()
	var fields []string
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		fields = append(fields, name)
		_, v := stateVariants[name]
		_, d := derivedFields[name]
		assert.True(t, v != d, "State.%s needs exactly one of a variant in stateVariants or a reason in derivedFields", name)
	}
	for name := range stateVariants {
		assert.Contains(t, fields, name, "stateVariants names a field State no longer has")
	}
	for name := range derivedFields {
		assert.Contains(t, fields, name, "derivedFields names a field State no longer has")
	}
	for _, enc := range stateEncodings {
		for name := range enc.notCarried {
			assert.Contains(t, stateVariants, name, "%s leaves out %s, which is not a field with a variant", enc.name, name)
		}
	}

	r, err := ParseRules(encodingRules)
	require.NoError(t, err)
	p := basePosition(r)
	base := encodingState(t, p)
	for _, name := range fields {
		v, ok := stateVariants[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			other := v.make(t, basePosition(r), base)
			fb, fo := reflect.ValueOf(base).FieldByName(name), reflect.ValueOf(other).FieldByName(name)
			require.NotEqual(t, fmt.Sprintf("%+v", fb), fmt.Sprintf("%+v", fo), "the variant (%s) must change %s", v.why, name)
			for _, enc := range stateEncodings {
				if why, skip := enc.notCarried[name]; skip {
					t.Logf("%s does not carry %s: %s", enc.name, name, why)
					continue
				}
				eb, eo := enc.encode(t, base), enc.encode(t, other)
				assert.NotEqual(t, eb, eo, "%s: states that differ in %s only (%s) encode the same", enc.name, name, v.why)
				if enc.decode != nil {
					assert.Equal(t, other, enc.decode(t, eo, other), "%s loses %s (%s)", enc.name, name, v.why)
					assert.Equal(t, base, enc.decode(t, eb, base), "%s: the base state does not come back", enc.name)
				}
			}
		})
	}
}

// Every state met while replaying a JSON game record is the state the game
// was recorded in, every field but the generator included (missed turns of
// skip obstacles too): a record carries the history, and the replay
// rebuilds the rest.
func TestRecordReplayRebuildsEveryField(t *testing.T) {
	r, err := ParseRules(encodingRules)
	require.NoError(t, err)
	sawMissed := false
	for seed := uint64(0); seed < 20; seed++ {
		s, err := New(r, seed, AnySeat)
		require.NoError(t, err)
		rec := NewRecord(r, seed, AnySeat)
		rng := rand.New(rand.NewPCG(seed, 1))
		played := []State{s}
		var buf [NumActions]Action
		for !s.IsOver() {
			var ev Event
			if s.IsChance() {
				ev, err = s.SampleThrow()
			} else {
				legal := s.LegalActions(buf[:0])
				ev, err = s.Apply(legal[rng.IntN(len(legal))])
			}
			require.NoError(t, err)
			rec.Add(ev, &s)
			played = append(played, s)
			sawMissed = sawMissed || s.missed != [MaxPlayers]uint8{}
		}
		var file bytes.Buffer
		_, err = rec.WriteTo(&file)
		require.NoError(t, err)
		recs, err := ReadRecords(&file)
		require.NoError(t, err)
		require.Len(t, recs, 1)
		var replayed []State
		_, err = recs[0].Replay(func(_ int, _ Event, s *State) error {
			replayed = append(replayed, *s)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, replayed, len(played))
		for i := range played {
			// The replay applies the recorded throws rather than drawing
			// them, so the generator is the one field it does not rebuild.
			replayed[i].rng = played[i].rng
			require.True(t, played[i] == replayed[i], "seed %d step %d: the replayed state differs", seed, i-1)
		}
	}
	assert.True(t, sawMissed, "no game met a skip obstacle: the test would not see missed turns")
}
