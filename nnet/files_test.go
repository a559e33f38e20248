package nnet

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// nested returns a msgpack value of depth nested one-element arrays.
func nested(depth int) []byte {
	return append(bytes.Repeat([]byte{0x91}, depth), 0xc0)
}

func TestCheckDepth(t *testing.T) {
	good, err := randomNet(3, 8).MarshalBinary()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"a net", good, true},
		{"depth 8", nested(MaxDepth), true},
		{"depth 9", nested(MaxDepth + 1), false},
		{"deep maps", append(bytes.Repeat([]byte{0x81, 0xa1, 'k'}, MaxDepth+1), 0xc0), false},
		{"10 million", nested(10_000_000), false},
		{"lying length", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, false},
		{"empty", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkDepth(tc.b)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestParseRefusesHugeWeights(t *testing.T) {
	for _, w := range []float32{3e38, -2e4, MaxWeight * 1.01} {
		n := randomNet(3, 8)
		n.Trunk[0].W[5] = w
		b, err := n.MarshalBinary()
		require.NoError(t, err)
		_, err = Parse(b)
		require.ErrorIs(t, err, ErrNet)
		assert.Contains(t, err.Error(), "above 10000 in magnitude")
	}
	n := randomNet(3, 8)
	n.Trunk[0].W[5] = -MaxWeight
	b, err := n.MarshalBinary()
	require.NoError(t, err)
	_, err = Parse(b)
	assert.NoError(t, err, "the bound itself is allowed")
}

// TestCacheEvictsLeastRecentlyUsed fills a cache of room for two nets with
// three: the one not used since is evicted, and a copy of a cached file is
// the same entry.
func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var size int64
	for i := range 3 {
		n := randomNet(uint64(10+i), 16)
		size = n.Bytes()
		b, err := n.MarshalBinary()
		require.NoError(t, err)
		p := filepath.Join(dir, string(rune('a'+i))+".ynet")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		paths = append(paths, p)
	}
	c := NewCache(2*size + size/2)
	load := func(p string) *Net {
		f, err := openFile(p)
		require.NoError(t, err)
		defer f.Close()
		n, err := c.load(f, MaxFileSize)
		require.NoError(t, err)
		return n
	}
	a, b := load(paths[0]), load(paths[1])
	assert.Same(t, a, load(paths[0]), "a is now the most recently used")
	load(paths[2]) // evicts b
	n, bytes := c.Stats()
	assert.Equal(t, 2, n)
	assert.Equal(t, 2*size, bytes)
	assert.Same(t, a, load(paths[0]))
	assert.NotSame(t, b, load(paths[1]), "b was evicted and read again")

	cp := filepath.Join(dir, "copy.ynet")
	raw, err := os.ReadFile(paths[1])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cp, raw, 0o644))
	assert.Same(t, load(paths[1]), load(cp), "same content, one entry")
}

func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, p := range []string{fifo, dir, "/dev/zero"} {
		_, err := LoadCached(p)
		require.ErrorIs(t, err, ErrNotRegular, p)
		_, err = Load(p)
		require.ErrorIs(t, err, ErrNotRegular, p)
	}
}

func TestNewDirs(t *testing.T) {
	_, err := NewDirs(0, filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = NewDirs(0, f)
	assert.Error(t, err)
	d, err := NewDirs(0)
	require.NoError(t, err)
	_, _, err = d.Load("testdata/tiny.ynet")
	assert.ErrorIs(t, err, ErrRefused, "no folder allows nothing")
	d, err = NewDirs(0, "testdata")
	require.NoError(t, err)
	_, _, err = d.Load("absent.ynet")
	assert.ErrorIs(t, err, ErrNoSuchNet, "inside the folder as written, and not there")
	_, _, err = d.Load("../absent.ynet")
	assert.ErrorIs(t, err, ErrRefused, "outside: refused like any other name")
	n, path, err := d.Load("tiny.ynet")
	require.NoError(t, err)
	assert.True(t, filepath.IsAbs(path))
	m, err := LoadCached(path)
	require.NoError(t, err)
	assert.Same(t, n, m, "the agent's load finds the policy's")
	small, err := NewDirs(16, "testdata")
	require.NoError(t, err)
	_, _, err = small.Load("tiny.ynet")
	assert.ErrorIs(t, err, ErrNet)
	assert.Contains(t, err.Error(), "above the limit of 16")
}

// TestEvaluateRefusesNonFiniteOutputs: an infinite value or logit is
// ErrNonFinite, never a NaN prior; the check allocates nothing.
func TestEvaluateRefusesNonFiniteOutputs(t *testing.T) {
	s, err := env.New(env.Standard(), 3, env.AnySeat)
	require.NoError(t, err)
	for s.Phase() != env.PhaseMove {
		_, err := s.SampleThrow()
		require.NoError(t, err)
	}
	priors := make([]float32, env.NumActions)
	good := NewEvaluator(randomNet(1, 16))
	_, err = good.Evaluate(&s, priors)
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = good.Evaluate(&s, priors) }), "Evaluate allocates nothing")
	for _, bad := range []func(n *Net){
		func(n *Net) { n.Value.B[0] = float32(math.Inf(1)) },
		func(n *Net) { // a NaN in every legal action's logit; only legal ones are checked
			for i := range n.Policy.B {
				n.Policy.B[i] = float32(math.NaN())
			}
		},
		func(n *Net) {
			for i := range n.Policy.B {
				n.Policy.B[i] = float32(math.Inf(-1))
			}
		},
	} {
		n := randomNet(1, 16)
		bad(n)
		_, err := NewEvaluator(n).Evaluate(&s, priors)
		require.ErrorIs(t, err, ErrNonFinite)
		require.ErrorIs(t, err, ErrNet)
	}
}
