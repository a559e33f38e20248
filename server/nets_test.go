package server

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/nnet/nettest"
	"github.com/yutenv/yutenv/protocol"
)

// netServer serves a config whose only network folder is a fresh
// directory, which it returns with the server.
func netServer(t *testing.T, cfg Config) (*testServer, string) {
	dir := t.TempDir()
	cfg.NetDirs = append(cfg.NetDirs, dir)
	return startServer(t, "unix", cfg), dir
}

// refusedText is the one message of a refused name.
func refusedText(method, field, name string) string {
	return fmt.Sprintf("%s: params.%s: network refused: %q is not a network file this server may open (it opens regular files inside its --net-dir folders)", method, field, name)
}

// TestNetNamesOutsideTheFoldersAreRefusedAlike asks for networks a client
// may not read: whatever the reason (missing, outside the folders, behind
// a symbolic link or "..", unreadable, a directory, a FIFO, a device) the
// answer is bad_net with one message that depends only on the name. Before
// the policy, the server opened them all and its errors told which existed
// and their first byte (code=72 for /etc/shadow).
func TestNetNamesOutsideTheFoldersAreRefusedAlike(t *testing.T) {
	ts, dir := netServer(t, Config{})
	c := ts.client(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.ynet")
	nettest.Write(t, secret, nettest.Net(nettest.Small(1), 8)) // a valid net, just not allowed
	locked := filepath.Join(outside, "locked")
	require.NoError(t, os.WriteFile(locked, []byte("Hello"), 0o000))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link.ynet")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.ynet"), 0o644))
	rel, err := filepath.Rel(dir, secret)
	require.NoError(t, err)
	names := []string{
		filepath.Join(outside, "missing.ynet"), "../missing.ynet", "link.ynet/missing.ynet",
		secret, rel, "link.ynet", filepath.Join(dir, "link.ynet"), locked, "sub", filepath.Join(dir, "sub"),
		"fifo.ynet", "/dev/urandom", "/etc/shadow", "/etc/passwd", "/",
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, call := range []struct{ method, field string }{{"make", "opponent"}, {"analyse", "agent"}} {
				p := map[string]any{"n": 1, "opponent": "net:" + name}
				if call.method == "analyse" {
					p = map[string]any{"game": declareGame(t, c, "standard"), "states": []byte{}, "agent": "net:" + name}
				}
				_, err := c.Call(call.method, p)
				require.Error(t, err)
				assert.Equal(t, protocol.CodeBadNet, errCode(err))
				assert.Equal(t, string(protocol.CodeBadNet)+": "+refusedText(call.method, call.field, name), err.Error())
			}
		})
	}
}

// TestMissingNetInsideTheFoldersIsSaidPlainly: a name that lies, as written,
// inside a --net-dir folder and is not there is "in none of the folders"
// (bad_net), not a refusal that reads like a permission problem: loading
// it would tell the client as much.
func TestMissingNetInsideTheFoldersIsSaidPlainly(t *testing.T) {
	ts, dir := netServer(t, Config{})
	c := ts.client(t)
	for _, name := range []string{"missing.ynet", filepath.Join(dir, "missing.ynet"), "sub/../missing.ynet", "no/such/dir.ynet"} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Call("make", map[string]any{"n": 1, "opponent": "net:" + name})
			require.Error(t, err)
			assert.Equal(t, protocol.CodeBadNet, errCode(err))
			assert.Equal(t, fmt.Sprintf("bad_net: make: params.opponent: no such network file: %q is in none of the server's --net-dir folders", name), err.Error())
		})
	}
}

// TestNetNamesInsideTheFolders plays networks named in the ways the policy
// allows: relative, absolute, through a symbolic link that stays inside,
// and from the second folder.
func TestNetNamesInsideTheFolders(t *testing.T) {
	other := t.TempDir()
	ts, dir := netServer(t, Config{NetDirs: []string{other}})
	c := ts.client(t)
	nettest.Write(t, filepath.Join(dir, "a.ynet"), nettest.Net(nettest.Small(2), 8))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "gen"), 0o755))
	nettest.Write(t, filepath.Join(dir, "gen", "b.ynet"), nettest.Net(nettest.Small(3), 8))
	require.NoError(t, os.Symlink(filepath.Join(dir, "gen", "b.ynet"), filepath.Join(dir, "best.ynet")))
	for _, name := range []string{"a.ynet", "gen/b.ynet", filepath.Join(dir, "a.ynet"), "best.ynet", filepath.Join(dir, "best.ynet"), "gen/../a.ynet"} {
		t.Run(name, func(t *testing.T) {
			for _, spec := range []string{"net:" + name, "net:" + name + ",sims=4"} {
				res, err := c.Call("make", map[string]any{"n": 2, "opponent": spec})
				require.NoError(t, err)
				assert.Equal(t, spec, res["opponent"], "the reply names the net as the client did")
				h, _ := client.Int(res["handle"])
				_, err = c.Call("reset", map[string]any{"handle": h, "seed": 1})
				require.NoError(t, err)
			}
		})
	}
}

