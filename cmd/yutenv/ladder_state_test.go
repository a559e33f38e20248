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
			_, err = loadLadderState(path, ladderStateKey, false, nil)
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
			_, err := loadLadderState(path, ladderStateKey, false, nil)
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
		rewrite(t, path, func(m map[string]any) { m["version"] = 4 })
		code, _, errs := runCmd(t, args(path)...)
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, "version 4")
		assert.Contains(t, errs, "versions 1 to 3")
	})
	t.Run("version 1 continues with a warning", func(t *testing.T) {
		sub := t.TempDir()
		path := filepath.Join(sub, "state")
		st := oldLadderState(t, b, 1)
		require.NoError(t, os.WriteFile(path, st, 0o644))
		out := filepath.Join(sub, "ladder.json")
		code, _, errs := runCmd(t, append(args(path), "--json", out)...)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, errs, path+": ladder state file version 1 has no checksum")
		assert.Equal(t, rawRatings(rep), rawRatings(readLadderJSON(t, out)))
	})
}

// oldLadderState turns the version 3 state b into the same games in an
// older version's form: no luck in the key, games of six numbers, and
// (version 2) the checksum that version had.
func oldLadderState(t *testing.T, b []byte, version int) []byte {
	t.Helper()
	var st ladderState
	require.NoError(t, json.Unmarshal(b, &st))
	st.Version, st.Key.Luck, st.SHA256 = version, "", ""
	old := ladderStateV2{Format: st.Format, Version: version, Key: st.Key, Pairs: make([][][6]int64, len(st.Pairs))}
	for p, games := range st.Pairs {
		for _, g := range games {
			old.Pairs[p] = append(old.Pairs[p], [6]int64(g[:6]))
		}
	}
	if version > ladderStateUnsummed {
		old.SHA256 = st.sum()
	}
	out, err := json.Marshal(&old)
	require.NoError(t, err)
	return out
}

// rawRatings is a report's ratings without the luck-adjusted fit.
func rawRatings(rep map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range rep["ratings"].([]any) {
		m := map[string]any{}
		for k, v := range r.(map[string]any) {
			if !strings.HasPrefix(k, "luck") {
				m[k] = v
			}
		}
		out = append(out, m)
	}
	return out
}

// TestLadderStateLuck: a state keeps the value function its games' luck
// was counted with. Resuming without --luck keeps it; another --luck is
// another ladder; a state from before the luck (version 2) continues
// without luck-adjusted ratings, and is refused when luck is asked for.
func TestLadderStateLuck(t *testing.T) {
	dir := t.TempDir()
	rep := ladderRun(t, dir, "--agents", "random;greedy", "--games", "4", "--luck", "progress")
	require.Equal(t, "progress", rep["luck"])
	b, err := os.ReadFile(filepath.Join(dir, "state"))
	require.NoError(t, err)
	args := func(path string, more ...string) []string {
		return append([]string{"ladder", "--quiet", "--agents", "random;greedy", "--games", "4", "--state", path}, more...)
	}
	t.Run("resumed without --luck keeps the state's", func(t *testing.T) {
		assert.Equal(t, rep, ladderRun(t, dir, "--agents", "random;greedy", "--games", "4"))
	})
	t.Run("another --luck is another ladder", func(t *testing.T) {
		code, _, errs := runCmd(t, args(filepath.Join(dir, "state"), "--luck", "az")...)
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, "made by a different ladder")
		assert.Contains(t, errs, "luck progress; this one")
	})
	v2 := oldLadderState(t, b, ladderStateLuckless)
	tests := []struct {
		name, luck, want string
		code             int
	}{
		{"version 2 without --luck: luck off", "", "continuing it without luck-adjusted ratings", 0},
		{"version 2 with --luck off", "off", "", 0},
		{"version 2 with --luck az: refused", "az", "continue it with --luck off, or delete it", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := t.TempDir()
			path, out := filepath.Join(sub, "state"), filepath.Join(sub, "ladder.json")
			require.NoError(t, os.WriteFile(path, v2, 0o644))
			more := []string{"--json", out}
			if tt.luck != "" {
				more = append(more, "--luck", tt.luck)
			}
			code, _, errs := runCmd(t, args(path, more...)...)
			require.Equal(t, tt.code, code, errs)
			assert.Contains(t, errs, tt.want)
			if tt.code != 0 {
				return
			}
			got := readLadderJSON(t, out)
			assert.Nil(t, got["luck"], "no luck-adjusted fit")
			assert.Equal(t, rawRatings(rep), rawRatings(got), "the same games, the same raw fit")
		})
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
