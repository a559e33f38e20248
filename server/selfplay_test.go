package server

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// f32Bytes is a float32 array as the wire carries it.
func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// uniformAnswer answers n leaves with uniform priors and value 0.
func uniformAnswer(n int) map[string]any {
	pr := make([]float32, n*env.NumActions)
	for i := range pr {
		pr[i] = 1
	}
	return map[string]any{"priors": f32Bytes(pr), "values": f32Bytes(make([]float32, n))}
}

// tempOut lets a test's clients write datasets in its temporary folders
// (t.TempDir() is inside os.TempDir()).
var tempOut = []string{os.TempDir()}

func selfplayParams(out string) map[string]any {
	return map[string]any{"rules": "standard", "tier": "compact", "sims": 8, "games": 3, "games_in_flight": 2,
		"seed": 5, "dirichlet_alpha": 0.3, "dirichlet_frac": 0.25, "temperature_moves": 3, "out": out, "shard_games": 2}
}

func TestSelfplayMethods(t *testing.T) {
	ts := startServer(t, "unix", Config{OutDirs: tempOut})
	c := ts.client(t)
	out := filepath.Join(t.TempDir(), "sp")
	p := selfplayParams(out)
	p["first_game"] = 4
	res, err := c.Call("selfplay_new", p)
	require.NoError(t, err)
	id := res["id"]
	first, _ := client.Int(res["first_game"])
	assert.Equal(t, 4, first)
	d, _ := client.Int(res["obs_size"])
	require.Positive(t, d)
	params := map[string]any{"id": id}
	batches := 0
	for {
		r, err := c.Call("selfplay_next", params)
		require.NoError(t, err)
		n, _ := client.Int(r["n"])
		if n == 0 {
			assert.Equal(t, true, r["done"])
			g, _ := client.Int(r["games"])
			assert.Equal(t, 3, g)
			break
		}
		batches++
		require.LessOrEqual(t, n, 2)
		require.Len(t, r["obs"], 4*n*d)
		require.Len(t, r["mask"], n*env.NumActions)
		params = uniformAnswer(n)
		params["id"] = id
	}
	assert.Positive(t, batches)
	_, err = c.Call("selfplay_close", map[string]any{"id": id})
	require.NoError(t, err)
	_, err = c.Call("selfplay_next", map[string]any{"id": id})
	assert.Equal(t, protocol.CodeUnknownHandle, errCode(err))
	m, err := dataset.Open(out, dataset.Config{}, 0)
	assert.Nil(t, m)
	assert.ErrorIs(t, err, dataset.ErrDataset, "the run's dataset exists (and is not a bare config's)")
	assert.FileExists(t, filepath.Join(out, "shard-000002.npz"), "games 4..5 are shard 2, as in one whole run")
	assert.FileExists(t, filepath.Join(out, "shard-000003.npz"))
}

// TestSelfplayDefaults checks that a run whose client gives no settings
// plays az.DefaultConfig: the declaration yutenv.az.SelfPlay's defaults
// are generated from (the server once played without root noise and
// temperature while Python's defaults had both).
func TestSelfplayDefaults(t *testing.T) {
	ts := startServer(t, "unix", Config{OutDirs: tempOut})
	c := ts.client(t)
	out := filepath.Join(t.TempDir(), "sp")
	res, err := c.Call("selfplay_new", map[string]any{"out": out})
	require.NoError(t, err)
	def := az.DefaultConfig()
	for key, want := range map[string]any{"tier": def.Tier.String(), "games": def.Games, "games_in_flight": def.InFlight,
		"max_batch": def.InFlight, "eval_timeout": def.EvalTimeout.Seconds(), "first_game": def.FirstGame} {
		assert.EqualValues(t, want, res[key], key)
	}
	_, err = c.Call("selfplay_close", map[string]any{"id": res["id"]})
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(out, dataset.ManifestName))
	require.NoError(t, err)
	var man struct {
		Agents     []string `json:"agents"`
		ShardGames int      `json:"shard_games"`
	}
	require.NoError(t, json.Unmarshal(b, &man))
	require.NotEmpty(t, man.Agents)
	assert.Equal(t, def.SearchSpec(), man.Agents[0], "sims, c, root noise and temperature")
	assert.Equal(t, def.ShardGames, man.ShardGames)
}

