package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/internal/israce"
)

// nodes makes a FIFO and, as root, a character device with the null
// device's numbers, both under the test's folder (never the machine's
// /dev/null), and returns them by name.
func nodes(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{"fifo": filepath.Join(dir, "fifo")}
	require.NoError(t, syscall.Mkfifo(out["fifo"], 0o644))
	if os.Geteuid() == 0 {
		out["device"] = filepath.Join(dir, "null")
		require.NoError(t, syscall.Mknod(out["device"], syscall.S_IFCHR|0o666, 1<<8|3))
	} else {
		t.Log("not root: the device cases are left out (mknod needs root)")
	}
	return out
}

// TestCLIRefusesFilesThatAreNotRegular: every file a command reads is
// opened without blocking and must be a regular file (a FIFO hung these
// commands; a manifest linked to /dev/zero read until memory ran out),
// and every file a command writes atomically is refused when it exists
// and is not a regular file (the rename would have replaced a device
// node). Each refusal is one line naming the file, and the node is left
// as it was.
func TestCLIRefusesFilesThatAreNotRegular(t *testing.T) {
	if israce.Enabled {
		t.Skip("error exits of child processes, not goroutines; the run without -race checks them")
	}
	n := nodes(t)
	fifo := n["fifo"]
	zeroDS := t.TempDir() // a dataset whose manifest is endless
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(zeroDS, dataset.ManifestName)))
	fifoDS := t.TempDir() // a dataset whose manifest is a FIFO
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifoDS, dataset.ManifestName), 0o644))
	type tc struct {
		name, file string
		args       []string
	}
	cases := []tc{
		{"grade --records fifo", fifo, []string{"grade", "--records", fifo, "--reference", "mc:2"}},
		{"grade --dataset fifo manifest", filepath.Join(fifoDS, dataset.ManifestName), []string{"grade", "--dataset", fifoDS, "--reference", "mc:2"}},
		{"grade --dataset /dev/zero manifest", filepath.Join(zeroDS, dataset.ManifestName), []string{"grade", "--dataset", zeroDS, "--reference", "mc:2"}},
		{"optimal fifo", fifo, []string{"eval", "--a", "optimal:" + fifo, "--b", "random", "--games", "2", "--quiet"}},
		{"replay fifo", fifo, []string{"replay", fifo}},
		{"serve --token-file fifo", fifo, []string{"serve", "--listen", "unix:" + filepath.Join(t.TempDir(), "s"), "--token-file", fifo}},
	}
	for kind, node := range n {
		cases = append(cases,
			tc{"solve --out " + kind, node, []string{"solve", "--rules", "board=line,spaces=4,pieces=1", "--out", node}},
			tc{"ladder --json " + kind, node, []string{"ladder", "--quiet", "--agents", "random;greedy", "--games", "2", "--state", "", "--json", node}},
			tc{"ladder --png " + kind, node, []string{"ladder", "--quiet", "--agents", "random;greedy", "--games", "2", "--state", "", "--png", node}},
			tc{"grade --png " + kind, node, []string{"grade", "--agent", "random", "--reference", "mc:2", "--games", "1", "--png", node}},
			tc{"net --out " + kind, node, []string{"net", "az", "--out", node}},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, err := os.Lstat(c.file)
			require.NoError(t, err)
			code, out, errs := runCLI(t, c.args...)
			assert.Equal(t, 1, code, errs)
			assert.Empty(t, out, "refused before any work")
			assert.Contains(t, errs, c.file, "the error names the file")
			assert.Contains(t, errs, "not a regular file")
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "one line: %q", errs)
			after, err := os.Lstat(c.file)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "left as it was")
		})
	}
}