// TestNetOfOtherRulesIsRefusedAtMake: a network plays only the rules its
// file records, so make refuses it as an opponent (single or in a mixture)
// under other rules, in one line that names no path of the server's.
func TestNetOfOtherRulesIsRefusedAtMake(t *testing.T) {
	ts, dir := netServer(t, Config{})
	c := ts.client(t)
	nettest.Write(t, filepath.Join(dir, "std.ynet"), nettest.Net(nettest.Small(2), 8)) // records "standard"
	for _, params := range []map[string]any{
		{"n": 1, "rules": "kata", "opponent": "net:std.ynet"},
		{"n": 1, "rules": "kata", "opponent": "net:std.ynet,sims=4"},
		{"n": 1, "rules": "kata", "opponents": []any{"greedy", "net:std.ynet"}},
	} {
		_, err := c.Call("make", params)
		require.Error(t, err)
		assert.Equal(t, protocol.CodeBadRequest, errCode(err))
		assert.Contains(t, err.Error(), `agent net plays only the rules its network was trained for, "standard" (tier compact, observation layout 2), not "kata"`)
		assert.NotContains(t, err.Error(), dir)
	}
	_, err := c.Call("make", map[string]any{"n": 1, "opponent": "net:std.ynet"})
	assert.NoError(t, err, "its own rules")
}

