package env

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// OptionKind is the type of a rule option's value in the rules string.
type OptionKind string

// The kinds of rule option.
const (
	// OptionInt is a whole number in Option.Min..Option.Max.
	OptionInt OptionKind = "int"
	// OptionFloat is a number in Option.Min..Option.Max.
	OptionFloat OptionKind = "float"
	// OptionSwitch is on or off (also true/false, yes/no, 1/0; a bool in maps and JSON).
	OptionSwitch OptionKind = "switch"
	// OptionEnum is one of Option.Values.
	OptionEnum OptionKind = "enum"
	// OptionText is a value with a syntax of its own (the obstacles list).
	OptionText OptionKind = "text"
)

// Option declares one rule option. The table of them (Options) is the only
// place a rule option is declared: ParseRules, Rules.Set, Rules.String, the
// map form of the server's rules param, JSON decoding, the range checks of
// Rules.Validate, the options table of docs/RULES.md, the CLI help, the
// coverage check of Variants and the generated Python constants all read it.
type Option struct {
	// Key is the name in rules strings, maps and JSON ("players").
	Key string
	// Aliases are other spellings ParseRules and maps accept ("p").
	Aliases []string
	// Kind is the value's type.
	Kind OptionKind
	// Min and Max bound an int or float option (inclusive).
	Min, Max float64
	// Values are the values an enum or switch option accepts, canonical spelling first.
	Values []string
	// Syntax describes a text option's values ("S:skip+S:backK").
	Syntax string
	// Cover lists what Variants must exercise of a text option (see Rules coverage).
	Cover []string
	// Doc says what the option does (Markdown, one line).
	Doc string

	// field is the Rules field that holds the option, which the JSON and
	// msgpack forms write as its own type (env/rules_wire.go).
	field string
	// omitStandard leaves the option out of JSON and msgpack while it has
	// its standard value: set on options added after files were written.
	omitStandard bool
	// variants are rules strings that play the option's values (Points),
	// added to Variants: a new option declares here the variants that cover
	// it, so that every property test and the cross-check play it.
	variants []string

	get func(Rules) string
	set func(*Rules, string) error
	// num returns an int or float option's value in r, false where it does
	// not apply: the range check reads it, so that Validate (run for every
	// new game) neither formats nor allocates.
	num func(Rules) (float64, bool)
	// cover returns what r exercises of a text option (a subset of Cover).
	cover func(Rules) []string
}

// Value returns the option's value in r, spelt as the rules string writes it;
// "" when the option does not apply (spaces on the cross).
func (o *Option) Value(r Rules) string { return o.get(r) }

// Default returns the option's value in the standard rule set.
func (o *Option) Default() string { return o.get(Standard()) }

// Range returns the values of the option as docs and help show them:
// "2..4", "on, off", "pass, stop, exact, wrap".
func (o *Option) Range() string {
	switch o.Kind {
	case OptionInt, OptionFloat:
		return fmt.Sprintf("%g..%g", o.Min, o.Max)
	case OptionText:
		return o.Syntax
	}
	return strings.Join(o.Values, ", ")
}

// Points returns the values of the option that Variants must cover: every
// value of an enum or switch, every value of a short int range and the
// bounds of a long one or of a float range, and a text option's Cover.
func (o *Option) Points() []string {
	switch o.Kind {
	case OptionInt:
		if o.Max-o.Min <= 4 {
			var out []string
			for v := o.Min; v <= o.Max; v++ {
				out = append(out, strconv.FormatFloat(v, 'g', -1, 64))
			}
			return out
		}
		fallthrough
	case OptionFloat:
		return []string{strconv.FormatFloat(o.Min, 'g', -1, 64), strconv.FormatFloat(o.Max, 'g', -1, 64)}
	case OptionText:
		return o.Cover
	}
	return o.Values
}

// Covers returns which of Points r exercises.
func (o *Option) Covers(r Rules) []string {
	if o.cover != nil {
		return o.cover(r)
	}
	if v := o.get(r); v != "" {
		return []string{v}
	}
	return nil
}

// check returns an error when r's value of the option is out of its
// declared range or not one of its values.
func (o *Option) check(r Rules) error {
	switch o.Kind {
	case OptionInt, OptionFloat:
		if x, ok := o.num(r); ok && !(x >= o.Min && x <= o.Max) {
			return fmt.Errorf("%w: %s must be %g to %g, got %s", ErrInvalidRules, o.Key, o.Min, o.Max, o.get(r))
		}
	case OptionEnum, OptionSwitch:
		if v := o.get(r); !slices.Contains(o.Values, v) {
			return fmt.Errorf("%w: %s must be one of %s, got %s", ErrInvalidRules, o.Key, strings.Join(o.Values, ", "), v)
		}
	}
	return nil
}

var onOffValues = []string{"on", "off"}

