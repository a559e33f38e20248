package nnet

import (
	"crypto/sha256"
	_ "embed" // the shipped network
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

// AZName is the name of the shipped agent and of its network: the agent
// spec "az" and "yutenv net az".
const AZName = "az"

func init() { agent.Register(AZName, newAZAgent) }

// azFile is the network of agent az, shipped inside the binary. How it was
// trained (settings, command, strength) is in shipped/az.json and
// docs/BASELINES.md ("The shipped agent az").
//
//go:embed shipped/az.ynet
var azFile []byte

// AZChecksum is the SHA-256 (hex) of shipped/az.ynet, declared here once:
// the az agent refuses an embedded network that does not match it.
// Replacing the network means replacing this line too.
const AZChecksum = "c2a456833205880a038c7b6d6f6f8f72a5a082994a6dc12b867dc477881aa3be"

// MaxShippedBytes bounds a network shipped inside the binary.
const MaxShippedBytes = 5 << 20

// ErrChecksum is wrapped (with ErrNet) when a shipped network's bytes do
// not have their declared SHA-256.
var ErrChecksum = errors.New("checksum mismatch")

// ErrRules is wrapped (with agent.ErrSpec) when agent az is asked to play
// rules its network was not trained for.
var ErrRules = errors.New("rules the network was not trained for")

// Shipped is a network shipped inside the binary, checked against its
// declared checksum, with the rules it was trained for.
type Shipped struct {
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

// AZ returns the network of agent az (read and checked once).
func AZ() (*Shipped, error) { return shippedAZ() }

// AZFile returns a copy of the bytes of agent az's network (a yutenv-net
// file), once they have passed AZ's checks: what "yutenv net az --out"
// writes, so that a trainer can start from the shipped network.
func AZFile() ([]byte, error) {
	if _, err := AZ(); err != nil {
		return nil, err
	}
	return append([]byte(nil), azFile...), nil
}

var shippedAZ = sync.OnceValues(func() (*Shipped, error) {
	s, err := ParseShipped(azFile, AZChecksum)
	if err != nil {
		return nil, fmt.Errorf("agent az: %w", err)
	}
	return s, nil
})

// AZAgent is agent az: the shipped network alone (spec az) or guiding an
// MCTS, as net:PATH does with a file: with Gumbel root selection by default
// (az,sims=N[,m=..]), or PUCT (az,sims=N,gumbel=0[,c=..,workers=..,temp=..]).
// It plays only the rules the network was trained for: any other rules are
// refused (ErrRules) at the first decision, naming the rules it knows.
type AZAgent struct {
	*Agent
	shipped *Shipped
}

func newAZAgent(sp agent.Spec, seed uint64) (agent.Agent, error) { return NewAZ(sp, seed) }

// NewAZ returns the az agent of spec sp (name "az").
func NewAZ(sp agent.Spec, seed uint64) (*AZAgent, error) {
	if sp.Name != AZName {
		return nil, fmt.Errorf("%w: nnet.NewAZ needs an az spec, got %q", agent.ErrSpec, sp.Name)
	}
	s, err := AZ()
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", agent.ErrSpec, sp.String(), err)
	}
	a, err := newWith(sp, s.Net, seed)
	if err != nil {
		return nil, err
	}
	return &AZAgent{Agent: a, shipped: s}, nil
}

// CheckRules returns nil when the agent plays rules r, else an error
// (wrapping ErrRules and agent.ErrSpec) naming the rules, tier and
// observation layout the network was trained for.
func (a *AZAgent) CheckRules(r env.Rules) error {
	if r == a.shipped.Rules {
		return nil
	}
	return fmt.Errorf("%w: %w: agent az plays only the rules its network was trained for, %q (tier %s, observation layout %d), not %q; "+
		"train a network for these rules (python -m yutenv.az.train --rules ...) and play it as net:PATH",
		agent.ErrSpec, ErrRules, a.shipped.Rules.String(), a.shipped.Net.Tier, obs.LayoutVersion, r.String())
}

// Act returns the agent's action (see CheckRules for the rules it plays).
func (a *AZAgent) Act(s *env.State) (env.Action, error) {
	act, _, err := a.ActStats(s)
	return act, err
}

// ActStats returns the action and its statistics, as Agent.ActStats, for
// the rules the network was trained for only.
func (a *AZAgent) ActStats(s *env.State) (env.Action, agent.Stats, error) {
	if err := a.CheckRules(s.Rules()); err != nil {
		return 0, agent.Stats{}, err
	}
	return a.Agent.ActStats(s)
}

// CheckSpecRules returns nil unless sp is agent az or net:PATH and r are
// rules its network was not trained for (then the error of
// AZAgent.CheckRules or Net.CheckRules): a server refuses such an opponent
// when the env is made, not at its first move. A net:PATH whose file
// cannot be read is left to the agent's constructor, which names why.
func CheckSpecRules(sp agent.Spec, r env.Rules) error {
	if sp.Name == "net" {
		n, err := LoadCached(sp.Path)
		if err != nil {
			return nil
		}
		return n.CheckRules(r) // names no path: a server's clients see it
	}
	if sp.Name != AZName {
		return nil
	}
	s, err := AZ()
	if err != nil {
		return err
	}
	return (&AZAgent{shipped: s}).CheckRules(r)
}
