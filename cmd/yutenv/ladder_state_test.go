package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ladderStateKey is the key of "--agents random;greedy --games 4" (seed 1, standard rules).
var ladderStateKey = ladderKey{Agents: []string{"random", "greedy"}, Rules: "standard", Games: 4, Seed: 1}

// TestLadderStateRefusedBySize: a state file larger than the ladder could
// ever write is refused by its size, before a byte of it is read, with one
// line naming the file and both sizes.
func TestLadderStateRefusedBySize(t *testing.T) {
	bound := ladderStateBound(ladderStateKey)
	require.Less(t, bound, int64(1<<20), "a two-agent ladder of 4 games is a few KB")
	tests := []struct {
		name string
		size int64
	}{
		{"one byte over the bound", bound + 1},
		{"256 MiB", 256 << 20},
		{"1 TiB", 1 << 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state")
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(tt.size)) // sparse: no disk, no memory
			require.NoError(t, f.Close())

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = loadLadderState(path, ladderStateKey, nil)
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrLadderState)
			msg := err.Error()
			assert.NotContains(t, msg, "\n", "one line")
			assert.Contains(t, msg, path)
			assert.Contains(t, msg, "has "+itoa(tt.size)+" bytes")
			assert.Contains(t, msg, itoa(bound))
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "refused without reading the file")
		})
	}
	t.Run("the command says it", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		require.NoError(t, os.Truncate(path, 256<<20))
		code, _, errs := runCmd(t, "ladder", "--quiet", "--agents", "random;greedy", "--games", "4", "--state", path)
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, path+": ladder state file: it has 268435456 bytes")
	})
}

// TestLadderStateRefusesNonRegular: a FIFO or a folder is refused at once
// (a FIFO would block a read, or stream without end).
func TestLadderStateRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, path := range []string{fifo, dir} {
		done := make(chan error, 1)
		go func() {
			_, err := loadLadderState(path, ladderStateKey, nil)
			done <- err
		}()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, ErrLadderState)
			assert.ErrorContains(t, err, "not a regular file")
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the read blocked", path)
		}
	}
}

// TestLadderStateChecksum: a state damaged so that it stays valid JSON (a
// winner flipped) is refused by its checksum; an old state without one
// (version 1) is continued with a warning; another version is refused
// naming the versions this yutenv reads.
func TestLadderStateChecksum(t *testing.T) {
	dir := t.TempDir()
	rep := ladderRun(t, dir, "--agents", "random;greedy", "--games", "4")
	state := filepath.Join(dir, "state")
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b, &raw))
	require.EqualValues(t, ladderStateVersion, raw["version"])
	require.NotEmpty(t, raw["sha256"])

	rewrite := func(t *testing.T, path string, edit func(m map[string]any)) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		edit(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, out, 0o644))
	}
	args := func(path string) []string {
		return []string{"ladder", "--quiet", "--agents", "random;greedy", "--games", "4", "--state", path}
	}

	t.Run("a winner flipped", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state")
		rewrite(t, path, func(m map[string]any) {
			g := m["pairs"].([]any)[0].([]any)[0].([]any)
			g[1] = 1 - g[1].(float64)
		})
		code, out, errs := runCmd(t, args(path)...)
		assert.Equal(t, 1, code, out)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "one line: %s", errs)
		assert.Contains(t, errs, path+": ladder state file: its SHA-256")
	})
	t.Run("the checksum removed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state")
		rewrite(t, path, func(m map[string]any) { delete(m, "sha256") })
		code, _, errs := runCmd(t, args(path)...)
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, path+": ladder state file: it has no SHA-256")
	})
	t.Run("another version", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state")
		rewrite(t, path, func(m map[string]any) { m["version"] = 3 })
		code, _, errs := runCmd(t, args(path)...)
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, "version 3")
		assert.Contains(t, errs, "versions 1 and 2")
	})
	t.Run("version 1 continues with a warning", func(t *testing.T) {
		sub := t.TempDir()
		path := filepath.Join(sub, "state")
		rewrite(t, path, func(m map[string]any) {
			m["version"] = 1
			delete(m, "sha256")
		})
		out := filepath.Join(sub, "ladder.json")
		code, _, errs := runCmd(t, append(args(path), "--json", out)...)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, errs, path+": ladder state file version 1 has no checksum")
		assert.Equal(t, rep["ratings"], readLadderJSON(t, out)["ratings"])
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
