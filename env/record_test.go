package env_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// recordedGame plays a random game under spec and returns its record and final state.
func recordedGame(t testing.TB, spec string, seed uint64) (*env.Record, env.State) {
	t.Helper()
	r := envtest.Rules(t, spec)
	s, err := env.New(r, seed, env.AnySeat)
	require.NoError(t, err)
	rec := env.NewRecord(r, seed, env.AnySeat)
	choose := chooser(seed)
	var buf [env.NumActions]env.Action
	for !s.IsOver() {
		var ev env.Event
		if s.IsChance() {
			ev, err = s.SampleThrow()
		} else {
			ev, err = s.Apply(choose(&s, s.LegalActions(buf[:0])))
		}
		require.NoError(t, err)
		rec.Add(ev, &s)
	}
	return rec, s
}

// firstAction returns the index of the first action step of rec at or after i.
func firstAction(rec *env.Record, i int) int {
	for ; i < len(rec.Steps); i++ {
		if rec.Steps[i].Action != nil {
			return i
		}
	}
	return -1
}

func intp(n int) *int { return &n }

func TestRecordRoundTrip(t *testing.T) {
	var file bytes.Buffer
	var finals []env.State
	for i, spec := range []string{"standard", "players=4,end=rank", "back_do=off,finish=stop"} {
		rec, s := recordedGame(t, spec, uint64(i))
		_, err := rec.WriteTo(&file)
		require.NoError(t, err)
		finals = append(finals, s)
	}
	file.WriteString("\n") // blank lines are skipped
	recs, err := env.ReadRecords(&file)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	for i, rec := range recs {
		n := 0
		got, err := rec.Replay(func(step int, ev env.Event, s *env.State) error {
			assert.Equal(t, n-1, step)
			n++
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, len(rec.Steps)+1, n, "the callback sees the initial state and every step")
		assert.Equal(t, finals[i].Position(), got.Position())
		assert.Equal(t, finals[i].Winner(), rec.Result.Winner)
		assert.Equal(t, finals[i].Decisions(), rec.Result.Decisions)
		assert.Equal(t, finals[i].Throws(), rec.Result.Throws)
	}
	stop := errors.New("stop")
	_, err = recs[0].Replay(func(step int, _ env.Event, _ *env.State) error {
		if step == 3 {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop, "an error from the callback ends the replay")
}

func TestReplayErrors(t *testing.T) {
	rec, _ := recordedGame(t, "standard", 11)
	k := firstAction(rec, 10)
	require.Positive(t, k)
	// An action that is not legal where step k is played.
	prefix := *rec
	prefix.Steps, prefix.Result = rec.Steps[:k], nil
	atK, err := prefix.Replay(nil)
	require.NoError(t, err)
	require.Equal(t, env.PhaseMove, atK.Phase())
	illegal := 0
	for atK.IsLegal(env.Action(illegal)) {
		illegal++
	}

	cases := map[string]struct {
		edit func(r *env.Record)
		step int
		want error
	}{
		"an illegal action":         {edit: func(r *env.Record) { r.Steps[k].Action = intp(illegal) }, step: k, want: env.ErrIllegalAction},
		"an action id out of range": {edit: func(r *env.Record) { r.Steps[k].Action = intp(500) }, step: k, want: env.ErrIllegalAction},
		"the wrong seat":            {edit: func(r *env.Record) { r.Steps[k].Seat = 1 - r.Steps[k].Seat }, step: k, want: env.ErrWrongSeat},
		// A throw by the wrong seat used to be reported as an illegal action.
		"a throw by the wrong seat": {edit: func(r *env.Record) { r.Steps[0].Seat = 1 - r.Steps[0].Seat }, step: 0, want: env.ErrWrongSeat},
		"a step after the end": {edit: func(r *env.Record) {
			r.Steps = append(r.Steps, env.Step{Seat: 1 - r.Result.Winner, Throw: "do"})
			r.Result = nil
		}, step: len(rec.Steps), want: env.ErrWrongPhase},
		"a throw at a decision": {edit: func(r *env.Record) {
			r.Steps[k].Action, r.Steps[k].Throw = nil, "gae"
		}, step: k, want: env.ErrWrongPhase},
		"an action at a chance node": {edit: func(r *env.Record) {
			r.Steps[0].Throw, r.Steps[0].Action = "", intp(89)
		}, step: 0, want: env.ErrWrongPhase},
		"an unknown throw":      {edit: func(r *env.Record) { r.Steps[0].Throw = "seven" }, step: 0, want: env.ErrBadInput},
		"a throw and an action": {edit: func(r *env.Record) { r.Steps[0].Action = intp(89) }, step: 0, want: env.ErrBadInput},
		"an empty step":         {edit: func(r *env.Record) { r.Steps[0].Throw = "" }, step: 0, want: env.ErrBadInput},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := *rec
			c.Steps = append([]env.Step(nil), rec.Steps...)
			tc.edit(&c)
			var last int
			_, err := c.Replay(func(step int, _ env.Event, _ *env.State) error { last = step; return nil })
			var re *env.ReplayError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.step, re.Step)
			assert.Equal(t, tc.step-1, last, "every step before the bad one was replayed")
			assert.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), "record step ")
		})
	}

	t.Run("a result the game does not give", func(t *testing.T) {
		c := *rec
		res := *rec.Result
		res.Winner = 1 - res.Winner
		c.Result = &res
		_, err := c.Replay(nil)
		assert.ErrorIs(t, err, env.ErrCorrupt)
	})
	// The counters of a result used to go unchecked.
	for name, edit := range map[string]func(r *env.Result){
		"decisions": func(r *env.Result) { r.Decisions++ },
		"throws":    func(r *env.Result) { r.Throws-- },
	} {
		t.Run("a result with the wrong "+name, func(t *testing.T) {
			c := *rec
			res := *rec.Result
			edit(&res)
			c.Result = &res
			_, err := c.Replay(nil)
			assert.ErrorIs(t, err, env.ErrCorrupt)
			assert.Contains(t, err.Error(), "decisions and")
		})
	}
	t.Run("a result for an unfinished game", func(t *testing.T) {
		c := *rec
		c.Steps = rec.Steps[:k]
		_, err := c.Replay(nil)
		assert.ErrorIs(t, err, env.ErrCorrupt)
	})
	t.Run("a wrong header", func(t *testing.T) {
		c := *rec
		c.Format = "pgn"
		_, err := c.Replay(nil)
		assert.ErrorIs(t, err, env.ErrCorrupt)
		c = *rec
		c.Version = 2
		_, err = c.Replay(nil)
		assert.ErrorIs(t, err, env.ErrVersion)
		c = *rec
		c.Start = 5
		_, err = c.Replay(nil)
		assert.ErrorIs(t, err, env.ErrBadInput)
	})
}

