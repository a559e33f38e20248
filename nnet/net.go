package nnet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

// ErrNet is wrapped by every error about a network file: not a yutenv-net,
// another version, damaged or inconsistent.
var ErrNet = errors.New("yutenv-net")

// File format identifiers (docs/FORMATS.md, "Network files").
const (
	Format = "yutenv-net"
	// Version is the newest version this build reads; it reads every
	// version from 1 up to it. MarshalBinary writes the oldest version
	// that holds the net (version 1: ReLU and one trunk), so older builds
	// keep reading what they can.
	Version = 2
	// MaxFileSize bounds the file Load reads.
	MaxFileSize = 256 << 20
	// MaxWidth bounds a layer's inputs and outputs.
	MaxWidth = 1 << 16
	// MaxLayers bounds the layers of each trunk (shared, policy, value).
	MaxLayers = 64
	// MaxWeight bounds the magnitude of every weight and bias: trained
	// nets stay far below it, and larger finite values (3e38) only
	// overflow the forward pass into NaN.
	MaxWeight = 1e4
)

// Layer is one dense layer: Out×In weights, row-major (W[o*In+i]), and Out biases.
type Layer struct {
	In, Out int
	W, B    []float32
}

// Net is a policy-value network: a trunk of dense layers shared by both
// heads, then the policy trunk and the policy head (logits over the 180
// actions) and, apart, the value trunk and the value head (one number; tanh
// of it is the mover's expected outcome). Every trunk layer is followed by
// the activation. A version 1 file holds the shared trunk alone, with ReLU;
// a Stable-Baselines3 policy has no shared layers and separate policy and
// value trunks. A Net is immutable once read, so any number of goroutines
// may share it; each evaluates with its own Scratch.
type Net struct {
	Tier       obs.Tier
	Rules      string // the rules it was trained on; its agents play only these (CheckRules)
	Activation Activation
	// Trunk is read by both heads; PolicyTrunk by the policy head alone,
	// after Trunk; ValueTrunk by the value head alone, after Trunk.
	Trunk, PolicyTrunk, ValueTrunk []Layer
	Policy                         Layer
	Value                          Layer

	cols atomic.Pointer[columns] // the weights transposed, built by the first Forward
}

// fileLayer and file are the msgpack form.
type fileLayer struct {
	In  int    `msgpack:"in"`
	Out int    `msgpack:"out"`
	W   []byte `msgpack:"w"`
	B   []byte `msgpack:"b"`
}

type file struct {
	Format  string `msgpack:"format"`
	Version int    `msgpack:"version"`
	Tier    string `msgpack:"tier"`
	// ObsLayout is the observation layout (obs.LayoutVersion) the net
	// reads; absent (0) in files written before it was recorded: layout 1.
	ObsLayout int    `msgpack:"obs_layout,omitempty"`
	Rules     string `msgpack:"rules"`
	// Activation (version 2) names the activation of every trunk layer;
	// version 1 has ReLU.
	Activation string `msgpack:"activation,omitempty"`
	// The trunks are decoded by hand: the library sizes a slice by its
	// declared length, which a damaged file could set to billions.
	Trunk msgpack.RawMessage `msgpack:"trunk"`
	// PolicyTrunk and ValueTrunk (version 2) follow Trunk, each read by
	// one head alone.
	PolicyTrunk msgpack.RawMessage `msgpack:"policy_trunk,omitempty"`
	ValueTrunk  msgpack.RawMessage `msgpack:"value_trunk,omitempty"`
	Policy      *fileLayer         `msgpack:"policy"`
	Value       *fileLayer         `msgpack:"value"`
}

// layers decodes the array of layers raw (absent or nil: none) of at
// least least and at most MaxLayers layers.
func layers(name string, raw msgpack.RawMessage, least int) ([]fileLayer, error) {
	n := 0
	var dec *msgpack.Decoder
	if raw != nil {
		dec = msgpack.NewDecoder(bytes.NewReader(raw))
		var err error
		if n, err = dec.DecodeArrayLen(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNet, name, err)
		}
		n = max(n, 0) // nil
	}
	if n < least || n > MaxLayers {
		return nil, fmt.Errorf("%w: %s has %d layers, want %d..%d", ErrNet, name, n, least, MaxLayers)
	}
	out := make([]fileLayer, n)
	for i := range out {
		if err := dec.Decode(&out[i]); err != nil {
			return nil, fmt.Errorf("%w: %s[%d]: %v", ErrNet, name, i, err)
		}
	}
	return out, nil
}

