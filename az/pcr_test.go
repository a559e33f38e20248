package az

import (
	"archive/zip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/vecenv"
)

// npzBytes reads the uint8 array name of an .npz shard.
func npzBytes(t *testing.T, path, name string) []uint8 {
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
	require.Contains(t, string(b[10:10+hl]), "|u1")
	return b[10+hl:]
}

// TestFullSearchDrawsWithTheProbability checks the playout-cap draw over
// the decisions of many games of one seed: the share of full searches is
// full_prob, and the same seed draws the same.
func TestFullSearchDrawsWithTheProbability(t *testing.T) {
	for _, p := range []float64{0, 0.1, 0.25, 0.5, 1} {
		t.Run("", func(t *testing.T) {
			full, n := 0, 0
			for g := range 200 {
				x := vecenv.GameSeed(7, g)
				for d := range 50 {
					s := vecenv.AgentSeed(x, d%2, d)
					if FullSearch(s, p) {
						full++
					}
					assert.Equal(t, FullSearch(s, p), FullSearch(s, p))
					n++
				}
			}
			assert.InDelta(t, p, float64(full)/float64(n), 0.015, "p %g", p)
		})
	}
}

func pcrConfig(dir string) Config {
	c := config(dir)
	c.Games, c.FastSims, c.FullProb = 6, 3, 0.25
	return c
}

// TestRunPlayoutCapRandomization plays runs with fast_sims 3 and
// full_prob 0.25: the dataset has policy_target, about a quarter of the
// rows are full searches, fast rows searched at most fast_sims and full
// ones more, and the run is the same bytes whatever the batching; under
// Gumbel too.
func TestRunPlayoutCapRandomization(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gumbel bool
	}{{"puct", false}, {"gumbel", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var same sameShards
			for _, batching := range []struct{ inFlight, maxBatch int }{{3, 0}, {5, 2}} {
				dir := t.TempDir()
				cfg := pcrConfig(dir)
				if tc.gumbel {
					cfg.Gumbel, cfg.TempMoves, cfg.DirichletAlpha, cfg.DirichletFrac = true, 0, 0, 0
				}
				cfg.InFlight, cfg.MaxBatch = batching.inFlight, batching.maxBatch
				r, err := Start(cfg)
				require.NoError(t, err)
				drive(t, r)
				r.Close()
				got := r.Config()
				assert.Contains(t, got.SearchSpec(), ",fast=3,full_prob=0.25")

				full, rows, searchedFull := 0, 0, 0
				for _, shard := range []string{"shard-000000.npz", "shard-000001.npz", "shard-000002.npz"} {
					path := filepath.Join(dir, shard)
					target, visits := npzBytes(t, path, "policy_target"), npzFloats(t, path, "visits")
					require.Len(t, visits, len(target)*env.NumActions)
					for i, tg := range target {
						require.LessOrEqual(t, tg, uint8(1))
						n := visitsSum(visits[i*env.NumActions : (i+1)*env.NumActions])
						if tg == 1 {
							full++
							if n > 0 {
								searchedFull++
								assert.Greater(t, n, float32(cfg.FastSims), "row %d: a full search", i)
							}
						} else {
							assert.LessOrEqual(t, n, float32(cfg.FastSims), "row %d: a fast search", i)
						}
					}
					rows += len(target)
				}
				require.Greater(t, rows, 300)
				assert.InDelta(t, 0.25, float64(full)/float64(rows), 0.06, "%d full of %d rows", full, rows)
				assert.Positive(t, searchedFull)

				same.check(t, dir, "in flight %d, batch %d", batching.inFlight, batching.maxBatch)
			}
		})
	}
}

// TestRunPlayoutCapFullProbOne checks that with full_prob 1 every row has a
// policy target and the games are those of a run without fast searches.
func TestRunPlayoutCapFullProbOne(t *testing.T) {
	off, on := t.TempDir(), t.TempDir()
	cfg := pcrConfig(off)
	cfg.FastSims = 0
	r, err := Start(cfg)
	require.NoError(t, err)
	drive(t, r)
	r.Close()
	cfg = pcrConfig(on)
	cfg.FullProb = 1
	r, err = Start(cfg)
	require.NoError(t, err)
	drive(t, r)
	r.Close()
	for _, shard := range []string{"shard-000000", "shard-000001", "shard-000002"} {
		a, err := os.ReadFile(filepath.Join(off, shard+".records.jsonl"))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(on, shard+".records.jsonl"))
		require.NoError(t, err)
		assert.Equal(t, string(a), string(b), shard)
		assert.Equal(t, npzFloats(t, filepath.Join(off, shard+".npz"), "policy"), npzFloats(t, filepath.Join(on, shard+".npz"), "policy"))
		for i, tg := range npzBytes(t, filepath.Join(on, shard+".npz"), "policy_target") {
			assert.Equal(t, uint8(1), tg, "row %d", i)
		}
	}
}

// TestRunPlayoutCapRefused checks the settings a run refuses.
func TestRunPlayoutCapRefused(t *testing.T) {
	for _, f := range []func(c *Config){
		func(c *Config) { c.FastSims = -1 },
		func(c *Config) { c.FastSims = c.Sims + 1 },
		func(c *Config) { c.FullProb = 1.5 },
		func(c *Config) { c.FullProb = -0.1 },
	} {
		c := pcrConfig(t.TempDir())
		f(&c)
		_, err := Start(c)
		assert.ErrorIs(t, err, ErrConfig)
	}
}