func TestSelfplayBadClients(t *testing.T) {
	ts := startServer(t, "tcp", Config{OutDirs: tempOut})
	t.Run("shapes", func(t *testing.T) {
		c := ts.client(t)
		res, err := c.Call("selfplay_new", selfplayParams(filepath.Join(t.TempDir(), "sp")))
		require.NoError(t, err)
		id := res["id"]
		r, err := c.Call("selfplay_next", map[string]any{"id": id})
		require.NoError(t, err)
		n, _ := client.Int(r["n"])
		require.Positive(t, n)
		ans := uniformAnswer(n + 1)
		ans["id"] = id
		_, err = c.Call("selfplay_next", ans)
		require.Equal(t, protocol.CodeBadRequest, errCode(err))
		assert.Contains(t, err.Error(), "params.priors")
		ans = uniformAnswer(n)
		ans["values"] = f32Bytes(make([]float32, n+3))
		ans["id"] = id
		_, err = c.Call("selfplay_next", ans)
		require.Equal(t, protocol.CodeBadRequest, errCode(err))
		assert.Contains(t, err.Error(), "params.values")
		ans["values"] = []byte{1, 2, 3}
		_, err = c.Call("selfplay_next", ans)
		require.Equal(t, protocol.CodeBadRequest, errCode(err))
		assert.ErrorContains(t, err, "selfplay_next: params.values: 3 bytes is not a whole number of float32", "it names the method and param")
		ans = uniformAnswer(n)
		ans["id"] = id
		_, err = c.Call("selfplay_next", ans)
		require.NoError(t, err, "after refused answers the batch still waits for a good one")
	})
	t.Run("never answers", func(t *testing.T) {
		c := ts.client(t)
		p := selfplayParams(filepath.Join(t.TempDir(), "sp"))
		p["eval_timeout"] = 0.05
		res, err := c.Call("selfplay_new", p)
		require.NoError(t, err)
		id := res["id"]
		r, err := c.Call("selfplay_next", map[string]any{"id": id})
		require.NoError(t, err)
		n, _ := client.Int(r["n"])
		time.Sleep(300 * time.Millisecond) // the client thinks too long
		ans := uniformAnswer(n)
		ans["id"] = id
		_, err = c.Call("selfplay_next", ans)
		require.Equal(t, protocol.CodeEvalTimeout, errCode(err))
		assert.Contains(t, err.Error(), "eval_timeout")
	})
	t.Run("params", func(t *testing.T) {
		c := ts.client(t)
		for _, tc := range []struct {
			key  string
			val  any
			code protocol.Code
		}{
			{"games_in_flight", 4096, protocol.CodeLimitExceeded}, // × sims 2000 below
			{"sims", 0, protocol.CodeBadRequest},
			{"games_in_flight", 100000, protocol.CodeBadRequest},
			{"c", math.NaN(), protocol.CodeBadRequest},
			{"tier", "huge", protocol.CodeBadRequest},
			{"out", "", protocol.CodeBadRequest},
			{"bogus", 1, protocol.CodeBadRequest},
			{"first_game", 3, protocol.CodeBadRequest}, // not a multiple of shard_games 2
			{"first_game", -2, protocol.CodeBadRequest},
		} {
			p := selfplayParams(filepath.Join(t.TempDir(), "sp"))
			p["sims"] = 2000
			p[tc.key] = tc.val
			_, err := c.Call("selfplay_new", p)
			assert.Equal(t, tc.code, errCode(err), "%s=%v: %v", tc.key, tc.val, err)
		}
		// A float setting out of its bounds names the method and param, as
		// every other bad param does (it used to say only "1.5 is not a
		// number in 0..1").
		for key, v := range map[string]float64{"c": math.NaN(), "dirichlet_frac": 1.5} {
			p := selfplayParams(filepath.Join(t.TempDir(), "sp"))
			p[key] = v
			_, err := c.Call("selfplay_new", p)
			assert.ErrorContains(t, err, "bad_request: selfplay_new: params."+key+": ")
			assert.ErrorContains(t, err, "is not a number in")
		}
		_, err := c.Call("selfplay_next", map[string]any{"id": 999})
		assert.Equal(t, protocol.CodeUnknownHandle, errCode(err))
		_, err = c.Call("selfplay_next", map[string]any{})
		assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	})
}

