package env

import (
	"fmt"
	"strconv"
	"strings"
)

// Action is a decision in the standard encoding of RULES.md:
// throw*30 + source, where source is the station of one of the mover's stacks
// (0..28) or EnterSource to enter a piece from hand.
type Action uint8

// Encoding constants.
const (
	// NumSources is the number of sources per throw: 29 stations and entering.
	NumSources = 30
	// EnterSource is the source id that means "enter a piece from hand".
	EnterSource = 29
	// NumActions is the size of the action space (6 throws x 30 sources).
	NumActions = NumThrows * NumSources
)

// NewAction returns the action that uses throw t on the stack at station s.
func NewAction(t Throw, s Station) Action { return Action(uint8(t)*NumSources + uint8(s)) }

// EnterAction returns the action that uses throw t to enter a piece.
func EnterAction(t Throw) Action { return Action(uint8(t)*NumSources + EnterSource) }

// Throw returns the throw result the action uses.
func (a Action) Throw() Throw { return Throw(a / NumSources) }

// Source returns the source id: a station 0..28, or EnterSource.
func (a Action) Source() int { return int(a % NumSources) }

// IsEnter reports whether the action enters a piece from hand.
func (a Action) IsEnter() bool { return a%NumSources == EnterSource }

// Station returns the station of the stack the action moves (meaningless for an enter action).
func (a Action) Station() Station { return Station(a % NumSources) }

// Valid reports whether a is inside the 180-action space.
func (a Action) Valid() bool { return int(a) < NumActions }

// String returns a short name: "gae@7" for the stack at 7, "mo@enter" to enter.
func (a Action) String() string {
	if !a.Valid() {
		return fmt.Sprintf("Action(%d)", uint8(a))
	}
	if a.IsEnter() {
		return a.Throw().String() + "@enter"
	}
	return a.Throw().String() + "@" + strconv.Itoa(a.Source())
}

// ParseAction reads an action id ("65") or the form Action.String writes ("gae@5", "mo@enter").
func ParseAction(s string) (Action, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n >= NumActions {
			return 0, fmt.Errorf("%w: action id %d out of range 0..%d", ErrBadInput, n, NumActions-1)
		}
		return Action(n), nil
	}
	ts, src, ok := strings.Cut(s, "@")
	if !ok {
		return 0, fmt.Errorf("%w: action %q is neither an id nor throw@station", ErrBadInput, s)
	}
	t, err := ParseThrow(ts)
	if err != nil {
		return 0, err
	}
	if src == "enter" {
		return EnterAction(t), nil
	}
	n, err := strconv.Atoi(src)
	if err != nil || n < 0 || n >= NumStations {
		return 0, fmt.Errorf("%w: action %q: source must be a station 0..28 or enter", ErrBadInput, s)
	}
	return NewAction(t, Station(n)), nil
}
