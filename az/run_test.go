package az

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// answer is a deterministic evaluator of a batch: priors from the mask and
// the observation, value tanh of a weighted sum of the observation.
func answer(b *Batch, d int) (priors, values []float32) {
	priors = make([]float32, b.N*env.NumActions)
	values = make([]float32, b.N)
	for i := 0; i < b.N; i++ {
		x := b.Obs[i*d : (i+1)*d]
		s := 0.0
		for j, v := range x {
			s += float64(v) * float64(j%7-3)
		}
		values[i] = float32(math.Tanh(s / 10))
		for a := 0; a < env.NumActions; a++ {
			priors[i*env.NumActions+a] = float32(a%5+1) + x[a%d]
		}
	}
	return priors, values
}

func config(dir string) Config {
	return Config{Rules: env.Standard(), Tier: obs.Compact, Sims: 12, C: 1.5, DirichletAlpha: 0.3, DirichletFrac: 0.25,
		TempMoves: 4, Seed: 7, Games: 5, InFlight: 3, ShardGames: 2, Out: dir}
}

// drive runs r to the end with answer, checking every batch's shape.
func drive(t *testing.T, r *Run) (batches int) {
	t.Helper()
	var priors, values []float32
	for {
		b, err := r.Next(priors, values)
		require.NoError(t, err)
		if b.N == 0 {
			return batches
		}
		batches++
		require.LessOrEqual(t, b.N, r.Config().MaxBatch)
		require.Len(t, b.Obs, b.N*r.ObsSize())
		require.Len(t, b.Mask, b.N*env.NumActions)
		priors, values = answer(b, r.ObsSize())
	}
}

func shardHashes(t *testing.T, dir string) []string {
	var out []string
	for _, name := range []string{"shard-000000.npz", "shard-000001.npz", "shard-000002.npz", "shard-000002.records.jsonl"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		out = append(out, string(b))
	}
	return out
}

// sameShards keeps the first run's shard bytes and checks every later
// run's shards against them.
type sameShards struct{ first []string }

func (s *sameShards) check(t *testing.T, dir string, msgAndArgs ...any) {
	got := shardHashes(t, dir)
	if s.first == nil {
		s.first = got
		return
	}
	assert.Equal(t, s.first, got, msgAndArgs...)
}

// TestRunDeterministicWhateverTheBatching plays the same run with
// different batching and checks the shards are identical bytes.
func TestRunDeterministicWhateverTheBatching(t *testing.T) {
	var same sameShards
	for _, tc := range []struct{ inFlight, maxBatch int }{{3, 0}, {1, 0}, {5, 2}} {
		dir := t.TempDir()
		cfg := config(dir)
		cfg.InFlight, cfg.MaxBatch = tc.inFlight, tc.maxBatch
		r, err := Start(cfg)
		require.NoError(t, err)
		batches := drive(t, r)
		r.Close()
		sum := r.Summary()
		assert.True(t, sum.Done)
		assert.Equal(t, 5, sum.Games)
		assert.Positive(t, sum.Decisions)
		assert.Equal(t, int64(batches), sum.Batches)
		same.check(t, dir, "in flight %d, batch %d", tc.inFlight, tc.maxBatch)
	}
}

