package nnet

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

var update = flag.Bool("update", false, "rewrite testdata/go-tiny.*")

// randomNet returns a version 1 net of tier compact (ReLU, one trunk) with
// the given hidden widths and weights drawn from seed.
func randomNet(seed uint64, hidden ...int) *Net {
	return shapedNet(seed, shape{act: ReLU, trunk: hidden})
}

// shape is a net's activation and the widths of its three trunks.
type shape struct {
	act                Activation
	trunk, policy, val []int
}

// shapedNet returns a net of tier compact of shape sh with weights drawn
// from seed (the layers in the order trunk, policy head, value head, policy
// trunk, value trunk, so that a version 1 shape draws randomNet's weights).
func shapedNet(seed uint64, sh shape) *Net {
	r := rand.New(rand.NewPCG(seed, 1))
	sp, _ := obs.SpaceOf(obs.Compact)
	mk := func(in, out int) Layer {
		l := Layer{In: in, Out: out, W: make([]float32, in*out), B: make([]float32, out)}
		s := float32(1 / math.Sqrt(float64(in)))
		for i := range l.W {
			l.W[i] = (2*r.Float32() - 1) * s
		}
		for i := range l.B {
			l.B[i] = (2*r.Float32() - 1) * 0.1
		}
		return l
	}
	mkAll := func(in int, widths []int) ([]Layer, int) {
		var out []Layer
		for _, h := range widths {
			out = append(out, mk(in, h))
			in = h
		}
		return out, in
	}
	n := &Net{Tier: obs.Compact, Rules: "standard", Activation: sh.act}
	var in int
	n.Trunk, in = mkAll(sp.Size, sh.trunk)
	pIn, vIn := in, in
	if len(sh.policy) > 0 {
		pIn = sh.policy[len(sh.policy)-1]
	}
	if len(sh.val) > 0 {
		vIn = sh.val[len(sh.val)-1]
	}
	n.Policy, n.Value = mk(pIn, env.NumActions), mk(vIn, 1)
	n.PolicyTrunk, _ = mkAll(in, sh.policy)
	n.ValueTrunk, _ = mkAll(in, sh.val)
	return n
}

// obsSize is the size of n's observations.
func obsSize(n *Net) int {
	sp, err := obs.SpaceOf(n.Tier)
	if err != nil {
		panic(err)
	}
	return sp.Size
}

// activate is the activation a in float64, the plain way.
func activate(a Activation, x float64) float64 {
	switch a {
	case ReLU:
		return math.Max(x, 0)
	case Tanh:
		return math.Tanh(x)
	case LeakyReLU:
		if x < 0 {
			return float64(LeakySlope) * x
		}
		return x
	case ELU:
		if x < 0 {
			return math.Expm1(x)
		}
		return x
	case SiLU:
		return x / (1 + math.Exp(-x))
	}
	panic(a)
}

// reference evaluates n in float64, the plain way.
func reference(n *Net, x []float32) ([]float64, float64) {
	in := make([]float64, len(x))
	for i, v := range x {
		in[i] = float64(v)
	}
	apply := func(l Layer, in []float64) []float64 {
		out := make([]float64, l.Out)
		for o := range out {
			s := float64(l.B[o])
			for i := range in {
				s += float64(l.W[o*l.In+i]) * in[i]
			}
			out[o] = s
		}
		return out
	}
	stack := func(ls []Layer, in []float64) []float64 {
		for _, l := range ls {
			in = apply(l, in)
			for i := range in {
				in[i] = activate(n.Activation, in[i])
			}
		}
		return in
	}
	h := stack(n.Trunk, in)
	return apply(n.Policy, stack(n.PolicyTrunk, h)), apply(n.Value, stack(n.ValueTrunk, h))[0]
}

