package luck

import (
	"errors"
	"fmt"

	"github.com/yutenv/yutenv/env"
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
)

// Names returns the names For takes, in a fixed order.
func Names() []string { return []string{NameAuto, NameAZ, NameProgress, NameOff} }

// ErrName is wrapped by For's errors: a value function that is unknown, or
// that cannot value the rules.
var ErrName = errors.New("luck")

// For resolves a value function's name for rules: "" or NameAuto becomes
// NameAZ when the shipped network was trained for rules, else
// NameProgress. It returns the resolved name and a constructor of that
// value (each Value for one goroutine); for NameOff, a nil constructor.
// NameAZ under other rules is an error naming the rules az values.
func For(name string, rules env.Rules) (string, func() (Value, error), error) {
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