func TestRunErrors(t *testing.T) {
	start := func(t *testing.T, timeout time.Duration) (*Run, *Batch) {
		cfg := config(t.TempDir())
		cfg.EvalTimeout = timeout
		r, err := Start(cfg)
		require.NoError(t, err)
		t.Cleanup(r.Close)
		b, err := r.Next(nil, nil)
		require.NoError(t, err)
		require.Positive(t, b.N)
		return r, b
	}
	t.Run("shapes", func(t *testing.T) {
		r, b := start(t, 0)
		priors, values := answer(b, r.ObsSize())
		_, err := r.Next(priors[1:], values)
		assert.ErrorIs(t, err, ErrAnswer)
		assert.Contains(t, err.Error(), "priors: ")
		_, err = r.Next(priors, values[1:])
		assert.ErrorIs(t, err, ErrAnswer)
		_, err = r.Next(nil, nil)
		assert.ErrorIs(t, err, ErrAnswer)
		values[0] = float32(math.NaN())
		_, err = r.Next(priors, values)
		assert.ErrorIs(t, err, ErrAnswer)
		values[0] = 0
		b, err = r.Next(priors, values)
		require.NoError(t, err, "a refused answer leaves the batch pending")
		assert.Positive(t, b.N)
	})
	t.Run("timeout", func(t *testing.T) {
		r, b := start(t, 20*time.Millisecond)
		priors, values := answer(b, r.ObsSize())
		<-r.cancel // the client never answered in time
		_, err := r.Next(priors, values)
		assert.ErrorIs(t, err, ErrTimeout)
		_, err = r.Next(nil, nil)
		assert.ErrorIs(t, err, ErrTimeout, "the run stays failed")
	})
	t.Run("config", func(t *testing.T) {
		for _, f := range []func(c *Config){
			func(c *Config) { c.Sims = 0 },
			func(c *Config) { c.InFlight = 0 },
			func(c *Config) { c.Games = 0 },
			func(c *Config) { c.Out = "" },
			func(c *Config) { c.C = math.NaN() },
			func(c *Config) { c.FirstGame = 3 },
			func(c *Config) { c.FirstGame = -2 },
		} {
			cfg := config(t.TempDir())
			f(&cfg)
			_, err := Start(cfg)
			assert.ErrorIs(t, err, ErrConfig)
		}
	})
}

// TestRunDataset checks the dataset: visits, policies and values agree.
func TestRunDataset(t *testing.T) {
	dir := t.TempDir()
	r, err := Start(config(dir))
	require.NoError(t, err)
	drive(t, r)
	r.Close()
	m, err := dataset.Open(dir, dataset.Config{Rules: env.Standard(), Agents: []string{cfgSpec(), cfgSpec()},
		Space: mustSpace(t), Seed: 7, Visits: true}, 5)
	require.NoError(t, err)
	assert.True(t, m.Complete)
	assert.Equal(t, 5, m.Games)
	assert.Equal(t, dataset.VisitsArray, m.Arrays[len(m.Arrays)-1])
	// A resumed complete run has nothing to do.
	r, err = Start(config(dir))
	require.NoError(t, err)
	b, err := r.Next(nil, nil)
	require.NoError(t, err)
	assert.Zero(t, b.N)
	r.Close()
}

// TestRunFirstGame checks that the parts of a distributed run (FirstGame)
// hold the very shard files, under the very names, of one whole run.
func TestRunFirstGame(t *testing.T) {
	whole := t.TempDir()
	r, err := Start(config(whole))
	require.NoError(t, err)
	drive(t, r)
	r.Close()
	for _, tc := range []struct{ first, games int }{{0, 2}, {2, 3}, {4, 1}} {
		t.Run(fmt.Sprintf("first %d", tc.first), func(t *testing.T) {
			dir := t.TempDir()
			cfg := config(dir)
			cfg.FirstGame, cfg.Games = tc.first, tc.games
			r, err := Start(cfg)
			require.NoError(t, err)
			drive(t, r)
			r.Close()
			assert.Equal(t, tc.games, r.Summary().Games)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			shards := 0
			for _, e := range entries {
				if e.Name() == dataset.ManifestName {
					continue
				}
				shards++
				want, err := os.ReadFile(filepath.Join(whole, e.Name()))
				require.NoError(t, err, "%s is not a file of the whole run", e.Name())
				got, err := os.ReadFile(filepath.Join(dir, e.Name()))
				require.NoError(t, err)
				assert.Equal(t, want, got, e.Name())
			}
			assert.Equal(t, 2*((tc.games+1)/2), shards, "an .npz and a .records.jsonl per shard")
		})
	}
}

func cfgSpec() string { c := config(""); return c.SearchSpec() }

func mustSpace(t *testing.T) obs.Space {
	sp, err := obs.SpaceOf(obs.Compact)
	require.NoError(t, err)
	return sp
}

