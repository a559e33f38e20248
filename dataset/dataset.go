package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/obs"
)

// ErrDataset is wrapped by every error about an existing dataset directory:
// one made by another run, damaged, or not a dataset.
var ErrDataset = errors.New("dataset")

// TmpSuffix ends the names of files being written (userfile.TmpSuffix);
// Open removes stale ones it finds.
const TmpSuffix = userfile.TmpSuffix

// Dataset format identifiers (docs/DATASETS.md): the manifest's format and
// version, its file name, and the largest manifest Open reads. Version 2
// added the arrays potential and searched to every row and the game array
// final_obs, which make a game's transitions (reward, next observation)
// computable offline; readers read version 1 too.
const (
	Format          = "yutenv-dataset"
	FormatVersion   = 2
	ManifestName    = "manifest.json"
	MaxManifestSize = 256 << 20
)

// Manifest is the dataset's manifest.json: how it was made and which shards
// hold it. It is rewritten atomically after every shard.
type Manifest struct {
	Format   string `json:"format"`
	Version  int    `json:"version"`
	Software string `json:"software"`
	// Rules is the rules object of docs/FORMATS.md; RulesText its key=value form.
	Rules     env.Rules `json:"rules"`
	RulesText string    `json:"rules_text"`
	// Agents is the canonical spec of every seat's agent.
	Agents []string `json:"agents"`
	// Tier is the observation tier; ObsSize the length of one observation
	// and ObsParts its layout (docs/OBSERVATIONS.md).
	Tier     string `json:"tier"`
	ObsSize  int    `json:"obs_size"`
	ObsParts []Part `json:"obs_parts"`
	// ObsLayout is the observation layout (obs.LayoutVersion) of the
	// observations; 0, a manifest written before it was recorded, means
	// layout 1. A dataset of another layout is refused.
	ObsLayout int `json:"obs_layout"`
	// Seed is the run's seed and SeedScheme the seed scheme its games
	// follow (vecenv.SeedScheme; 0, a manifest written before the field
	// existed, means scheme 1). Under scheme 2 game g has the game seed
	// seed + g and its agents are reseeded by vecenv.AgentSeed; under
	// scheme 1 game g threw with vecenv.Seed(seed, 0, g).
	Seed       uint64 `json:"seed"`
	SeedScheme int    `json:"seed_scheme"`
	ShardGames int    `json:"shard_games"`
	// FirstGame is the first game the dataset holds: 0, or for one part
	// of a distributed run (yutenv selfplay --first-game) the start of its
	// range of games. It is left out of the JSON when 0.
	FirstGame int `json:"first_game,omitempty"`
	// GamesTarget is the number of games asked for; Games and Decisions
	// count what the shards hold; Complete is Games >= GamesTarget.
	GamesTarget int   `json:"games_target"`
	Games       int   `json:"games"`
	Decisions   int64 `json:"decisions"`
	Complete    bool  `json:"complete"`
	// Arrays lists every array of a shard whose rows are decisions: its
	// name, numpy dtype and the shape of one row (the first axis, the
	// decisions, is left out).
	Arrays []Array `json:"arrays"`
	// GameArrays lists the arrays of a shard whose rows are its games
	// (version 2 on; absent in version 1), likewise.
	GameArrays []Array `json:"game_arrays,omitempty"`
	Shards     []Shard `json:"shards"`
	Created    string  `json:"created"`
	Updated    string  `json:"updated"`
}

// Scheme returns the manifest's seed scheme: SeedScheme, or 1 for a
// manifest written before the field existed.
func (m *Manifest) Scheme() int {
	if m.SeedScheme == 0 {
		return 1
	}
	return m.SeedScheme
}

// hasArray reports whether the shards hold the array name.
func (m *Manifest) hasArray(name string) bool {
	for _, a := range m.Arrays {
		if a.Name == name {
			return true
		}
	}
	return false
}

// Part is one named slice of the observation.
type Part struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Shape  []int  `json:"shape"`
}