// Load reads and checks a network file: a regular file (never a FIFO or a
// device) of at most MaxFileSize bytes. Every error wraps ErrNet.
func Load(path string) (*Net, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	b, _, err := readRegular(f, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// Parse reads and checks a network from the bytes of a file: the format
// and version (1 up to Version), the observation layout (a file made for
// another layout gives an error wrapping obs.ErrLayout too), the tier, the
// activation (version 2), every layer's sizes (the first takes the tier's
// observation, each takes the one before's output, the policy gives 180
// logits and the value one number) and every weight (finite, at most
// MaxWeight in magnitude). Nesting deeper than MaxDepth is refused before
// decoding. Every error wraps ErrNet.
func Parse(b []byte) (*Net, error) {
	if err := checkDepth(b); err != nil {
		return nil, fmt.Errorf("%w: not a msgpack map of the format: %v", ErrNet, err)
	}
	var f file
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: not a msgpack map of the format: %v", ErrNet, err)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrNet, clip(f.Format), Format)
	}
	if f.Version < 1 || f.Version > Version {
		return nil, fmt.Errorf("%w: version %d; this build reads versions 1 to %d", ErrNet, f.Version, Version)
	}
	if err := obs.CheckLayout(f.ObsLayout); err != nil {
		return nil, fmt.Errorf("%w: %w; export the net again from a model trained on this layout", ErrNet, err)
	}
	tier, err := obs.ParseTier(f.Tier)
	if err != nil {
		return nil, fmt.Errorf("%w: tier: %v", ErrNet, err)
	}
	space, err := obs.SpaceOf(tier)
	if err != nil {
		return nil, fmt.Errorf("%w: tier: %v", ErrNet, err)
	}
	n := &Net{Tier: tier, Rules: f.Rules}
	var trunk, pTrunk, vTrunk []fileLayer
	if f.Version == 1 { // ReLU and one trunk: the branches' keys are unknown keys, ignored
		trunk, err = layers("trunk", f.Trunk, 1)
	} else {
		if n.Activation, err = ParseActivation(f.Activation); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNet, err)
		}
		trunk, err = layers("trunk", f.Trunk, 0)
		if err == nil {
			pTrunk, err = layers("policy_trunk", f.PolicyTrunk, 0)
		}
		if err == nil {
			vTrunk, err = layers("value_trunk", f.ValueTrunk, 0)
		}
	}
	if err != nil {
		return nil, err
	}
	in := space.Size
	if n.Trunk, in, err = stack("trunk", trunk, in); err != nil {
		return nil, err
	}
	pIn, vIn := in, in
	if n.PolicyTrunk, pIn, err = stack("policy_trunk", pTrunk, in); err != nil {
		return nil, err
	}
	if n.ValueTrunk, vIn, err = stack("value_trunk", vTrunk, in); err != nil {
		return nil, err
	}
	if f.Policy == nil || f.Value == nil {
		return nil, fmt.Errorf("%w: missing policy or value head", ErrNet)
	}
	if n.Policy, err = layer("policy", f.Policy, pIn, env.NumActions); err != nil {
		return nil, err
	}
	if n.Value, err = layer("value", f.Value, vIn, 1); err != nil {
		return nil, err
	}
	return n, nil
}

// stack checks the layers of one trunk, whose input has in values: it
// returns them and the size of its output (in without layers).
func stack(name string, fls []fileLayer, in int) ([]Layer, int, error) {
	var out []Layer
	for i := range fls {
		l, err := layer(fmt.Sprintf("%s[%d]", name, i), &fls[i], in, 0)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, l)
		in = l.Out
	}
	return out, in, nil
}

// layer checks one layer of the file: in must be wantIn, out wantOut (0: any).
func layer(where string, fl *fileLayer, wantIn, wantOut int) (Layer, error) {
	switch {
	case fl.In < 1 || fl.In > MaxWidth || fl.Out < 1 || fl.Out > MaxWidth:
		return Layer{}, fmt.Errorf("%w: %s: sizes in=%d out=%d, want 1..%d", ErrNet, where, fl.In, fl.Out, MaxWidth)
	case fl.In != wantIn:
		return Layer{}, fmt.Errorf("%w: %s: in=%d, but its input has %d values", ErrNet, where, fl.In, wantIn)
	case wantOut > 0 && fl.Out != wantOut:
		return Layer{}, fmt.Errorf("%w: %s: out=%d, want %d", ErrNet, where, fl.Out, wantOut)
	case len(fl.W) != 4*fl.In*fl.Out:
		return Layer{}, fmt.Errorf("%w: %s: w is %d bytes, want %d (float32 %d×%d)", ErrNet, where, len(fl.W), 4*fl.In*fl.Out, fl.Out, fl.In)
	case len(fl.B) != 4*fl.Out:
		return Layer{}, fmt.Errorf("%w: %s: b is %d bytes, want %d", ErrNet, where, len(fl.B), 4*fl.Out)
	}
	l := Layer{In: fl.In, Out: fl.Out, W: floats(fl.W), B: floats(fl.B)}
	for _, v := range [][]float32{l.W, l.B} {
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.Abs(float64(x)) > MaxWeight {
				return Layer{}, fmt.Errorf("%w: %s: a weight is NaN, infinite or above %g in magnitude", ErrNet, where, MaxWeight)
			}
		}
	}
	return l, nil
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func floatBytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// version returns the oldest file version that holds n: 1 for ReLU and
// one trunk of at least one layer, else 2.
func (n *Net) version() int {
	if n.Activation == ReLU && len(n.Trunk) > 0 && len(n.PolicyTrunk) == 0 && len(n.ValueTrunk) == 0 {
		return 1
	}
	return 2
}

