package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

func TestSelfplayRecords(t *testing.T) {
	code, out, errs := runCmd(t, "selfplay", "--games", "5", "--seed", "4", "--quiet", "--workers", "1")
	require.Equal(t, 0, code, errs)
	recs, err := env.ReadRecords(strings.NewReader(out))
	require.NoError(t, err)
	require.Len(t, recs, 5)
	for _, r := range recs {
		assert.Equal(t, []string{"random", "random"}, r.Players)
		require.NotNil(t, r.Result)
		_, err := r.Replay(nil)
		assert.NoError(t, err, "every record replays")
	}
	assert.NotEqual(t, recs[0].Seed, recs[1].Seed)

	_, again, _ := runCmd(t, "selfplay", "--games", "5", "--seed", "4", "--quiet", "--workers", "3")
	assert.Equal(t, out, again, "the same games in the same order whatever the workers")

	path := filepath.Join(t.TempDir(), "games.jsonl")
	code, _, errs = runCmd(t, "selfplay", "--games", "5", "--seed", "4", "--out", path, "--agents", "greedy;mc:2", "--progress", "always")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "games/s", "a progress bar on stderr")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, err = env.ReadRecords(bytes.NewReader(b))
	require.NoError(t, err)
	require.Len(t, recs, 5)
	assert.Equal(t, []string{"greedy", "mc:2"}, recs[0].Players)
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"+dataset.TmpSuffix))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file is left")
}

// npy is one array read back from a shard.
type npy struct {
	dtype string
	shape []int
	data  []byte
}

func (a npy) float32s() []float32 {
	out := make([]float32, len(a.data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(a.data[4*i:]))
	}
	return out
}

func (a npy) ints() []int {
	size := map[string]int{"|i1": 1, "|u1": 1, "<i4": 4, "<i8": 8}[a.dtype]
	out := make([]int, len(a.data)/size)
	for i := range out {
		switch size {
		case 1:
			if a.dtype == "|i1" {
				out[i] = int(int8(a.data[i]))
			} else {
				out[i] = int(a.data[i])
			}
		case 4:
			out[i] = int(int32(binary.LittleEndian.Uint32(a.data[4*i:])))
		case 8:
			out[i] = int(int64(binary.LittleEndian.Uint64(a.data[8*i:])))
		}
	}
	return out
}

var npyDict = regexp.MustCompile(`^\{'descr': '([^']+)', 'fortran_order': False, 'shape': \(([0-9, ]*)\), \} *\n$`)

// readNPZ reads an .npz written by writeNPZ, checking every CRC and header.
func readNPZ(t *testing.T, path string) map[string]npy {
	t.Helper()
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	out := map[string]npy{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc) // checks the CRC-32
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.Equal(t, "\x93NUMPY\x01\x00", string(b[:8]))
		hl := int(binary.LittleEndian.Uint16(b[8:10]))
		require.Zero(t, (10+hl)%64, "the header is padded to 64 bytes")
		m := npyDict.FindStringSubmatch(string(b[10 : 10+hl]))
		require.NotNil(t, m, "header %q", b[10:10+hl])
		var shape []int
		for _, d := range strings.Split(m[2], ",") {
			if d = strings.TrimSpace(d); d != "" {
				n, err := strconv.Atoi(d)
				require.NoError(t, err)
				shape = append(shape, n)
			}
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = npy{dtype: m[1], shape: shape, data: b[10+hl:]}
	}
	return out
}

func readManifest(t *testing.T, dir string) dataset.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, dataset.ManifestName))
	require.NoError(t, err)
	var m dataset.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func selfplayDataset(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append([]string{"selfplay", "--agents", "mcts:8;greedy", "--tier", "compact", "--shard-games", "3", "--seed", "6", "--out", dir, "--quiet"}, extra...)
	code, out, errs := runCmd(t, args...)
	require.Equal(t, 0, code, errs)
	return out
}