// options is the table of rule options, in the order of the Rules fields.
var options = []Option{
	{Key: "players", field: "Players", Kind: OptionInt, Min: MinPlayers, Max: MaxPlayers,
		Doc: "seats; turns go by seat number, wrapping round",
		get: func(r Rules) string { return strconv.Itoa(r.Players) },
		num: func(r Rules) (float64, bool) { return float64(r.Players), true },
		set: func(r *Rules, v string) (err error) { r.Players, err = parseIntField("players", v); return err }},
	{Key: "pieces", field: "Pieces", Kind: OptionInt, Min: MinPieces, Max: MaxPieces,
		Doc: "pieces per seat",
		get: func(r Rules) string { return strconv.Itoa(r.Pieces) },
		num: func(r Rules) (float64, bool) { return float64(r.Pieces), true },
		set: func(r *Rules, v string) (err error) { r.Pieces, err = parseIntField("pieces", v); return err }},
	{Key: "flat_prob", field: "FlatProb", Aliases: []string{"p"}, Kind: OptionFloat, Min: MinFlatP, Max: MaxFlatP,
		Doc: "chance that one stick lands flat side up",
		get: func(r Rules) string { return strconv.FormatFloat(r.FlatProb, 'g', -1, 64) },
		num: func(r Rules) (float64, bool) { return r.FlatProb, true },
		set: func(r *Rules, v string) (err error) {
			if r.FlatProb, err = strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("%w: flat_prob must be a number, got %q", ErrInvalidRules, v)
			}
			return nil
		}},
	{Key: "back_do", field: "BackDo", Aliases: []string{"backdo"}, Kind: OptionSwitch, Values: onOffValues,
		Doc: "off: the marked stick is an ordinary stick, so its throw counts as do",
		get: func(r Rules) string { return onOff(r.BackDo) },
		set: func(r *Rules, v string) (err error) { r.BackDo, err = parseBoolField("back_do", v); return err }},
	{Key: "capture_bonus_yut_mo", field: "CaptureBonusYutMo", Kind: OptionSwitch, Values: onOffValues,
		Doc: "on: a capture made with yut or mo earns a throw too (needs `capture_bonus=on` and `pool=on`)",
		get: func(r Rules) string { return onOff(r.CaptureBonusYutMo) },
		set: func(r *Rules, v string) (err error) {
			r.CaptureBonusYutMo, err = parseBoolField("capture_bonus_yut_mo", v)
			return err
		}},
	{Key: "shortcut", field: "Shortcut", Kind: OptionEnum, Values: []string{"forced"},
		Doc: "`choice` is refused: the 180 actions cannot say whether to turn",
		get: func(r Rules) string { return r.Shortcut.String() },
		set: func(r *Rules, v string) error { return r.Shortcut.UnmarshalText([]byte(v)) }},
	{Key: "finish", field: "Finish", Kind: OptionEnum, Values: finishNames,
		Doc: "how a stack leaves the board; see [Finishing](#finishing)",
		get: func(r Rules) string { return r.Finish.String() },
		set: func(r *Rules, v string) error { return r.Finish.UnmarshalText([]byte(v)) }},
	{Key: "back_do_enters", field: "BackDoEnters", Kind: OptionSwitch, Values: onOffValues,
		Doc: "on: back-do with nothing on the board enters a piece onto HOME (needs `back_do=on`, cross board only)",
		get: func(r Rules) string { return onOff(r.BackDoEnters) },
		set: func(r *Rules, v string) (err error) {
			r.BackDoEnters, err = parseBoolField("back_do_enters", v)
			return err
		}},
	{Key: "end", field: "End", Kind: OptionEnum, Values: endNames,
		Doc: "rank: play on until every place is decided",
		get: func(r Rules) string { return r.End.String() },
		set: func(r *Rules, v string) error { return r.End.UnmarshalText([]byte(v)) }},
	{Key: "board", field: "Board", omitStandard: true, Kind: OptionEnum, Values: boardNames,
		Doc: "the layout; see [Boards](#boards)",
		get: func(r Rules) string { return r.Board.String() },
		set: func(r *Rules, v string) error { return r.Board.UnmarshalText([]byte(v)) }},
	{Key: "spaces", field: "Spaces", omitStandard: true, Kind: OptionInt, Min: MinSpaces, Max: MaxSpaces,
		Doc: fmt.Sprintf("length of a line board (`board=line` alone means %d); not allowed on the cross", KataSpaces),
		get: func(r Rules) string {
			if r.Board == BoardCross && r.Spaces == 0 {
				return ""
			}
			return strconv.Itoa(r.Spaces)
		},
		num: func(r Rules) (float64, bool) { return float64(r.Spaces), r.Board != BoardCross || r.Spaces != 0 },
		set: func(r *Rules, v string) (err error) { r.Spaces, err = parseIntField("spaces", v); return err }},
	{Key: "pool", field: "Pool", omitStandard: true, Kind: OptionSwitch, Values: onOffValues,
		Doc: "off: each throw is used (or spent) as soon as it is thrown; yut and mo earn their next throw after their move",
		get: func(r Rules) string { return r.Pool.String() },
		set: func(r *Rules, v string) (err error) { r.Pool, err = parseSwitchField("pool", v); return err }},
	{Key: "capture_bonus", field: "CaptureBonus", omitStandard: true, Kind: OptionSwitch, Values: onOffValues,
		Doc: "off: a capture never earns a throw",
		get: func(r Rules) string { return r.CaptureBonus.String() },
		set: func(r *Rules, v string) (err error) {
			r.CaptureBonus, err = parseSwitchField("capture_bonus", v)
			return err
		}},
	{Key: "obstacles", field: "Obstacles", omitStandard: true, Kind: OptionText, Syntax: "`S:skip+S:backK`",
		Cover: []string{"none", "skip", "back1", "back" + strconv.Itoa(MaxPush), "cross", "line"},
		Doc:   "obstacles on chosen stations; see [Obstacles](#obstacles)",
		get: func(r Rules) string {
			if r.Obstacles.IsZero() {
				return "none"
			}
			return r.Obstacles.String()
		},
		set: func(r *Rules, v string) error { return r.Obstacles.UnmarshalText([]byte(v)) },
		cover: func(r Rules) []string {
			if r.Obstacles.IsZero() {
				return []string{"none"}
			}
			out := []string{r.Board.String()}
			for _, e := range r.Obstacles {
				switch {
				case e == ObstacleSkip:
					out = append(out, "skip")
				case e > 0:
					out = append(out, "back"+strconv.Itoa(int(e)))
				}
			}
			return out
		}},
}

