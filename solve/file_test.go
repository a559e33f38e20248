package solve

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/internal/userfile"
)

func tableBytes(t testing.TB, tb *Table) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, tb.Write(&buf))
	return buf.Bytes()
}

func TestSaveLoadRoundTrip(t *testing.T) {
	tb := mustSolve(t, "board=line,spaces=5,pieces=1", 3)
	path := filepath.Join(t.TempDir(), "t.ysolve")
	require.NoError(t, tb.Save(path))
	got, err := Load(path)
	require.NoError(t, err)
	assert.Equal(t, tb.Rules(), got.Rules())
	assert.Equal(t, tb.PoolCap, got.PoolCap)
	assert.Equal(t, tb.Iterations, got.Iterations)
	assert.Equal(t, math.Float64bits(tb.Residual), math.Float64bits(got.Residual))
	require.Equal(t, tb.keys, got.keys)
	require.Equal(t, len(tb.values), len(got.values))
	for i := range tb.values {
		require.Equal(t, math.Float64bits(tb.values[i]), math.Float64bits(got.values[i]), "value %d bit for bit", i)
	}
	assert.Equal(t, tb.Start(), got.Start())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, b, tableBytes(t, got), "a loaded table writes the same bytes")
}

func TestLoadRefusesDamage(t *testing.T) {
	tb := mustSolve(t, "kata,spaces=4,pieces=1", 0)
	good := tableBytes(t, tb)
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x10
		return b
	}
	version := bytes.Clone(good)
	binary.LittleEndian.PutUint32(version[len(Magic):], Version+1)
	tests := []struct {
		name string
		b    []byte
		err  error
		msg  string
	}{
		{"empty", nil, ErrCorrupt, "not a solved table"},
		{"wrong magic", append([]byte("YUTNOPE!"), good[8:]...), ErrCorrupt, "not a solved table"},
		{"other file", []byte("{\"json\": true}\n"), ErrCorrupt, "not a solved table"},
		{"newer version", version, ErrVersion, fmt.Sprintf("format version %d, this build reads 1 to %d", Version+1, Version)},
		{"version 0", withVersion(t, good, 0), ErrVersion, "format version 0"},
		{"truncated header", good[:20], ErrCorrupt, "truncated"},
		{"truncated payload", good[:len(good)-100], ErrCorrupt, "do not fit"},
		{"no checksum", good[:len(good)-4], ErrCorrupt, "do not fit"},
		{"padded", append(bytes.Clone(good), 0), ErrCorrupt, "do not fit"},
		{"flipped rules byte", flip(headerFixed + 1), ErrCorrupt, ""},
		{"flipped key byte", flip(len(good) - 40), ErrCorrupt, "checksum"},
		{"flipped value byte", flip(len(good) - 6), ErrCorrupt, "checksum"},
		{"flipped checksum", flip(len(good) - 1), ErrCorrupt, "checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.ysolve")
			require.NoError(t, os.WriteFile(path, tt.b, 0o644))
			_, err := Load(path)
			require.ErrorIs(t, err, tt.err)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Contains(t, err.Error(), path, "the error names the file")
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
	t.Run("every byte", func(t *testing.T) {
		for i := range good {
			_, err := Read(bytes.NewReader(flip(i)), int64(len(good)))
			require.Error(t, err, "byte %d flipped", i)
		}
	})
	t.Run("folder", func(t *testing.T) {
		_, err := Load(t.TempDir())
		require.ErrorIs(t, err, ErrCorrupt)
	})
	t.Run("missing", func(t *testing.T) {
		_, err := Load(filepath.Join(t.TempDir(), "none.ysolve"))
		require.ErrorIs(t, err, os.ErrNotExist)
		assert.Contains(t, err.Error(), "none.ysolve")
	})
}

// TestLoadSparseTable: a sparse file of 1 GiB (a few kB on disk) whose
// header fits its size is refused by its checksum, streamed before
// anything is allocated for its states: the load allocates kilobytes, not
// the 2 GiB its states would take.
func TestLoadSparseTable(t *testing.T) {
	if testing.Short() || israce.Enabled {
		t.Skip("reads 1 GiB of zeros (the run without -race checks it)")
	}
	good := tableBytes(t, mustSolve(t, "kata,spaces=4,pieces=1", 0))
	n := binary.LittleEndian.Uint32(good[len(Magic)+4:])
	head := headerFixed + int(n) + headerTail
	size := int64(head + trailer + 1<<30)
	hdr := bytes.Clone(good[:head])
	binary.LittleEndian.PutUint64(hdr[head-8:], 1<<30/16)
	path := filepath.Join(t.TempDir(), "sparse.ysolve")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = f.Write(hdr)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Load(path)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "checksum")
	assert.Contains(t, err.Error(), path)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated by the load")
}

