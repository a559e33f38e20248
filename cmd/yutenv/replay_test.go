package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/nnet"
)

func TestReplay(t *testing.T) {
	path, recs := writeRecords(t, t.TempDir(), 3)

	t.Run("json lines reproduce the game", func(t *testing.T) {
		code, out, stderr := runCmd(t, "replay", path, "--game", "1", "--format", "json")
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, len(recs[1].Steps)+1, "one line for the start and one per step")
		var last struct {
			Game int `json:"game"`
			env.LineJSON
		}
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
		assert.Equal(t, "over", last.State.Phase)
		assert.Equal(t, recs[1].Result.Winner, last.State.Winner)
		assert.Equal(t, 1, last.Game)
	})
	t.Run("json lines of every game by default, each with its game", func(t *testing.T) {
		code, out, stderr := runCmd(t, "replay", path, "--format", "json")
		require.Equal(t, 0, code, stderr)
		want := 0
		for _, r := range recs {
			want += len(r.Steps) + 1
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, want)
		games := map[int]int{}
		for _, l := range lines {
			require.True(t, strings.HasPrefix(l, `{"game":`), l)
			var v struct {
				Game int `json:"game"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &v))
			games[v.Game]++
		}
		assert.Equal(t, map[int]int{0: len(recs[0].Steps) + 1, 1: len(recs[1].Steps) + 1, 2: len(recs[2].Steps) + 1}, games)
	})
	t.Run("text shows boards", func(t *testing.T) {
		code, out, _ := runCmd(t, "replay", path)
		require.Equal(t, 0, code)
		assert.Contains(t, out, "== game 0 start")
		assert.Contains(t, out, "== game 2 start", "every game by default")
		assert.Contains(t, out, "game over")
	})
	t.Run("check checks every game by default", func(t *testing.T) {
		code, out, _ := runCmd(t, "replay", "--check", path)
		require.Equal(t, 0, code)
		assert.Equal(t, 3, strings.Count(out, ": ok,"))
		assert.Contains(t, out, "game 2: ok")
	})
}

func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	path, recs := writeRecords(t, dir, 1)
	rec := *recs[0]
	// Make one action illegal: the error must name its step.
	steps := append([]env.Step(nil), rec.Steps...)
	for i, st := range steps {
		if st.Action != nil {
			bad := 179
			steps[i].Action = &bad
			rec.Steps = steps
			rec.Result = nil
			break
		}
	}
	var b bytes.Buffer
	_, err := rec.WriteTo(&b)
	require.NoError(t, err)
	illegal := filepath.Join(dir, "illegal.jsonl")
	require.NoError(t, os.WriteFile(illegal, b.Bytes(), 0o644))
	garbage := filepath.Join(dir, "garbage.jsonl")
	require.NoError(t, os.WriteFile(garbage, []byte("{\"format\":\"yutenv-record\",\"version\":1,\n"), 0o644))

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"replay", filepath.Join(dir, "nope")}, "no such file"},
		{"illegal action named by step", []string{"replay", illegal}, "record step"},
		{"check fails on it", []string{"replay", "--check", illegal}, "1 of 1 games failed the check"},
		{"malformed json", []string{"replay", garbage}, "line 1"},
		{"game out of range", []string{"replay", path, "--game", "5"}, "out of range"},
		{"bad format", []string{"replay", path, "--format", "xml"}, "--format"},
		{"bad flag", []string{"replay", path, "--nope"}, "unknown flag"},
		{"no file", []string{"replay"}, "Usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.args...)
			assert.NotEqual(t, 0, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestReplayCheckGivesEveryGameAVerdict is a regression test: --check used
// to stop at the first bad game, so later games got no verdict.
func TestReplayCheckGivesEveryGameAVerdict(t *testing.T) {
	dir := t.TempDir()
	_, recs := writeRecords(t, dir, 3)
	var b bytes.Buffer
	for i, r := range recs {
		c := *r
		if i == 0 {
			res := *r.Result
			res.Throws++ // a result whose counts the game does not give
			c.Result = &res
		}
		_, err := c.WriteTo(&b)
		require.NoError(t, err)
		if i == 1 {
			b.WriteString("{\"format\":\"yutenv-record\",\"version\":1,\"seed\":1,\"seed\":2}\n") // a repeated key
		}
	}
	path := filepath.Join(dir, "mixed.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	code, out, stderr := runCmd(t, "replay", "--check", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "game 0 (line 1): FAILED: corrupt data: record says")
	assert.Contains(t, out, "game 1: ok")
	assert.Contains(t, out, "game 2 (line 3): FAILED: bad input: record: key \"seed\" appears twice")
	assert.Contains(t, out, "game 3: ok")
	assert.Contains(t, stderr, "2 of 4 games failed the check")

	code, out, _ = runCmd(t, "replay", "--check", "--game", "1", path)
	assert.Equal(t, 0, code)
	assert.Equal(t, 1, strings.Count(out, "\n"))
}

func TestBench(t *testing.T) {
	code, out, stderr := runCmd(t, "bench", "--time", "200ms", "--json")
	require.Equal(t, 0, code, stderr)
	var res benchResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Positive(t, res.Games)
	assert.Positive(t, res.GamesPerSec)
	assert.InDelta(t, float64(res.Decisions)/float64(res.Games), res.DecisionsPerGame, 1e-9)
	assert.Equal(t, "standard", res.Rules)
	assert.Equal(t, nnet.Kernel(), res.NetKernel)
	assert.Contains(t, []string{"avx512", "avx2", "sse", "portable"}, res.NetKernel)
	assert.Positive(t, res.AZForwardMicros)

	code, out, _ = runCmd(t, "bench", "--time", "100ms", "--rules", "players=3", "--workers", "2")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "games/s per core")
	assert.Contains(t, out, "players=3")
	assert.Contains(t, out, "network kernel")
	assert.Contains(t, out, "az forward pass")

	for _, bad := range [][]string{{"--workers", "0"}, {"--rules", "players=9"}, {"--time", "-1s"}, {"stray"}} {
		code, _, stderr := runCmd(t, append([]string{"bench"}, bad...)...)
		assert.NotEqual(t, 0, code, bad)
		assert.NotEmpty(t, stderr)
	}
}

// TestBenchBatch steps the reference batch: --json has the steps made and
// the figures derived from them, the table the same measures, and bad
// flags one clear line each.
func TestBenchBatch(t *testing.T) {
	code, out, stderr := runCmd(t, "bench", "--batch", "64", "--time", "100ms", "--json")
	require.Equal(t, 0, code, stderr)
	var res batchResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, 64, res.Envs)
	assert.Equal(t, runtime.GOMAXPROCS(0), res.Workers, "every core unless --workers says")
	assert.Positive(t, res.Steps)
	assert.InDelta(t, res.Seconds*1e6/float64(res.Steps), res.MicrosPerStep, 1e-6)
	assert.InDelta(t, float64(64*res.Steps)/res.Seconds, res.EnvStepsPerSec, 1e-6*res.EnvStepsPerSec)

	code, out, stderr = runCmd(t, "bench", "--batch", "3", "--workers", "1", "--time", "50ms")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "µs per batch step")
	assert.Regexp(t, `workers \|\s+1 \|`, out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--batch", "-1"}, "--batch must be 1..16384"},
		{[]string{"--batch", "20000"}, "--batch must be 1..16384"},
		{[]string{"--batch", "8", "--rules", "kata"}, "--rules and --seed do not apply"},
		{[]string{"--batch", "8", "--workers", "0"}, "--workers must be 1..1024"},
		{[]string{"--batch", "8", "--time", "0s"}, "--time must be more than 0"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCmd(t, append([]string{"bench"}, tc.args...)...)
			assert.NotEqual(t, 0, code)
			assert.Contains(t, stderr, tc.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line")
		})
	}
}

func TestUsage(t *testing.T) {
	code, out, _ := runCmd(t, "help")
	assert.Equal(t, 0, code)
	for _, c := range []string{"bench", "replay", "serve"} {
		assert.Contains(t, out, c)
	}
	code, _, stderr := runCmd(t, "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown command")
}
