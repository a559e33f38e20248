package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/protocol"
)

// serveRun runs "yutenv serve args" in the background with a stdin pipe and a
// signal channel of its own; it returns the ready line's fields, the stdin
// writer, the signal channel and the exit code channel.
func serveRun(t *testing.T, args ...string) (map[string]any, io.WriteCloser, chan os.Signal, chan int, *serveBuffer) {
	t.Helper()
	inR, inW := io.Pipe()
	sigs := make(chan os.Signal, 2)
	oldIn, oldSig := serveStdin, serveSignals
	serveStdin = inR
	serveSignals = func() (<-chan os.Signal, func()) { return sigs, func() {} }
	t.Cleanup(func() { serveStdin, serveSignals = oldIn, oldSig })
	outR, outW := io.Pipe()
	var stderr serveBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(append([]string{"serve"}, args...), outW, &stderr)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v; stderr: %s", err, stderr.String())
	}
	go io.Copy(io.Discard, outR)
	var ready map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &ready), "ready line %q", line)
	return ready, inW, sigs, code, &stderr
}

// serveBuffer is a bytes.Buffer safe for the server's log writes and the
// test's reads at once.
type serveBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *serveBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *serveBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveSock returns a short Unix socket path.
func serveSock(t *testing.T) string {
	dir, err := os.MkdirTemp("", "yuts")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

func serveWait(t *testing.T, code chan int) int {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not exit")
		return -1
	}
}

func TestServeStdinEOF(t *testing.T) {
	sock := serveSock(t)
	ready, stdin, _, code, _ := serveRun(t, "--listen", "unix:"+sock, "--exit-on-stdin-eof")
	assert.Equal(t, "unix:"+sock, ready["listening"])
	assert.EqualValues(t, protocol.Version, ready["protocol"])
	assert.Equal(t, Version, ready["version"])
	assert.EqualValues(t, os.Getpid(), ready["pid"])
	c, err := client.Dial(ready["listening"].(string), time.Second)
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Hello("")
	require.NoError(t, err)
	assert.Equal(t, "yutenv "+Version, res["server"])
	stdin.Close()
	assert.Equal(t, 0, serveWait(t, code))
	_, err = os.Stat(sock)
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket file is removed")
}

// TestServeRemoveSocketDir: with --remove-socket-dir the server removes
// its socket's folder when it exits (the Python package's private folder,
// which a parent killed with -9 cannot remove), but only an empty one.
func TestServeRemoveSocketDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other bool // another file in the folder
	}{{"empty folder removed", false}, {"other files kept", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "yuts")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(dir) })
			if tc.other {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o600))
			}
			sock := filepath.Join(dir, "s.sock")
			_, stdin, _, code, _ := serveRun(t, "--listen", "unix:"+sock, "--exit-on-stdin-eof", "--remove-socket-dir")
			stdin.Close()
			require.Equal(t, 0, serveWait(t, code))
			_, err = os.Stat(sock)
			assert.ErrorIs(t, err, os.ErrNotExist, "the socket file is removed")
			_, err = os.Stat(dir)
			if tc.other {
				assert.NoError(t, err, "a folder holding other files is left")
			} else {
				assert.ErrorIs(t, err, os.ErrNotExist, "the folder is removed")
			}
		})
	}
}

func TestServeSignalAndToken(t *testing.T) {
	tokFile := filepath.Join(t.TempDir(), "tok")
	require.NoError(t, os.WriteFile(tokFile, []byte("  hunter2\n"), 0o600))
	ready, _, sigs, code, stderr := serveRun(t, "--listen", "0.0.0.0:0", "--token-file", tokFile, "--log-level", "info", "--log-format", "json")
	_, port, err := net.SplitHostPort(ready["listening"].(string))
	require.NoError(t, err)
	addr := "127.0.0.1:" + port
	c, err := client.Dial(addr, time.Second)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Hello("")
	var se *protocol.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, protocol.CodeUnauthorized, se.Code)
	c2, err := client.Dial(addr, time.Second)
	require.NoError(t, err)
	defer c2.Close()
	_, err = c2.Hello("hunter2")
	require.NoError(t, err, "the token file's content, trimmed")
	sigs <- syscall.SIGTERM
	assert.Equal(t, 0, serveWait(t, code))
	assert.Contains(t, stderr.String(), `"msg":"shutting down"`)
	assert.Contains(t, stderr.String(), `"reason":"terminated"`)
}

func TestServeFlagErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"public without token", []string{"--listen", "0.0.0.0:0"}, "requires --token or --token-file"},
		{"token and file", []string{"--token", "a", "--token-file", empty}, "not both"},
		{"empty token file", []string{"--token-file", empty}, "is empty"},
		{"missing token file", []string{"--token-file", "/nonexistent/tok"}, "--token-file"},
		{"log level", []string{"--log-level", "loud"}, "--log-level"},
		{"log format", []string{"--log-format", "xml"}, "--log-format"},
		{"bad listen", []string{"--listen", "nowhere"}, "neither host:port nor unix:/path"},
		{"zero conns", []string{"--max-conns", "0"}, "at least 1"},
		{"zero handshakes", []string{"--max-handshakes", "0"}, "at least 1"},
		{"negative handshake timeout", []string{"--handshake-timeout", "-1s"}, "must not be negative"},
		{"small frame", []string{"--max-frame", "10", "--listen", "127.0.0.1:0"}, "max frame"},
		{"zero analyse workers", []string{"--analyse-workers", "0"}, "--analyse-workers"},
		{"zero selfplay bytes", []string{"--max-selfplay-bytes", "0"}, "--max-selfplay-bytes"},
		{"zero analyse sims", []string{"--max-analyse-sims", "0"}, "--max-analyse-sims"},
		{"extra argument", []string{"now"}, "unexpected arguments"},
		{"unknown flag", []string{"--port", "1"}, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"serve"}, tt.args...), &stdout, &stderr)
			assert.NotEqual(t, 0, code)
			assert.Contains(t, stderr.String(), tt.want)
			assert.Empty(t, stdout.String(), "no ready line")
		})
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run([]string{"serve", "--help"}, &stdout, &stderr))
	assert.True(t, strings.Contains(stdout.String(), "--exit-on-stdin-eof"))
	assert.True(t, strings.Contains(stdout.String(), "--handshake-timeout"))
}

// TestServeHandshakeFlags checks --handshake-timeout and --max-conns reach
// the server: hello reports them, and a connection that never says hello
// is told handshake_required and closed.
func TestServeHandshakeFlags(t *testing.T) {
	sock := serveSock(t)
	ready, stdin, _, code, _ := serveRun(t, "--listen", "unix:"+sock, "--exit-on-stdin-eof",
		"--handshake-timeout", "300ms", "--max-handshakes", "2", "--max-conns", "3",
		"--max-analyse-sims", "5000", "--analyse-workers", "1", "--max-selfplay-bytes", "1000000")
	c, err := client.Dial(ready["listening"].(string), time.Second)
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Hello("")
	require.NoError(t, err)
	lim := res["limits"].(map[string]any)
	assert.EqualValues(t, 0.3, lim["handshake_timeout_s"])
	assert.EqualValues(t, 3, lim["max_conns"])
	assert.EqualValues(t, 5000, lim["max_analyse_sims"])
	assert.EqualValues(t, 1, lim["analyse_workers"])
	assert.EqualValues(t, 1000000, lim["max_selfplay_bytes"])

	silent, err := client.Dial(ready["listening"].(string), time.Second)
	require.NoError(t, err)
	defer silent.Close()
	require.NoError(t, silent.Conn().SetDeadline(time.Now().Add(5*time.Second)))
	body, err := silent.ReadFrame()
	require.NoError(t, err)
	assert.Contains(t, string(body), "handshake_required")
	_, err = silent.ReadFrame()
	assert.ErrorIs(t, err, io.EOF, "then closed")

	_, err = c.Call("ping", nil)
	assert.NoError(t, err, "the client that said hello is not bound by the deadline")
	stdin.Close()
	assert.Equal(t, 0, serveWait(t, code))
}