func TestSelfplayDataset(t *testing.T) {
	dir := t.TempDir()
	out := selfplayDataset(t, dir, "--games", "7")
	assert.Contains(t, out, "7 games")
	m := readManifest(t, dir)
	assert.Equal(t, dataset.Format, m.Format)
	assert.Equal(t, []string{"mcts:8", "greedy"}, m.Agents)
	assert.Equal(t, "compact", m.Tier)
	assert.Equal(t, 213, m.ObsSize)
	assert.Equal(t, obs.LayoutVersion, m.ObsLayout)
	assert.Equal(t, uint64(6), m.Seed)
	assert.Equal(t, 7, m.Games)
	assert.True(t, m.Complete)
	assert.Equal(t, "yutenv "+Version, m.Software)
	require.Len(t, m.Shards, 3)
	assert.Equal(t, []int{3, 3, 1}, []int{m.Shards[0].Games, m.Shards[1].Games, m.Shards[2].Games})

	total := 0
	for _, sh := range m.Shards {
		assert.Equal(t, sh.SHA256, fileSHA(t, filepath.Join(dir, sh.File)))
		assert.Equal(t, sh.RecordsSHA256, fileSHA(t, filepath.Join(dir, sh.Records)))
		arr := readNPZ(t, filepath.Join(dir, sh.File))
		for _, spec := range m.Arrays {
			a, ok := arr[spec.Name]
			require.True(t, ok, spec.Name)
			assert.Equal(t, spec.Dtype, a.dtype, spec.Name)
			assert.Equal(t, append([]int{sh.Decisions}, spec.Shape...), a.shape, spec.Name)
		}
		require.Equal(t, dataset.GameArrays(2, 213), m.GameArrays)
		for _, spec := range m.GameArrays {
			a, ok := arr[spec.Name]
			require.True(t, ok, spec.Name)
			assert.Equal(t, spec.Dtype, a.dtype, spec.Name)
			assert.Equal(t, append([]int{sh.Games}, spec.Shape...), a.shape, spec.Name)
		}
		b, err := os.ReadFile(filepath.Join(dir, sh.Records))
		require.NoError(t, err)
		recs, err := env.ReadRecords(bytes.NewReader(b))
		require.NoError(t, err)
		require.Len(t, recs, sh.Games)

		// Every row matches its game record: action, seat, decision index,
		// mask, value = the game's outcome for the mover, the mover's
		// shaping potential before the move and whether its agent searched
		// (mcts:8 in seat 0 unless the move was forced; greedy never); and
		// final_obs is the final position's observation for each seat.
		actions, seats, games, decisions := arr["action"].ints(), arr["seat"].ints(), arr["game"].ints(), arr["decision"].ints()
		values, policy, mask := arr["value"].float32s(), arr["policy"].float32s(), arr["mask"].ints()
		potential, searched, final := arr["potential"].float32s(), arr["searched"].ints(), arr["final_obs"].float32s()
		enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
		require.NoError(t, err)
		buf := make([]float32, enc.Size())
		row := 0
		for gi, rec := range recs {
			var before env.State
			last, err := rec.Replay(func(step int, ev env.Event, s *env.State) error {
				defer func() { before = *s }()
				if step < 0 || ev.Kind != env.EventMove {
					return nil
				}
				var phi [env.MaxPlayers]float32
				vecenv.Potentials(&before, &phi)
				assert.Equal(t, phi[ev.Seat], potential[row])
				legal := 0
				for _, v := range mask[row*env.NumActions : (row+1)*env.NumActions] {
					legal += v
				}
				assert.Equal(t, ev.Seat == 0 && legal > 1, searched[row] == 1, "row %d", row)
				assert.Equal(t, sh.FirstGame+gi, games[row])
				assert.Equal(t, int(ev.Action), actions[row])
				assert.Equal(t, int(ev.Seat), seats[row])
				assert.Equal(t, s.Decisions()-1, decisions[row])
				assert.Equal(t, 1, mask[row*env.NumActions+actions[row]], "the action is in the mask")
				sum := float32(0)
				for _, p := range policy[row*env.NumActions : (row+1)*env.NumActions] {
					sum += p
				}
				assert.InDelta(t, 1, sum, 1e-5)
				winner := rec.Result.Winner
				want := float32(-1)
				if int(ev.Seat) == winner {
					want = 1
				}
				assert.Equal(t, want, values[row])
				row++
				return nil
			})
			require.NoError(t, err)
			for seat := range 2 {
				enc.Encode(&last, seat, buf)
				off := (gi*2 + seat) * enc.Size()
				assert.Equal(t, buf, final[off:off+enc.Size()], "final_obs of game %d, seat %d", gi, seat)
			}
		}
		assert.Equal(t, sh.Decisions, row)
		total += row
	}
	assert.Equal(t, int64(total), m.Decisions)
	out = selfplayDataset(t, dir, "--games", "7")
	assert.Contains(t, out, "complete", "running again does nothing")
}

