package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSolveCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.ysolve")
	code, stdout, stderr := runCmd(t, "solve", "--rules", "kata,spaces=7", "--out", out, "--quiet")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{"states ", "iterations ", "residual ", "first seat  wins with probability 0.", "time "} {
		assert.Contains(t, stdout, want)
	}
	_, err := os.Stat(out)
	require.NoError(t, err)

	code, stdout, stderr = runCmd(t, "eval", "--rules", "kata,spaces=7", "--a", "optimal:"+out, "--b", "random", "--games", "20", "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "optimal:"+out)

	code, _, stderr = runCmd(t, "eval", "--rules", "kata", "--a", "optimal:"+out, "--b", "random", "--games", "2", "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "solved for rules kata,spaces=7")
}

func TestSolveCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.ysolve")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"unsupported rules", []string{"--rules", "players=3", "--out", out}, "players=3"},
		{"too big", []string{"--rules", "pieces=2", "--out", out}, "need about"},
		{"over max mem", []string{"--rules", "kata", "--out", out, "--max-mem", "1MiB"}, "over the bound of 1.0 MiB"},
		{"bad max mem", []string{"--rules", "kata", "--out", out, "--max-mem", "lots"}, "--max-mem"},
		{"max mem below a byte", []string{"--rules", "kata", "--out", out, "--max-mem", "0.5"}, `--max-mem: "0.5" is less than one byte`},
		{"max mem below a byte, in B", []string{"--rules", "kata", "--out", out, "--max-mem", "0.4B"}, `--max-mem: "0.4B" is less than one byte`},
		{"max mem zero", []string{"--rules", "kata", "--out", out, "--max-mem", "0"}, `--max-mem: "0" is less than one byte`},
		{"max mem fractional bytes", []string{"--rules", "kata", "--out", out, "--max-mem", "1.5"}, "not a whole number of bytes"},
		{"above the machine's memory", []string{"--rules", "pieces=3", "--out", out, "--max-mem", "1e15"}, "more than this machine's"},
		{"unwritable out", []string{"--rules", "kata", "--out", filepath.Join(dir, "no", "t.ysolve")}, "cannot be written"},
		{"folder out", []string{"--rules", "kata", "--out", dir}, "names a folder"},
		{"no out", []string{"--rules", "kata"}, "--out FILE is required"},
		{"bad pool cap", []string{"--rules", "pieces=1", "--out", out, "--pool-cap", "99"}, "--pool-cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, append([]string{"solve", "--quiet"}, tt.args...)...)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.msg)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// Progress: --progress always prints the listing (count, rate) and the
// sweeps (residual, ETA) on stderr, into a pipe too; by default (auto,
// not a terminal) and with never, nothing.
func TestSolveProgress(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want bool
	}{
		{"always", []string{"--progress", "always"}, true},
		{"auto into a pipe", nil, false},
		{"never", []string{"--progress", "never"}, false},
		{"quiet", []string{"--progress", "always", "--quiet"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "t.ysolve")
			code, _, stderr := runCmd(t, append([]string{"solve", "--rules", "kata,spaces=7", "--out", out}, tt.args...)...)
			require.Equal(t, 0, code, stderr)
			if !tt.want {
				assert.Empty(t, stderr)
				return
			}
			assert.Regexp(t, `listing states: \d+ found, \d+ expanded, \d+ states/s`, stderr)
			assert.Regexp(t, `value iteration: sweep \d+, residual [0-9.e+-]+, \d+ states, ETA done`, stderr)
		})
	}
}

func TestSolveHelp(t *testing.T) {
	code, stdout, _ := runCmd(t, "solve", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "--max-mem")
	assert.Contains(t, stdout, "Usage: yutenv solve")
}

// parseBytes reads whole byte counts in the units it names, and refuses
// a count below one byte or of fractional bytes rather than taking it for
// the default.
func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		msg  string
	}{
		{"2GiB", 2 << 30, ""},
		{"512MiB", 512 << 20, ""},
		{"1.5KiB", 1536, ""},
		{"0.1GiB", 107374182, ""},
		{"8 GB", 8 << 30, ""},
		{"1e15", 1e15, ""},
		{"1", 1, ""},
		{"100B", 100, ""},
		{"2TiB", 2 << 40, ""},
		{"0.5", 0, "less than one byte"},
		{"0.4B", 0, "less than one byte"},
		{"0", 0, "less than one byte"},
		{"0.0001KiB", 0, "less than one byte"},
		{"1.5", 0, "not a whole number of bytes"},
		{"1.5B", 0, "not a whole number of bytes"},
		{"2PiB", 0, `unknown unit "PiB"`},
		{"1e16", 0, "more than 1 PiB"},
		{"-1GiB", 0, "want a size"},
		{"NaN", 0, "want a size"},
		{"Inf", 0, "want a size"},
		{"0x10", 0, "want a size"},
		{"", 0, "want a size"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseBytes(tt.in)
			if tt.msg != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzParseBytes: no text panics parseBytes, and what it accepts is 1 byte
// to 1 PiB.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"2GiB", "0.5", "1e15", "1.5KiB", "0x1p4", "9e999", ".5e1", "1e-400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseBytes(s)
		if err == nil && (b < 1 || b > maxBytesFlag) {
			t.Fatalf("parseBytes(%q) = %d", s, b)
		}
	})
}
