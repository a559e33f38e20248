package env

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors. Every error the package returns wraps one of these, so
// callers can branch with errors.Is.
var (
	// ErrInvalidRules: a rules configuration is out of range or not supported.
	ErrInvalidRules = errors.New("invalid rules")
	// ErrIllegalAction: the action is not legal in this state.
	ErrIllegalAction = errors.New("illegal action")
	// ErrWrongPhase: the call does not fit the state's phase (a move at a chance node, a throw at a decision, anything after the game ended).
	ErrWrongPhase = errors.New("wrong phase")
	// ErrBadInput: a value from outside (a name, a number, a blob, a record) could not be understood.
	ErrBadInput = errors.New("bad input")
	// ErrCorrupt: a saved state or record is damaged or inconsistent.
	ErrCorrupt = errors.New("corrupt data")
	// ErrVersion: saved data has a format version this build does not read.
	ErrVersion = errors.New("unsupported version")
)

// Limits of the rules configuration.
const (
	MinPlayers = 2
	MaxPlayers = 4
	MinPieces  = 1
	MaxPieces  = 5
	MinFlatP   = 0.5
	MaxFlatP   = 0.65
	// MinSpaces and MaxSpaces bound the length of a line board: the action
	// encoding names at most 29 stations as sources.
	MinSpaces = 1
	MaxSpaces = NumStations
	// KataSpaces is the length of the kata's line board.
	KataSpaces = 15
	// MaxPush bounds how far an obstacle pushes a stack back.
	MaxPush = NumStations - 1
)

// BoardKind names a board layout.
type BoardKind uint8

const (
	// BoardCross is the standard board of 29 stations: the outer ring and two diagonals.
	BoardCross BoardKind = iota
	// BoardLine is a line of Rules.Spaces spaces, 0 to N-1, entered before
	// space 0 and left from space N-1 (the kata's board).
	BoardLine
)

// Switch is a rules option that is on in the standard rule set. Its zero
// value is SwitchOn, so a rules object that leaves it out keeps the standard.
type Switch uint8

const (
	// SwitchOn: the option applies (standard).
	SwitchOn Switch = iota
	// SwitchOff: the option does not apply.
	SwitchOff
)

// ShortcutMode says whether shortcuts at the corners and the centre are forced.
type ShortcutMode uint8

const (
	// ShortcutForced: a stack that stops on C1, C2 or the centre takes the shortcut (standard).
	ShortcutForced ShortcutMode = iota
	// ShortcutChoice: the player chooses; not supported by the standard action encoding.
	ShortcutChoice
)

// FinishMode says what reaching HOME does.
type FinishMode uint8

const (
	// FinishPass: a stack must pass HOME to finish; stopping on HOME waits there (standard).
	FinishPass FinishMode = iota
	// FinishStop: reaching HOME by a forward move finishes the stack.
	FinishStop
	// FinishExact: a stack finishes by stopping exactly on the end (HOME, or
	// the last space of a line); a move past it is not legal.
	FinishExact
	// FinishWrap: a stack finishes by stopping exactly on the end; a move
	// past it goes on from the start of the board (station 1, or space 0).
	FinishWrap
)

// EndMode says when the game ends.
type EndMode uint8

const (
	// EndFirst: the first seat to finish all its pieces wins and the game ends (standard).
	EndFirst EndMode = iota
	// EndRank: play on until every place is ranked.
	EndRank
)

var (
	shortcutNames = []string{"forced", "choice"}
	finishNames   = []string{"pass", "stop", "exact", "wrap"}
	endNames      = []string{"first", "rank"}
	boardNames    = []string{"cross", "line"}
	switchNames   = []string{"on", "off"}
)

func enumString(names []string, i uint8, kind string) string {
	if int(i) < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", kind, i)
}

