package dataset

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// npyDict matches the dict of a .npy header.
var npyDict = `^\{'descr': '[<|][a-z][0-9]', 'fortran_order': False, 'shape': \([0-9, ]*\), \} *\n$`

func TestNPYHeader(t *testing.T) {
	for _, shape := range [][]int{{0}, {7}, {12345, 2034}, {3, 4, 5}} {
		h := NPYHeader("<f4", shape)
		assert.Zero(t, len(h)%64)
		assert.Equal(t, byte('\n'), h[len(h)-1])
		assert.Equal(t, len(h)-10, int(binary.LittleEndian.Uint16(h[8:10])))
		assert.Regexp(t, npyDict, string(h[10:]))
	}
	assert.Contains(t, string(NPYHeader("|u1", []int{7})), "'shape': (7,)")
	assert.Contains(t, string(NPYHeader("<f4", []int{2, 3})), "'shape': (2, 3)")
}

// A run records its seed scheme (0 is read as 1, the scheme before the
// one seed scheme), and a run of another scheme may open the dataset but
// not add games to it.
func TestOpenSeedScheme(t *testing.T) {
	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
	require.NoError(t, err)
	cfg := func(scheme int) Config {
		return Config{Rules: env.Standard(), Agents: []string{"random", "random"}, Space: enc.Space(), Seed: 6, SeedScheme: scheme, ShardGames: 1, Software: "test"}
	}
	for _, tc := range []struct {
		made, now, games int
		refused          bool
	}{
		{made: 0, now: 0, games: 3},
		{made: 0, now: 1, games: 3},
		{made: 2, now: 2, games: 3},
		{made: 0, now: 2, games: 3, refused: true},
		{made: 2, now: 1, games: 3, refused: true},
		{made: 0, now: 2, games: 0}, // nothing to add: it opens
	} {
		t.Run(fmt.Sprintf("made%d-now%d-games%d", tc.made, tc.now, tc.games), func(t *testing.T) {
			dir := t.TempDir()
			m, err := Open(dir, cfg(tc.made), 2)
			require.NoError(t, err)
			assert.Equal(t, max(tc.made, 1), m.SeedScheme)
			_, err = Open(dir, cfg(tc.now), tc.games)
			if tc.refused {
				assert.ErrorIs(t, err, ErrDataset)
				assert.ErrorContains(t, err, fmt.Sprintf("made with seed scheme %d, this run plays seed scheme %d", max(tc.made, 1), max(tc.now, 1)))
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// FuzzOpen feeds arbitrary manifest.json bytes to the resume path (Open): it must refuse them with an error or accept them, never panic or
// touch files outside the directory.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
	if err != nil {
		f.Fatal(err)
	}
	cfg := Config{Rules: env.Standard(), Agents: []string{"random", "random"}, Space: enc.Space(), Seed: 6, SeedScheme: 2, ShardGames: 1, Software: "test"}
	if _, err := Open(dir, cfg, 2); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format":"yutenv-dataset","version":1}`))
	f.Add([]byte(`{"format":"yutenv-dataset","version":1,"shards":[{"file":"../x","first_game":0,"games":1}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := t.TempDir()
		sub := filepath.Join(d, "ds")
		require.NoError(t, os.Mkdir(sub, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "outside.npz"), []byte("keep"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(sub, ManifestName), b, 0o644))
		m, err := Open(sub, cfg, 0) // games 0: no manifest rewrite, so no fsync per input
		if err == nil {
			// Accepted: it must be a dataset of this very run.
			assert.Equal(t, Format, m.Format)
			assert.Equal(t, cfg.Agents, m.Agents)
			assert.Equal(t, cfg.Rules, m.Rules)
			assert.Equal(t, "compact", m.Tier)
			assert.Equal(t, cfg.Seed, m.Seed)
		}
		_, statErr := os.Stat(filepath.Join(d, "outside.npz"))
		assert.NoError(t, statErr, "files outside the dataset are never touched")
	})
}

func TestOpenFirstGame(t *testing.T) {
	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
	require.NoError(t, err)
	cfg := Config{Rules: env.Standard(), Agents: []string{"random", "random"}, Space: enc.Space(), Seed: 6, ShardGames: 10, Software: "test"}
	tests := []struct {
		name  string
		first int
		err   string
	}{
		{"zero", 0, ""},
		{"a multiple", 30, ""},
		{"not a multiple", 15, "not a multiple of 10 games per shard"},
		{"negative", -10, "not a multiple"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			c.FirstGame = tt.first
			dir := t.TempDir()
			m, err := Open(dir, c, 5)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.first, m.FirstGame)
			// Reopened by another range of the same run: refused, naming the field.
			c.FirstGame = tt.first + 10
			_, err = Open(dir, c, 5)
			assert.ErrorIs(t, err, ErrDataset)
			assert.ErrorContains(t, err, "first_game")
		})
	}
}

// A dataset records its observation layout, and one made under another
// layout is refused with an error naming both: a manifest without the field
// (written before layouts were recorded: layout 1) and one of a layout this
// build does not know.
func TestOpenRefusesAnotherLayout(t *testing.T) {
	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
	require.NoError(t, err)
	cfg := Config{Rules: env.Standard(), Agents: []string{"random", "random"}, Space: enc.Space(), Seed: 6, SeedScheme: 2, ShardGames: 1, Software: "test"}
	for _, tc := range []struct {
		name   string
		layout any // the manifest's obs_layout; nil: no such key
		want   string
	}{
		{"this layout", obs.LayoutVersion, ""},
		{"layout 1, no key", nil, "made for observation layout 1, this build reads layout 2"},
		{"layout 1", 1, "made for observation layout 1, this build reads layout 2"},
		{"unknown layout", 7, "made for observation layout 7, this build reads layout 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m, err := Open(dir, cfg, 2)
			require.NoError(t, err)
			assert.Equal(t, obs.LayoutVersion, m.ObsLayout, "a new manifest records the layout")
			path := filepath.Join(dir, ManifestName)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(b, &doc))
			require.Contains(t, doc, "obs_layout")
			if tc.layout == nil {
				delete(doc, "obs_layout")
			} else {
				doc["obs_layout"] = tc.layout
			}
			b, err = json.Marshal(doc)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b, 0o644))
			_, err = Open(dir, cfg, 2)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrDataset)
			assert.ErrorIs(t, err, obs.ErrLayout)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// A dataset of format version 1 (no potential, searched or final_obs) is
// still opened to be checked when no game is to be added, with version 1's
// arrays; adding games is refused with a line naming both versions, since
// its next shards would not match its first ones.
func TestOpenVersion1(t *testing.T) {
	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
	require.NoError(t, err)
	cfg := Config{Rules: env.Standard(), Agents: []string{"random", "random"}, Space: enc.Space(), Seed: 6, SeedScheme: 2, ShardGames: 1, Software: "test"}
	dir := t.TempDir()
	m, err := Open(dir, cfg, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Version)
	assert.Equal(t, []Array{{"final_obs", "<f4", []int{2, enc.Size()}}}, m.GameArrays)
	names := func(arrays []Array) (out []string) {
		for _, a := range arrays {
			out = append(out, a.Name)
		}
		return out
	}
	assert.Equal(t, []string{"obs", "mask", "action", "policy", "value", "search_value", "seat", "game", "decision", "potential", "searched"}, names(m.Arrays))

	m.Version, m.Arrays, m.GameArrays = 1, ArraysOf(1, enc.Size()), nil
	require.NoError(t, m.save(dir))
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "game_arrays", "a version 1 manifest has none")

	got, err := Open(dir, cfg, 0)
	require.NoError(t, err, "nothing to add: opened")
	assert.Equal(t, 1, got.Version)
	_, err = Open(dir, cfg, 1)
	assert.ErrorIs(t, err, ErrDataset)
	assert.ErrorContains(t, err, "is in format version 1 (test), this build writes version 2")
	other := cfg
	other.Seed = 7
	_, err = Open(dir, other, 0)
	assert.ErrorContains(t, err, "was made with seed 6", "another run's version 1 dataset is still refused")
}