// TestServeNetDirs: serve's clients may name networks from --net-dir
// folders and from nets/ next to the binary, and nothing else; a
// --net-dir that is not a folder stops serve at start-up.
func TestServeNetDirs(t *testing.T) {
	bin := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(bin, "nets"), 0o755))
	tiny, err := os.ReadFile(filepath.Join("..", "..", "nnet", "testdata", "go-tiny.ynet"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "nets", "shipped.ynet"), tiny, 0o644))
	mine := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(mine, "mine.ynet"), tiny, 0o644))
	old := serveExecutable
	serveExecutable = func() (string, error) { return filepath.Join(bin, "yutenv"), nil }
	t.Cleanup(func() { serveExecutable = old })
	require.NoError(t, os.WriteFile(filepath.Join(bin, "yutenv"), nil, 0o755))

	ready, stdin, _, code, _ := serveRun(t, "--listen", "unix:"+serveSock(t), "--exit-on-stdin-eof", "--net-dir", mine)
	c, err := client.Dial(ready["listening"].(string), time.Second)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Hello("")
	require.NoError(t, err)
	for _, tc := range []struct {
		spec string
		code protocol.Code
	}{
		{"net:shipped.ynet", ""},
		{"net:mine.ynet", ""},
		{"net:" + filepath.Join(mine, "mine.ynet"), ""},
		{"net:../../nnet/testdata/go-tiny.ynet", protocol.CodeBadNet},
	} {
		_, err := c.Call("make", map[string]any{"n": 1, "opponent": tc.spec})
		if tc.code == "" {
			assert.NoError(t, err, tc.spec)
			continue
		}
		var se *protocol.Error
		require.ErrorAs(t, err, &se, tc.spec)
		assert.Equal(t, tc.code, se.Code, tc.spec)
	}
	stdin.Close()
	assert.Equal(t, 0, serveWait(t, code))

	code2, _, errs := runCmd(t, "serve", "--listen", "unix:"+serveSock(t), "--net-dir", filepath.Join(mine, "mine.ynet"))
	assert.Equal(t, 1, code2)
	assert.Contains(t, errs, "is not a directory")
}

// TestServeOutDirs: serve's clients may make it write only inside its
// --out-dir folders; without one, nowhere. An --out-dir that is not a
// folder stops serve at start-up.
func TestServeOutDirs(t *testing.T) {
	mine := t.TempDir()
	params := func(out string) map[string]any {
		return map[string]any{"sims": 2, "games": 1, "games_in_flight": 1, "out": out}
	}
	for _, tc := range []struct {
		name   string
		args   []string
		out    string
		refuse bool
	}{
		{"inside", []string{"--out-dir", mine}, filepath.Join(mine, "sp"), false},
		{"outside", []string{"--out-dir", mine}, filepath.Join(t.TempDir(), "sp"), true},
		{"no --out-dir", nil, filepath.Join(mine, "other"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready, stdin, _, code, _ := serveRun(t, append([]string{"--listen", "unix:" + serveSock(t), "--exit-on-stdin-eof"}, tc.args...)...)
			c, err := client.Dial(ready["listening"].(string), time.Second)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Hello("")
			require.NoError(t, err)
			_, err = c.Call("selfplay_new", params(tc.out))
			if tc.refuse {
				assert.ErrorContains(t, err, "is not a path this server may write (it writes only inside its --out-dir folders)")
				_, serr := os.Stat(tc.out)
				assert.ErrorIs(t, serr, os.ErrNotExist)
			} else {
				assert.NoError(t, err)
			}
			stdin.Close()
			assert.Equal(t, 0, serveWait(t, code))
		})
	}
	code, _, errs := runCmd(t, "serve", "--listen", "unix:"+serveSock(t), "--out-dir", filepath.Join(mine, "missing"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "--out-dir")
}

// TestServeFlagsAreDocumented: the flags serve's help lists and the rows
// of docs/PROTOCOL.md's flag table are the same set.
func TestServeFlagsAreDocumented(t *testing.T) {
	code, help, _ := runCmd(t, "serve", "--help")
	require.Equal(t, 0, code, help)
	flag := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`)
	var inHelp []string
	for _, m := range flag.FindAllStringSubmatch(help, -1) {
		if m[1] != "help" {
			inHelp = append(inHelp, m[1])
		}
	}
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "PROTOCOL.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)` \\|")
	var inDocs []string
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		inDocs = append(inDocs, m[1])
	}
	require.NotEmpty(t, inHelp)
	assert.ElementsMatch(t, inHelp, inDocs, "serve --help and docs/PROTOCOL.md's flag table")
}
