//go:build unix

package main

import (
	"bufio"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/israce"
)

// TestPageCommandsCtrlC runs the real binary of each page command, holds a
// connection open with a request half sent (as a slow or hostile client
// does), and presses Ctrl-C (SIGINT; SIGTERM alike): the command stops
// within the grace time and exits 0, as after any Ctrl-C.
func TestPageCommandsCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	record, _ := writeRecords(t, t.TempDir(), 1)
	tests := []struct {
		name string
		args []string
		sig  syscall.Signal
	}{
		{"play --web, SIGINT", []string{"play", "--web", "--agent", "random"}, syscall.SIGINT},
		{"play --web, SIGTERM", []string{"play", "--web", "--agent", "random"}, syscall.SIGTERM},
		{"view, SIGINT", []string{"view", record}, syscall.SIGINT},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if israce.Enabled && tc.sig == syscall.SIGTERM {
				t.Skip("the same signal.NotifyContext as SIGINT's, and two seconds of grace: SIGINT's run checks its goroutines under -race")
			}
			cmd := yutenvCommand(t, tc.args...)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			})
			lines := bufio.NewScanner(out)
			require.True(t, lines.Scan(), "no first line; stderr: %s", stderr.String())
			url := rePlayURL.FindString(lines.Text())
			require.NotEmpty(t, url, "no URL in %q", lines.Text())
			var rest syncBuffer
			go func() {
				for lines.Scan() {
					_, _ = rest.Write([]byte(lines.Text() + "\n"))
				}
			}()
			addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
			c := startSlowClient(t, addr, "POST /api/games HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{", "", time.Second)
			time.Sleep(100 * time.Millisecond) // the server has the request's headers

			start := time.Now()
			require.NoError(t, cmd.Process.Signal(tc.sig))
			limit := pageShutdownGrace + 2*time.Second
			code := waitExit(t, cmd, limit, &stderr)
			took := time.Since(start)
			t.Logf("exited %d after %v; stderr: %q", code, took, stderr.String())
			assert.Equal(t, 0, code, "Ctrl-C is not an error; stderr: %s", stderr.String())
			assert.Less(t, took, limit)
			assert.Empty(t, stderr.String())
			assert.Eventually(t, func() bool { return strings.Contains(rest.String(), "stopped") }, time.Second, 10*time.Millisecond, "the command says it stopped")
			select {
			case <-c.closed:
			case <-time.After(time.Second):
				t.Error("the slow client's connection is still open after the exit")
			}
		})
	}
}
