package env_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// Fuzz tests: run one with, for example,
//
//	go test -run '^$' -fuzz '^FuzzGame$' -fuzztime 20s ./env/
//
// Their seed corpus is the f.Add calls below plus testdata/fuzz/<name>/.
// Without -fuzz, `go test` runs every seed as a plain test.

func FuzzUnmarshalState(f *testing.F) {
	for i, spec := range []string{"standard", "players=4,pieces=5,end=rank", "back_do_enters=on,finish=stop", "kata,obstacles=2:skip+6:back3", "finish=wrap,pool=off,obstacles=4:skip"} {
		for _, d := range []int{0, 3, 40} {
			s := midGame(f, spec, uint64(i*10+d), d)
			b, err := s.MarshalBinary()
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x91, 0x91, 0x91, 0xc0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := env.UnmarshalState(b)
		if err != nil {
			if !errors.Is(err, env.ErrCorrupt) && !errors.Is(err, env.ErrVersion) {
				t.Fatalf("error wraps neither ErrCorrupt nor ErrVersion: %v", err)
			}
			return
		}
		// A blob that loads saves again to a blob that loads to the same state.
		again, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := env.UnmarshalState(again)
		if err != nil {
			t.Fatalf("a re-saved state does not load: %v", err)
		}
		if back != s {
			t.Fatalf("round trip changed the state")
		}
		// And it plays: invariants hold for a few steps.
		checkInvariants(t, &s)
		playSteps(t, &s, 60, nil)
	})
}

// playSteps plays up to n steps of s, taking action choices from choices
// (cycled) and checking the invariants after every step.
func playSteps(t *testing.T, s *env.State, n int, choices []byte) {
	t.Helper()
	var buf [env.NumActions]env.Action
	for i := 0; i < n && !s.IsOver(); i++ {
		var err error
		if s.IsChance() {
			_, err = s.SampleThrow()
			if errors.Is(err, env.ErrBadInput) { // a restored pool that is already full
				return
			}
		} else {
			legal := s.LegalActions(buf[:0])
			c := i
			if len(choices) > 0 {
				c = int(choices[i%len(choices)])
			}
			_, err = s.Apply(legal[c%len(legal)])
		}
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, s)
	}
}

