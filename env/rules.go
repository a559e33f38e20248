package env

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
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
	// FinishExact: a stack must stop exactly on HOME; overshooting is not allowed. Not supported yet.
	FinishExact
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
	finishNames   = []string{"pass", "stop", "exact"}
	endNames      = []string{"first", "rank"}
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

// String returns "pass", "stop" or "exact".
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
// records and datasets.
type Rules struct {
	// Players is the number of seats, 2 to 4; turn order is by seat.
	Players int `json:"players" msgpack:"players"`
	// Pieces is the number of pieces per seat, 1 to 5.
	Pieces int `json:"pieces" msgpack:"pieces"`
	// FlatProb is the probability that one stick lands flat side up, 0.5 to 0.65.
	FlatProb float64 `json:"flat_prob" msgpack:"flat_prob"`
	// BackDo enables back-do; without it the marked stick counts as do.
	BackDo bool `json:"back_do" msgpack:"back_do"`
	// CaptureBonusYutMo grants the capture bonus throw also when the capturing result was yut or mo.
	CaptureBonusYutMo bool `json:"capture_bonus_yut_mo" msgpack:"capture_bonus_yut_mo"`
	// Shortcut: forced (standard) or choice (not supported by the standard encoding).
	Shortcut ShortcutMode `json:"shortcut" msgpack:"shortcut"`
	// Finish: pass (standard), stop, or exact (not supported yet).
	Finish FinishMode `json:"finish" msgpack:"finish"`
	// BackDoEnters lets back-do with nothing on the board enter a piece onto HOME.
	BackDoEnters bool `json:"back_do_enters" msgpack:"back_do_enters"`
	// End: first (first finisher wins) or rank (play on until every place is ranked).
	End EndMode `json:"end" msgpack:"end"`
}

// Standard returns the `standard` rule set of RULES.md.
func Standard() Rules {
	return Rules{Players: 2, Pieces: 4, FlatProb: 0.6, BackDo: true}
}

// Validate checks every field and returns an error naming the first bad field
// and its allowed values.
func (r Rules) Validate() error {
	switch {
	case r.Players < MinPlayers || r.Players > MaxPlayers:
		return fmt.Errorf("%w: players must be %d to %d, got %d", ErrInvalidRules, MinPlayers, MaxPlayers, r.Players)
	case r.Pieces < MinPieces || r.Pieces > MaxPieces:
		return fmt.Errorf("%w: pieces must be %d to %d, got %d", ErrInvalidRules, MinPieces, MaxPieces, r.Pieces)
	case math.IsNaN(r.FlatProb) || r.FlatProb < MinFlatP || r.FlatProb > MaxFlatP:
		return fmt.Errorf("%w: flat_prob must be %g to %g, got %g", ErrInvalidRules, MinFlatP, MaxFlatP, r.FlatProb)
	case r.Shortcut == ShortcutChoice:
		return fmt.Errorf("%w: shortcut=choice is not supported yet (the standard 180-action encoding cannot express it); allowed: forced", ErrInvalidRules)
	case r.Shortcut > ShortcutChoice:
		return fmt.Errorf("%w: shortcut must be forced, got %s", ErrInvalidRules, r.Shortcut)
	case r.Finish == FinishExact:
		return fmt.Errorf("%w: finish=exact is not supported yet; allowed: pass, stop", ErrInvalidRules)
	case r.Finish > FinishExact:
		return fmt.Errorf("%w: finish must be pass or stop, got %s", ErrInvalidRules, r.Finish)
	case r.End > EndRank:
		return fmt.Errorf("%w: end must be first or rank, got %s", ErrInvalidRules, r.End)
	case r.BackDoEnters && !r.BackDo:
		return fmt.Errorf("%w: back_do_enters needs back_do=true", ErrInvalidRules)
	}
	return nil
}