// shapes are the nets the round trip and the forward pass are tested on:
// version 1's, then one of every activation with separate trunks (as
// Stable-Baselines3 builds them), with and without shared layers, and one
// without any hidden layer.
var shapes = []struct {
	name    string
	sh      shape
	version int
}{
	{"v1 relu 32-16", shape{act: ReLU, trunk: []int{32, 16}}, 1},
	{"tanh pi/vf 64-64", shape{act: Tanh, policy: []int{64, 64}, val: []int{64, 64}}, 2},
	{"relu shared 32 pi 16 vf 24-8", shape{act: ReLU, trunk: []int{32}, policy: []int{16}, val: []int{24, 8}}, 2},
	{"leaky_relu shared 16 vf 8", shape{act: LeakyReLU, trunk: []int{16}, val: []int{8}}, 2},
	{"elu pi 16 vf 16", shape{act: ELU, policy: []int{16}, val: []int{16}}, 2},
	{"silu shared 16 pi 8", shape{act: SiLU, trunk: []int{16}, policy: []int{8}}, 2},
	{"tanh shared 16", shape{act: Tanh, trunk: []int{16}}, 2},
	{"linear", shape{act: ReLU}, 2},
}

// TestRoundTripAndForward writes and reads back nets of every shape (in
// the oldest version that holds each) and checks the forward pass against
// the float64 reference, allocating nothing.
func TestRoundTripAndForward(t *testing.T) {
	for i, tc := range shapes {
		t.Run(tc.name, func(t *testing.T) {
			n := shapedNet(uint64(i+1), tc.sh)
			b, err := n.MarshalBinary()
			require.NoError(t, err)
			var head struct {
				Version int `msgpack:"version"`
			}
			require.NoError(t, msgpack.Unmarshal(b, &head))
			assert.Equal(t, tc.version, head.Version, "the oldest version that holds the net")
			back, err := Parse(b)
			require.NoError(t, err)
			assert.Equal(t, n, back)
			r := rand.New(rand.NewPCG(2, 2))
			x := make([]float32, obsSize(n))
			logits := make([]float32, env.NumActions)
			sc := back.NewScratch()
			for range 5 {
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				v := back.Forward(sc, x, logits)
				wantL, wantV := reference(n, x)
				assert.InDelta(t, wantV, float64(v), 1e-5)
				for a := range logits {
					assert.InDelta(t, wantL[a], float64(logits[a]), 1e-5)
				}
			}
			assert.Zero(t, testing.AllocsPerRun(100, func() { back.Forward(sc, x, logits) }), "Forward allocates nothing")
		})
	}
}

// TestForwardSkipsZeroInputs checks the sparse forward pass against the
// float64 reference on inputs that are mostly zeros (as observations are),
// on a net that is evaluated from two goroutines at once (the transposed
// weights are built once, by whichever comes first).
func TestForwardSkipsZeroInputs(t *testing.T) {
	n := randomNet(3, 64, 48, 32)
	r := rand.New(rand.NewPCG(4, 4))
	for _, density := range []float64{0, 0.1, 0.5, 1} {
		t.Run(fmt.Sprint(density), func(t *testing.T) {
			x := make([]float32, n.Trunk[0].In)
			for i := range x {
				if r.Float64() < density {
					x[i] = float32(r.NormFloat64())
				}
			}
			wantL, wantV := reference(n, x)
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					logits := make([]float32, env.NumActions)
					v := n.Forward(n.NewScratch(), x, logits)
					assert.InDelta(t, wantV, float64(v), 1e-5)
					for a := range logits {
						assert.InDelta(t, wantL[a], float64(logits[a]), 1e-5)
					}
				}()
			}
			wg.Wait()
		})
	}
}

// golden is the shared golden's expected outputs (written by
// yutenv.az.golden.write_golden, or by this test with -update).
type golden struct {
	Net       string      `json:"net"`
	Tier      string      `json:"tier"`
	Tolerance float64     `json:"tolerance"`
	Obs       [][]float32 `json:"obs"`
	Mask      [][]int     `json:"mask"`
	Logits    [][]float64 `json:"logits"`
	ValueRaw  []float64   `json:"value_raw"`
	Value     []float64   `json:"value"`
	Priors    [][]float64 `json:"priors"`
}