func enumParse(names []string, s, field string) (uint8, error) {
	for i, n := range names {
		if n == s {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %s must be one of %s, got %q", ErrInvalidRules, field, strings.Join(names, ", "), s)
}

// String returns "forced" or "choice".
func (m ShortcutMode) String() string { return enumString(shortcutNames, uint8(m), "ShortcutMode") }

// String returns "cross" or "line".
func (b BoardKind) String() string { return enumString(boardNames, uint8(b), "BoardKind") }

// String returns "on" or "off".
func (w Switch) String() string { return enumString(switchNames, uint8(w), "Switch") }

// MarshalText encodes the board by name.
func (b BoardKind) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// MarshalText encodes the switch as "on" or "off".
func (w Switch) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText decodes the board by name.
func (b *BoardKind) UnmarshalText(t []byte) error {
	v, err := enumParse(boardNames, string(t), "board")
	*b = BoardKind(v)
	return err
}

// UnmarshalText decodes "on" or "off" (also true/false, yes/no, 1/0).
func (w *Switch) UnmarshalText(t []byte) error {
	v, err := parseSwitchField("switch", string(t))
	*w = v
	return err
}

func parseSwitchField(k, v string) (Switch, error) {
	on, err := parseBoolField(k, v)
	if on {
		return SwitchOn, err
	}
	return SwitchOff, err
}

// String returns "pass", "stop", "exact" or "wrap".
func (m FinishMode) String() string { return enumString(finishNames, uint8(m), "FinishMode") }

// String returns "first" or "rank".
func (m EndMode) String() string { return enumString(endNames, uint8(m), "EndMode") }

// MarshalText encodes the mode by name.
func (m ShortcutMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// MarshalText encodes the mode by name.
func (m FinishMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// MarshalText encodes the mode by name.
func (m EndMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText decodes the mode by name.
func (m *ShortcutMode) UnmarshalText(b []byte) error {
	v, err := enumParse(shortcutNames, string(b), "shortcut")
	*m = ShortcutMode(v)
	return err
}

// UnmarshalText decodes the mode by name.
func (m *FinishMode) UnmarshalText(b []byte) error {
	v, err := enumParse(finishNames, string(b), "finish")
	*m = FinishMode(v)
	return err
}

// UnmarshalText decodes the mode by name.
func (m *EndMode) UnmarshalText(b []byte) error {
	v, err := enumParse(endNames, string(b), "end")
	*m = EndMode(v)
	return err
}

// Rules is a validated rules configuration. The zero value is not valid; start
// from Standard and change fields. Every field is recorded in saved states,
// records and datasets, in the JSON and msgpack form that Options declares
// (MarshalJSON, EncodeMsgpack): each field is named by one option.
type Rules struct {
	// Players is the number of seats, 2 to 4; turn order is by seat.
	Players int
	// Pieces is the number of pieces per seat, 1 to 5.
	Pieces int
	// FlatProb is the probability that one stick lands flat side up, 0.5 to 0.65.
	FlatProb float64
	// BackDo enables back-do; without it the marked stick counts as do.
	BackDo bool
	// CaptureBonusYutMo grants the capture bonus throw also when the capturing result was yut or mo.
	CaptureBonusYutMo bool
	// Shortcut: forced (standard) or choice (not supported by the standard encoding).
	Shortcut ShortcutMode
	// Finish: pass (standard), stop, exact or wrap.
	Finish FinishMode
	// BackDoEnters lets back-do with nothing on the board enter a piece onto HOME.
	BackDoEnters bool
	// End: first (first finisher wins) or rank (play on until every place is ranked).
	End EndMode

	// The fields below were added with the line board. Their zero values are
	// the standard, and their options are declared omitStandard (env/rules_wire.go).

	// Board is the layout: the cross (standard) or a line.
	Board BoardKind
	// Spaces is the length of a line board, MinSpaces to MaxSpaces; 0 on the cross.
	Spaces int
	// Pool on (standard): a turn's throws are pooled before moving. Off: each
	// throw is used (or spent) at once, and yut and mo earn the next throw
	// after their move.
	Pool Switch
	// CaptureBonus on (standard): a capture earns a throw (see CaptureBonusYutMo). Off: never.
	CaptureBonus Switch
	// Obstacles says what landing on each station does (none in standard).
	Obstacles Obstacles
}

// Standard returns the `standard` rule set of RULES.md.
func Standard() Rules {
	return Rules{Players: 2, Pieces: 4, FlatProb: 0.6, BackDo: true}
}

// Kata returns the `kata` preset: the one-dimensional Yut of the TDD kata
// (docs/RULES.md): a line of 15 spaces, 2 players with 2 pieces, fair
// sticks, no back-do, each throw used at once, no capture bonus, exact finish.
func Kata() Rules {
	return Rules{Players: 2, Pieces: 2, FlatProb: 0.5, Board: BoardLine, Spaces: KataSpaces,
		Pool: SwitchOff, CaptureBonus: SwitchOff, Finish: FinishExact}
}

// Validate checks every field and returns an error naming the first bad field
// and its allowed values: the board, then each option against its declared
// range or values (Options), then the combinations the engine refuses.
func (r Rules) Validate() error {
	if err := r.validateBoard(); err != nil {
		return err
	}
	if r.Shortcut == ShortcutChoice {
		return fmt.Errorf("%w: shortcut=choice is not supported yet (the standard 180-action encoding cannot express it); allowed: forced", ErrInvalidRules)
	}
	for i := range options {
		if err := options[i].check(r); err != nil {
			return err
		}
	}
	switch {
	case r.BackDoEnters && !r.BackDo:
		return fmt.Errorf("%w: back_do_enters needs back_do=true", ErrInvalidRules)
	case r.CaptureBonusYutMo && r.CaptureBonus == SwitchOff:
		return fmt.Errorf("%w: capture_bonus_yut_mo needs capture_bonus=on", ErrInvalidRules)
	case r.CaptureBonusYutMo && r.Pool == SwitchOff:
		return fmt.Errorf("%w: capture_bonus_yut_mo needs pool=on (without a pool a move earns at most one throw)", ErrInvalidRules)
	}
	return nil
}

// validateBoard checks the board, its length and the obstacles on it.
func (r Rules) validateBoard() error {
	switch {
	case r.Board > BoardLine:
		return fmt.Errorf("%w: board must be cross or line, got %s", ErrInvalidRules, r.Board)
	case r.Board == BoardCross && r.Spaces != 0:
		return fmt.Errorf("%w: spaces=%d needs board=line (the cross board has 29 stations)", ErrInvalidRules, r.Spaces)
	case r.Board == BoardLine && (r.Spaces < MinSpaces || r.Spaces > MaxSpaces):
		return fmt.Errorf("%w: spaces must be %d to %d on a line board, got %d", ErrInvalidRules, MinSpaces, MaxSpaces, r.Spaces)
	case r.Board == BoardLine && r.BackDoEnters:
		return fmt.Errorf("%w: back_do_enters needs board=cross (a line has no HOME station to enter onto)", ErrInvalidRules)
	}
	first, last := 1, NumStations-1 // not HOME, where pieces finish
	if r.Board == BoardLine {
		first, last = 0, r.Spaces-2 // not the last space, where pieces finish
	}
	for st, o := range r.Obstacles {
		switch {
		case o == 0:
		case o < ObstacleSkip || o > MaxPush:
			return fmt.Errorf("%w: obstacles: station %d has effect %d, want skip or back1..back%d", ErrInvalidRules, st, o, MaxPush)
		case st < first || st > last:
			return fmt.Errorf("%w: obstacles: station %d is not allowed; obstacles stand on %d..%d of this board", ErrInvalidRules, st, first, last)
		}
	}
	return nil
}

// String formats the rules as the list that ParseRules reads: a preset name
// and the key=value pairs that differ from it ("standard", "kata",
// "kata,players=3", "players=3,end=rank"), from whichever preset needs the
// fewest pairs (standard on a tie).
func (r Rules) String() string {
	best := ""
	for _, p := range presets {
		parts := r.diff(p.Rules())
		s := p.Name
		if len(parts) > 0 {
			s = strings.Join(parts, ",")
			if p.Name != "standard" {
				s = p.Name + "," + s
			}
		}
		if best == "" || strings.Count(s, ",") < strings.Count(best, ",") {
			best = s
		}
	}
	return best
}

// diff lists key=value for every option whose value in r differs from base's.
func (r Rules) diff(base Rules) []string {
	var parts []string
	for i := range options {
		if v := options[i].get(r); v != "" && v != options[i].get(base) {
			parts = append(parts, options[i].Key+"="+v)
		}
	}
	return parts
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ParseRules reads a comma-separated key=value list, such as
// "players=3,pieces=5,back_do=off,end=rank", on top of Standard, or on top of
// a preset named first ("kata", "kata,players=3"). "" and "standard" give
// Standard. Keys and aliases are those of Options; a key given twice is an
// error naming it. The result is validated.
func ParseRules(spec string) (Rules, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Standard(), nil
	}
	items := strings.Split(spec, ",")
	base := Standard()
	for _, p := range presets {
		if strings.TrimSpace(items[0]) == p.Name {
			base, items = p.Rules(), items[1:]
			break
		}
	}
	b := NewRulesBuilder(base)
	for _, kv := range items {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return b.build(), fmt.Errorf("%w: %q is not key=value (keys: %s; presets first: %s)", ErrInvalidRules, kv, strings.Join(optionKeys(), ", "), strings.Join(presetNames(), ", "))
		}
		if err := b.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return b.build(), err
		}
	}
	return b.Rules()
}

// optionKeys returns the key of every option, in table order.
func optionKeys() []string {
	keys := make([]string, len(options))
	for i := range options {
		keys[i] = options[i].Key
	}
	return keys
}

// presetNames returns the name of every preset.
func presetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return names
}

// Set sets the option named by key (a key or alias of Options, such as
// "players" or "p") from its ParseRules spelling v ("3", "on", "rank", ...),
// without validating the whole: call Validate when every field is set. An
// unknown key or a bad value is an error wrapping ErrInvalidRules, and r is
// then unchanged or has only that field changed.
func (r *Rules) Set(key, v string) error {
	i, ok := lookupOption(key)
	if !ok {
		return unknownKey(key)
	}
	return options[i].set(r, v)
}

func parseIntField(k, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s must be an integer, got %q", ErrInvalidRules, k, v)
	}
	return n, nil
}

func parseBoolField(k, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s must be on or off, got %q", ErrInvalidRules, k, v)
}

// Probabilities returns the probability of each throw under these rules.
func (r Rules) Probabilities() [NumThrows]float64 {
	return ThrowProbabilities(r.FlatProb, r.BackDo)
}

// UnmarshalJSON reads rules from a JSON object through Options, as a rules
// map on the wire is read: fields it leaves out keep their Standard values,
// so {"players":3} is standard rules for three seats and {"board":"line"}
// a line of the kata's length; aliases are accepted; an unknown or repeated
// key is an error, so a misspelt option is never silently ignored. Values
// are numbers, bools (on/off) or strings. The rules are not validated.
func (r *Rules) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	bad := func(err error) error { return fmt.Errorf("%w: rules: %v", ErrInvalidRules, err) }
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return bad(fmt.Errorf("want a JSON object, got %v (%v)", tok, err))
	}
	rb := NewRulesBuilder(Standard())
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := tok.(string)
		if tok, err = d.Token(); err != nil {
			return bad(err)
		}
		v, err := ruleValueString(key, tok)
		if err != nil {
			return err
		}
		if err := rb.Set(key, v); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return bad(err)
	}
	*r = rb.build()
	return nil
}
