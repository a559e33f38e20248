package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/nnet/nettest"
)

// TestNetAgentEverywhere plays a network file through eval, play and
// selfplay, with and without search: the spec goes through the agent
// registry like any other.
func TestNetAgentEverywhere(t *testing.T) {
	net := "net:" + filepath.Join("..", "..", "nnet", "testdata", "go-tiny.ynet")
	m := evalJSON(t, "--a", net, "--b", "random", "--games", "4")
	assert.Equal(t, 4, m.Games)
	assert.Equal(t, net, m.A)
	m = evalJSON(t, "--a", net+",sims=4", "--b", net, "--games", "2")
	assert.Equal(t, net+",sims=4", m.A)

	dir := filepath.Join(t.TempDir(), "ds")
	code, _, errs := runCmd(t, "selfplay", "--games", "2", "--quiet", "--agents", net+";"+net+",sims=4", "--tier", "compact", "--out", dir)
	require.Equal(t, 0, code, errs)

	code, _, errs = runCmd(t, "eval", "--a", "net:/nonexistent.ynet", "--b", "random", "--games", "2", "--quiet")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "nonexistent.ynet")
}

// TestCLIChild runs the CLI with the test binary's arguments after "--"
// and exits with its code: runCLI's child process, so a
// fatal runtime error (a stack overflow) shows as the process's exit
// status, as it would for the real binary.
func TestCLIChild(t *testing.T) {
	if os.Getenv("YUTENV_CLI_CHILD") == "" {
		t.Skip("only run by runCLI")
	}
	os.Exit(run(flag.Args(), os.Stdout, os.Stderr))
}

// runCLI runs the CLI in a child process (at most 60 s) and returns its
// exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestCLIChild$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "YUTENV_CLI_CHILD=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "the CLI did not finish: %s", errb.String())
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestCLIBadNetworks: a network file that cannot be played is a clear
// error with exit 1 from the CLI. Before: a 12 MB nested file overflowed
// the stack (exit 2, a Go crash dump); a FIFO blocked forever; a net with
// a 3e38 weight loaded and analyse --json failed with "json: unsupported
// value: NaN"; a net that overflows to infinity did the same.
func TestCLIBadNetworks(t *testing.T) {
	if israce.Enabled {
		t.Skip("error exits of eight child processes, not goroutines; the run without -race checks them")
	}
	dir := t.TempDir()
	pos := writeFile(t, "pos.json", analysePos)
	deep := filepath.Join(dir, "deep.ynet")
	require.NoError(t, os.WriteFile(deep, nettest.Nested(12<<20), 0o644))
	fifo := filepath.Join(dir, "fifo.ynet")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	huge, inf := filepath.Join(dir, "huge.ynet"), filepath.Join(dir, "inf.ynet")
	nettest.Write(t, huge, nettest.Huge())
	nettest.Write(t, inf, nettest.Overflowing())
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"nested eval", "nested deeper than", []string{"eval", "--a", "net:" + deep, "--b", "random", "--games", "2", "--quiet"}},
		{"nested analyse", "nested deeper than", []string{"analyse", "--position", pos, "--agent", "net:" + deep, "--json"}},
		{"fifo", "not a regular file", []string{"eval", "--a", "net:" + fifo, "--b", "random", "--games", "2", "--quiet"}},
		{"device", "not a regular file", []string{"analyse", "--position", pos, "--agent", "net:/dev/zero", "--json"}},
		{"huge weight", "above 10000 in magnitude", []string{"analyse", "--position", pos, "--agent", "net:" + huge, "--json"}},
		{"infinite output", "NaN or infinite", []string{"analyse", "--position", pos, "--agent", "net:" + inf, "--json"}},
		{"infinite output in search", "NaN or infinite", []string{"analyse", "--position", pos, "--agent", "net:" + inf + ",sims=8", "--json"}},
		{"infinite output in eval", "NaN or infinite", []string{"eval", "--a", "net:" + inf, "--b", "random", "--games", "2", "--quiet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			assert.Equal(t, 1, code, "stdout %q stderr %q", out, errs)
			assert.Contains(t, errs, tc.want)
			assert.NotContains(t, errs, "goroutine ", "a crash dump")
			assert.Empty(t, out)
		})
	}
}
