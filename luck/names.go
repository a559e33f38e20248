package luck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/nnet"
)

// The names of the value functions luck is measured with, as the command
// line's --luck and the env option luck spell them.
const (
	// NameAZ is the shipped network's value head (AZ): its rules only.
	NameAZ = "az"
	// NameProgress is the race heuristic (Progress): any rules.
	NameProgress = "progress"
	// NameOff measures no luck.
	NameOff = "off"
	// NameAuto picks NameAZ under the rules az was trained for, else
	// NameProgress (as does the empty name).
	NameAuto = "auto"
	// NetPrefix begins the name of a network file's value head,
	// "net:PATH" (PATH quoted as in an agent spec when it needs it): the
	// rules its file records only, two seats.
	NetPrefix = "net:"
)

// Names returns the names For takes, in a fixed order; a network file's
// value, NetPrefix followed by its path, is For's one name not listed.
func Names() []string { return []string{NameAuto, NameAZ, NameProgress, NameOff} }

// Loader opens the network file a value names (net:PATH) and returns it
// with the path it was read from; nil where no network file may be named.
type Loader func(path string) (*nnet.Net, string, error)

// ErrName is wrapped by For's errors: a value function that is unknown, or
// that cannot value the rules.
var ErrName = errors.New("luck")

// For resolves a value function's name for rules: "" or NameAuto becomes
// NameAZ when the shipped network was trained for rules, else
// NameProgress; "net:PATH" is the value head of the network file load
// opens. It returns the resolved name and a constructor of that value
// (each Value for one goroutine); for NameOff, a nil constructor. NameAZ
// under other rules is an error naming the rules az values, and a network
// is refused under rules its file does not record or of more than two
// seats.
func For(name string, rules env.Rules, load Loader) (string, func() (Value, error), error) {
	if strings.HasPrefix(name, NetPrefix) {
		return forNet(name, rules, load)
	}
	az := func() (Value, error) {
		v, r, err := AZ()
		if err != nil {
			return nil, err
		}
		if r != rules {
			return nil, fmt.Errorf("%w: az values only the rules %q (the shipped network's), not %q; use progress", ErrName, r.String(), rules.String())
		}
		return v, nil
	}
	switch name {
	case "", NameAuto:
		if s, err := nnet.AZ(); err == nil && s.Rules == rules {
			return NameAZ, az, nil
		}
		return NameProgress, progress, nil
	case NameAZ:
		if _, err := az(); err != nil {
			return "", nil, err
		}
		return NameAZ, az, nil
	case NameProgress:
		return NameProgress, progress, nil
	case NameOff:
		return NameOff, nil, nil
	}
	return "", nil, fmt.Errorf("%w: the value function must be one of %q, got %q", ErrName, Names(), name)
}

func progress() (Value, error) { return Progress{}, nil }

// forNet resolves "net:PATH": the network's value head, checked against
// rules once here.
func forNet(name string, rules env.Rules, load Loader) (string, func() (Value, error), error) {
	sp, err := agent.ParseSpec(name)
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("%w: %q: %w", ErrName, name, err)
	case sp.Name != "net" || sp.String() != NetPrefix+agent.QuotePath(sp.Path):
		return "", nil, fmt.Errorf("%w: %q: a value names a network file alone (net:PATH), with no search options", ErrName, name)
	case load == nil:
		return "", nil, fmt.Errorf("%w: %q: a network file's value is not available here (auto, az, progress or off)", ErrName, name)
	case rules.Players != 2:
		return "", nil, fmt.Errorf("%w: %q: a network's value measures the luck of two seats, not %d", ErrName, name, rules.Players)
	}
	n, _, err := load(sp.Path)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrName, err)
	}
	if err := n.CheckRules(rules); err != nil {
		return "", nil, fmt.Errorf("%w: %q: %w", ErrName, name, err)
	}
	resolved := sp.String()
	return resolved, func() (Value, error) { return NewNet(resolved, n), nil }, nil
}

// LoadFile is the Loader of the command line's tools, whose operator may
// name any network file (nnet.LoadCached).
func LoadFile(path string) (*nnet.Net, string, error) {
	n, err := nnet.LoadCached(path)
	return n, path, err
}
