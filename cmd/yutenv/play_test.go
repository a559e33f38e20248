package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// playWith runs "yutenv play" with input as the player's keyboard.
func playWith(t *testing.T, input string, args ...string) (int, string, string) {
	t.Helper()
	old := playStdin
	playStdin = strings.NewReader(input)
	defer func() { playStdin = old }()
	return runCmd(t, append([]string{"play"}, args...)...)
}

func TestPlayWholeGame(t *testing.T) {
	input := strings.Repeat("1\n", 400)
	code, out, errs := playWith(t, input, "--opponent", "greedy", "--seed", "3")
	require.Equal(t, 0, code, errs)
	for _, want := range []string{
		"Yut Nori, rules standard, seed 3. You are seat 0 (A).",
		"Seat 1 (B): greedy",
		"stations", "board", // the board is drawn
		"Your moves:\n   1) ",                     // numbered moves in words
		"Your move [1-2]: ",                       // a prompt with the range
		"takes the C1 shortcut",                   // shortcuts
		"Captured 1 of your pieces: back to hand", // captures
		"Capture bonus: another throw",            // bonus throws
		"yut earns another throw",                 // yut/mo bonus
		"piece(s) finished",                       // finishing
		"(your only move) You: ",                  // forced moves play themselves
		"game over: seat",                         // the final board
	} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, `(You win|greedy \(B\) wins) after \d+ decisions`, out)

	_, again, _ := playWith(t, input, "--opponent", "greedy", "--seed", "3")
	assert.Equal(t, out, again, "the same seed and moves replay the same game")
}

func TestPlayInputHandling(t *testing.T) {
	// Seed 3 with greedy: the player's first real choice has two moves.
	input := "x\n0\n3\n\nb\nh\n2\n" + strings.Repeat("1\n", 400)
	code, out, errs := playWith(t, input, "--opponent", "greedy", "--seed", "3")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"x" is not a move: type a number from 1 to 2`)
	assert.Contains(t, out, `"0" is not a move`)
	assert.Contains(t, out, `"3" is not a move`)
	assert.Contains(t, out, "Type the number of a move and Enter")
	choice := strings.Index(out, "Your moves:")
	require.Positive(t, choice)
	rest := out[choice:]
	taken := strings.Index(rest, "You: geol: enter -> 3")
	require.Positive(t, taken, "the second move was taken")
	assert.Equal(t, 2, strings.Count(rest[:taken], "Your moves:"), "b shows the moves again")
	assert.Equal(t, 2, strings.Count(rest[:taken], "stations"), "b redraws the board")
}

func TestPlayQuitAndEOF(t *testing.T) {
	code, out, errs := playWith(t, "q\n", "--opponent", "random", "--seed", "3")
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "You left the game.")

	code, _, errs = playWith(t, "", "--opponent", "random", "--seed", "3")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "input ended before the game did")
}

func TestPlaySeatsAndRules(t *testing.T) {
	code, out, errs := playWith(t, strings.Repeat("1\n", 600), "--opponent", "mc:3", "--seed", "8", "--rules", "players=3", "--seat", "2")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "You are seat 2 (C).")
	assert.Contains(t, out, "Seat 0 (A): mc:3")
	assert.Contains(t, out, "Seat 1 (B): mc:3")
	assert.Regexp(t, `wins? after \d+ decisions`, out)
}

func TestPlayErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--seat", "2"}, "--seat must be 0..1"},
		{[]string{"--opponent", "mcts:0"}, "count must be an integer"},
		{[]string{"--rules", "pieces=9"}, "pieces must be 1 to 5"},
		{[]string{"extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			code, _, errs := playWith(t, "1\n", tt.args...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, tt.msg)
		})
	}
}

// The kata end to end: every command plays the `kata` preset, and replay
// --check accepts every game they write.
func TestKataEndToEnd(t *testing.T) {
	dir := t.TempDir()
	checkRecords := func(t *testing.T, path string, games int) {
		t.Helper()
		code, out, errs := runCmd(t, "replay", "--check", path)
		require.Equal(t, 0, code, errs)
		assert.Equal(t, games, strings.Count(out, ": ok,"), out)
	}
	t.Run("selfplay", func(t *testing.T) {
		path := filepath.Join(dir, "selfplay.jsonl")
		code, _, errs := runCmd(t, "selfplay", "--rules", "kata", "--games", "30", "--seed", "4", "--out", path, "--quiet")
		require.Equal(t, 0, code, errs)
		checkRecords(t, path, 30)
		recs, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Contains(t, string(recs), `"board":"line","spaces":15`)
	})
	t.Run("selfplay dataset", func(t *testing.T) {
		out := filepath.Join(dir, "ds")
		code, _, errs := runCmd(t, "selfplay", "--rules", "kata", "--agents", "mcts:8;greedy", "--tier", "planes", "--games", "6", "--seed", "5", "--out", out, "--quiet")
		require.Equal(t, 0, code, errs)
		shards, err := filepath.Glob(filepath.Join(out, "*.records.jsonl"))
		require.NoError(t, err)
		require.NotEmpty(t, shards)
		for _, s := range shards {
			code, _, errs := runCmd(t, "replay", "--check", s)
			require.Equal(t, 0, code, errs)
		}
		m := readManifest(t, out)
		assert.Equal(t, env.Kata(), m.Rules)
		assert.Equal(t, "kata", m.RulesText)
	})
	t.Run("eval", func(t *testing.T) {
		code, out, errs := runCmd(t, "eval", "--rules", "kata", "--a", "mc:100", "--b", "random", "--games", "20", "--quiet")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "rules kata")
		assert.Contains(t, out, "mc:100")
	})
	t.Run("play", func(t *testing.T) {
		path := filepath.Join(dir, "play.jsonl")
		for _, seed := range []string{"3", "8"} {
			code, out, errs := playWith(t, strings.Repeat("1\n", 200), "--rules", "kata", "--opponent", "greedy", "--seed", seed, "--record", path)
			require.Equal(t, 0, code, errs)
			assert.Contains(t, out, "Yut Nori, rules kata")
			assert.Contains(t, out, "[[") // the kata's notation
			assert.Regexp(t, `(You win|greedy \(B\) wins) after \d+ decisions`, out)
			assert.NotContains(t, out, "HOME")
		}
		code, _, errs := playWith(t, "q\n", "--rules", "kata", "--opponent", "greedy", "--seed", "9", "--record", path)
		require.Equal(t, 0, code, errs)
		checkRecords(t, path, 3) // two whole games and one left part-way
	})
}
