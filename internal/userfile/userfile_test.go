package userfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// special makes, under dir, one of each kind of file that is not regular
// and returns them by name. The character device (the null device's
// numbers, made under dir, never the machine's /dev/null) needs root: it
// is left out otherwise.
func special(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	out["fifo"] = fifo
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	out["directory"] = sub
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	out["socket"] = sock
	if os.Geteuid() == 0 {
		dev := filepath.Join(dir, "null")
		require.NoError(t, syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3))
		out["device"] = dev
	}
	link := filepath.Join(dir, "link-to-fifo")
	require.NoError(t, os.Symlink(fifo, link))
	out["link to a fifo"] = link
	return out
}

func TestOpenRefusesWhatIsNotRegularWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	for name, path := range special(t, dir) {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ReadFile(path, 1<<20); done <- err }()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrNotRegular), "%v", err)
				assert.Contains(t, err.Error(), path)
				assert.NotContains(t, err.Error(), "\n")
			case <-time.After(time.Minute): // a blocking open would never return
				t.Fatal("ReadFile blocked")
			}
		})
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the device case is left out (mknod needs root)")
	}
}

func TestAppend(t *testing.T) {
	dir := t.TempDir()
	for name, path := range special(t, dir) {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				f, err := Append(path)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, ErrNotRegular)
				assert.Contains(t, err.Error(), path)
			case <-time.After(time.Minute): // a FIFO with no reader would block a plain open
				t.Fatal("Append blocked")
			}
		})
	}
	t.Run("regular", func(t *testing.T) {
		p := filepath.Join(dir, "log")
		for _, s := range []string{"a", "b"} {
			f, err := Append(p)
			require.NoError(t, err)
			_, err = f.WriteString(s)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, "ab", string(b))
	})
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, []byte("hello"), 0o644))
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30)) // 1 GiB, nothing on disk
	require.NoError(t, f.Close())
	for _, tc := range []struct {
		name, path string
		limit      int64
		want       string
		err        error
	}{
		{"within the limit", small, 5, "hello", nil},
		{"over the limit", small, 4, "", ErrTooLarge},
		{"sparse and huge", sparse, 1 << 20, "", ErrTooLarge},
		{"missing", filepath.Join(dir, "none"), 10, "", fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadFile(tc.path, tc.limit)
			if tc.err != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tc.err)
				assert.Contains(t, err.Error(), tc.path)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
		})
	}
}

func TestWriteAtomicRefusesWhatIsNotRegular(t *testing.T) {
	dir := t.TempDir()
	cases := special(t, dir)
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nothing"), dangling))
	cases["dangling link"] = dangling
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			before, err := os.Lstat(path)
			require.NoError(t, err)
			wrote := false
			err = WriteAtomic(path, func(w io.Writer) error { wrote = true; _, err := w.Write([]byte("x")); return err })
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrNotRegular)
			assert.Contains(t, err.Error(), path)
			assert.False(t, wrote, "refused before anything was written")
			after, err := os.Lstat(path)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "left as it was")
		})
	}
	left, err := filepath.Glob(filepath.Join(dir, "*"+TmpSuffix))
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	t.Run("new file", func(t *testing.T) {
		p := filepath.Join(dir, "new")
		require.NoError(t, WriteAtomic(p, write("one")))
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, "one", string(b))
	})
	t.Run("replaces a regular file", func(t *testing.T) {
		p := filepath.Join(dir, "old")
		require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
		require.NoError(t, WriteAtomic(p, write("new")))
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, "new", string(b))
	})
	t.Run("writes through a link to a regular file", func(t *testing.T) {
		real := filepath.Join(dir, "real")
		require.NoError(t, os.WriteFile(real, []byte("old"), 0o644))
		link := filepath.Join(dir, "link")
		require.NoError(t, os.Symlink("real", link))
		require.NoError(t, WriteAtomic(link, write("through")))
		st, err := os.Lstat(link)
		require.NoError(t, err)
		assert.True(t, st.Mode()&fs.ModeSymlink != 0, "the link is kept")
		b, err := os.ReadFile(real)
		require.NoError(t, err)
		assert.Equal(t, "through", string(b))
	})
	t.Run("a failed write leaves the old file", func(t *testing.T) {
		p := filepath.Join(dir, "kept")
		require.NoError(t, os.WriteFile(p, []byte("kept"), 0o644))
		err := WriteAtomic(p, func(io.Writer) error { return errors.New("boom") })
		require.EqualError(t, err, "boom")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, "kept", string(b))
	})
	t.Run("a target made special meanwhile is refused at commit", func(t *testing.T) {
		p := filepath.Join(dir, "late")
		f, err := CreateAtomic(p)
		require.NoError(t, err)
		defer f.Abort()
		require.NoError(t, syscall.Mkfifo(p, 0o644))
		err = f.Commit()
		assert.ErrorIs(t, err, ErrNotRegular)
		st, err := os.Lstat(p)
		require.NoError(t, err)
		assert.True(t, st.Mode()&fs.ModeNamedPipe != 0)
	})
	left, err := filepath.Glob(filepath.Join(dir, ".*"+TmpSuffix))
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestKindNamesEveryType(t *testing.T) {
	for _, m := range []fs.FileMode{0, fs.ModeDir, fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice | fs.ModeCharDevice, fs.ModeDevice, fs.ModeSymlink} {
		assert.True(t, strings.HasPrefix(Kind(m), "a "), "%v: %s", m, Kind(m))
	}
}
