package nnet

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// shippedTable is the one declaration of the networks shipped inside the
// binary: each name, the agent spec and the NAME of "yutenv net NAME",
// plays the file shipped/NAME.ynet, whose SHA-256 (hex) is declared here
// and nowhere else; shipped/NAME.json records how it was trained. A name
// means one file forever (docs/COMPATIBILITY.md): a stronger network
// ships beside the others under a new name (az2, az3, ...), by adding its
// two files and one line here, and Recommended says which the docs
// recommend.
var shippedTable = []struct{ name, sha256 string }{
	{AZName, AZChecksum},
}

// Recommended is the shipped network the docs recommend (one of
// ShippedNames): the strongest. Changing it is announced under Breaking
// in CHANGELOG.md; every other name keeps playing its own network.
const Recommended = AZName

// shippedFiles holds the shipped networks' files, shipped/NAME.ynet.
//
//go:embed shipped/*.ynet
var shippedFiles embed.FS

// MaxShippedBytes bounds a network shipped inside the binary.
const MaxShippedBytes = 5 << 20

// ErrChecksum is wrapped (with ErrNet) when a shipped network's bytes do
// not have their declared SHA-256.
var ErrChecksum = errors.New("checksum mismatch")

// ErrRules is wrapped (with agent.ErrSpec) when the agent of a shipped
// network is asked to play rules its network was not trained for.
var ErrRules = errors.New("rules the network was not trained for")

// ErrNotShipped is returned (wrapped) for a name the binary ships no
// network under; its message names the shipped ones.
var ErrNotShipped = errors.New("no shipped network")

// Shipped is a network shipped inside the binary, checked against its
// declared checksum, with the rules it was trained for.
type Shipped struct {
	// Name is its name (an agent spec, "yutenv net NAME"); "" for one
	// ParseShipped read that is not registered.
	Name string
	// Net is the network.
	Net *Net
	// Rules are the rules it was trained for (parsed from the file's
	// rules): the only ones its agent plays.
	Rules env.Rules
	// SHA256 is the checksum of its bytes (hex).
	SHA256 string
}

// ParseShipped checks b against the SHA-256 sum (hex) and the size cap
// MaxShippedBytes, parses it (Parse) and reads the rules it records. Every
// error wraps ErrNet; a checksum that does not match also wraps ErrChecksum.
func ParseShipped(b []byte, sum string) (*Shipped, error) {
	if len(b) > MaxShippedBytes {
		return nil, fmt.Errorf("%w: shipped network of %d bytes, more than %d", ErrNet, len(b), MaxShippedBytes)
	}
	h := sha256.Sum256(b)
	if got := hex.EncodeToString(h[:]); got != sum {
		return nil, fmt.Errorf("%w: %w: shipped network has SHA-256 %s, declared %s", ErrNet, ErrChecksum, got, sum)
	}
	n, err := Parse(b)
	if err != nil {
		return nil, err
	}
	r, err := env.ParseRules(n.Rules)
	if err != nil {
		return nil, fmt.Errorf("%w: shipped network's rules %q: %w", ErrNet, n.Rules, err)
	}
	return &Shipped{Net: n, Rules: r, SHA256: sum}, nil
}

// shippedNet is one registered shipped network: its bytes, read and
// checked once, on first use.
type shippedNet struct {
	name string
	file []byte
	load func() (*Shipped, error)
}

// shipped holds the registered networks by name, shippedOrder their names
// in the order they were declared. Both are written only by init.
var (
	shipped      = map[string]*shippedNet{}
	shippedOrder []string
)

func init() {
	for _, d := range shippedTable {
		// A missing file is left to the checksum: the network's agent and
		// every function here then fail with ErrChecksum, naming it.
		b, _ := shippedFiles.ReadFile("shipped/" + d.name + ".ynet")
		registerShipped(d.name, d.sha256, b)
	}
}

// registerShipped registers the network file b of the given name and
// declared SHA-256, as an agent of the spec grammar too.
func registerShipped(name, sum string, b []byte) {
	if _, dup := shipped[name]; dup {
		panic("nnet: shipped network " + name + " declared twice")
	}
	s := &shippedNet{name: name, file: b}
	s.load = sync.OnceValues(func() (*Shipped, error) {
		p, err := ParseShipped(b, sum)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", name, err)
		}
		p.Name = name
		return p, nil
	})
	shipped[name] = s
	shippedOrder = append(shippedOrder, name)
	agent.RegisterShipped(name, newShippedAgent)
}

