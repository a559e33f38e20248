package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// TestShardWriterMatchesAddShard: a shard written game by game through the
// temporary files is the same bytes as one written from memory, with and
// without visit counts and policy targets, and leaves no temporary file.
func TestShardWriterMatchesAddShard(t *testing.T) {
	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
	require.NoError(t, err)
	for _, tc := range []struct {
		name            string
		visits, targets bool
	}{{"plain", false, false}, {"visits", true, false}, {"policy targets", true, true}} {
		visits := tc.visits
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Rules: env.Standard(), Agents: []string{"mcts:8", "mcts:8"}, Space: enc.Space(), Seed: 3,
				SeedScheme: vecenv.SeedScheme, ShardGames: 3, Software: "test", Visits: visits, PolicyTargets: tc.targets}
			newCols := func() *Columns {
				if tc.targets {
					return NewTargetColumns(enc.Size())
				}
				if visits {
					return NewVisitColumns(enc.Size())
				}
				return NewColumns(enc.Size())
			}
			mem, disk := t.TempDir(), t.TempDir()
			mm, err := Open(mem, cfg, 3)
			require.NoError(t, err)
			md, err := Open(disk, cfg, 3)
			require.NoError(t, err)
			w, err := md.NewShardWriter(disk, 0, enc.Size(), visits)
			require.NoError(t, err)
			all := newCols()
			var recs []*env.Record
			buf := make([]float32, enc.Size())
			for g := range 3 {
				ag, err := agent.New("mcts:8", uint64(g))
				require.NoError(t, err)
				game := vecenv.Game(env.Standard(), uint64(g), env.AnySeat, []agent.Agent{ag, ag})
				game.Record = true
				cols := newCols()
				game.OnDecision = func(s *env.State, a env.Action, st agent.Stats) error {
					cols.AddTargetDecision(enc, buf, s, a, st, g, s.Decisions()%3 == 0)
					return nil
				}
				game.OnEnd = func(s *env.State) error {
					cols.EndGame(enc, s)
					return nil
				}
				res, err := game.Play()
				require.NoError(t, err)
				require.NoError(t, w.Add(cols, res.Record))
				all.Append(cols)
				recs = append(recs, res.Record)
			}
			require.NoError(t, mm.AddShard(mem, 0, all, recs))
			require.NoError(t, w.Finish())
			assert.Equal(t, mm.Shards, md.Shards)
			assert.Equal(t, tc.targets, md.hasArray(PolicyTargetArray.Name))
			if tc.targets {
				assert.Equal(t, PolicyTargetArray, md.Arrays[len(md.Arrays)-1], "policy_target comes last")
				assert.Equal(t, all.Rows(), len(all.target))
				assert.Contains(t, all.target, uint8(0))
				assert.Contains(t, all.target, uint8(1))
			}
			for _, name := range []string{mm.Shards[0].File, mm.Shards[0].Records} {
				a, err := os.ReadFile(filepath.Join(mem, name))
				require.NoError(t, err)
				b, err := os.ReadFile(filepath.Join(disk, name))
				require.NoError(t, err)
				assert.Equal(t, a, b, name)
			}
			t.Run("resumed by the same config only", func(t *testing.T) {
				_, err := Open(disk, cfg, 3)
				require.NoError(t, err)
				other := cfg
				other.PolicyTargets = !cfg.PolicyTargets && cfg.Visits
				if other.PolicyTargets != cfg.PolicyTargets {
					_, err = Open(disk, other, 3)
					assert.ErrorIs(t, err, ErrDataset)
				}
				if !cfg.Visits { // policy targets need visits
					other.PolicyTargets = true
					_, err = Open(t.TempDir(), other, 3)
					assert.ErrorIs(t, err, ErrDataset)
				}
			})
			left, err := filepath.Glob(filepath.Join(disk, "*"+TmpSuffix))
			require.NoError(t, err)
			assert.Empty(t, left)
		})
	}
}