func TestSelfplayResume(t *testing.T) {
	whole := t.TempDir()
	selfplayDataset(t, whole, "--games", "8")

	// A run killed after its first shard, with a half-written shard and a
	// shard renamed into place just before the manifest was updated.
	parts := t.TempDir()
	selfplayDataset(t, parts, "--games", "3")
	require.NoError(t, os.WriteFile(filepath.Join(parts, "shard-000001.npz"+dataset.TmpSuffix), []byte("half a shard"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "shard-000001.records.jsonl"), []byte("{}\n"), 0o644))
	m := readManifest(t, parts)
	assert.True(t, m.Complete)
	assert.Equal(t, 3, m.Games)

	code, out, errs := runCmd(t, "selfplay", "--agents", "mcts:8;greedy", "--tier", "compact", "--shard-games", "3", "--seed", "6", "--out", parts, "--games", "8", "--workers", "1")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "resuming after 3 games in 1 shards")
	assert.Contains(t, out, "8 games")

	a, b := readManifest(t, whole), readManifest(t, parts)
	assert.Equal(t, a.Shards, b.Shards, "the resumed dataset is byte for byte the uninterrupted one")
	assert.Equal(t, a.Decisions, b.Decisions)
	entries, err := os.ReadDir(parts)
	require.NoError(t, err)
	assert.Len(t, entries, 1+2*len(b.Shards), "no stray files are left")
}