func TestParseRecordErrors(t *testing.T) {
	rec, _ := recordedGame(t, "players=3", 4)
	good, err := json.Marshal(rec)
	require.NoError(t, err)
	_, err = env.ParseRecord(good)
	require.NoError(t, err)

	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(good, &m))
		f(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	cases := map[string]struct {
		b    []byte
		want error
	}{
		"not JSON":       {[]byte("yut"), env.ErrBadInput},
		"empty":          {nil, env.ErrBadInput},
		"trailing data":  {append(append([]byte(nil), good...), []byte(` {}`)...), env.ErrBadInput},
		"unknown field":  {edit(func(m map[string]any) { m["colour"] = "red" }), env.ErrBadInput},
		"format":         {edit(func(m map[string]any) { m["format"] = "pgn" }), env.ErrBadInput},
		"future version": {edit(func(m map[string]any) { m["version"] = 2 }), env.ErrVersion},
		"rules":          {edit(func(m map[string]any) { m["rules"].(map[string]any)["players"] = 7 }), env.ErrInvalidRules},
		"rules by name":  {edit(func(m map[string]any) { m["rules"].(map[string]any)["end"] = "never" }), env.ErrBadInput},
		"seed":           {edit(func(m map[string]any) { m["seed"] = -1 }), env.ErrBadInput},
		// These used to be accepted.
		"too few players named":              {edit(func(m map[string]any) { m["players"] = []string{"random", "greedy"} }), env.ErrBadInput},
		"too many players named":             {edit(func(m map[string]any) { m["players"] = []string{"a", "b", "c", "d"} }), env.ErrBadInput},
		"places for other seats":             {edit(func(m map[string]any) { m["result"].(map[string]any)["places"] = []int{1, 0} }), env.ErrBadInput},
		"a repeated key":                     {[]byte(strings.Replace(string(good), `"seed":`, `"seed":9,"seed":`, 1)), env.ErrBadInput},
		"a repeated key in a different case": {[]byte(strings.Replace(string(good), `"seed":`, `"Seed":9,"seed":`, 1)), env.ErrBadInput},
		"a repeated key in the rules":        {[]byte(strings.Replace(string(good), `"players":3`, `"players":2,"players":3`, 1)), env.ErrBadInput},
		"a repeated key in a step":           {[]byte(strings.Replace(string(good), `{"seat":`, `{"seat":0,"seat":`, 1)), env.ErrBadInput},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := env.ParseRecord(tc.b)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	t.Run("the same keys in different objects are fine", func(t *testing.T) {
		require.Contains(t, string(good), `{"seat":`)
		_, err := env.ParseRecord(good)
		assert.NoError(t, err)
	})
	t.Run("ScanRecords gives every line a verdict", func(t *testing.T) {
		in := string(good) + "\n{\"format\":1}\n\n" + string(good) + "\n"
		var verdicts []string
		err := env.ScanRecords(strings.NewReader(in), func(game, line int, rec *env.Record, err error) error {
			verdicts = append(verdicts, fmt.Sprintf("%d@%d:%v", game, line, err == nil))
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []string{"0@1:true", "1@2:false", "2@4:true"}, verdicts)
	})
	t.Run("ReadRecords names the line", func(t *testing.T) {
		in := string(good) + "\n\n" + string(good) + "\n{\"format\":1}\n"
		recs, err := env.ReadRecords(strings.NewReader(in))
		assert.Len(t, recs, 2)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "line 4:")
	})
}

func TestStateJSON(t *testing.T) {
	s, err := env.New(env.Standard(), 1, 0)
	require.NoError(t, err)
	line, err := env.MarshalJSONLine(-1, env.Event{Kind: env.EventMove}, &s)
	require.NoError(t, err)
	hand := `{"seat":0,"status":"hand"},`
	assert.Equal(t, `{"step":-1,"state":{"to_move":0,"phase":"throw","pool":[0,0,0,0,0,0],"pieces":[`+
		strings.Repeat(hand, 4)+strings.Repeat(strings.Replace(hand, "0", "1", 1), 3)+`{"seat":1,"status":"hand"}`+
		`],"winner":-1,"places":[0,0],"legal":[]}}`, string(line), "the initial state has no event")

	p := setup{pool: []env.Throw{gae}, fin: [4]int{1, 0}, stacks: []env.Stack{stack(0, 22, cc1, 2), stack(1, 0, outer, 1)}}.state(t)
	want := `{"to_move":0,"phase":"move","pool":[0,0,1,0,0,0],"pieces":[` +
		`{"seat":0,"status":"board","station":22,"route":"CENTRE/C1"},{"seat":0,"status":"board","station":22,"route":"CENTRE/C1"},` +
		`{"seat":0,"status":"hand"},{"seat":0,"status":"finished"},` +
		`{"seat":1,"status":"board","station":0,"route":"OUTER"},{"seat":1,"status":"hand"},{"seat":1,"status":"hand"},{"seat":1,"status":"hand"}],` +
		`"winner":-1,"places":[0,0],"legal":[82,89]}`
	b, err := json.Marshal(p.JSON())
	require.NoError(t, err)
	assert.Equal(t, want, string(b))

	ev, err := p.Apply(act(gae, 22))
	require.NoError(t, err)
	line, err = env.MarshalJSONLine(7, ev, &p)
	require.NoError(t, err)
	var l env.LineJSON
	require.NoError(t, json.Unmarshal(line, &l))
	assert.Equal(t, 7, l.Step)
	assert.Equal(t, env.EventJSON{Kind: "move", Seat: 0, Throw: "gae", Action: intp(82), From: intp(22), To: intp(28), Moved: 2,
		TurnEnded: true, Text: "seat 0: gae moves 2 from centre(22) to 28; seat 1 to play"}, *l.Event)
	assert.Equal(t, "throw", l.State.Phase)
	assert.Equal(t, 1, l.State.ToMove)

	// An entering move has no "from"; a throw has no action, from or to.
	q := setup{pool: []env.Throw{mo}, stacks: []env.Stack{stack(1, 5, c1, 1)}}.state(t)
	ev, err = q.Apply(act(mo, 29))
	require.NoError(t, err)
	assert.Equal(t, env.EventJSON{Kind: "move", Seat: 0, Throw: "mo", Action: intp(179), To: intp(5), Entered: true, Moved: 1,
		Shortcut: true, Captured: 1, TurnEnded: true,
		Text: "seat 0: mo enters a piece to C1(5) (takes the C1 shortcut), captures 1 of seat 1; seat 1 to play"}, ev.JSON(),
		"a capture with mo earns no throw")
	ev, err = q.ApplyThrow(yut)
	require.NoError(t, err)
	assert.Equal(t, env.EventJSON{Kind: "throw", Seat: 1, Throw: "yut", Bonus: true, Text: "seat 1 throws yut, throws again"}, ev.JSON())
}
