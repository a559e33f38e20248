package env_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

// The cross-check runs python/tests/reference.py, an independent pure-Python
// implementation of RULES.md, over the same perft trees and the same games as
// the engine, and compares every count and every state. It is skipped when
// python3 is not installed, and under -race: its time is the reference's
// and the engine's in one goroutine, where the race detector has nothing to
// find (the run without -race cross-checks).

// referencePath returns the reference script, or skips the test.
func referencePath(t *testing.T) (python, script string) {
	t.Helper()
	if israce.Enabled {
		t.Skip("the cross-check with the Python reference is scale in one goroutine; the run without -race does it")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: skipping the cross-check with the Python reference")
	}
	script, err = filepath.Abs(filepath.Join("..", "python", "tests", "reference.py"))
	require.NoError(t, err)
	_, err = os.Stat(script)
	require.NoError(t, err, "the reference engine is part of the repository's test tree")
	return python, script
}

// runReference runs one subcommand of the reference with stdin and returns stdout.
func runReference(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	python, script := referencePath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "reference.py %v failed:\n%s", args, stderr.String())
	return out
}

// crossRules are the rule sets both implementations are run under: every
// variant of env.Variants, which together cover every value of every rule
// option, so a new option is cross-checked as soon as it has a variant (and
// the reference refuses a rules key it does not know).
var crossRules = variantNames(func(env.Variant) bool { return true })

func TestCrossCheckPerft(t *testing.T) {
	referencePath(t)
	type req struct {
		Rules env.Rules `json:"rules"`
		Start int       `json:"start"`
		Depth int       `json:"depth"`
	}
	depth := func(spec string) int {
		switch {
		case spec == "standard":
			return 9
		case trimmed():
			return 6
		}
		return 7
	}
	var in bytes.Buffer
	var want []uint64
	for i, spec := range crossRules {
		r := envtest.Rules(t, spec)
		start := i % r.Players
		d := depth(spec)
		b, err := json.Marshal(req{Rules: r, Start: start, Depth: d})
		require.NoError(t, err)
		in.Write(append(b, '\n'))
		s, err := env.New(r, 1, start)
		require.NoError(t, err)
		want = append(want, env.Perft(s, d))
	}
	out := runReference(t, in.Bytes(), "perft")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(crossRules))
	for i, line := range lines {
		var got struct{ Depth, Count uint64 }
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		assert.Equal(t, want[i], got.Count, "perft(%d) under %s: engine %d, reference %d", got.Depth, crossRules[i], want[i], got.Count)
	}
}

// TestCrossCheckPerftMidGame compares perft from positions taken out of random
// games under every rule set, so that late-game rules (HOME, back-do from
// HOME and the centre, stacks on diagonals, ranking) are counted too.
func TestCrossCheckPerftMidGame(t *testing.T) {
	referencePath(t)
	type req struct {
		Rules env.Rules     `json:"rules"`
		State env.StateJSON `json:"state"`
		Depth int           `json:"depth"`
	}
	games, every := 6, 7
	if trimmed() {
		games = 2
	}
	var in bytes.Buffer
	var want []uint64
	var where []string
	for vi, spec := range crossRules {
		r := envtest.Rules(t, spec)
		for g := 0; g < games; g++ {
			rec := crossGame(t, r, uint64(7000+100*vi+g), env.AnySeat)
			k := 0
			_, err := rec.Replay(func(step int, _ env.Event, s *env.State) error {
				k++
				if k%every != 0 {
					return nil
				}
				depth := 3
				if k%(4*every) == 0 {
					depth = 4
				}
				b, err := json.Marshal(req{Rules: r, State: s.JSON(), Depth: depth})
				require.NoError(t, err)
				in.Write(append(b, '\n'))
				want = append(want, env.Perft(*s, depth))
				where = append(where, fmt.Sprintf("%s, game %d, after step %d, depth %d: %s", spec, g, step, depth, b))
				return nil
			})
			require.NoError(t, err)
		}
	}
	out := runReference(t, in.Bytes(), "perft")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(want))
	for i, line := range lines {
		var got struct{ Depth, Count uint64 }
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		if !assert.Equal(t, want[i], got.Count, "perft differs (engine %d, reference %d) under %s", want[i], got.Count, where[i]) {
			return
		}
	}
	t.Logf("%d positions compared", len(want))
}

// crossGame plays one random game with the engine and returns its record.
func crossGame(t *testing.T, r env.Rules, seed uint64, start int) *env.Record {
	t.Helper()
	s, err := env.New(r, seed, start)
	require.NoError(t, err)
	rec := env.NewRecord(r, seed, start)
	pick := rand.New(rand.NewPCG(seed, 0x5eed))
	var buf [env.NumActions]env.Action
	for steps := 0; !s.IsOver(); steps++ {
		require.Less(t, steps, 100000, "game does not end")
		var ev env.Event
		if s.IsChance() {
			ev, err = s.SampleThrow()
		} else {
			legal := s.LegalActions(buf[:0])
			ev, err = s.Apply(legal[pick.IntN(len(legal))])
		}
		require.NoError(t, err)
		rec.Add(ev, &s)
	}
	return rec
}