// TestSelfplayFirstGame checks that the parts of a distributed run
// (--first-game) hold the very shards, under the very names, of one run of
// all the games.
func TestSelfplayFirstGame(t *testing.T) {
	whole := t.TempDir()
	selfplayDataset(t, whole, "--games", "8")
	wm := readManifest(t, whole)
	require.Len(t, wm.Shards, 3)

	for _, part := range []struct{ first, games int }{{0, 3}, {3, 5}, {6, 2}} {
		t.Run(strconv.Itoa(part.first), func(t *testing.T) {
			dir := t.TempDir()
			selfplayDataset(t, dir, "--first-game", strconv.Itoa(part.first), "--games", strconv.Itoa(part.games))
			m := readManifest(t, dir)
			assert.Equal(t, part.first, m.FirstGame)
			assert.Equal(t, part.games, m.Games)
			assert.True(t, m.Complete)
			for _, sh := range m.Shards {
				want := wm.Shards[sh.FirstGame/3]
				assert.Equal(t, want, sh, "a part's shard is the whole run's shard")
			}
			out := selfplayDataset(t, dir, "--first-game", strconv.Itoa(part.first), "--games", strconv.Itoa(part.games))
			assert.Contains(t, out, "complete")
		})
	}

	code, _, errs := runCmd(t, "selfplay", "--tier", "compact", "--shard-games", "3", "--first-game", "4", "--out", t.TempDir(), "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "--first-game must be a multiple of --shard-games")
	dir := t.TempDir()
	selfplayDataset(t, dir, "--first-game", "3", "--games", "3")
	code, _, errs = runCmd(t, "selfplay", "--agents", "mcts:8;greedy", "--tier", "compact", "--shard-games", "3", "--seed", "6", "--out", dir, "--games", "6", "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "was made with first_game 3, this run asks for 0")
}

func TestSelfplayDatasetRefuses(t *testing.T) {
	dir := t.TempDir()
	selfplayDataset(t, dir, "--games", "3")

	code, _, errs := runCmd(t, "selfplay", "--agents", "greedy", "--tier", "compact", "--seed", "6", "--out", dir, "--games", "6", "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "was made with agents [mcts:8 greedy], this run asks for [greedy greedy]")

	code, _, errs = runCmd(t, "selfplay", "--agents", "mcts:8;greedy", "--tier", "planes", "--seed", "6", "--out", dir, "--games", "6", "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "was made with tier compact")

	require.NoError(t, os.Truncate(filepath.Join(dir, "shard-000000.npz"), 100))
	code, _, errs = runCmd(t, "selfplay", "--agents", "mcts:8;greedy", "--tier", "compact", "--shard-games", "3", "--seed", "6", "--out", dir, "--games", "6", "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "shard-000000.npz is 100 bytes")
	assert.Contains(t, errs, "damaged")

	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644))
	code, _, errs = runCmd(t, "selfplay", "--tier", "compact", "--out", other, "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "is not empty and holds no manifest.json")

	require.NoError(t, os.WriteFile(filepath.Join(other, dataset.ManifestName), []byte(`{"format":"yutenv-dataset","version":7}`), 0o644))
	code, _, errs = runCmd(t, "selfplay", "--tier", "compact", "--out", other, "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "version 7")
}

func TestSelfplayErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--tier", "huge", "--out", "x"}, `"huge"`},
		{[]string{"--tier", "compact"}, "give it with --out DIR"},
		{[]string{"--agents", "random;random;random"}, "3 specs for 2 seats"},
		{[]string{"--agents", "mcts:0"}, "count must be an integer"},
		{[]string{"--games", "0"}, "--games must be"},
		{[]string{"--shard-games", "0"}, "--shard-games must be"},
		{[]string{"--first-game", "100"}, "--first-game needs --tier"},
		{[]string{"--rules", "players=1"}, "players must be"},
		{[]string{"--out", "/nonexistent/dir/file.jsonl"}, "the folder /nonexistent/dir does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			code, _, errs := runCmd(t, append([]string{"selfplay", "--quiet"}, tt.args...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, tt.msg)
		})
	}
}

// Without --tier, --out is the records file: a folder (existing, or a name
// ending in a slash) is refused before any game is played, with a line that
// says what --out means and how to write a dataset folder instead.
func TestSelfplayOutFolderWithoutTier(t *testing.T) {
	existing := t.TempDir()
	fresh := filepath.Join(t.TempDir(), "ds")
	for _, out := range []string{existing, existing + "/", fresh + "/"} {
		t.Run(out, func(t *testing.T) {
			code, stdout, errs := runCmd(t, "selfplay", "--games", "3", "--progress", "always", "--out", out)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			require.NotEmpty(t, lines)
			assert.Contains(t, lines[0], "without --tier --out is the file the game records are written to")
			assert.Contains(t, lines[0], "to write a training dataset folder add --tier")
			assert.NotContains(t, errs, "games/s", "refused before any game was played")
			entries, err := os.ReadDir(existing)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing written into the folder")
			_, err = os.Stat(fresh)
			assert.True(t, os.IsNotExist(err), "no folder created")
		})
	}
}

// killedGames is the games of TestSelfplayKilled's dataset run, in shards
// of 2: a third under -race, where the runs in the process are tenfold
// slower; the kill still comes long before the child's run ends.
var killedGames = israce.Scale(60, 20)

// killedRun is the arguments of TestSelfplayKilled's dataset run into dir.
func killedRun(dir string) []string {
	return strings.Fields(fmt.Sprintf("selfplay --tier planes --shard-games 2 --games %d --seed 2 --quiet --out %s", killedGames, dir))
}

// TestSelfplayKilledChild is the child process of TestSelfplayKilled: it
// runs a slow dataset run until its parent kills it.
func TestSelfplayKilledChild(t *testing.T) {
	dir := os.Getenv("YUTENV_KILL_CHILD_DIR")
	if dir == "" {
		t.Skip("only run by TestSelfplayKilled")
	}
	dataset.ShardHook = func() { time.Sleep(40 * time.Millisecond) }
	os.Exit(run(killedRun(dir), io.Discard, os.Stderr))
}

func TestSelfplayKilled(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSelfplayKilledChild$")
	cmd.Env = append(os.Environ(), "YUTENV_KILL_CHILD_DIR="+dir)
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, dataset.ManifestName))
		var m dataset.Manifest
		if err == nil && json.Unmarshal(b, &m) == nil && len(m.Shards) >= 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the child wrote no shards")
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	killed := readManifest(t, dir)
	require.False(t, killed.Complete, "the child was killed mid-run")
	for _, sh := range killed.Shards {
		readNPZ(t, filepath.Join(dir, sh.File)) // every listed shard is whole
		assert.Equal(t, sh.SHA256, fileSHA(t, filepath.Join(dir, sh.File)))
	}

	code, _, errs := runCmd(t, killedRun(dir)...)
	require.Equal(t, 0, code, errs)
	whole := t.TempDir()
	code, _, errs = runCmd(t, killedRun(whole)...)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, readManifest(t, whole).Shards, readManifest(t, dir).Shards, "the resumed run equals an uninterrupted one")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1+2*(killedGames/2), "no stray files are left: the manifest and two files a shard")
}