// Array describes one array of every shard.
type Array struct {
	Name  string `json:"name"`
	Dtype string `json:"dtype"`
	Shape []int  `json:"shape"`
}

// Shard is one shard: its files, games and checksums.
type Shard struct {
	File          string `json:"file"`
	Records       string `json:"records"`
	FirstGame     int    `json:"first_game"`
	Games         int    `json:"games"`
	Decisions     int    `json:"decisions"`
	Bytes         int64  `json:"bytes"`
	SHA256        string `json:"sha256"`
	RecordsBytes  int64  `json:"records_bytes"`
	RecordsSHA256 string `json:"records_sha256"`
}

// Arrays is the array list of a dataset of this format version whose
// observations have obsSize values.
func Arrays(obsSize int) []Array { return ArraysOf(FormatVersion, obsSize) }

// ArraysOf is the array list of every shard of a dataset of format version
// (1 or 2). Version 2 added, after decision: potential (float32, the
// shaping potential of the seat to move, vecenv.Potentials) and searched
// (uint8, 1 if the agent searched the decision: Stats.Simulations > 0).
func ArraysOf(version, obsSize int) []Array {
	arrays := []Array{
		{"obs", "<f4", []int{obsSize}},
		{"mask", "|u1", []int{env.NumActions}},
		{"action", "<i4", []int{}},
		{"policy", "<f4", []int{env.NumActions}},
		{"value", "<f4", []int{}},
		{"search_value", "<f4", []int{}},
		{"seat", "|i1", []int{}},
		{"game", "<i8", []int{}},
		{"decision", "<i4", []int{}},
	}
	if version >= 2 {
		arrays = append(arrays, Array{"potential", "<f4", []int{}}, Array{"searched", "|u1", []int{}})
	}
	return arrays
}

// GameArrays is the list of arrays whose rows are a shard's games, for
// rules of players seats and observations of obsSize values: final_obs,
// the observation of the game's final position for every seat (the
// learner's last observation in the env), float32 [players, obsSize].
func GameArrays(players, obsSize int) []Array {
	return []Array{{"final_obs", "<f4", []int{players, obsSize}}}
}

// VisitsArray is the optional array of raw root visit counts (Config.Visits).
var VisitsArray = Array{"visits", "<f4", []int{env.NumActions}}

// PolicyTargetArray is the optional array that says which rows' policy is
// a target (1) and which is not (0: a fast search of playout cap
// randomization, az.Config.FastSims), after visits (Config.PolicyTargets).
// A dataset without it has a policy target in every row.
var PolicyTargetArray = Array{"policy_target", "|u1", []int{}}

// Config is what identifies a dataset's run: a dataset is resumed only by
// a run of the same rules, agents, tier (Space), seed and seed scheme.
// SeedScheme is vecenv.SeedScheme for a run of the one seed scheme, or 0
// (read as 1) for a run that still seeds game g's throws with
// vecenv.Seed(seed, 0, g); the manifest records it, and Open refuses to
// add games of another scheme.
type Config struct {
	Rules      env.Rules
	Agents     []string  // canonical spec of every seat
	Space      obs.Space // the observation space of the dataset's tier
	Seed       uint64
	SeedScheme int    // how the run derives its games' seeds (vecenv.SeedScheme)
	ShardGames int    // games per shard of a new dataset
	Software   string // "yutenv <version>", recorded in a new manifest
	// Visits adds the array visits (the raw root visit counts, float32
	// [180]) after the others: network-guided self-play (package az).
	Visits bool
	// PolicyTargets adds the array policy_target after visits (it needs
	// Visits): self-play with playout cap randomization.
	PolicyTargets bool
	// FirstGame is the first game of the dataset: 0, or the start of the
	// range of games one part of a distributed run plays. It must be a
	// multiple of ShardGames, so that shard files are named as in a
	// dataset made in one run (shard k holds games k*ShardGames onwards).
	FirstGame int
}