func FuzzParseRecord(f *testing.F) {
	for i, spec := range []string{"standard", "players=3,end=rank", "kata"} {
		rec, _ := recordedGame(f, spec, uint64(i))
		b, err := json.Marshal(rec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"format":"yutenv-record","version":1,"rules":{},"seed":1,"start":0,"steps":[{"seat":0,"throw":"gae"},{"seat":0,"action":89}]}`))
	f.Add([]byte(`{"format":"yutenv-record","version":1,"rules":{"players":4},"seed":1,"start":-1,"steps":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := env.ParseRecord(b)
		if err != nil {
			if !errors.Is(err, env.ErrBadInput) && !errors.Is(err, env.ErrVersion) && !errors.Is(err, env.ErrInvalidRules) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		checkReplay(t, rec)
	})
}

// checkReplay replays rec: either it replays (and its steps are all legal) or
// the error names a step in range, or the header, seed or result is wrong.
func checkReplay(t *testing.T, rec *env.Record) {
	t.Helper()
	steps := 0
	_, err := rec.Replay(func(step int, _ env.Event, s *env.State) error {
		steps++
		if step >= 0 && step%16 == 0 {
			checkInvariants(t, s)
		}
		return nil
	})
	if err == nil {
		if steps != len(rec.Steps)+1 {
			t.Fatalf("replayed %d steps of %d", steps-1, len(rec.Steps))
		}
		return
	}
	var re *env.ReplayError
	switch {
	case errors.As(err, &re):
		if re.Step < 0 || re.Step >= len(rec.Steps) || re.Step != steps-1 {
			t.Fatalf("replay error names step %d after %d steps replayed: %v", re.Step, steps-1, err)
		}
		if !errors.Is(err, env.ErrIllegalAction) && !errors.Is(err, env.ErrWrongPhase) && !errors.Is(err, env.ErrBadInput) && !errors.Is(err, env.ErrWrongSeat) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	case errors.Is(err, env.ErrCorrupt) || errors.Is(err, env.ErrVersion) || errors.Is(err, env.ErrBadInput) || errors.Is(err, env.ErrInvalidRules):
	default:
		t.Fatalf("unexpected error: %v", err)
	}
}

// FuzzReplay builds records step by step from bytes, so that most inputs get
// past the JSON layer: each byte is a throw (b < 6), an action id or a seat change.
func FuzzReplay(f *testing.F) {
	f.Add(uint64(1), uint8(0), []byte{2, 89, 4, 1, 149, 59})
	f.Add(uint64(7), uint8(3), []byte{0, 0, 5, 5, 3})
	f.Add(uint64(2), uint8(9), []byte{255, 1, 200, 29})
	f.Fuzz(func(t *testing.T, seed uint64, rulesIndex uint8, data []byte) {
		r := envtest.Rules(t, propertyRules[int(rulesIndex)%len(propertyRules)])
		rec := env.NewRecord(r, seed, int(seed%uint64(r.Players)))
		seat := rec.Start
		for _, b := range data {
			switch {
			case b < env.NumThrows:
				rec.Steps = append(rec.Steps, env.Step{Seat: seat, Throw: env.Throw(b).String()})
			case b < 6+env.NumActions:
				rec.Steps = append(rec.Steps, env.Step{Seat: seat, Action: intp(int(b) - 6)})
			default:
				seat = int(b) % r.Players
			}
		}
		checkReplay(t, rec)
		// A valid replay prefix is a valid record of its own, written and read back.
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := env.ParseRecord(b)
		if err != nil {
			t.Fatalf("a record we wrote does not parse: %v", err)
		}
		if !reflect.DeepEqual(rec.Steps, back.Steps) && len(rec.Steps) > 0 {
			t.Fatalf("steps changed in a JSON round trip")
		}
	})
}

func FuzzParseRules(f *testing.F) {
	for _, spec := range append(propertyRules, "", "p=0.55,backdo=off", "players=3,", "shortcut=choice", "flat_prob=NaN", "end=rank,end=first") {
		f.Add(spec)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		r, err := env.ParseRules(spec)
		if err != nil {
			if !errors.Is(err, env.ErrInvalidRules) {
				t.Fatalf("ParseRules(%q): error does not wrap ErrInvalidRules: %v", spec, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("ParseRules(%q) returned invalid rules: %v", spec, err)
		}
		back, err := env.ParseRules(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRules(%q) = %+v; String %q parses to %+v, %v", spec, r, r.String(), back, err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON env.Rules
		if err := json.Unmarshal(b, &viaJSON); err != nil || viaJSON != r {
			t.Fatalf("rules %+v do not survive JSON: %+v, %v", r, viaJSON, err)
		}
		if _, err := env.New(r, 1, env.AnySeat); err != nil {
			t.Fatalf("New refuses valid rules %+v: %v", r, err)
		}
	})
}

// FuzzGame plays a game under one of the property rule sets with the fuzzer
// choosing actions; a choice byte >= 0xC0 instead tries an arbitrary action
// id, which must either be legal or be refused with the state unchanged.
func FuzzGame(f *testing.F) {
	f.Add(uint64(1), uint8(0), []byte{0, 1, 2, 3})
	f.Add(uint64(42), uint8(11), []byte{0xff, 0xc3, 7, 7, 7, 200, 1})
	f.Add(uint64(9), uint8(14), []byte{5, 4, 3, 2, 1, 0})
	f.Fuzz(func(t *testing.T, seed uint64, rulesIndex uint8, choices []byte) {
		r := envtest.Rules(t, propertyRules[int(rulesIndex)%len(propertyRules)])
		s, err := env.New(r, seed, env.AnySeat)
		if err != nil {
			t.Fatal(err)
		}
		var buf [env.NumActions]env.Action
		for i := 0; !s.IsOver() && s.Decisions() < 400 && i < 4000; i++ { // i: choices may all be illegal
			if s.IsChance() {
				if _, err := s.SampleThrow(); err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, &s)
				continue
			}
			c := byte(i)
			if len(choices) > 0 {
				c = choices[i%len(choices)]
			}
			if c >= 0xC0 {
				a := env.Action(c-0xC0) * 3 // 0..189: every source of most throws, and out of range
				before := s
				_, err := s.Apply(a)
				if (err == nil) != before.IsLegal(a) {
					t.Fatalf("Apply(%v) error %v, but IsLegal = %v", a, err, before.IsLegal(a))
				}
				if err != nil && s != before {
					t.Fatalf("a refused action %v changed the state", a)
				}
			} else {
				legal := s.LegalActions(buf[:0])
				if _, err := s.Apply(legal[int(c)%len(legal)]); err != nil {
					t.Fatal(err)
				}
			}
			checkInvariants(t, &s)
		}
		// Chosen actions can prolong a game on purpose (maxDecisions bounds
		// random play only), so a game cut at 400 decisions is no failure.
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := env.UnmarshalState(b)
		if err != nil || back != s {
			t.Fatalf("the final state does not round-trip: %v", err)
		}
	})
}

// FuzzRulesJSON reads rules JSON through the option declarations: nothing
// panics, every refusal wraps ErrInvalidRules (or is a JSON syntax error),
// and valid rules survive a JSON round trip.
func FuzzRulesJSON(f *testing.F) {
	for _, spec := range propertyRules {
		b, err := json.Marshal(envtest.Rules(f, spec))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{"board":"line"}`, `{"p":0.5,"flat_prob":0.5}`, `{"players":[2]}`, `{"backdo":"no"}`, `[]`, `{"obstacles":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r env.Rules
		if err := json.Unmarshal(b, &r); err != nil {
			var syntax *json.SyntaxError
			if !errors.Is(err, env.ErrInvalidRules) && !errors.As(err, &syntax) {
				t.Fatalf("Unmarshal(%s): %v wraps neither ErrInvalidRules nor a syntax error", b, err)
			}
			return
		}
		if r.Validate() != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back env.Rules
		if err := json.Unmarshal(out, &back); err != nil || back != r {
			t.Fatalf("rules %+v do not survive JSON %s: %+v, %v", r, out, back, err)
		}
	})
}
