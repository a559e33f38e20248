package solve

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		got, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
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
	full, err := Solve(mustRules(t, spec), Options{listSureWins: true})
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
