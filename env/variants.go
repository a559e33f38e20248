package env

import (
	"fmt"
	"slices"
)

// Variant is a named rule set of Variants.
type Variant struct {
	// Name is the rules string the variant was written as.
	Name string
	// Rules are its rules.
	Rules Rules
}

// variantSpecs are the rule sets of Variants besides those the options
// declare (Option.variants). Together they cover every option's Points and
// every preset (TestVariantsCoverEveryOption): a new option declares its
// own variants in its Option; mixes of options go here.
var variantSpecs = []string{
	// The presets.
	"standard",
	"kata",
	// The cross board, one option or a few at a time.
	"players=3",
	"players=4,pieces=5",
	"pieces=1",
	"pieces=2,flat_prob=0.5",
	"pieces=3,players=4,flat_prob=0.65",
	"back_do=off,flat_prob=0.65",
	"capture_bonus_yut_mo=on",
	"finish=stop",
	"back_do_enters=on",
	"back_do_enters=on,finish=stop,players=3",
	"end=rank,players=3",
	"end=rank,players=4,pieces=3,capture_bonus_yut_mo=on",
	"end=rank,players=2,back_do=off,finish=stop",
	"players=4,pieces=5,end=rank,flat_prob=0.5",
	"players=4,pieces=5,end=rank,back_do_enters=on,flat_prob=0.65",
	"players=3,pieces=1,finish=stop,capture_bonus_yut_mo=on,back_do_enters=on",
	"players=2,pieces=5,back_do=off,end=rank",
	"finish=exact,players=3",
	"finish=wrap,pieces=2",
	"pool=off",
	"capture_bonus=off,players=3",
	// Line boards and the kata's options, alone and together.
	"kata,finish=wrap,players=3,pieces=3",
	"kata,spaces=5,pieces=5,players=4,end=rank,obstacles=1:skip+3:back2",
	"kata,spaces=29,finish=pass,back_do=on,pool=on,capture_bonus=on,obstacles=20:back19",
	"kata,spaces=29,finish=stop,obstacles=27:back28+5:skip",
	"board=line,spaces=2,finish=stop,pieces=1,players=3",
	"kata,spaces=1,pieces=3,finish=wrap",
	"kata,spaces=1,players=4,finish=pass,pool=on",
	// Obstacles on the cross.
	"finish=exact,pool=off,capture_bonus=off,obstacles=3:skip+8:back4+22:back2",
	"finish=wrap,players=3,obstacles=5:skip+27:back3",
	"players=4,pieces=5,pool=off,end=rank,obstacles=1:back1+10:skip",
	"players=3,obstacles=28:back28+12:back1",
}

// Variants returns named rule sets that together cover every value of every
// rule option (each enum and switch value, the bounds of each range, each
// preset, obstacles of every kind on both boards). Property tests iterate
// them, so a new option value is tested everywhere once it has a variant.
func Variants() []Variant {
	specs := slices.Clone(variantSpecs)
	for i := range options {
		specs = append(specs, options[i].variants...)
	}
	out := make([]Variant, len(specs))
	for i, spec := range specs {
		r, err := ParseRules(spec)
		if err != nil {
			panic(fmt.Sprintf("env: variant %q: %v", spec, err)) // a bug in the tables, caught by every test
		}
		out[i] = Variant{Name: spec, Rules: r}
	}
	return out
}
