package confine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWritesPath holds the write policy to its rules on a real folder: what
// it allows resolves inside it; everything else gets the one message.
func TestWritesPath(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "in")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "missing"), filepath.Join(dir, "dangling")))
	w, err := NewWrites("--out-dir", dir)
	require.NoError(t, err)
	tests := []struct {
		name, path, want string // want "" means refused
	}{
		{"the folder", dir, real},
		{"new inside", filepath.Join(dir, "a", "b"), filepath.Join(real, "a", "b")},
		{"relative", "a/b", filepath.Join(real, "a", "b")},
		{"link inside", filepath.Join(dir, "in", "x"), filepath.Join(real, "sub", "x")},
		{"dots", dir + "/./sub//x/.", filepath.Join(real, "sub", "x")},
		{"link out", filepath.Join(dir, "out", "x"), ""},
		{"dangling link out", filepath.Join(dir, "dangling", "x"), ""},
		{"dot-dot inside", filepath.Join(dir, "sub") + "/../sub", ""},
		{"dot-dot out", dir + "/../x", ""},
		{"relative dot-dot", "../x", ""},
		{"through a file", filepath.Join(dir, "file", "x"), ""},
		{"elsewhere", filepath.Join(outside, "x"), ""},
		{"root", "/", ""},
		{"empty", "", ""},
		{"nul", dir + "/a\x00b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.Path(tt.path)
			if tt.want == "" {
				assert.ErrorIs(t, err, ErrRefused)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	none, err := NewWrites("--out-dir")
	require.NoError(t, err)
	_, err = none.Path(filepath.Join(dir, "a"))
	assert.ErrorIs(t, err, ErrRefused, "no folder: nothing may be written")
	_, err = NewWrites("--out-dir", filepath.Join(dir, "file"))
	assert.ErrorContains(t, err, "is not a directory")
}