// withoutText cuts the event's free text out of a replay line, which the
// reference does not write; everything else must match byte for byte.
func withoutText(line []byte, ev env.Event) []byte {
	text, _ := json.Marshal(ev.String())
	return bytes.Replace(line, append([]byte(`,"text":`), text...), nil, 1)
}

// lineWithoutText decodes a replay line and drops the event's free text,
// which the reference does not produce.
func lineWithoutText(t *testing.T, b []byte) env.LineJSON {
	t.Helper()
	var l env.LineJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	require.NoError(t, d.Decode(&l), "line %s", b)
	if l.Event != nil {
		l.Event.Text = ""
	}
	return l
}

func TestCrossCheckGames(t *testing.T) {
	referencePath(t)
	games := 25 // 36 rule sets: 900 games
	if trimmed() {
		games = 6
	}
	type game struct {
		spec  string
		rec   *env.Record
		lines [][]byte
	}
	var all []game
	var in bytes.Buffer
	seen := map[string]int{}
	for vi, spec := range crossRules {
		r := envtest.Rules(t, spec)
		for g := 0; g < games; g++ {
			seed := uint64(1000*vi + g)
			start := env.AnySeat
			if g%2 == 1 {
				start = g % r.Players
			}
			rec := crossGame(t, r, seed, start)
			gm := game{spec: spec, rec: rec}
			_, err := rec.Replay(func(step int, ev env.Event, s *env.State) error {
				b, err := env.MarshalJSONLine(step, ev, s)
				gm.lines = append(gm.lines, withoutText(b, ev))
				if step >= 0 {
					countFeatures(seen, ev, s)
				}
				return err
			})
			require.NoError(t, err)
			_, err = rec.WriteTo(&in)
			require.NoError(t, err)
			all = append(all, gm)
		}
	}
	out := runReference(t, in.Bytes(), "replay")
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for gi, gm := range all {
		for li, goLine := range gm.lines {
			require.True(t, sc.Scan(), "reference output ended early (game %d under %s)", gi, gm.spec)
			pyLine := sc.Bytes()
			if bytes.Equal(goLine, pyLine) {
				continue
			}
			// Only now decode both lines, to show the difference.
			require.NotContains(t, string(pyLine), `"error"`, "reference refused game %d under %s", gi, gm.spec)
			want, got := lineWithoutText(t, goLine), lineWithoutText(t, pyLine)
			assert.Equal(t, want, got)
			rec, _ := json.Marshal(gm.rec)
			t.Fatalf("game %d under %s differs at step %d (line %d)\nengine:    %s\nreference: %s\nrecord: %s",
				gi, gm.spec, want.Step, li, goLine, pyLine, rec)
		}
	}
	assert.False(t, sc.Scan(), "reference printed more lines than the engine")
	// The games must actually exercise the rules being compared.
	for _, f := range []string{"capture", "join", "shortcut", "finish", "home", "backdo", "backdo-home", "backdo-centre", "enter-home", "place",
		"wrap", "spent", "skip", "turns-missed", "push", "push-join", "push-capture", "line"} {
		assert.Positive(t, seen[f], "no random game exercised %q", f)
	}
}

// countFeatures tallies which rules an event exercised.
func countFeatures(seen map[string]int, ev env.Event, s *env.State) {
	add := func(ok bool, k string) {
		if ok {
			seen[k]++
		}
	}
	add(ev.TurnsMissed > 0, "turns-missed")
	add(ev.Kind == env.EventThrow && ev.Discarded > 0 && s.Rules().Pool == env.SwitchOff, "spent")
	if ev.Kind != env.EventMove {
		return
	}
	add(ev.Board == env.BoardLine, "line")
	wrapped := ev.To < ev.From // on a line only a wrap goes to a lower space; on the cross only a wrap goes from 15.. to 1..5
	if ev.Board == env.BoardCross {
		wrapped = ev.From >= 15 && ev.To >= 1 && ev.To <= 5
	}
	add(!ev.Entered && ev.Finished == 0 && ev.Throw != env.BackDo && ev.Pushed == 0 && wrapped, "wrap")
	add(ev.LosesTurn, "skip")
	add(ev.Pushed > 0, "push")
	add(ev.Pushed > 0 && ev.Joined, "push-join")
	add(ev.PushCaptured > 0, "push-capture")
	add(ev.Captured > 0, "capture")
	add(ev.Joined, "join")
	add(ev.Shortcut, "shortcut")
	add(ev.Finished > 0, "finish")
	add(ev.Finished == 0 && ev.To == env.Home, "home")
	add(ev.Throw == env.BackDo && !ev.Entered, "backdo")
	add(ev.Throw == env.BackDo && ev.From == env.Home && !ev.Entered, "backdo-home")
	add(ev.Throw == env.BackDo && ev.From == env.Centre, "backdo-centre")
	add(ev.Throw == env.BackDo && ev.Entered, "enter-home")
	add(ev.Placed && !s.IsOver(), "place")
}