// TestNetOpponent plays a network through make's opponent.
func TestNetOpponent(t *testing.T) {
	ts := startServer(t, "unix", Config{NetDirs: []string{filepath.Join("..", "nnet", "testdata")}})
	c := ts.client(t)
	abs, err := filepath.Abs(filepath.Join("..", "nnet", "testdata", "go-tiny.ynet"))
	require.NoError(t, err)
	for _, spec := range []string{"net:go-tiny.ynet", "net:go-tiny.ynet,sims=4", "net:" + abs} {
		h := makeHandle(t, c, map[string]any{"n": 2, "opponent": spec})
		_, err := c.Call("reset", map[string]any{"handle": h, "seed": 1})
		require.NoError(t, err)
	}
	_, err = c.Call("make", map[string]any{"n": 1, "opponent": "net:/nonexistent.ynet"})
	assert.Equal(t, protocol.CodeBadNet, errCode(err))
}

// FuzzSelfplayAnswer sends arbitrary priors and values to a live run: the
// server answers bad_request or the next batch, never anything else, and
// the run stays usable.
func FuzzSelfplayAnswer(f *testing.F) {
	f.Add(f32Bytes(make([]float32, env.NumActions)), f32Bytes([]float32{0}))
	f.Add(f32Bytes([]float32{float32(math.NaN())}), f32Bytes([]float32{float32(math.Inf(1)), 2}))
	f.Add([]byte{1, 2, 3}, []byte{})
	ts := startServer(f, "unix", Config{OutDirs: tempOut})
	c := ts.client(f)
	dir := f.TempDir()
	runs := 0
	var id any
	var n int
	start := func(t *testing.T) {
		runs++
		res, err := c.Call("selfplay_new", selfplayParams(filepath.Join(dir, "sp", string(rune('a'+runs%26)), time.Now().Format("150405.000000000"))))
		require.NoError(t, err)
		id = res["id"]
		r, err := c.Call("selfplay_next", map[string]any{"id": id})
		require.NoError(t, err)
		n, _ = client.Int(r["n"])
	}
	f.Fuzz(func(t *testing.T, priors, values []byte) {
		// The one connection lives as long as the fuzzing (-fuzztime), so
		// its deadline guards each input, not the whole run.
		require.NoError(t, c.Conn().SetDeadline(time.Now().Add(60*time.Second)))
		if id == nil || n == 0 {
			start(t)
		}
		r, err := c.Call("selfplay_next", map[string]any{"id": id, "priors": priors, "values": values})
		if err != nil {
			require.Equal(t, protocol.CodeBadRequest, errCode(err), "%v", err)
			return
		}
		n, _ = client.Int(r["n"])
		if n == 0 {
			_, err = c.Call("selfplay_close", map[string]any{"id": id})
			require.NoError(t, err)
			id = nil
		}
	})
}

// TestSelfplayGumbel starts a Gumbel run through the protocol (params
// gumbel and gumbel_m) and plays it out; the manifest names the search,
// and a Gumbel run with temperature moves or Dirichlet noise is refused.
// playRun answers run id's batches with uniform priors until it ends and
// returns the manifest of its dataset in out.
func playRun(t *testing.T, c *client.Client, id any, out string) string {
	t.Helper()
	params := map[string]any{"id": id}
	for {
		r, err := c.Call("selfplay_next", params)
		require.NoError(t, err)
		n, _ := client.Int(r["n"])
		if n == 0 {
			break
		}
		params = uniformAnswer(n)
		params["id"] = id
	}
	man, err := os.ReadFile(filepath.Join(out, dataset.ManifestName))
	require.NoError(t, err)
	return string(man)
}