// Options returns the declarations of every rule option, in the order the
// rules string and JSON write them: a copy that callers may change.
func Options() []Option {
	out := slices.Clone(options)
	for i := range out {
		out[i].Aliases = slices.Clone(out[i].Aliases)
		out[i].Values = slices.Clone(out[i].Values)
		out[i].Cover = slices.Clone(out[i].Cover)
	}
	return out
}

// lookupOption returns the option named by key or by one of its aliases.
func lookupOption(key string) (int, bool) {
	for i := range options {
		if options[i].Key == key || slices.Contains(options[i].Aliases, key) {
			return i, true
		}
	}
	return 0, false
}

// unknownKey is the error for a key no option has, the same in every form.
func unknownKey(k string) error {
	keys := make([]string, len(options))
	for i := range options {
		keys[i] = options[i].Key
	}
	slices.Sort(keys)
	return fmt.Errorf("%w: unknown rules key %q (keys: %s)", ErrInvalidRules, k, strings.Join(keys, ", "))
}

// Preset is a named rule set that ParseRules reads as the first item.
type Preset struct {
	// Name is the preset's name ("standard", "kata").
	Name string
	// Rules returns the preset's rules.
	Rules func() Rules
}

// Presets returns the rule sets ParseRules knows by name.
func Presets() []Preset { return slices.Clone(presets) }

// presets are the rule sets ParseRules knows by name.
var presets = []Preset{{"standard", Standard}, {"kata", Kata}}

// RulesBuilder reads rule options one key and value at a time on top of a
// base rule set, as ParseRules reads the items of a rules string and the
// server reads a rules map: keys and aliases are looked up in Options, a
// key given twice (under any spelling) is refused, and board=line without
// spaces means the kata's length.
type RulesBuilder struct {
	r         Rules
	seen      uint64 // bit i: options[i] was given
	lineGiven bool   // board=line turned a cross into a line
}

// NewRulesBuilder starts from base (Standard, or a preset's rules).
func NewRulesBuilder(base Rules) *RulesBuilder { return &RulesBuilder{r: base} }

// Set sets one option from its rules-string spelling ("3", "on", "rank").
// An unknown key, a repeated key or an unreadable value is an error
// wrapping ErrInvalidRules that names the key.
func (b *RulesBuilder) Set(key, value string) error {
	i, ok := lookupOption(key)
	if !ok {
		return unknownKey(key)
	}
	o := &options[i]
	if b.seen&(1<<i) != 0 {
		return fmt.Errorf("%w: rules key %q given more than once", ErrInvalidRules, o.Key)
	}
	b.seen |= 1 << i
	before := b.r.Board
	if err := o.set(&b.r, value); err != nil {
		return err
	}
	b.lineGiven = b.lineGiven || (o.Key == "board" && before != BoardLine && b.r.Board == BoardLine)
	return nil
}

// build returns the rules with the defaults that depend on other options
// filled in, without validating them.
func (b *RulesBuilder) build() Rules {
	r := b.r
	spaces, _ := lookupOption("spaces")
	if b.seen&(1<<spaces) == 0 {
		switch {
		case b.lineGiven:
			r.Spaces = KataSpaces // board=line alone is the kata's length
		case r.Board == BoardCross:
			r.Spaces = 0 // board=cross on top of a line preset
		}
	}
	return r
}

// Rules returns the rules built so far, validated.
func (b *RulesBuilder) Rules() (Rules, error) {
	r := b.build()
	return r, r.Validate()
}
