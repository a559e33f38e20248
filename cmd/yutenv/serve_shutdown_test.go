package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// yutenvBinary builds the real yutenv binary once per test run; under -race
// with the race detector too, so that the goroutines of the binary's signal
// handling, shutdown and servers are checked as the tests in the process are.
func yutenvBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yutbin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "yutenv")
		args := []string{"build", "-o", binPath}
		if israce.Enabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	require.NoError(t, binErr, binPath)
	return binPath
}

// yutenvCommand is the command that runs the real binary with args. Under
// -race its race runtime does not sleep the second it sleeps by default at
// exit (for late reports), which the exit deadlines of the tests would count.
func yutenvCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(yutenvBinary(t), args...)
	if israce.Enabled {
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	}
	return cmd
}

// startServeBinary runs "yutenv serve" on a Unix socket with args and
// returns the process and the socket address once it is ready.
func startServeBinary(t *testing.T, args ...string) (*exec.Cmd, string, *serveBuffer) {
	t.Helper()
	cmd := yutenvCommand(t, append([]string{"serve", "--listen", "unix:" + serveSock(t), "--log-level", "info"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr serveBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "no ready line; stderr: %s", stderr.String())
	var ready map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &ready))
	return cmd, ready["listening"].(string), &stderr
}

// startLongAnalyse connects and sends an analyse of many seconds of search
// (4,000 states of mcts:2000, within the default budget: 8 s or more on
// two cores); the reply is never read.
func startLongAnalyse(t *testing.T, addr string) {
	t.Helper()
	c, err := client.Dial(addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Hello("")
	require.NoError(t, err)
	res, err := c.Call("game", nil)
	require.NoError(t, err)
	var packed []byte
	for seed := uint64(0); len(packed) < 4000*env.PackedSize; seed++ {
		s, err := env.New(env.Standard(), seed, env.AnySeat)
		require.NoError(t, err)
		s.Advance()
		if s.Phase() == env.PhaseMove && s.NumLegalActions() > 1 {
			packed = s.AppendPacked(packed)
		}
	}
	body, err := msgpack.Marshal(map[string]any{"id": 9, "method": "analyse",
		"params": map[string]any{"game": res["game"], "states": packed, "agent": "mcts:2000"}})
	require.NoError(t, err)
	require.NoError(t, c.WriteFrame(body))
	time.Sleep(300 * time.Millisecond) // searching
}

// waitExit waits at most d for cmd to exit and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration, log fmt.Stringer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("yutenv serve did not exit within %v; log:\n%s", d, log)
		return -1
	}
}

// TestServeBinaryShutdownEnds: with a request in flight that would search
// for many seconds, SIGTERM ends the real binary within --shutdown-timeout
// (the request is cancelled at the deadline), and a second signal exits at
// once even with a long --shutdown-timeout.
func TestServeBinaryShutdownEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cases := []struct {
		name    string
		timeout string
		signals int
		within  time.Duration
		code    int
	}{
		{"SIGTERM cancels at the shutdown timeout", "500ms", 1, 5 * time.Second, 0},
		{"a second SIGTERM exits at once", "60s", 2, 5 * time.Second, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, addr, stderr := startServeBinary(t, "--shutdown-timeout", tc.timeout)
			startLongAnalyse(t, addr)
			start := time.Now()
			for range tc.signals {
				require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
				time.Sleep(100 * time.Millisecond)
			}
			code := waitExit(t, cmd, tc.within, stderr)
			assert.Equal(t, tc.code, code)
			assert.Less(t, time.Since(start), tc.within)
			t.Logf("exited after %v; log:\n%s", time.Since(start), stderr)
			_, err := os.Stat(strings.TrimPrefix(addr, "unix:"))
			if tc.signals == 1 {
				assert.ErrorIs(t, err, os.ErrNotExist, "a finished shutdown removes the socket file")
			}
		})
	}
}