// TestGolden checks every testdata/*.expected.json: the Python writer's
// (tiny) and this package's own (go-tiny), so both readers agree to 1e-5.
func TestGolden(t *testing.T) {
	if *update {
		writeGoGolden(t)
	}
	files, err := filepath.Glob("testdata/*.expected.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			var g golden
			require.NoError(t, json.Unmarshal(b, &g))
			n, err := Load(filepath.Join("testdata", g.Net))
			require.NoError(t, err)
			assert.Equal(t, g.Tier, n.Tier.String())
			sc := n.NewScratch()
			logits := make([]float32, env.NumActions)
			priors := make([]float32, env.NumActions)
			for r, x := range g.Obs {
				v := n.Forward(sc, x, logits)
				assert.InDelta(t, g.ValueRaw[r], float64(v), g.Tolerance)
				assert.InDelta(t, g.Value[r], math.Tanh(float64(v)), g.Tolerance)
				var legal []env.Action
				for a, m := range g.Mask[r] {
					if m != 0 {
						legal = append(legal, env.Action(a))
					}
				}
				clear(priors)
				Softmax(logits, legal, priors)
				for a := range logits {
					assert.InDelta(t, g.Logits[r][a], float64(logits[a]), g.Tolerance)
					assert.InDelta(t, g.Priors[r][a], float64(priors[a]), g.Tolerance)
				}
			}
		})
	}
}

func writeGoGolden(t *testing.T) {
	n := randomNet(14, 16, 8)
	b, err := n.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("testdata/go-tiny.ynet", b, 0o644))
	g := golden{Net: "go-tiny.ynet", Tier: "compact", Tolerance: 1e-5}
	r := rand.New(rand.NewPCG(14, 3))
	for range 4 {
		x := make([]float32, n.Trunk[0].In)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		mask := make([]int, env.NumActions)
		var legal []env.Action
		for a := range mask {
			if a == 0 || r.Float64() < 0.1 {
				mask[a] = 1
				legal = append(legal, env.Action(a))
			}
		}
		l, v := reference(n, x)
		lf := make([]float32, len(l))
		for i := range l {
			lf[i] = float32(l[i])
		}
		pr := make([]float32, env.NumActions)
		Softmax(lf, legal, pr)
		pd := make([]float64, len(pr))
		for i := range pr {
			pd[i] = float64(pr[i])
		}
		g.Obs, g.Mask, g.Logits = append(g.Obs, x), append(g.Mask, mask), append(g.Logits, l)
		g.ValueRaw, g.Value, g.Priors = append(g.ValueRaw, v), append(g.Value, math.Tanh(v)), append(g.Priors, pd)
	}
	out, err := json.Marshal(g)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("testdata/go-tiny.expected.json", append(out, '\n'), 0o644))
}

