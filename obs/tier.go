package obs

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadTier is wrapped by every error about an unknown observation tier.
var ErrBadTier = errors.New("bad observation tier")

// Tier selects how much an observation says. Every tier is one flat float32
// vector; Space describes its layout.
type Tier uint8

const (
	// Compact is the small, Markov-sufficient tier for MLPs: every stack by
	// station and route, pieces in hand and finished, seats, pool, phase and rules.
	Compact Tier = iota
	// Tactical is Compact plus the opponents' threat on every station and ten
	// features for each of the 180 actions (legal, captures, finishes,
	// exposure of the landing station, ...).
	Tactical
	// Planes is the same facts as channels over the 29 stations (C x 29, for
	// convolutional and graph networks), followed by a vector of global features.
	Planes
)

// numTiers is the number of tiers.
const numTiers = 3

var tierNames = [numTiers]string{"compact", "tactical", "planes"}

// Tiers returns every tier, in id order.
func Tiers() []Tier { return []Tier{Compact, Tactical, Planes} }

// String returns the tier's name: "compact", "tactical" or "planes".
func (t Tier) String() string {
	if int(t) < numTiers {
		return tierNames[t]
	}
	return fmt.Sprintf("Tier(%d)", uint8(t))
}

// Valid reports whether t is one of the defined tiers.
func (t Tier) Valid() bool { return int(t) < numTiers }

// ParseTier reads a tier name ("compact", "tactical" or "planes", any case,
// surrounding spaces ignored). An unknown name returns an error wrapping ErrBadTier.
func ParseTier(s string) (Tier, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	for i, name := range tierNames {
		if n == name {
			return Tier(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want one of %s)", ErrBadTier, s, strings.Join(tierNames[:], ", "))
}

// MarshalText encodes the tier by name.
func (t Tier) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("%w: id %d", ErrBadTier, uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText decodes a tier name as ParseTier does.
func (t *Tier) UnmarshalText(b []byte) error {
	v, err := ParseTier(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}