// MarshalBinary writes the network in the file format (what Parse reads),
// in the oldest version that holds it.
func (n *Net) MarshalBinary() ([]byte, error) {
	fl := func(l Layer) fileLayer { return fileLayer{l.In, l.Out, floatBytes(l.W), floatBytes(l.B)} }
	raw := func(ls []Layer) (msgpack.RawMessage, error) {
		out := make([]fileLayer, 0, len(ls))
		for _, l := range ls {
			out = append(out, fl(l))
		}
		return msgpack.Marshal(out)
	}
	f := file{Format: Format, Version: n.version(), Tier: n.Tier.String(), ObsLayout: obs.LayoutVersion, Rules: n.Rules}
	var err error
	if f.Trunk, err = raw(n.Trunk); err != nil {
		return nil, err
	}
	if f.Version > 1 {
		f.Activation = n.Activation.String()
		if len(n.PolicyTrunk) > 0 {
			if f.PolicyTrunk, err = raw(n.PolicyTrunk); err != nil {
				return nil, err
			}
		}
		if len(n.ValueTrunk) > 0 {
			if f.ValueTrunk, err = raw(n.ValueTrunk); err != nil {
				return nil, err
			}
		}
	}
	p, v := fl(n.Policy), fl(n.Value)
	f.Policy, f.Value = &p, &v
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(&f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// trunks returns the net's three trunks.
func (n *Net) trunks() [3][]Layer { return [3][]Layer{n.Trunk, n.PolicyTrunk, n.ValueTrunk} }

// Width returns the widest layer output, the size of a Scratch's buffers.
func (n *Net) Width() int {
	w := 1
	for _, t := range n.trunks() {
		for _, l := range t {
			w = max(w, l.Out)
		}
	}
	return w
}

// Scratch holds one goroutine's buffers for Forward: four layers' outputs
// (two for the shared trunk, two for the branch after it) and one layer's
// inputs that are not zero (their indices and values).
type Scratch struct {
	a, b, c, d []float32
	idx        []int32
	val        []float32
}

// NewScratch returns buffers for evaluating n.
func (n *Net) NewScratch() *Scratch {
	w, in := n.Width(), n.Policy.In
	for _, t := range n.trunks() {
		for _, l := range t {
			in = max(in, l.In)
		}
	}
	return &Scratch{a: make([]float32, w), b: make([]float32, w), c: make([]float32, w), d: make([]float32, w),
		idx: make([]int32, 0, in), val: make([]float32, 0, in)}
}

// Forward evaluates one observation x (the tier's size): it writes the 180
// policy logits into logits and returns the value head's output before
// tanh. It allocates nothing (the first call on a net builds its
// transposed weights, once).
//
// Each layer is computed as out = b + Σ x[i]·W[:, i] over the inputs that
// are not zero, in the order of i: the observations are mostly zeros and
// ReLU zeroes about half of every hidden layer, so this skips their work.
// On amd64 with AVX2 one kernel keeps 64 outputs in registers across all
// the inputs (eight products an instruction); elsewhere a float32 axpy
// adds a column at a time (gonum's SSE assembly on amd64):
// docs/BENCHMARKS.md, "Network forward pass". Every product is rounded
// before it is added, in the same order, with every kernel on every
// architecture, and the activations are computed by detmath, so the
// outputs are the same bits everywhere (docs/COMPATIBILITY.md, "Seeds").
func (n *Net) Forward(sc *Scratch, x []float32, logits []float32) float32 {
	cols := n.columns()
	h := n.stack(sc, n.Trunk, cols.trunk, x, sc.a, sc.b)
	p := n.stack(sc, n.PolicyTrunk, cols.pTrunk, h, sc.c, sc.d)
	sparseDense(sc, &n.Policy, cols.policy, p, logits[:env.NumActions])
	in := n.stack(sc, n.ValueTrunk, cols.vTrunk, h, sc.c, sc.d)
	v := n.Value.B[0]
	w := n.Value.W[:len(in)]
	for i, xi := range in {
		if xi != 0 {
			v += float32(w[i] * xi) // rounded: arm64 would fuse it into an FMA (docs/COMPATIBILITY.md, "Seeds")
		}
	}
	return v
}

// stack evaluates the layers (their transposed weights cols) on in, each
// followed by the activation, alternating between the buffers p and q
// (neither may be in); it returns the output (in without layers).
func (n *Net) stack(sc *Scratch, layers []Layer, cols [][]float32, in, p, q []float32) []float32 {
	for i := range layers {
		l := &layers[i]
		out := p[:l.Out]
		sparseDense(sc, l, cols[i], in, out)
		n.Activation.apply(out)
		in = out
		p, q = q, p
	}
	return in
}

// columns holds every layer's weights transposed (In×Out, row-major), so
// that the weights of one input are contiguous.
type columns struct {
	trunk, pTrunk, vTrunk [][]float32
	policy                []float32
}

// columns returns the net's transposed weights, building them on first use.
func (n *Net) columns() *columns {
	if c := n.cols.Load(); c != nil {
		return c
	}
	all := func(ls []Layer) [][]float32 {
		var out [][]float32
		for i := range ls {
			out = append(out, transpose(&ls[i]))
		}
		return out
	}
	c := &columns{policy: transpose(&n.Policy), trunk: all(n.Trunk), pTrunk: all(n.PolicyTrunk), vTrunk: all(n.ValueTrunk)}
	if !n.cols.CompareAndSwap(nil, c) {
		return n.cols.Load()
	}
	return c
}

// transpose returns l's weights as In rows of Out.
func transpose(l *Layer) []float32 {
	t := make([]float32, l.In*l.Out)
	for o := 0; o < l.Out; o++ {
		row := l.W[o*l.In : (o+1)*l.In]
		for i, w := range row {
			t[i*l.Out+o] = w
		}
	}
	return t
}

// sparseDense computes out = W·in + b from the transposed weights wt,
// skipping the inputs that are zero.
func sparseDense(sc *Scratch, l *Layer, wt, in, out []float32) {
	out = out[:l.Out]
	copy(out, l.B)
	in = in[:l.In]
	idx, val := sc.idx[:len(in)], sc.val[:len(in)]
	k := 0
	for i, v := range in { // without a branch to mispredict on half the inputs
		idx[k], val[k] = int32(i), v
		k += nonzero(v)
	}
	spmv(out, wt, idx[:k], val[:k])
}

// nonzero is 1 if v is not zero (NaN included), else 0.
func nonzero(v float32) int {
	if v != 0 {
		return 1
	}
	return 0
}

// spmvAxpy adds val[t]·wt[idx[t]·len(out):][:len(out)] to out for every t
// in turn (val[t] != 0: gonum's axpy skips a zero), a column at a time:
// the portable kernel, and amd64's without AVX2.
func spmvAxpy(out, wt []float32, idx []int32, val []float32) {
	n := len(out)
	for t, i := range idx {
		axpy(val[t], wt[int(i)*n:(int(i)+1)*n], out)
	}
}

// CheckRules returns nil when the network plays rules r: the rules its
// file records (Rules), or any rules when it records none (a file written
// by hand or by an older converter). Otherwise the error wraps ErrRules and
// agent.ErrSpec and names both rule sets, the tier and the observation
// layout, in one line: an observation of other rules would mean something
// else to the network, or not fit it.
func (n *Net) CheckRules(r env.Rules) error { return n.checkRules(r, "") }

// checkRules is CheckRules with the agent that plays the network named in
// the error ("az", "net"; "" for the network itself). It names no path:
// a server's clients see it.
func (n *Net) checkRules(r env.Rules, agentName string) error {
	if n.Rules == "" {
		return nil
	}
	trained, err := env.ParseRules(n.Rules)
	if err != nil {
		return fmt.Errorf("%w: %w: the network's file records rules %q, which do not parse: %w", agent.ErrSpec, ErrRules, n.Rules, err)
	}
	if trained == r {
		return nil
	}
	who := "the network"
	if agentName != "" {
		who = "agent " + agentName
	}
	return fmt.Errorf("%w: %w: %s plays only the rules its network was trained for, %q (tier %s, observation layout %d), not %q; "+
		"train a network for these rules (python -m yutenv.az.train --rules ...)",
		agent.ErrSpec, ErrRules, who, trained.String(), n.Tier, obs.LayoutVersion, r.String())
}
