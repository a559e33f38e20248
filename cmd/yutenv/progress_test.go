package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/israce"
)

// TestProgressBars: the long commands draw a bar with a count, a rate and an
// ETA when asked (--progress always), and none into a pipe by default
// (auto) or when told not to (never, --quiet). A bad mode is refused.
func TestProgressBars(t *testing.T) {
	dir := t.TempDir()
	records := filepath.Join(dir, "games.jsonl")
	code, _, errs := runCmd(t, "selfplay", "--games", "3", "--out", records, "--quiet")
	require.Equal(t, 0, code, errs)

	commands := map[string]func(string) []string{
		"eval": func(string) []string {
			return luckOffUnderRace("eval", "--a", "greedy", "--b", "random", "--games", "4")
		},
		"selfplay": func(d string) []string {
			return []string{"selfplay", "--games", "4", "--out", filepath.Join(d, "out.jsonl")}
		},
		"dataset": func(d string) []string {
			return []string{"selfplay", "--games", "4", "--tier", "compact", "--out", filepath.Join(d, "ds")}
		},
		"ladder": func(string) []string {
			return []string{"ladder", "--agents", "random;greedy", "--games", "4", "--state", ""}
		},
		"grade": func(string) []string {
			return []string{"grade", "--agent", "random", "--games", "4", "--reference", "mc:5"}
		},
		"replay --svg": func(d string) []string { return []string{"replay", "--svg", filepath.Join(d, "svg"), records} },
	}
	modes := []struct {
		name string
		args []string
		bar  bool
	}{
		{"auto into a pipe", nil, false},
		{"always", []string{"--progress", "always"}, true},
		{"never", []string{"--progress", "never"}, false},
		{"quiet", []string{"--quiet"}, false},
		{"always but quiet", []string{"--progress", "always", "--quiet"}, false},
	}
	if israce.Enabled {
		modes = modes[:2] // the bar's goroutine runs in mode always; the other modes are flag logic, checked without -race
	}
	for name, cmd := range commands {
		for _, m := range modes {
			t.Run(name+"/"+m.name, func(t *testing.T) {
				code, _, errs := runCmd(t, append(cmd(t.TempDir()), m.args...)...)
				require.Equal(t, 0, code, errs)
				if m.bar {
					assert.Contains(t, errs, "games/s", "a bar with a rate")
					assert.Regexp(t, `\b[34]/[34]\b`, errs, "a bar with a count")
				} else {
					assert.NotContains(t, errs, "games/s")
				}
			})
		}
		t.Run(name+"/bad mode", func(t *testing.T) {
			code, _, errs := runCmd(t, append(cmd(t.TempDir()), "--progress", "sometimes")...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, `--progress must be auto, always or never, got "sometimes"`)
		})
	}
}

// TestIsTerminal: a pipe and a regular file are not terminals.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, isTerminal(w))
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f))
}