// TestNetFIFORefusedWhileOthersLoad names a FIFO and a device inside an
// allowed folder while another client loads a real network: both answers
// come at once. Before, opening the FIFO blocked forever holding the
// cache's lock, and every other client's net load hung behind it; the
// device (/dev/urandom) was read up to 256 MiB.
func TestNetFIFORefusedWhileOthersLoad(t *testing.T) {
	ts, dir := netServer(t, Config{NetDirs: []string{"/dev"}})
	fifo := filepath.Join(dir, "fifo.ynet")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	t.Cleanup(func() { // free an open that blocked, should there be one
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	nettest.Write(t, filepath.Join(dir, "good.ynet"), nettest.Net(nettest.Small(4), 16))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, spec := range []string{"net:" + fifo, "net:/dev/urandom", "net:" + filepath.Join(dir, "good.ynet")} {
		c := ts.client(t)
		require.NoError(t, c.Conn().SetDeadline(time.Now().Add(10*time.Second)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Call("make", map[string]any{"n": 1, "opponent": spec})
		}()
	}
	wg.Wait()
	assert.Equal(t, protocol.CodeBadNet, errCode(errs[0]), "fifo: %v", errs[0])
	assert.Equal(t, protocol.CodeBadNet, errCode(errs[1]), "urandom: %v", errs[1])
	assert.NoError(t, errs[2], "the other client's load")
	runtime.ReadMemStats(&ms)
	assert.Less(t, ms.TotalAlloc-before, uint64(32<<20), "bytes allocated while refusing a device")
}

// TestNetSpellingsShareOneCacheEntry names one 1 MB network 30 ways
// (relative, absolute, with . and .., through symbolic links, a hard link
// and a copy): the cache holds it once. Before, the cache was keyed by the
// raw name and 30 spellings of a 30 MB file took ~950 MB.
func TestNetSpellingsShareOneCacheEntry(t *testing.T) {
	ts, dir := netServer(t, Config{})
	c := ts.client(t)
	n := nettest.Net(nettest.Small(5), 1024, 64)
	nettest.Write(t, filepath.Join(dir, "big.ynet"), n)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	// Absolute spellings (as well as relative ones) so that the test also
	// runs against the server from before the folder policy.
	names := []string{filepath.Join(dir, "big.ynet"), dir + "/./big.ynet", dir + "/d/../big.ynet", dir + "/././big.ynet",
		dir + "//big.ynet", dir + "/d/./../big.ynet", dir + "/./d/../big.ynet", dir + "/d/../d/../big.ynet"}
	for i := 0; len(names) < 30; i++ {
		link := fmt.Sprintf("link%d.ynet", i)
		switch i % 3 {
		case 0:
			require.NoError(t, os.Symlink("big.ynet", filepath.Join(dir, link)))
		case 1:
			require.NoError(t, os.Link(filepath.Join(dir, "big.ynet"), filepath.Join(dir, link)))
		case 2:
			nettest.Write(t, filepath.Join(dir, link), n) // a copy: another file, the same content
		}
		names = append(names, filepath.Join(dir, link))
	}
	nets0, bytes0 := nnet.CacheStats()
	for _, name := range names {
		_, err := c.Call("make", map[string]any{"n": 1, "opponent": "net:" + name})
		require.NoError(t, err, name)
	}
	nets, bytes := nnet.CacheStats()
	assert.Equal(t, 1, nets-nets0, "cache entries added by %d spellings", len(names))
	assert.Equal(t, n.Bytes(), bytes-bytes0)
}

// TestNetCacheBound loads more distinct networks than MaxNetCacheBytes
// holds: the cache evicts the least recently used and stays in its bound.
func TestNetCacheBound(t *testing.T) {
	one := nettest.Net(nettest.Small(0), 256).Bytes()
	ts, dir := netServer(t, Config{MaxNetCacheBytes: 2*one + one/2})
	t.Cleanup(func() { nnet.SetCacheLimit(DefaultMaxNetCacheBytes) })
	c := ts.client(t)
	for i := range 6 {
		name := fmt.Sprintf("n%d.ynet", i)
		nettest.Write(t, filepath.Join(dir, name), nettest.Net(nettest.Small(10+i), 256))
		_, err := c.Call("make", map[string]any{"n": 1, "opponent": "net:" + filepath.Join(dir, name)})
		require.NoError(t, err)
		nets, bytes := nnet.CacheStats()
		assert.LessOrEqual(t, bytes, 2*one+one/2)
		assert.LessOrEqual(t, nets, 2)
	}
}

// TestNetNestedFileIsAClientError names a 12 MB file of nested arrays: the
// client gets bad_net and the server goes on serving. Before, decoding it
// overflowed the goroutine stack, a fatal error that killed the server
// for every client.
func TestNetNestedFileIsAClientError(t *testing.T) {
	ts, dir := netServer(t, Config{MaxNetBytes: 16 << 20}) // room for the 12 MB file: the depth check refuses it
	require.NoError(t, os.WriteFile(filepath.Join(dir, "deep.ynet"), nettest.Nested(12<<20), 0o644))
	c := ts.client(t)
	_, err := c.Call("make", map[string]any{"n": 1, "opponent": "net:" + filepath.Join(dir, "deep.ynet")})
	assert.Equal(t, protocol.CodeBadNet, errCode(err), "%v", err)
	assert.Contains(t, fmt.Sprint(err), "nested deeper than")
	other := ts.client(t)
	h := makeHandle(t, other, map[string]any{"n": 2, "opponent": "greedy"})
	_, err = other.Call("reset", map[string]any{"handle": h, "seed": 1})
	assert.NoError(t, err)
}

// TestNetHugeWeightsAndNaNOutputs: a file with a finite but huge weight
// (3e38) is refused on load, and a net whose weights are each within
// nnet.MaxWeight but whose forward pass overflows answers bad_net from
// analyse and from a step it plays in, never a NaN policy. Before, the
// 3e38 net loaded and analyse replied a NaN policy.
func TestNetHugeWeightsAndNaNOutputs(t *testing.T) {
	ts, dir := netServer(t, Config{})
	c := ts.client(t)
	nettest.Write(t, filepath.Join(dir, "huge.ynet"), nettest.Huge())
	_, err := c.Call("make", map[string]any{"n": 1, "opponent": "net:" + filepath.Join(dir, "huge.ynet")})
	assert.Equal(t, protocol.CodeBadNet, errCode(err), "%v", err)
	assert.Contains(t, fmt.Sprint(err), "above 10000 in magnitude")

	nettest.Write(t, filepath.Join(dir, "inf.ynet"), nettest.Overflowing())
	g := declareGame(t, c, "standard")
	var packed []byte
	for seed := uint64(0); len(packed) < 3*env.PackedSize; seed++ {
		if s := midGameState(t, seed); s.Phase() == env.PhaseMove {
			packed = s.AppendPacked(packed)
		}
	}
	inf := "net:" + filepath.Join(dir, "inf.ynet")
	for _, spec := range []string{inf, inf + ",sims=4"} {
		_, err = c.Call("analyse", map[string]any{"game": g, "states": packed, "agent": spec})
		assert.Equal(t, protocol.CodeBadNet, errCode(err), "%s: %v", spec, err)
		assert.Contains(t, fmt.Sprint(err), "NaN or infinite")
	}
	// As an opponent it fails the reset or step it plays in (seat random:
	// in some of the 8 envs it moves first), with bad_net.
	h := makeHandle(t, c, map[string]any{"n": 8, "opponent": inf, "seat": "random", "illegal": "penalty"})
	_, err = c.Call("reset", map[string]any{"handle": h, "seed": 1})
	for i := 0; i < 20 && err == nil; i++ {
		_, err = c.Call("step", map[string]any{"handle": h, "actions": int32Bin(0, 0, 0, 0, 0, 0, 0, 0)})
	}
	assert.Equal(t, protocol.CodeBadNet, errCode(err), "%v", err)
}

// TestNetNoFoldersNoNets: a server without NetDirs refuses every name.
func TestNetNoFoldersNoNets(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	abs, err := filepath.Abs(filepath.Join("..", "nnet", "testdata", "go-tiny.ynet"))
	require.NoError(t, err)
	_, err = c.Call("make", map[string]any{"n": 1, "opponent": "net:" + abs})
	assert.Equal(t, protocol.CodeBadNet, errCode(err))
	assert.True(t, strings.Contains(fmt.Sprint(err), "--net-dir"), "%v", err)
}

// TestLuckNetThroughTheFolderPolicy: make's luck may name a network file
// (net:NAME) as its value, opened by the same policy as an opponent's: a
// name inside the folders values every step's luck, one outside is refused
// with the same message, and a network of other rules is the client's
// mistake (bad_request).
func TestLuckNetThroughTheFolderPolicy(t *testing.T) {
	ts, dir := netServer(t, Config{})
	c := ts.client(t)
	nettest.Write(t, filepath.Join(dir, "v.ynet"), nettest.Net(nettest.Small(2), 16))
	outside := filepath.Join(t.TempDir(), "secret.ynet")
	nettest.Write(t, outside, nettest.Net(nettest.Small(2), 16))

	made, err := c.Call("make", map[string]any{"n": 2, "opponent": "random", "luck": "net:v.ynet", "info": true})
	require.NoError(t, err)
	assert.Equal(t, "net:v.ynet", made["luck"])
	h := made["handle"]
	res, err := c.Call("reset", map[string]any{"handle": h, "seed": 1})
	require.NoError(t, err)
	var moved float64 // the luck of every throw so far, both envs, seat 0
	for step := 0; step < 20; step++ {
		mask := res["mask"].([]byte)
		actions := make([]any, 2)
		for i := range actions {
			actions[i] = max(0, bytes.IndexByte(mask[i*env.NumActions:(i+1)*env.NumActions], 1)) // 0: an ended env, reset by this step
		}
		res, err = c.Call("step", map[string]any{"handle": h, "actions": actions})
		require.NoError(t, err)
		for _, info := range res["info"].([]any) {
			luck := info.(map[string]any)["luck"].([]any)
			require.Len(t, luck, 2)
			a, b := toFloat(luck[0]), toFloat(luck[1])
			assert.InDelta(t, -a, b, 1e-9, "two seats: one's luck is the other's negation")
			moved += math.Abs(a)
		}
	}
	assert.Positive(t, moved, "the network valued the throws")

	_, err = c.Call("make", map[string]any{"n": 1, "luck": "net:" + outside})
	require.Error(t, err)
	assert.Equal(t, protocol.CodeBadNet, errCode(err))
	assert.Equal(t, string(protocol.CodeBadNet)+": "+refusedText("make", "luck", outside), err.Error())

	_, err = c.Call("make", map[string]any{"n": 1, "luck": "net:v.ynet", "rules": "pieces=2"})
	require.Error(t, err)
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	assert.Contains(t, err.Error(), "rules the network was not trained for")
}

// toFloat reads a msgpack number decoded as any float or integer type.
func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int8:
		return float64(x)
	}
	return math.NaN()
}
