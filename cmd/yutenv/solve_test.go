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

func TestSolveHelp(t *testing.T) {
	code, stdout, _ := runCmd(t, "solve", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "--max-mem")
	assert.Contains(t, stdout, "Usage: yutenv solve")
}
