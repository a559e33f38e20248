package server

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/internal/msgp"
)

// outRefusedText is the one answer to a selfplay_new whose out the server may not write.
func outRefusedText(name string) string {
	return fmt.Sprintf("selfplay_new: params.out: refused: %q is not a path this server may write (it writes only inside its --out-dir folders)", name)
}

// selfplayNewFrame asks for a run writing to out, as the raw frame a client sends.
func selfplayNewFrame(out string) []byte {
	params := selfplayParams(out)
	p := msgp.Obj{}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		p = append(p, msgp.KV{K: k, V: params[k]})
	}
	return msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "selfplay_new"}, {"params", p}})
}

// rawAnswer sends body and returns the answer's bytes as they came.
func rawAnswer(t *testing.T, c *client.Client, body []byte) []byte {
	t.Helper()
	require.NoError(t, c.WriteFrame(body))
	b, err := c.ReadFrame()
	require.NoError(t, err)
	return append([]byte(nil), b...)
}

// TestOutOutsideTheFoldersIsRefusedAlike is the hostile client of
// selfplay_new's out: absolute paths elsewhere, "..", symbolic links out of
// the folder, and each name whether it is an existing file, an existing
// folder or absent. Every one gets the same answer, byte for byte, for
// the same name; nothing is created outside the folder. Before the
// policy, the server created /tmp/x/y/z on request and its three errors
// told a file, a folder and an absent path apart.
func TestOutOutsideTheFoldersIsRefusedAlike(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			allowed, outside := t.TempDir(), t.TempDir()
			ts := startServer(t, network, Config{OutDirs: []string{allowed}})
			c := ts.client(t)
			require.NoError(t, os.Symlink(outside, filepath.Join(allowed, "out-link")))
			rel, err := filepath.Rel(allowed, filepath.Join(outside, "target"))
			require.NoError(t, err)
			names := []string{
				filepath.Join(outside, "target"),                       // absolute, elsewhere
				filepath.Join(outside, "target", "x", "y", "z"),        // a deep path to create
				allowed + "/../" + filepath.Base(outside) + "/target",  // ".." out of the folder
				allowed + "/sub/../sub",                                // ".." even inside
				rel,                                                    // relative, out by ".."
				filepath.Join(allowed, "out-link", "target"),           // through a link out
				filepath.Join(allowed, "out-link", "target", "x", "y"), // through it, deeper
				"out-link/target",                                      // relative, through it
			}
			target := filepath.Join(outside, "target")
			states := []struct {
				name string
				make func(t *testing.T)
			}{
				{"absent", func(t *testing.T) { require.NoError(t, os.RemoveAll(target)) }},
				{"a file", func(t *testing.T) { require.NoError(t, os.WriteFile(target, []byte("x"), 0o644)) }},
				{"an empty folder", func(t *testing.T) {
					require.NoError(t, os.RemoveAll(target))
					require.NoError(t, os.Mkdir(target, 0o755))
				}},
			}
			for _, name := range names {
				t.Run(name, func(t *testing.T) {
					var first []byte
					for _, st := range states {
						st.make(t)
						got := rawAnswer(t, c, selfplayNewFrame(name))
						if first == nil {
							first = got
							m, err := c.DecodeResponse(got)
							require.Error(t, err, "refused when %s: %s", st.name, m)
							assert.Equal(t, "bad_request: "+outRefusedText(name), err.Error())
							continue
						}
						assert.Equal(t, first, got, "the same bytes when the path is %s", st.name)
					}
					require.NoError(t, os.RemoveAll(target))
					entries, err := os.ReadDir(outside)
					require.NoError(t, err)
					assert.Empty(t, entries, "nothing was written outside the folder")
				})
			}
		})
	}
}

// TestOutWithoutOutDirIsRefused: a server without --out-dir refuses every
// write a client asks for, with the same message.
func TestOutWithoutOutDirIsRefused(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	deep := filepath.Join(t.TempDir(), "x", "y", "z")
	for _, name := range []string{filepath.Join(t.TempDir(), "sp"), "sp", deep} {
		_, err := c.Call("selfplay_new", selfplayParams(name))
		assert.Equal(t, "bad_request: "+outRefusedText(name), fmt.Sprint(err))
	}
	_, err := os.Stat(filepath.Dir(filepath.Dir(deep)))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing was created")
}

// TestOutInsideTheFoldersIsWritten: a path inside an --out-dir folder,
// absolute, relative (to the first folder) or through a symbolic link that
// stays inside, is where the run writes its dataset.
func TestOutInsideTheFoldersIsWritten(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	real := func(p string) string { r, err := filepath.EvalSymlinks(p); require.NoError(t, err); return r }
	require.NoError(t, os.Mkdir(filepath.Join(second, "runs"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(second, "runs"), filepath.Join(second, "in-link")))
	ts := startServer(t, "unix", Config{OutDirs: []string{first, second}})
	c := ts.client(t)
	tests := []struct{ name, out, where string }{
		{"absolute", filepath.Join(first, "a", "b"), filepath.Join(real(first), "a", "b")},
		{"relative", "rel/sp", filepath.Join(real(first), "rel", "sp")},
		{"second folder", filepath.Join(second, "sp"), filepath.Join(real(second), "sp")},
		{"link inside", filepath.Join(second, "in-link", "sp"), filepath.Join(real(second), "runs", "sp")},
		{"dot", first + "/./dot", filepath.Join(real(first), "dot")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Call("selfplay_new", selfplayParams(tt.out))
			require.NoError(t, err)
			assert.Equal(t, tt.where, res["out"], "the result names where the run writes")
			_, err = os.Stat(filepath.Join(tt.where, "manifest.json"))
			assert.NoError(t, err)
			_, err = c.Call("selfplay_close", map[string]any{"id": res["id"]})
			require.NoError(t, err)
		})
	}
}
