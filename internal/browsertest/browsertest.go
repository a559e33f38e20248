// Package browsertest starts headless Chromium for tests: the replay
// viewer's and the play page's (cmd/yutenv) and the documentation site's
// (internal/docsite). Tests only; the binary does not import it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Chromium returns the path of a Chromium binary, or skips the test when
// there is none (fails instead when YUTENV_REQUIRE_TOOLS=1, as in CI).
// YUTENV_CHROMIUM names a binary explicitly.
func Chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("YUTENV_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium binary on PATH: install one with scripts/install-test-tools.sh (Debian's chromium package)"
	if os.Getenv("YUTENV_REQUIRE_TOOLS") == "1" {
		t.Fatal(msg + "; YUTENV_REQUIRE_TOOLS=1 makes this a failure")
	}
	t.Skip(msg + "; set YUTENV_REQUIRE_TOOLS=1 to fail instead of skipping")
	return ""
}

// TempDir returns a TMPDIR for a Chromium of the test, removed when the
// test ends: Chromium makes its singleton socket's folder there, which a
// killed browser leaves behind. Short, under the system's temporary folder:
// the socket's path must fit in 107 bytes.
func TempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ych")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Browser starts headless Chromium (bin) with a fresh profile for the test
// and returns its context, which ends 90 s from now at the latest.
func Browser(t *testing.T, bin string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Env("TMPDIR="+TempDir(t)),
		chromedp.WindowSize(1280, 860), chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-proxy-server", true), chromedp.Flag("mute-audio", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}