// String formats the rules as the key=value list that ParseRules reads,
// listing only the fields that differ from Standard ("standard" if none).
func (r Rules) String() string {
	std := Standard()
	var parts []string
	add := func(differs bool, k, v string) {
		if differs {
			parts = append(parts, k+"="+v)
		}
	}
	add(r.Players != std.Players, "players", strconv.Itoa(r.Players))
	add(r.Pieces != std.Pieces, "pieces", strconv.Itoa(r.Pieces))
	add(r.FlatProb != std.FlatProb, "flat_prob", strconv.FormatFloat(r.FlatProb, 'g', -1, 64))
	add(r.BackDo != std.BackDo, "back_do", onOff(r.BackDo))
	add(r.CaptureBonusYutMo != std.CaptureBonusYutMo, "capture_bonus_yut_mo", onOff(r.CaptureBonusYutMo))
	add(r.Shortcut != std.Shortcut, "shortcut", r.Shortcut.String())
	add(r.Finish != std.Finish, "finish", r.Finish.String())
	add(r.BackDoEnters != std.BackDoEnters, "back_do_enters", onOff(r.BackDoEnters))
	add(r.End != std.End, "end", r.End.String())
	if len(parts) == 0 {
		return "standard"
	}
	return strings.Join(parts, ",")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

var ruleKeys = []string{"players", "pieces", "flat_prob", "back_do", "capture_bonus_yut_mo", "shortcut", "finish", "back_do_enters", "end"}

// ParseRules reads a comma-separated key=value list on top of Standard, such
// as "players=3,pieces=5,back_do=off,end=rank". "" and "standard" give
// Standard. The result is validated.
func ParseRules(spec string) (Rules, error) {
	r := Standard()
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "standard" {
		return r, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return r, fmt.Errorf("%w: %q is not key=value (keys: %s)", ErrInvalidRules, kv, strings.Join(ruleKeys, ", "))
		}
		if err := r.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return r, err
		}
	}
	return r, r.Validate()
}

// Set sets the field named by key (a ParseRules key, such as "players" or
// "back_do") from its ParseRules spelling v ("3", "on", "rank", ...),
// without validating the whole: call Validate when every field is set. An
// unknown key or a bad value is an error wrapping ErrInvalidRules, and r is
// then unchanged or has only that field changed.
func (r *Rules) Set(key, v string) error { return r.set(key, v) }

func (r *Rules) set(k, v string) error {
	var err error
	switch k {
	case "players":
		r.Players, err = parseIntField(k, v)
	case "pieces":
		r.Pieces, err = parseIntField(k, v)
	case "flat_prob", "p":
		r.FlatProb, err = strconv.ParseFloat(v, 64)
		if err != nil {
			err = fmt.Errorf("%w: flat_prob must be a number, got %q", ErrInvalidRules, v)
		}
	case "back_do", "backdo":
		r.BackDo, err = parseBoolField(k, v)
	case "capture_bonus_yut_mo":
		r.CaptureBonusYutMo, err = parseBoolField(k, v)
	case "back_do_enters":
		r.BackDoEnters, err = parseBoolField(k, v)
	case "shortcut":
		err = r.Shortcut.UnmarshalText([]byte(v))
	case "finish":
		err = r.Finish.UnmarshalText([]byte(v))
	case "end":
		err = r.End.UnmarshalText([]byte(v))
	default:
		keys := append([]string(nil), ruleKeys...)
		sort.Strings(keys)
		err = fmt.Errorf("%w: unknown rules key %q (keys: %s)", ErrInvalidRules, k, strings.Join(keys, ", "))
	}
	return err
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

// UnmarshalJSON reads rules from a JSON object; fields it leaves out keep
// their Standard values, so {"players":3} is standard rules for three seats.
// An unknown field is an error, so a misspelt option is never silently ignored.
func (r *Rules) UnmarshalJSON(b []byte) error {
	type plain Rules
	p := plain(Standard())
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return fmt.Errorf("%w: rules: %v", ErrInvalidRules, err)
	}
	*r = Rules(p)
	return nil
}