// TestRunWritesGamesAsTheyFinish: with shards far larger than the run, the
// finished games go to disk at once (the shard's temporary files grow
// before any shard is complete), the games kept in memory waiting for an
// earlier one stay fewer than games in flight, and the shard comes out
// whole with no temporary file left.
func TestRunWritesGamesAsTheyFinish(t *testing.T) {
	dir := t.TempDir()
	cfg := config(dir)
	cfg.Games, cfg.InFlight, cfg.ShardGames = 12, 4, 1000
	r, err := Start(cfg)
	require.NoError(t, err)
	defer r.Close()
	spilled := func() (n int64) {
		names, err := filepath.Glob(filepath.Join(dir, "*.obs.spill"+dataset.TmpSuffix))
		require.NoError(t, err)
		for _, name := range names {
			fi, err := os.Stat(name)
			require.NoError(t, err)
			n += fi.Size()
		}
		return n
	}
	var priors, values []float32
	var onDisk int64
	for {
		b, err := r.Next(priors, values)
		require.NoError(t, err)
		assert.Less(t, len(r.done), cfg.InFlight, "finished games held in memory")
		if b.N == 0 {
			break
		}
		if r.Summary().Games == 0 {
			onDisk = max(onDisk, spilled())
		}
		priors, values = answer(b, r.ObsSize())
	}
	assert.Positive(t, onDisk, "finished games were written before their shard completed")
	assert.Equal(t, 12, r.Summary().Games)
	left, err := filepath.Glob(filepath.Join(dir, "*"+dataset.TmpSuffix))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file is left")
	_, err = os.Stat(filepath.Join(dir, "shard-000000.npz"))
	assert.NoError(t, err)
}

// npzFloats reads the float32 array name (e.g. "policy") of an .npz shard.
func npzFloats(t *testing.T, path, name string) []float32 {
	t.Helper()
	z, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer z.Close()
	f, err := z.Open(name + ".npy")
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	require.Greater(t, len(b), 10)
	hl := int(binary.LittleEndian.Uint16(b[8:10]))
	require.Contains(t, string(b[10:10+hl]), "<f4")
	b = b[10+hl:]
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestRunGumbelRecordsTheImprovedPolicy checks that a Gumbel run's dataset
// holds the improved policy of completed Q-values as the policy target: a
// distribution over every legal action, unvisited ones included, where
// visit counts (the array visits) put nothing on the actions sequential
// halving left out.
func TestRunGumbelRecordsTheImprovedPolicy(t *testing.T) {
	dir := t.TempDir()
	cfg := config(dir)
	cfg.Gumbel, cfg.GumbelM, cfg.Sims = true, 2, 4
	cfg.TempMoves, cfg.DirichletAlpha, cfg.DirichletFrac = 0, 0, 0
	cfg.Games = 2
	r, err := Start(cfg)
	require.NoError(t, err)
	drive(t, r)
	r.Close()
	got := r.Config()
	assert.Equal(t, "az:4,gumbel=1,m=2", got.SearchSpec())
	shard := filepath.Join(dir, "shard-000000.npz")
	policy, visits := npzFloats(t, shard, "policy"), npzFloats(t, shard, "visits")
	require.Equal(t, len(policy), len(visits))
	require.NotEmpty(t, policy)
	improved := 0
	for row := 0; row < len(policy)/env.NumActions; row++ {
		p := policy[row*env.NumActions : (row+1)*env.NumActions]
		v := visits[row*env.NumActions : (row+1)*env.NumActions]
		sum := float32(0)
		for a := range p {
			sum += p[a]
			if v[a] == 0 && p[a] > 0 && visitsSum(v) > 0 {
				improved++
			}
			if v[a] > 0 {
				assert.Positive(t, p[a], "row %d: a visited action has policy", row)
			}
		}
		assert.InDelta(t, 1, sum, 1e-4, "row %d", row)
	}
	assert.Positive(t, improved, "the policy covers legal actions the search did not visit")

	t.Run("refused settings", func(t *testing.T) {
		for _, f := range []func(c *Config){
			func(c *Config) { c.TempMoves = 4 },
			func(c *Config) { c.DirichletAlpha, c.DirichletFrac = 0.3, 0.25 },
			func(c *Config) { c.GumbelM = 181 },
			func(c *Config) { c.Gumbel = false },
		} {
			c := cfg
			c.Out = t.TempDir()
			f(&c)
			_, err := Start(c)
			assert.ErrorIs(t, err, ErrConfig)
		}
	})
}

func visitsSum(v []float32) (s float32) {
	for _, x := range v {
		s += x
	}
	return s
}
