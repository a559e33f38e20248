package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

const analysePos = `{"to_move": 1, "phase": "move", "pool": [0,0,1,0,1,0],
 "stacks": [{"seat":0,"station":5,"route":"C1","height":1},{"seat":1,"station":3,"route":"OUTER","height":2}]}`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestAnalysePositionJSON(t *testing.T) {
	pos := writeFile(t, "pos.json", analysePos)
	code, out, errs := runCmd(t, "analyse", "--position", pos, "--agent", "mcts:200", "--json")
	require.Equal(t, 0, code, errs)
	var res analyseResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "mcts:200", res.Agent)
	assert.Equal(t, 1, res.Seat)
	legal := map[int]bool{63: true, 89: true, 123: true, 149: true}
	assert.True(t, legal[res.Action], "action %d", res.Action)
	sum := 0.0
	for _, p := range res.Policy {
		assert.True(t, legal[p.Action])
		sum += p.P
	}
	assert.InDelta(t, 1, sum, 1e-5)
	assert.Equal(t, res.Action, res.Policy[0].Action, "the most visited action is played")
	assert.Equal(t, []int{3, 2}, res.Position.Hand, "hands worked out from the board")
}

func TestAnalyseTableFromRecordAndState(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "g.jsonl")
	code, _, errs := runCmd(t, "selfplay", "--games", "1", "--out", rec)
	require.Equal(t, 0, code, errs)
	code, out, errs := runCmd(t, "analyse", "--record", rec, "--agent", "greedy")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "greedy plays")
	assert.Contains(t, out, "policy")

	s, err := env.New(env.Standard(), 3, 0)
	require.NoError(t, err)
	_, err = s.ApplyThrow(env.Gae)
	require.NoError(t, err)
	blob, err := s.MarshalBinary()
	require.NoError(t, err)
	st := filepath.Join(dir, "s.bin")
	require.NoError(t, os.WriteFile(st, blob, 0o644))
	code, out, errs = runCmd(t, "analyse", "--state", st, "--agent", "mc:10")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "gae@enter")
}

func TestAnalyseRefuses(t *testing.T) {
	pos := writeFile(t, "pos.json", analysePos)
	bad := writeFile(t, "bad.json", `{"to_move": 0, "phase": "move", "stacks": [{"seat":0,"station":7,"route":"C1","height":1}]}`)
	unknown := writeFile(t, "unknown.json", `{"to_move": 0, "phase": "throw", "extra": 1}`)
	chance := writeFile(t, "chance.json", `{"to_move": 0, "phase": "throw"}`)
	junk := writeFile(t, "junk.bin", "\x91\x91")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no source", nil, "exactly one"},
		{"two sources", []string{"--position", pos, "--state", pos}, "exactly one"},
		{"not on route", []string{"--position", bad}, "not a place of"},
		{"unknown field", []string{"--position", unknown}, "unknown field"},
		{"chance node", []string{"--position", chance}, "phase throw"},
		{"junk state", []string{"--state", junk}, "corrupt"},
		{"bad agent", []string{"--position", pos, "--agent", "nope"}, "agent"},
		{"missing file", []string{"--record", "/nonexistent/x"}, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCmd(t, append([]string{"analyse"}, c.args...)...)
			assert.NotEqual(t, 0, code)
			assert.Contains(t, errs, c.want)
		})
	}
}

// TestAnalyseRecordDecisions: --decision D picks the record's D-th decision;
// --step K must land on a decision, and a step that lands on a throw says
// which steps around it are decisions (README's example once failed so).
func TestAnalyseRecordDecisions(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "g.jsonl")
	code, _, errs := runCmd(t, "selfplay", "--games", "1", "--seed", "5", "--out", rec)
	require.Equal(t, 0, code, errs)
	f, err := os.Open(rec)
	require.NoError(t, err)
	recs, err := env.ReadRecords(f)
	require.NoError(t, f.Close())
	require.NoError(t, err)
	// The steps after which the game is at a decision, in order.
	var decisions []int
	_, err = recs[0].Replay(func(i int, _ env.Event, s *env.State) error {
		if s.Phase() == env.PhaseMove {
			decisions = append(decisions, i+1)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(decisions), 3)
	throwStep := -1
	for k := decisions[1] + 1; k < decisions[2]; k++ {
		throwStep = k
	}
	require.GreaterOrEqual(t, throwStep, 0, "a throw between the second and third decisions")

	analyse := func(args ...string) analyseResult {
		t.Helper()
		code, out, errs := runCmd(t, append([]string{"analyse", "--record", rec, "--agent", "greedy", "--json"}, args...)...)
		require.Equal(t, 0, code, errs)
		var r analyseResult
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		return r
	}
	for d, k := range decisions[:3] {
		t.Run(fmt.Sprintf("decision %d is step %d", d, k), func(t *testing.T) {
			assert.Equal(t, analyse("--step", strconv.Itoa(k)), analyse("--decision", strconv.Itoa(d)))
		})
	}
	assert.Equal(t, analyse(), analyse("--decision", strconv.Itoa(len(decisions)-1)), "the default is the last decision")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a throw step", []string{"--step", strconv.Itoa(throwStep)}, fmt.Sprintf("--step %d of game 0 is a throw, not a decision (the next decision is at --step %d, the one before at --step %d; or name decisions with --decision D)", throwStep, decisions[2], decisions[1])},
		{"decision out of range", []string{"--decision", strconv.Itoa(len(decisions))}, fmt.Sprintf("--decision %d out of range: game 0 has %d decisions", len(decisions), len(decisions))},
		{"both", []string{"--decision", "1", "--step", "3"}, "give --decision or --step, not both"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCmd(t, append([]string{"analyse", "--record", rec, "--agent", "greedy"}, c.args...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, c.want)
		})
	}
}
