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
	// Finish: pass (standard), stop, exact or wrap.
	Finish FinishMode `json:"finish" msgpack:"finish"`
	// BackDoEnters lets back-do with nothing on the board enter a piece onto HOME.
	BackDoEnters bool `json:"back_do_enters" msgpack:"back_do_enters"`
	// End: first (first finisher wins) or rank (play on until every place is ranked).
	End EndMode `json:"end" msgpack:"end"`

	// The fields below were added with the line board. Their zero values are
	// the standard, and they are left out of JSON and msgpack when standard,
	// so files written before them load unchanged and standard files do not
	// change.

	// Board is the layout: the cross (standard) or a line.
	Board BoardKind `json:"board,omitempty" msgpack:"board,omitempty"`
	// Spaces is the length of a line board, MinSpaces to MaxSpaces; 0 on the cross.
	Spaces int `json:"spaces,omitempty" msgpack:"spaces,omitempty"`
	// Pool on (standard): a turn's throws are pooled before moving. Off: each
	// throw is used (or spent) at once, and yut and mo earn the next throw
	// after their move.
	Pool Switch `json:"pool,omitempty" msgpack:"pool,omitempty"`
	// CaptureBonus on (standard): a capture earns a throw (see CaptureBonusYutMo). Off: never.
	CaptureBonus Switch `json:"capture_bonus,omitempty" msgpack:"capture_bonus,omitempty"`
	// Obstacles says what landing on each station does (none in standard).
	Obstacles Obstacles `json:"obstacles,omitzero" msgpack:"obstacles,omitempty"`
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

// presets are the rule sets ParseRules knows by name.
var presets = []struct {
	name  string
	rules func() Rules
}{{"standard", Standard}, {"kata", Kata}}

// Validate checks every field and returns an error naming the first bad field
// and its allowed values.
func (r Rules) Validate() error {
	if err := r.validateBoard(); err != nil {
		return err
	}
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
	case r.Finish > FinishWrap:
		return fmt.Errorf("%w: finish must be one of %s, got %s", ErrInvalidRules, strings.Join(finishNames, ", "), r.Finish)
	case r.End > EndRank:
		return fmt.Errorf("%w: end must be first or rank, got %s", ErrInvalidRules, r.End)
	case r.BackDoEnters && !r.BackDo:
		return fmt.Errorf("%w: back_do_enters needs back_do=true", ErrInvalidRules)
	case r.Pool > SwitchOff:
		return fmt.Errorf("%w: pool must be on or off, got %s", ErrInvalidRules, r.Pool)
	case r.CaptureBonus > SwitchOff:
		return fmt.Errorf("%w: capture_bonus must be on or off, got %s", ErrInvalidRules, r.CaptureBonus)
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
		parts := r.diff(p.rules())
		s := p.name
		if len(parts) > 0 {
			s = strings.Join(parts, ",")
			if p.name != "standard" {
				s = p.name + "," + s
			}
		}
		if best == "" || strings.Count(s, ",") < strings.Count(best, ",") {
			best = s
		}
	}
	return best
}

// diff lists key=value for every field of r that differs from std.
func (r Rules) diff(std Rules) []string {
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
	add(r.Board != std.Board, "board", r.Board.String())
	add(r.Spaces != std.Spaces && r.Board == BoardLine, "spaces", strconv.Itoa(r.Spaces))
	add(r.Pool != std.Pool, "pool", r.Pool.String())
	add(r.CaptureBonus != std.CaptureBonus, "capture_bonus", r.CaptureBonus.String())
	add(r.Obstacles != std.Obstacles, "obstacles", r.Obstacles.String())
	return parts
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

var ruleKeys = []string{"players", "pieces", "flat_prob", "back_do", "capture_bonus_yut_mo", "shortcut", "finish", "back_do_enters", "end",
	"board", "spaces", "pool", "capture_bonus", "obstacles"}

// ruleAliases maps the short spellings ParseRules also accepts to their keys.
var ruleAliases = map[string]string{"p": "flat_prob", "backdo": "back_do"}

// ParseRules reads a comma-separated key=value list, such as
// "players=3,pieces=5,back_do=off,end=rank", on top of Standard, or on top of
// a preset named first ("kata", "kata,players=3"). "" and "standard" give
// Standard. A key given twice is an error naming it. The result is validated.
func ParseRules(spec string) (Rules, error) {
	r := Standard()
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return r, nil
	}
	items := strings.Split(spec, ",")
	for _, p := range presets {
		if strings.TrimSpace(items[0]) == p.name {
			r, items = p.rules(), items[1:]
			break
		}
	}
	seen := map[string]bool{}
	lineGiven := false
	for _, kv := range items {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return r, fmt.Errorf("%w: %q is not key=value (keys: %s; presets first: standard, kata)", ErrInvalidRules, kv, strings.Join(ruleKeys, ", "))
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if a, ok := ruleAliases[k]; ok {
			k = a
		}
		if seen[k] {
			return r, fmt.Errorf("%w: rules key %q given more than once", ErrInvalidRules, k)
		}
		seen[k] = true
		before := r.Board
		if err := r.set(k, v); err != nil {
			return r, err
		}
		lineGiven = lineGiven || (k == "board" && before != BoardLine && r.Board == BoardLine)
	}
	switch {
	case lineGiven && !seen["spaces"]:
		r.Spaces = KataSpaces // board=line alone is the kata's length
	case r.Board == BoardCross && !seen["spaces"]:
		r.Spaces = 0 // board=cross on top of a line preset
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
	case "flat_prob":
		r.FlatProb, err = strconv.ParseFloat(v, 64)
		if err != nil {
			err = fmt.Errorf("%w: flat_prob must be a number, got %q", ErrInvalidRules, v)
		}
	case "back_do":
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
	case "board":
		err = r.Board.UnmarshalText([]byte(v))
	case "spaces":
		r.Spaces, err = parseIntField(k, v)
	case "pool":
		r.Pool, err = parseSwitchField(k, v)
	case "capture_bonus":
		r.CaptureBonus, err = parseSwitchField(k, v)
	case "obstacles":
		err = r.Obstacles.UnmarshalText([]byte(v))
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
