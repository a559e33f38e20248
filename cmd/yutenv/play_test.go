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
		"Yut Nori, rules standard, seed 3: You (A) against greedy (B).",
		"stations", "board", // the board is drawn
		"> You (A): ",                             // the seats under it, in words
		"Your moves:\n   1) ",                     // numbered moves in words
		"Your move [1-2]: ",                       // a prompt with the range
		"takes the C1 shortcut",                   // shortcuts
		"Captured 1 of your pieces: back to hand", // captures
		"Capture bonus: another throw",            // bonus throws
		"yut earns another throw",                 // yut/mo bonus
		"piece(s) finished",                       // finishing
		"(your only move) You: ",                  // forced moves play themselves
		"captures 1 of yours",                     // the player's pieces are "yours"
	} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, `\n\nstations +board\n(.*\n){7}\n  You \(A\): \d in hand, \d finished[,;] .*\n  greedy \(B\): \d in hand, \d finished[,;] .*\n(You win|greedy \(B\) wins) after`, out, "the final board, no seat to move")
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
	assert.Contains(t, out, ": You (C) against mc:3 (A) and mc:3 (B).")
	assert.Regexp(t, `(?m)^> You \(C\): \d in hand, \d finished; `, out)
	assert.Regexp(t, `(?m)^  mc:3 \(A\): \d in hand, \d finished; `, out)
	assert.NotRegexp(t, `(?i)\bseat \d`, out)
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

// TestPlayBoardInWords: under the drawn board each seat is a line in words,
// named as everywhere else in the game, with where its stacks stand and,
// where the route decides it, which way they go; never env.Render's
// "seat 1 (B): hand 2, finished 0, board [1x0(OUTER) 1x5(C1)]".
func TestPlayBoardInWords(t *testing.T) {
	o, c1, c2, cc1 := env.RouteOuter, env.RouteC1, env.RouteC2, env.RouteCentreC1
	stack := func(seat int, st env.Station, r env.Route, h int) env.Stack {
		return env.Stack{Seat: seat, Station: st, Route: r, Height: h}
	}
	tests := []struct {
		name   string
		rules  string
		me     int
		toMove int
		pool   [env.NumThrows]int
		hand   [env.MaxPlayers]int
		fin    [env.MaxPlayers]int
		stacks []env.Stack
		want   []string
	}{
		{name: "opening", rules: "standard", hand: [4]int{4, 4}, pool: [6]int{env.Gae: 1, env.Yut: 1},
			want: []string{"> You (A): 4 in hand, 0 finished; nothing on the board\n", "  greedy (B): 4 in hand, 0 finished; nothing on the board\n",
				"Your move; throws to use: gae, yut.\n"}},
		{name: "the other seat to move", rules: "standard", toMove: 1, hand: [4]int{4, 3}, pool: [6]int{env.Do: 1},
			stacks: []env.Stack{stack(1, 3, o, 1)},
			want:   []string{"  You (A): 4 in hand", "> greedy (B): 3 in hand, 0 finished; on the board: 1 piece at 3\n", "greedy (B) to move; throws to use: do.\n"}},
		{name: "corners and the centre", rules: "standard", hand: [4]int{0, 1}, fin: [4]int{1, 0}, pool: [6]int{env.Do: 1},
			stacks: []env.Stack{stack(0, 5, c1, 2), stack(0, 10, o, 1), stack(1, 22, cc1, 1), stack(1, 10+15, c2, 1), stack(1, 0, c2, 1)},
			want: []string{"> You (A): 0 in hand, 1 finished; on the board: a stack of 2 at 5 (takes the shortcut to the centre), 1 at 10 (stays on the outer ring: no shortcut)\n",
				"  greedy (B): 1 in hand, 0 finished; on the board: 1 piece at HOME (its next move forward finishes it), 1 at 22 (takes the short way home), 1 at 25\n"}},
		{name: "centre the long way", rules: "standard", hand: [4]int{3, 4}, pool: [6]int{env.Do: 1},
			stacks: []env.Stack{stack(0, 22, c1, 1)},
			want:   []string{"on the board: 1 piece at 22 (goes on down to 15, the long way)\n"}},
		{name: "HOME under wrap", rules: "finish=wrap", hand: [4]int{3, 4}, pool: [6]int{env.Do: 1},
			stacks: []env.Stack{stack(0, 0, o, 1)},
			want:   []string{"on the board: 1 piece at HOME (goes round the ring again)\n"}},
		{name: "the player's letter", rules: "players=3", me: 2, toMove: 2, hand: [4]int{4, 4, 4}, pool: [6]int{env.Do: 1},
			want: []string{"  greedy (A): 4 in hand", "  greedy (B): 4 in hand", "> You (C): 4 in hand", "Your move"}},
		{name: "line board", rules: "kata,finish=pass", hand: [4]int{0, 2}, pool: [6]int{env.Do: 1},
			stacks: []env.Stack{stack(0, 3, env.RouteLine, 1), stack(0, 14, env.RouteLine, 1)},
			want:   []string{"[[],[],[],[A", "> You (A): 0 in hand, 0 finished; on the board: 1 piece at 3, 1 at 14 (the last space: its next move finishes it)\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := env.ParseRules(tc.rules)
			require.NoError(t, err)
			s, err := env.FromPosition(env.Position{Rules: r, ToMove: tc.toMove, Phase: env.PhaseMove, Pool: tc.pool,
				Hand: tc.hand, Finished: tc.fin, Stacks: tc.stacks}, 1)
			require.NoError(t, err)
			names := make([]string, r.Players)
			for i := range names {
				names[i] = "greedy"
			}
			names[tc.me] = "you"
			n := narrator{me: tc.me, names: names}
			got := n.board(&s)
			assert.True(t, strings.HasPrefix(got, s.RenderBoard()+"\n"), "the drawn board comes first:\n%s", got)
			for _, want := range tc.want {
				assert.Contains(t, got, want)
			}
			assert.NotRegexp(t, `(?i)\bseat \d|hand \d|board \[|\((OUTER|C1|C2|CENTRE)`, got, "env.Render's cryptic lines")
			if r.Board == env.BoardLine {
				assert.NotContains(t, got, "HOME", "a line has no HOME")
			}
		})
	}
	t.Run("a whole game", func(t *testing.T) {
		code, out, errs := playWith(t, strings.Repeat("1\n", 400), "--opponent", "greedy", "--seed", "5")
		require.Equal(t, 0, code, errs)
		assert.Regexp(t, `(?m)^> You \(A\): \d in hand, \d finished; `, out)
		assert.NotRegexp(t, `hand \d+, finished \d+, board \[`, out, "env.Render's seat lines")
		assert.NotRegexp(t, `(?i)\bseat \d`, out, "seats are named, not numbered")
	})
}