// A network made for another observation layout is refused with an error
// that names both layouts: a file written before layouts were recorded
// (layout 1, testdata/layout1-tiny.ynet, kept from then) and one that
// claims a layout this build does not know.
func TestRefusesAnotherLayout(t *testing.T) {
	good, err := randomNet(3, 8).MarshalBinary()
	require.NoError(t, err)
	n, err := Parse(good)
	require.NoError(t, err, "a file this build writes records its layout and is read")
	assert.Equal(t, obs.Compact, n.Tier)
	future := []byte(strings.Replace(string(good), "\xaaobs_layout\x02", "\xaaobs_layout\x09", 1))
	require.NotEqual(t, good, future, "the layout field was not found in the file")
	for _, tc := range []struct {
		name string
		load func() error
		want string
	}{
		{"layout 1 file", func() error { _, err := Load(filepath.Join("testdata", "layout1-tiny.ynet")); return err }, "made for observation layout 1, this build reads layout 2"},
		{"unknown layout", func() error { _, err := Parse(future); return err }, "made for observation layout 9, this build reads layout 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.load()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrNet)
			assert.ErrorIs(t, err, obs.ErrLayout)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// edit returns the file b with its map changed by f.
func edit(t testing.TB, b []byte, f func(m map[string]any)) []byte {
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(b, &m))
	f(m)
	out, err := msgpack.Marshal(m)
	require.NoError(t, err)
	return out
}

// splitShape is a version 2 net as Stable-Baselines3 builds them, with a
// shared layer too.
var splitShape = shape{act: Tanh, trunk: []int{8}, policy: []int{6}, val: []int{5, 4}}

func TestDamagedFiles(t *testing.T) {
	good, err := randomNet(3, 8).MarshalBinary()
	require.NoError(t, err)
	nan := randomNet(3, 8)
	nan.Value.B[0] = float32(math.NaN())
	nanB, err := nan.MarshalBinary()
	require.NoError(t, err)
	wide := randomNet(3, 8)
	wide.Trunk[0].In = 7
	wide.Trunk[0].W = wide.Trunk[0].W[:7*8]
	wideB, err := wide.MarshalBinary()
	require.NoError(t, err)
	short := randomNet(3, 8)
	short.Policy.B = short.Policy.B[:3]
	shortB, err := short.MarshalBinary()
	require.NoError(t, err)
	other := randomNet(3, 8)
	other.Tier = obs.Planes
	otherB, err := other.MarshalBinary()
	require.NoError(t, err)
	split, err := shapedNet(3, splitShape).MarshalBinary()
	require.NoError(t, err)
	_, err = Parse(split)
	require.NoError(t, err)
	layerOf := func(m map[string]any, key string, i int) map[string]any {
		return m[key].([]any)[i].(map[string]any)
	}
	for _, tc := range []struct {
		name, want string
		b          []byte
	}{
		{"empty", "msgpack", nil},
		{"truncated", "msgpack", good[:len(good)/2]},
		{"not msgpack", "msgpack", []byte("hello, world")},
		{"nan", "NaN", nanB},
		{"first layer", "in=7", wideB},
		{"bias", "b is 12 bytes", shortB},
		{"tier", "in=213", otherB},
		{"format", "format", []byte("\x82\xa6format\xa3bad\xa7version\x01")},
		{"version 3", "version 3; this build reads versions 1 to 2", edit(t, split, func(m map[string]any) { m["version"] = 3 })},
		{"version 0", "version 0; this build reads versions 1 to 2", edit(t, good, func(m map[string]any) { m["version"] = 0 })},
		{"v1 without trunk", "trunk has 0 layers, want 1..64", edit(t, good, func(m map[string]any) { m["trunk"] = []any{} })},
		{"v1 with a v2 net's keys", "policy: in=6, but its input has 8 values", edit(t, split, func(m map[string]any) { m["version"] = 1 })},
		{"v2 unknown activation", `activation "gelu", want one of relu, tanh, leaky_relu, elu, silu`, edit(t, split, func(m map[string]any) { m["activation"] = "gelu" })},
		{"v2 without activation", `activation "", want one of`, edit(t, split, func(m map[string]any) { delete(m, "activation") })},
		{"v2 activation not a string", "msgpack", edit(t, split, func(m map[string]any) { m["activation"] = 1 })},
		{"v2 policy trunk's input", "policy_trunk[0]: in=9, but its input has 8 values", edit(t, split, func(m map[string]any) { layerOf(m, "policy_trunk", 0)["in"] = 9 })},
		{"v2 value trunk's chain", "value_trunk[1]: in=6, but its input has 5 values", edit(t, split, func(m map[string]any) { layerOf(m, "value_trunk", 1)["in"] = 6 })},
		{"v2 value head", "value: in=5, but its input has 4 values", edit(t, split, func(m map[string]any) { m["value"].(map[string]any)["in"] = 5 })},
		{"v2 value trunk missing", "value: in=4, but its input has 8 values", edit(t, split, func(m map[string]any) { delete(m, "value_trunk") })},
		{"v2 value trunk's weight", "value_trunk[0]: a weight is NaN", edit(t, split, func(m map[string]any) {
			w := layerOf(m, "value_trunk", 0)["w"].([]byte)
			copy(w, []byte{0, 0, 0xc0, 0x7f})
		})},
		{"v2 policy trunk too deep", "policy_trunk has 65 layers, want 0..64", edit(t, split, func(m map[string]any) { m["policy_trunk"] = make([]any, MaxLayers+1) })},
		{"v2 value trunk not an array", "value_trunk", edit(t, split, func(m map[string]any) { m["value_trunk"] = "x" })},
		{"v2 policy trunk's layer not a map", "policy_trunk[0]", edit(t, split, func(m map[string]any) { m["policy_trunk"] = []any{"x"} })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.b)
			require.ErrorIs(t, err, ErrNet)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err = Load(filepath.Join(t.TempDir(), "missing.ynet"))
	assert.Error(t, err)
}

func FuzzParse(f *testing.F) {
	good, err := randomNet(3, 4).MarshalBinary()
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte("\x82\xa6format\xaayutenv-net\xa7version\x01"))
	f.Add(append([]byte("\x84\xa6format\xaayutenv-net\xa7version\x01\xa4tier\xa7compact\xa5trunk"), nested(64)...))
	huge := randomNet(3, 4)
	huge.Value.W[0] = 3e38
	hugeB, err := huge.MarshalBinary()
	require.NoError(f, err)
	f.Add(hugeB)
	for _, sh := range []shape{{act: Tanh, trunk: []int{3}, policy: []int{2}, val: []int{2, 2}}, {act: SiLU}} {
		b, err := shapedNet(3, sh).MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Parse(b)
		if err != nil {
			if !strings.Contains(err.Error(), ErrNet.Error()) {
				t.Fatalf("error does not wrap ErrNet: %v", err)
			}
			return
		}
		x := make([]float32, obsSize(n))
		n.Forward(n.NewScratch(), x, make([]float32, env.NumActions))
	})
}

func TestAgentPlaysGames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.ynet")
	b, err := randomNet(5, 16).MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	split := filepath.Join(t.TempDir(), "n.ynet") // the same length: a version 2 net
	b, err = shapedNet(5, shape{act: Tanh, policy: []int{16, 16}, val: []int{16}}).MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(split, b, 0o644))
	for _, spec := range []string{"net:" + path, "net:" + path + ",sims=16", "net:" + path + ",sims=8,workers=2,c=2", "net:" + path + ",sims=12,gumbel=1,m=4", "net:" + split, "net:" + split + ",sims=16"} {
		name := spec[len(path)+4:]
		if name == "" {
			name = "policy"
		}
		if strings.HasPrefix(spec, "net:"+split) {
			name = "v2 " + name
		}
		t.Run(name, func(t *testing.T) {
			a, err := agent.New(spec, 1)
			require.NoError(t, err)
			sp, err := agent.ParseSpec(spec)
			require.NoError(t, err)
			assert.Equal(t, sp.String(), a.Name())
			res, err := agent.Game{Rules: env.Standard(), Seed: 3, Start: env.AnySeat, Seats: []agent.Agent{a, mustAgent(t, "random")}}.Play()
			require.NoError(t, err)
			assert.Positive(t, res.Decisions)
			assert.NotZero(t, res.Outcomes[0])
			if strings.Contains(spec, "workers") {
				return // root parallelism spawns its goroutines per decision
			}
			s, err := env.New(env.Standard(), 4, env.AnySeat)
			require.NoError(t, err)
			for s.Advance(); s.NumLegalActions() < 2; s.Advance() {
				_, err := s.Apply(s.LegalActions(nil)[0])
				require.NoError(t, err)
			}
			_, err = a.Act(&s) // sizes the pools
			require.NoError(t, err)
			allocs := testing.AllocsPerRun(10, func() {
				if _, err := a.Act(&s); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "a decision allocates nothing")
		})
	}
	_, err = agent.New("net:"+filepath.Join(t.TempDir(), "none.ynet"), 1)
	assert.ErrorIs(t, err, agent.ErrSpec)
	assert.ErrorIs(t, err, ErrNet)
}

func mustAgent(t *testing.T, spec string) agent.Agent {
	a, err := agent.New(spec, 2)
	require.NoError(t, err)
	return a
}