// A dataset written before the seed scheme was recorded (scheme 1) still
// opens when no game is to be added, and is refused, not mixed, when a run
// would add games under scheme 2.
func TestSelfplayOldSeedScheme(t *testing.T) {
	dir := t.TempDir()
	selfplayDataset(t, dir, "--games", "3")
	path := filepath.Join(dir, dataset.ManifestName)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.EqualValues(t, 2, m["seed_scheme"])
	delete(m, "seed_scheme")
	b, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))

	args := []string{"selfplay", "--agents", "mcts:8;greedy", "--tier", "compact", "--shard-games", "3", "--seed", "6", "--out", dir, "--quiet"}
	code, out, errs := runCmd(t, append(args, "--games", "3")...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "complete, 3 games")
	code, _, errs = runCmd(t, append(args, "--games", "6")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "made with seed scheme 1, this run plays seed scheme 2")
	assert.Equal(t, 3, readManifest(t, dir).Games, "nothing was added")
}

// A seat with playout cap randomization (fast=N) makes the dataset record
// visits and policy_target: 1 on the rows of full searches (whose visits sum
// to the full search's simulations), 0 on the fast ones; the greedy seat's
// rows are targets (a forced move's row is drawn like any other). The same
// flags give the same bytes.
func TestSelfplayDatasetWithPlayoutCap(t *testing.T) {
	var sums []string
	for _, dir := range []string{t.TempDir(), t.TempDir()} {
		code, _, errs := runCmd(t, "selfplay", "--agents", "mcts:32,fast=4;greedy", "--tier", "compact", "--games", "6",
			"--shard-games", "3", "--seed", "6", "--out", dir, "--quiet")
		require.Equal(t, 0, code, errs)
		m := readManifest(t, dir)
		assert.Equal(t, []string{"mcts:32,fast=4", "greedy"}, m.Agents)
		var names []string
		for _, a := range m.Arrays {
			names = append(names, a.Name)
		}
		assert.Equal(t, []string{"visits", "policy_target"}, names[len(names)-2:])
		full, fast := 0, 0
		for _, sh := range m.Shards {
			arr := readNPZ(t, filepath.Join(dir, sh.File))
			seats, target, visits, mask := arr["seat"].ints(), arr["policy_target"].ints(), arr["visits"].float32s(), arr["mask"].ints()
			for row := range sh.Decisions {
				legal, n := 0, float32(0)
				for a := range env.NumActions {
					legal += mask[row*env.NumActions+a]
					n += visits[row*env.NumActions+a]
				}
				switch {
				case seats[row] == 1: // greedy: no search to cap
					assert.Equal(t, 1, target[row], "row %d", row)
				case legal < 2: // a forced move: no search, drawn either way
				case target[row] == 1:
					full++
					assert.Equal(t, float32(32), n, "row %d: a full search's visits", row)
				default:
					fast++
					assert.Equal(t, float32(4), n, "row %d: a fast search's visits", row)
				}
			}
			sums = append(sums, sh.SHA256)
		}
		assert.Positive(t, full)
		assert.Greater(t, fast, full, "a quarter of the searches are full")
	}
	assert.Equal(t, sums[:len(sums)/2], sums[len(sums)/2:], "the same flags write the same shards")
}