// ShippedNames lists the names of the networks shipped inside the binary,
// in the order they were declared (az first).
func ShippedNames() []string { return append([]string(nil), shippedOrder...) }

func lookupShipped(name string) (*shippedNet, error) {
	s, ok := shipped[name]
	if !ok {
		return nil, fmt.Errorf("%w %q: the binary ships %s", ErrNotShipped, name, strings.Join(shippedOrder, ", "))
	}
	return s, nil
}

// ShippedNet returns the shipped network of the given name, read and
// checked against its declared SHA-256 once. An unknown name is an error
// wrapping ErrNotShipped that names the shipped ones.
func ShippedNet(name string) (*Shipped, error) {
	s, err := lookupShipped(name)
	if err != nil {
		return nil, err
	}
	return s.load()
}

// ShippedFile returns a copy of the bytes of the shipped network of the
// given name (a yutenv-net file), once they have passed ShippedNet's
// checks: what "yutenv net NAME --out" writes, so that a trainer can
// start from it.
func ShippedFile(name string) ([]byte, error) {
	s, err := lookupShipped(name)
	if err != nil {
		return nil, err
	}
	if _, err := s.load(); err != nil {
		return nil, err
	}
	return append([]byte(nil), s.file...), nil
}

// ShippedAgent is the agent of a shipped network (az, or another name of
// ShippedNames): the network alone (spec NAME) or guiding an MCTS, as
// net:PATH does with a file: with Gumbel root selection by default
// (NAME,sims=N[,m=..]), or PUCT (NAME,sims=N,gumbel=0[,c=..,workers=..,
// temp=..]). It plays only the rules the network was trained for: any
// other rules are refused (ErrRules) at the first decision, naming the
// rules it knows.
type ShippedAgent struct {
	*Agent
	shipped *Shipped
}

func newShippedAgent(sp agent.Spec, seed uint64) (agent.Agent, error) { return NewShipped(sp, seed) }

// NewShipped returns the agent of spec sp, whose name is a shipped
// network's.
func NewShipped(sp agent.Spec, seed uint64) (*ShippedAgent, error) {
	if _, ok := shipped[sp.Name]; !ok {
		return nil, fmt.Errorf("%w: nnet.NewShipped needs the spec of a shipped network (%s), got %q", agent.ErrSpec, strings.Join(shippedOrder, ", "), sp.Name)
	}
	s, err := ShippedNet(sp.Name)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", agent.ErrSpec, sp.String(), err)
	}
	a, err := newWith(sp, s.Net, seed)
	if err != nil {
		return nil, err
	}
	return &ShippedAgent{Agent: a, shipped: s}, nil
}

// CheckRules returns nil when the agent plays rules r, else an error
// (wrapping ErrRules and agent.ErrSpec) naming the rules, tier and
// observation layout the network was trained for. The agent checks it
// before every decision (Agent.ActStats), forced ones included.
func (a *ShippedAgent) CheckRules(r env.Rules) error { return a.shipped.CheckRules(r) }

// CheckRules returns nil when the network's agent plays rules r (the
// rules it was trained for), else the error of Net.CheckRules naming the
// agent.
func (s *Shipped) CheckRules(r env.Rules) error { return s.Net.checkRules(r, s.Name) }

// CheckSpecRules returns nil unless sp is a shipped network's agent or
// net:PATH and r are rules its network was not trained for (then the error
// of Shipped.CheckRules or Net.CheckRules): a server refuses such an
// opponent when the env is made, not at its first move. A net:PATH whose
// file cannot be read is left to the agent's constructor, which names why.
func CheckSpecRules(sp agent.Spec, r env.Rules) error {
	if sp.Name == "net" {
		n, err := LoadCached(sp.Path)
		if err != nil {
			return nil
		}
		return n.checkRules(r, sp.Name)
	}
	if _, ok := shipped[sp.Name]; !ok {
		return nil
	}
	s, err := ShippedNet(sp.Name)
	if err != nil {
		return err
	}
	return s.CheckRules(r)
}