func TestSelfplayGumbel(t *testing.T) {
	ts := startServer(t, "unix", Config{OutDirs: tempOut})
	c := ts.client(t)
	out := filepath.Join(t.TempDir(), "sp")
	p := selfplayParams(out)
	p["gumbel"], p["gumbel_m"] = true, 2
	_, err := c.Call("selfplay_new", p)
	assert.Equal(t, protocol.CodeBadRequest, errCode(err), "temperature moves and Dirichlet noise do not go with gumbel")
	assert.ErrorContains(t, err, "gumbel")
	p["temperature_moves"], p["dirichlet_alpha"] = 0, 0
	res, err := c.Call("selfplay_new", p)
	require.NoError(t, err)
	man := playRun(t, c, res["id"], out)
	assert.Contains(t, man, "az:8,gumbel=1,m=2")
}

// TestSelfplayPlayoutCap starts a run with playout cap randomization
// through the protocol (params fast_sims and full_prob) and plays it out:
// the manifest names the search and lists the array policy_target; a
// fast_sims above sims or a full_prob outside 0..1 is refused.
func TestSelfplayPlayoutCap(t *testing.T) {
	ts := startServer(t, "unix", Config{OutDirs: tempOut})
	c := ts.client(t)
	for _, tc := range []struct {
		name string
		set  map[string]any
	}{
		{"fast above sims", map[string]any{"fast_sims": 9}},
		{"probability above 1", map[string]any{"fast_sims": 2, "full_prob": 1.5}},
		{"negative probability", map[string]any{"fast_sims": 2, "full_prob": -0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selfplayParams(filepath.Join(t.TempDir(), "sp"))
			for k, v := range tc.set {
				p[k] = v
			}
			_, err := c.Call("selfplay_new", p)
			assert.Equal(t, protocol.CodeBadRequest, errCode(err))
		})
	}
	out := filepath.Join(t.TempDir(), "sp")
	p := selfplayParams(out)
	p["fast_sims"], p["full_prob"] = 2, 0.25
	res, err := c.Call("selfplay_new", p)
	require.NoError(t, err)
	man := playRun(t, c, res["id"], out)
	assert.Contains(t, man, ",fast=2,full_prob=0.25")
	assert.Contains(t, man, `"policy_target"`)
}

// TestMaxKeysHoldsEveryDeclaredParams: every declared params map fits the
// codec's key bound, so a client that sends every param of a method is
// never refused for the count alone (selfplay_new with Gumbel and playout
// cap randomization sent 17 keys when the bound was 16).
func TestMaxKeysHoldsEveryDeclaredParams(t *testing.T) {
	for _, m := range methods {
		t.Run(m.Name, func(t *testing.T) {
			assert.LessOrEqual(t, len(protocol.Keys(m.Params)), msgp.MaxKeys)
		})
	}
	ts := startServer(t, "unix", Config{OutDirs: tempOut})
	c := ts.client(t)
	p := selfplayParams(filepath.Join(t.TempDir(), "sp"))
	for k, v := range map[string]any{"c": 1.5, "dirichlet_alpha": 0.0, "temperature_moves": 0, "gumbel": true, "gumbel_m": 4,
		"fast_sims": 2, "full_prob": 0.5, "max_batch": 2, "eval_timeout": 30.0, "first_game": 0} {
		p[k] = v
	}
	require.Len(t, p, len(protocol.Keys(methods[methodIDs["selfplay_new"]].Params)), "every declared param of selfplay_new")
	res, err := c.Call("selfplay_new", p)
	require.NoError(t, err)
	_, err = c.Call("selfplay_close", map[string]any{"id": res["id"]})
	assert.NoError(t, err)
}
