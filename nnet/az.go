package nnet

import (
	"fmt"

	"github.com/yutenv/yutenv/env/agent"
)

// AZName is the name of the first shipped network and of its agent: the
// agent spec "az" and "yutenv net az". It plays the same network forever
// (AZChecksum); stronger networks ship beside it under other names
// (ShippedNames, Recommended).
const AZName = "az"

// AZChecksum is the SHA-256 (hex) of shipped/az.ynet, pinned: agent az
// refuses an embedded network that does not match it, and a new network
// ships under a new name, never under az (shippedTable).
const AZChecksum = "c2a456833205880a038c7b6d6f6f8f72a5a082994a6dc12b867dc477881aa3be"

// AZ returns the network of agent az (ShippedNet(AZName)). How it was
// trained (settings, command, strength) is in shipped/az.json and
// docs/BASELINES.md ("The shipped agent az").
func AZ() (*Shipped, error) { return ShippedNet(AZName) }

// AZFile returns a copy of the bytes of agent az's network
// (ShippedFile(AZName)).
func AZFile() ([]byte, error) { return ShippedFile(AZName) }

// AZAgent is the agent of a shipped network; the name is kept from when
// az was the only one.
type AZAgent = ShippedAgent

// NewAZ returns the az agent of spec sp (name "az"); NewShipped makes the
// agent of any shipped network.
func NewAZ(sp agent.Spec, seed uint64) (*AZAgent, error) {
	if sp.Name != AZName {
		return nil, fmt.Errorf("%w: nnet.NewAZ needs an az spec, got %q", agent.ErrSpec, sp.Name)
	}
	return NewShipped(sp, seed)
}