// TestLoadRefusesWhatIsNotRegular: a FIFO (which would block a plain
// open) or a device is refused at once, naming the file.
func TestLoadRefusesWhatIsNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.ysolve")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	paths := []string{fifo}
	if os.Geteuid() == 0 { // the null device's numbers, under the test's folder
		dev := filepath.Join(dir, "null.ysolve")
		require.NoError(t, syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3))
		paths = append(paths, dev)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := Load(p); done <- err }()
			select {
			case err := <-done:
				require.ErrorIs(t, err, ErrCorrupt)
				require.ErrorIs(t, err, userfile.ErrNotRegular)
				assert.Contains(t, err.Error(), p)
			case <-time.After(time.Minute):
				t.Fatal("Load blocked")
			}
		})
	}
}

// TestSaveRefusesWhatIsNotRegular: a table is never written over a FIFO or
// a device (as root, replacing /dev/null); the node is left as it was.
func TestSaveRefusesWhatIsNotRegular(t *testing.T) {
	tb := mustSolve(t, "kata,spaces=4,pieces=1", 0)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.ysolve")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	paths := []string{fifo, dir}
	if os.Geteuid() == 0 {
		dev := filepath.Join(dir, "null.ysolve")
		require.NoError(t, syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3))
		paths = append(paths, dev)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			before, err := os.Lstat(p)
			require.NoError(t, err)
			err = tb.Save(p)
			require.ErrorIs(t, err, userfile.ErrNotRegular)
			assert.Contains(t, err.Error(), p)
			after, err := os.Lstat(p)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode())
		})
	}
}

func TestSaveUnwritable(t *testing.T) {
	tb := mustSolve(t, "kata,spaces=4,pieces=1", 0)
	err := tb.Save(filepath.Join(t.TempDir(), "no", "such", "dir", "t.ysolve"))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "save table"))
}

// FuzzRead checks that no input makes the loader panic, and that what it
// accepts is a table that writes back the same bytes.
func FuzzRead(f *testing.F) {
	tb := mustSolve(f, "kata,spaces=4,pieces=1", 0)
	good := tableBytes(f, tb)
	f.Add(good)
	f.Add(good[:40])
	f.Add([]byte(Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		verr := verify(bytes.NewReader(b), int64(len(b)))
		got, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		require.NoError(t, verr, "Load's first pass accepts what Read accepts")
		var out bytes.Buffer
		require.NoError(t, got.Write(&out))
		require.Equal(t, b, out.Bytes())
		for i := range min(got.Len(), 50) {
			_, _ = got.State(i)
		}
	})
}

// withVersion returns table bytes b with format version v and the checksum
// made again: a well-formed file of that version.
func withVersion(t testing.TB, b []byte, v uint32) []byte {
	t.Helper()
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[len(Magic):], v)
	n := len(b) - trailer
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], castagnoli))
	return b
}

// A version-1 table, which lists the sure wins, loads and answers every
// state as the version-2 table of the same variant does.
func TestLoadVersion1(t *testing.T) {
	spec := "board=line,spaces=6,pieces=2"
	full, err := Solve(envtest.Rules(t, spec), Options{listSureWins: true})
	require.NoError(t, err)
	lean := mustSolve(t, spec, 0)
	require.Greater(t, full.Len(), lean.Len())
	path := filepath.Join(t.TempDir(), "v1.ysolve")
	require.NoError(t, os.WriteFile(path, withVersion(t, tableBytes(t, full), 1), 0o644))
	old, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, full.Len(), old.Len())
	for i := range lean.Len() {
		s, err := lean.State(i)
		require.NoError(t, err)
		v, err := old.Value(&s)
		require.NoError(t, err)
		require.InDelta(t, lean.ValueAt(i), v, 1e-12)
	}
	assert.InDelta(t, lean.Start(), old.Start(), 1e-12)
}