// arrays is the array list of the shards of a dataset of cfg in format version.
func (cfg Config) arrays(version int) []Array {
	arrays := ArraysOf(version, cfg.Space.Size)
	if cfg.Visits {
		arrays = append(arrays, VisitsArray)
	}
	if cfg.PolicyTargets {
		arrays = append(arrays, PolicyTargetArray)
	}
	return arrays
}

// Open reads dir's manifest, checks it was made by the same run
// (rules, agents, tier, seed) under this build's observation layout (an
// error wrapping ErrDataset and obs.ErrLayout if not) and tidies the directory, or starts a new
// dataset in an empty or missing dir. games is the number of games the run
// asks for: a larger number than the manifest's target extends it. A
// dataset of another seed scheme (Manifest.Scheme), or of format version 1,
// opens only when no game is to be added (games <= its games): adding games
// would mix two schemes, or two versions, in one dataset.
func Open(dir string, cfg Config, games int) (*Manifest, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if cfg.FirstGame < 0 || cfg.FirstGame > 0 && (cfg.ShardGames < 1 || cfg.FirstGame%cfg.ShardGames != 0) {
		return nil, fmt.Errorf("first game %d is not a multiple of %d games per shard", cfg.FirstGame, cfg.ShardGames)
	}
	sp := cfg.Space
	want := Manifest{
		Format: Format, Version: FormatVersion, Software: cfg.Software,
		Rules: cfg.Rules, RulesText: cfg.Rules.String(), Agents: cfg.Agents,
		Tier: sp.Tier, ObsSize: sp.Size, ObsLayout: obs.LayoutVersion, Seed: cfg.Seed, ShardGames: cfg.ShardGames,
		FirstGame: cfg.FirstGame, Arrays: cfg.arrays(FormatVersion), GameArrays: GameArrays(cfg.Rules.Players, sp.Size), Shards: []Shard{},
	}
	if cfg.PolicyTargets && !cfg.Visits {
		return nil, fmt.Errorf("%w: policy targets need visits: a dataset of network self-play", ErrDataset)
	}
	for _, p := range sp.Parts {
		want.ObsParts = append(want.ObsParts, Part{Name: p.Name, Offset: p.Offset, Shape: p.Shape})
	}
	want.SeedScheme = max(cfg.SeedScheme, 1)
	path := filepath.Join(dir, ManifestName)
	b, err := readLimited(path, MaxManifestSize)
	switch {
	case os.IsNotExist(err):
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), TmpSuffix) {
				return nil, fmt.Errorf("%w: %s is not empty and holds no %s: give a new or empty directory", ErrDataset, dir, ManifestName)
			}
		}
		now := time.Now().UTC().Format(time.RFC3339)
		want.Created, want.Updated, want.GamesTarget = now, now, games
		if err := tidy(dir, &want); err != nil {
			return nil, err
		}
		return &want, want.save(dir)
	case err != nil:
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDataset, path, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("%w: %s: format %q, want %q", ErrDataset, path, m.Format, Format)
	}
	switch {
	case m.Version == 1 && games > m.Games:
		return nil, fmt.Errorf("%w: %s is in format version 1 (%s), this build writes version %d (with every row's potential and search flag, "+
			"and the games' final observations): its next shards would not match; finish it with the yutenv that made it, or write a new dataset to another --out",
			ErrDataset, dir, m.Software, FormatVersion)
	case m.Version == 1: // complete: opened to be checked, nothing is added
		want.Arrays, want.GameArrays = cfg.arrays(1), nil
	case m.Version != FormatVersion:
		return nil, fmt.Errorf("%w: %s: version %d, this build writes %d", ErrDataset, path, m.Version, FormatVersion)
	}
	if err := obs.CheckLayout(m.ObsLayout); err != nil {
		return nil, fmt.Errorf("%w: %s: %w: its observations do not read as this build's; finish it with the yutenv that made it (%s), or write a new dataset to another --out",
			ErrDataset, path, err, m.Software)
	}
	if have := m.Scheme(); have != want.SeedScheme && games > m.Games {
		return nil, fmt.Errorf("%w: %s was made with seed scheme %d, this run plays seed scheme %d: its next games would not continue the same run; "+
			"finish it with the yutenv that made it (%s), or write a new dataset to another --out", ErrDataset, dir, have, want.SeedScheme, m.Software)
	}
	for _, c := range []struct {
		what      string
		have, now any
	}{
		{"rules", m.Rules, want.Rules},
		{"agents", m.Agents, want.Agents},
		{"tier", m.Tier, want.Tier},
		{"obs_size", m.ObsSize, want.ObsSize},
		{"seed", m.Seed, want.Seed},
		{"first_game", m.FirstGame, want.FirstGame},
		{"arrays", m.Arrays, want.Arrays},
		{"game_arrays", m.GameArrays, want.GameArrays},
	} {
		if !reflect.DeepEqual(c.have, c.now) {
			return nil, fmt.Errorf("%w: %s was made with %s %v, this run asks for %v: use the same flags to resume, or another --out",
				ErrDataset, dir, c.what, c.have, c.now)
		}
	}
	if m.ShardGames < 1 || m.FirstGame%m.ShardGames != 0 {
		return nil, fmt.Errorf("%w: %s: shard_games %d, first_game %d", ErrDataset, path, m.ShardGames, m.FirstGame)
	}
	next := m.FirstGame
	for _, s := range m.Shards {
		if s.FirstGame != next || s.Games < 1 {
			return nil, fmt.Errorf("%w: %s: shard %s covers games %d..%d, expected to start at %d", ErrDataset, path, s.File, s.FirstGame, s.FirstGame+s.Games-1, next)
		}
		next += s.Games
		for _, f := range []struct {
			name string
			size int64
		}{{s.File, s.Bytes}, {s.Records, s.RecordsBytes}} {
			if filepath.Base(f.name) != f.name || f.name == "" {
				return nil, fmt.Errorf("%w: %s: bad file name %q", ErrDataset, path, f.name)
			}
			st, err := os.Stat(filepath.Join(dir, f.name))
			if err != nil {
				return nil, fmt.Errorf("%w: %s lists %s, which is missing: the dataset is damaged", ErrDataset, path, f.name)
			}
			if st.Size() != f.size {
				return nil, fmt.Errorf("%w: %s is %d bytes, the Manifest says %d: the dataset is damaged", ErrDataset, f.name, st.Size(), f.size)
			}
		}
	}
	if next-m.FirstGame != m.Games {
		return nil, fmt.Errorf("%w: %s: shards hold %d games, games says %d", ErrDataset, path, next-m.FirstGame, m.Games)
	}
	if err := tidy(dir, &m); err != nil {
		return nil, err
	}
	if games > m.GamesTarget || (games > m.Games && !m.Complete) {
		m.GamesTarget = games
		m.Complete = m.Games >= games
		if err := m.save(dir); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// tidy removes what a killed run may leave: temporary files, and
// shard files the Manifest does not list (written just before the kill;
// they will be written again, identically).
func tidy(dir string, m *Manifest) error {
	listed := map[string]bool{ManifestName: true}
	for _, s := range m.Shards {
		listed[s.File], listed[s.Records] = true, true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		stray := strings.HasSuffix(n, TmpSuffix) ||
			(strings.HasPrefix(n, "shard-") && (strings.HasSuffix(n, ".npz") || strings.HasSuffix(n, ".records.jsonl")) && !listed[n])
		if stray && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// readLimited reads path, a regular file of at most limit bytes, without
// blocking on a FIFO (userfile.ReadFile); a file of another kind or
// larger is refused with an error wrapping ErrDataset too.
func readLimited(path string, limit int64) ([]byte, error) {
	b, err := userfile.ReadFile(path, limit)
	if errors.Is(err, userfile.ErrNotRegular) || errors.Is(err, userfile.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", ErrDataset, err)
	}
	return b, err
}

// save writes the Manifest atomically.
func (m *Manifest) save(dir string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep dtypes such as "<f4" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return err
	}
	f, err := userfile.CreateAtomic(filepath.Join(dir, ManifestName))
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b.Bytes()); err != nil {
		return err
	}
	return f.Commit()
}

// ShardHook, if not nil, runs between a shard's records and its arrays.
// It is for tests, which use it to kill a run at the worst moment.
var ShardHook func()

// AddShard writes the records and the arrays of games [first, first+len(recs))
// (c holds their decisions) into dir, and then the manifest that lists
// them, each atomically. Shard files are numbered from FirstGame/ShardGames
// on, so the parts of a distributed run name their shards as one run would.
func (m *Manifest) AddShard(dir string, first int, c *Columns, recs []*env.Record) error {
	if c.games != len(recs) {
		return fmt.Errorf("%w: %d records for %d games ended by EndGame", ErrDataset, len(recs), c.games)
	}
	return m.writeShard(dir, first, len(recs), func(w io.Writer) error {
		for _, r := range recs {
			if _, err := r.WriteTo(w); err != nil {
				return err
			}
		}
		return nil
	}, m.shardArrays(c.rows, len(recs), c.obsSize, c.withVisits, c.withTargets, c.data()))
}

// shardArrays names and shapes the arrays of a shard of n rows and games
// games, whose data (slices, or readers of their little-endian bytes) come
// in the order of Columns.data.
func (m *Manifest) shardArrays(n, games, obsSize int, withVisits, withTargets bool, data []any) []NPYArray {
	arrays := []NPYArray{
		{"obs", "<f4", []int{n, obsSize}, data[0]},
		{"mask", "|u1", []int{n, env.NumActions}, data[1]},
		{"action", "<i4", []int{n}, data[2]},
		{"policy", "<f4", []int{n, env.NumActions}, data[3]},
		{"value", "<f4", []int{n}, data[4]},
		{"search_value", "<f4", []int{n}, data[5]},
		{"seat", "|i1", []int{n}, data[6]},
		{"game", "<i8", []int{n}, data[7]},
		{"decision", "<i4", []int{n}, data[8]},
		{"potential", "<f4", []int{n}, data[9]},
		{"searched", "|u1", []int{n}, data[10]},
	}
	if withVisits {
		arrays = append(arrays, NPYArray{"visits", "<f4", []int{n, env.NumActions}, data[11]})
	}
	if withTargets {
		arrays = append(arrays, NPYArray{PolicyTargetArray.Name, PolicyTargetArray.Dtype, []int{n}, data[12]})
	}
	for _, a := range m.GameArrays {
		arrays = append(arrays, NPYArray{a.Name, a.Dtype, append([]int{games}, a.Shape...), data[13]})
	}
	return arrays
}

// writeShard writes the records (by records) and the arrays of the next
// shard, games [first, first+games), then the manifest that lists it.
func (m *Manifest) writeShard(dir string, first, games int, records func(io.Writer) error, arrays []NPYArray) error {
	name := fmt.Sprintf("shard-%06d", m.FirstGame/m.ShardGames+len(m.Shards))
	sh := Shard{File: name + ".npz", Records: name + ".records.jsonl", FirstGame: first, Games: games, Decisions: arrays[0].Shape[0]}
	var err error
	sh.RecordsBytes, sh.RecordsSHA256, err = writeHashed(filepath.Join(dir, sh.Records), records)
	if err != nil {
		return err
	}
	if ShardHook != nil {
		ShardHook()
	}
	sh.Bytes, sh.SHA256, err = writeHashed(filepath.Join(dir, sh.File), func(w io.Writer) error { return WriteNPZ(w, arrays) })
	if err != nil {
		return err
	}
	m.Shards = append(m.Shards, sh)
	m.Games += sh.Games
	m.Decisions += int64(sh.Decisions)
	m.Complete = m.Games >= m.GamesTarget
	m.Updated = time.Now().UTC().Format(time.RFC3339)
	return m.save(dir)
}
