package agent

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rollout names the policy that plays a simulated game to its end.
type Rollout uint8

const (
	// RolloutRandom plays uniformly random legal actions (fast).
	RolloutRandom Rollout = iota
	// RolloutGreedy plays the greedy agent's choice (slower, better informed).
	RolloutGreedy
)

var rolloutNames = []string{"random", "greedy"}

// String returns "random" or "greedy".
func (r Rollout) String() string {
	if int(r) < len(rolloutNames) {
		return rolloutNames[r]
	}
	return fmt.Sprintf("Rollout(%d)", uint8(r))
}

// Prior names where the tree search gets its prior over actions.
type Prior uint8

const (
	// PriorNone: plain UCT; every action is tried once before UCT scores apply.
	PriorNone Prior = iota
	// PriorGreedy: PUCT with priors softmax(greedy score / PriorTemp).
	PriorGreedy
)

var priorNames = []string{"none", "greedy"}

// String returns "none" or "greedy".
func (p Prior) String() string {
	if int(p) < len(priorNames) {
		return priorNames[p]
	}
	return fmt.Sprintf("Prior(%d)", uint8(p))
}

// PriorTemp is the temperature of the greedy prior: an action scoring
// PriorTemp more than another is e times as likely a priori.
const PriorTemp = 8.0

// Limits on spec values. They keep a spec that arrives from outside (a
// client of the server, a flag) from asking for unbounded memory or time.
const (
	// MaxN bounds N: rollouts per action for mc, simulations per decision for mcts.
	MaxN = 100_000
	// MaxWorkers bounds the goroutines one decision may use.
	MaxWorkers = 64
	// MaxTime bounds the time budget per decision.
	MaxTime = time.Minute
	// MaxC bounds the exploration constant.
	MaxC = 100.0
	// MaxTemp bounds the move-selection temperature.
	MaxTemp = 100.0
	// MaxGumbelM bounds m, the root actions of a Gumbel search (all 180).
	MaxGumbelM = 180
)

// Default values of the options.
const (
	// DefaultMCRollouts is N for "mc" without ":N".
	DefaultMCRollouts = 100
	// DefaultMCTSSimulations is N for "mcts" without ":N".
	DefaultMCTSSimulations = 400
	// DefaultPrior is the prior of "mcts": greedy (PUCT), which measured
	// stronger than plain UCT at equal simulations (docs/BASELINES.md).
	DefaultPrior = PriorGreedy
	// DefaultNetC is the exploration constant of "net:PATH,sims=N": the
	// AlphaZero-style PUCT constant for network priors.
	DefaultNetC = 1.5
	// DefaultC is the exploration constant for outcomes in [-1, 1] (UCT and
	// PUCT), chosen by measurement: docs/BASELINES.md.
	DefaultC = 2.5
)

// Spec is a parsed agent spec: which agent and its options. ParseSpec reads
// the text form and String writes it back; both live only here, so the CLI,
// the server and Python all mean the same thing by "mcts:400,c=2".
type Spec struct {
	// Name is the agent: "random", "greedy", "mc" or "mcts".
	Name string
	// N is the rollouts per legal action (mc) or simulations per decision
	// (mcts); 0 for agents without a search.
	N int
	// Rollout is the policy that finishes simulated games (mc, mcts).
	Rollout Rollout
	// C is the exploration constant (mcts).
	C float64
	// Prior selects PUCT with greedy priors (greedy, the default) or plain
	// UCT (none) (mcts).
	Prior Prior
	// Time caps the wall-clock time of one decision (mc, mcts); 0 means no
	// cap. A capped search stops early and is no longer reproducible from
	// its seed alone, since how far it gets depends on the machine.
	Time time.Duration
	// Workers is the number of goroutines that search one decision (mc,
	// mcts): root parallelism for mcts (independent trees, merged visit
	// counts), split rollouts for mc. N is the total over all workers.
	Workers int
	// Temp is the temperature of the final move choice (mcts): 0 plays the
	// most visited action; T > 0 samples an action with probability
	// proportional to visits^(1/T), for diverse self-play data.
	Temp float64
	// Path is the network file of agent "net" ("net:PATH"), or the solved
	// table of agent "optimal" ("optimal:PATH"). For net, N is then its
	// simulations per decision (option sims; 0: no search, the policy's
	// most likely legal action). Agent "az" (the network shipped inside
	// the binary, package nnet) takes the same options and no path.
	Path string
	// Gumbel selects net's root actions by Gumbel-Top-m sampling and
	// sequential halving (option gumbel=1; MCTSOptions.Gumbel; az's search
	// has it unless gumbel=0); M is m (option m, 1..180; 0 when Gumbel is
	// off, DefaultGumbelM by default).
	Gumbel bool
	M      int
	// Fast > 0 turns on playout cap randomization (option fast, 1..N; mcts,
	// net and az with a search): each decision runs the full search with
	// probability FullProb (option full_prob, DefaultFullProb by default;
	// 0 when Fast is 0), else Fast simulations without temperature, and
	// marks its Stats.Fast (capped.go).
	Fast     int
	FullProb float64
}

// kindInfo says what an agent name accepts, and how the docs describe it
// (SpecHelp, SpecMarkdown).
type kindInfo struct {
	name     string
	defaultN int      // 0: the agent takes no N
	keys     []string // accepted option keys
	// gumbel: the agent's search (sims >= 1) is Gumbel root selection
	// unless gumbel=0 asks for PUCT.
	gumbel bool
	// shipped: the agent plays a network shipped inside the binary (az,
	// and every name package nnet adds with RegisterShipped), taking net's
	// options but no PATH.
	shipped bool
	// arg is what follows the name after ':' ("N", "PATH"; "" for none),
	// nText what N means (for agents with defaultN > 0).
	arg, nText string
	// forms are the rows of the docs' table of specs: a form and what it plays.
	forms []specForm
}

// specForm is one documented form of an agent spec.
type specForm struct{ form, about string }

// kindTable is the one declaration of the agent names, in the order the
// docs list them; kinds indexes it.
var kindTable = []kindInfo{
	{name: "random", forms: []specForm{{"random", "a uniformly random legal action"}}},
	{name: "greedy", forms: []specForm{{"greedy", "one move deep: plays each legal action on a copy and scores it (below)"}}},
	{name: "mc", defaultN: DefaultMCRollouts, arg: "N", nText: "rollouts per legal action",
		keys:  []string{"rollout", "time", "workers"},
		forms: []specForm{{"mc:N", "flat Monte Carlo: N rollouts per legal action from the state after it, best mean outcome for the mover"}}},
	{name: "mcts", defaultN: DefaultMCTSSimulations, arg: "N", nText: "simulations per decision",
		keys:  []string{"rollout", "prior", "c", "time", "workers", "temp", "fast", "full_prob"},
		forms: []specForm{{"mcts:N", "tree search with explicit chance nodes, N simulations per decision (below)"}}},
	{name: "net", arg: "PATH", keys: []string{"sims", "c", "workers", "temp", "gumbel", "m", "fast", "full_prob"},
		forms: []specForm{
			{"net:PATH", "a trained network (a `yutenv-net` file, docs/FORMATS.md): the policy's most likely legal action, no search. It plays only the rules its file records (the rules it was trained for) and refuses others with an error naming both. A server's clients may name only files in its `--net-dir` folders (docs/PROTOCOL.md, \"Networks\")"},
			{"net:PATH,sims=N", "the same MCTS guided by the network (PUCT): its priors at every decision node, its value at every new leaf instead of a rollout"},
			{"net:PATH,sims=N,gumbel=1[,m=M]", "Gumbel root selection with sequential halving (below): the network's search for small budgets, whose policy (`Stats.Policy`, the self-play target) is the improved policy of completed Q-values"},
		}},
	{name: "az", keys: shippedKeys, gumbel: true, shipped: true,
		forms: []specForm{
			{"az", "the network shipped inside the binary (no file, no torch) alone; it plays only the rules it was trained for (`standard`) and refuses others with an error naming them. See \"The shipped agent az\""},
			{"az,sims=N[,m=M]", "the shipped network guiding a Gumbel search, the stronger of its two searches"},
			{"az,sims=N,gumbel=0", "the shipped network guiding the PUCT search of `net:PATH,sims=N`"},
		}},
	{name: "optimal", arg: "PATH",
		forms: []specForm{
			{"optimal:PATH", "perfect play from a solved table (a `yutenv-solve` file written by `yutenv solve`, docs/FORMATS.md): the legal action whose successor has the highest exactly solved value; it plays only the rules the table was solved for and refuses others with an error naming them. A server's clients may not name it"},
		}},
}

// shippedKeys are the options of an agent of a shipped network: net's.
var shippedKeys = []string{"sims", "c", "workers", "temp", "gumbel", "m", "fast", "full_prob"}

// kinds indexes kindTable by name.
var kinds = func() map[string]kindInfo {
	m := make(map[string]kindInfo, len(kindTable))
	for _, k := range kindTable {
		m[k.name] = k
	}
	return m
}()

// The options that belong to one of a network's two searches: gumbelKeys
// only to Gumbel's, puctKeys only to PUCT's (checkGumbel).
var (
	gumbelKeys = []string{"m"}
	puctKeys   = []string{"c", "workers", "temp"}
)

// kindNames lists the agent names of the spec grammar, sorted.
func kindNames() []string {
	out := make([]string, 0, len(kindTable))
	for _, k := range kindTable {
		out = append(out, k.name)
	}
	sortStrings(out)
	return out
}

// DefaultSpec returns the spec of agent name with every option at its default.
func DefaultSpec(name string) (Spec, error) {
	k, ok := kinds[name]
	if !ok {
		return Spec{}, fmt.Errorf("%w: unknown agent %q (known: %s)", ErrSpec, name, strings.Join(kindNames(), ", "))
	}
	sp := Spec{Name: name, N: k.defaultN}
	if k.defaultN > 0 {
		sp.C, sp.Workers = DefaultC, 1
	}
	switch name {
	case "mcts":
		sp.Prior = DefaultPrior
	case "net":
		sp.C, sp.Workers, sp.Prior = DefaultNetC, 1, PriorGreedy
	}
	if k.shipped {
		sp.C, sp.Workers, sp.Prior = DefaultNetC, 1, PriorGreedy
	}
	return sp, nil
}

// ParseSpec reads an agent spec:
//
//	spec = name [":" N | ":" PATH] { "," key "=" value }
//	PATH = bare | "'" { character | "''" } "'"
//
// The names, what each takes, the option keys with their values and defaults
// are declared once, in the tables SpecHelp and SpecMarkdown print (and
// docs/BASELINES.md shows): for example random, mcts:400,c=2,
// net:a.ynet,sims=200,gumbel=1, az,sims=200 (Gumbel, az's default search)
// or az,sims=200,gumbel=0,c=2 (PUCT). Each key may appear once; spaces
// around items are ignored. A bare PATH runs to the first item that reads
// key=value (it may hold ',', not ';'); a quoted one may hold anything
// (QuotePath, PathQuote). Every error wraps ErrSpec and says what was
// expected.
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, fmt.Errorf("%w: empty spec (want one of %s, e.g. mcts:400)", ErrSpec, strings.Join(kindNames(), ", "))
	}
	items := splitSpecText(s, ',')
	head := strings.TrimSpace(items[0])
	name, nText, hasN := strings.Cut(head, ":")
	name = strings.TrimSpace(name)
	sp, err := DefaultSpec(name)
	if err != nil {
		return Spec{}, err
	}
	info := kinds[name]
	if info.arg == "PATH" {
		var options []string
		if sp.Path, options, err = specPath(name, hasN, nText, items); err != nil {
			return Spec{}, fmt.Errorf("%w: %q: %w", ErrSpec, s, err)
		}
		items = append(items[:1], options...)
	} else if hasN {
		if info.defaultN == 0 {
			return Spec{}, fmt.Errorf("%w: %q: %s takes no count", ErrSpec, s, name)
		}
		n, err := strconv.Atoi(strings.TrimSpace(nText))
		if err != nil || n < 1 || n > MaxN {
			return Spec{}, fmt.Errorf("%w: %q: count must be an integer 1..%d, got %q", ErrSpec, s, MaxN, strings.TrimSpace(nText))
		}
		sp.N = n
	}
	seen := map[string]bool{}
	for _, item := range items[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return Spec{}, fmt.Errorf("%w: %q: option %q is not key=value", ErrSpec, s, strings.TrimSpace(item))
		}
		if !contains(info.keys, k) {
			if len(info.keys) == 0 {
				return Spec{}, fmt.Errorf("%w: %q: %s takes no options", ErrSpec, s, name)
			}
			return Spec{}, fmt.Errorf("%w: %q: %s has no option %q (options: %s)", ErrSpec, s, name, k, strings.Join(info.keys, ", "))
		}
		if seen[k] {
			return Spec{}, fmt.Errorf("%w: %q: option %q given twice", ErrSpec, s, k)
		}
		seen[k] = true
		if err := sp.set(k, v); err != nil {
			return Spec{}, fmt.Errorf("%w: %q: %v", ErrSpec, s, err)
		}
	}
	if info.gumbel && !seen["gumbel"] && sp.N >= 1 {
		sp.Gumbel = true
	}
	if err := sp.checkGumbel(seen, info.gumbel); err != nil {
		return Spec{}, fmt.Errorf("%w: %q: %w", ErrSpec, s, err)
	}
	if err := sp.checkFast(seen); err != nil {
		return Spec{}, fmt.Errorf("%w: %q: %w", ErrSpec, s, err)
	}
	return sp, nil
}

// specPath reads the PATH of a net or optimal spec whose items are items,
// the first being name, ":" (hasArg) and arg. It returns the path and the
// items that follow it: a quoted PATH is arg alone; a bare one runs to the
// first item that reads key=value (an option), so that a file's name may
// hold commas.
func specPath(name string, hasArg bool, arg string, items []string) (path string, options []string, err error) {
	what := map[string]string{"net": "the network file", "optimal": "the solved table file"}[name]
	path, quoted, err := unquotePath(arg)
	switch {
	case err != nil:
		return "", nil, err
	case quoted && path == "":
		return "", nil, fmt.Errorf("%s needs %s: %s:PATH", name, what, name)
	case quoted:
		return path, items[1:], nil
	}
	j := 1
	for j < len(items) && !looksLikeOption(items[j]) {
		j++
	}
	path = strings.TrimSpace(strings.Join(append([]string{arg}, items[1:j]...), ","))
	if !hasArg || path == "" {
		return "", nil, fmt.Errorf("%s needs %s: %s:PATH", name, what, name)
	}
	if strings.Contains(path, ";") {
		return "", nil, fmt.Errorf("a bare PATH cannot hold ';': quote it, %s:%s", name, QuotePath(path))
	}
	return path, items[j:], nil
}

// looksLikeOption reports whether a spec item reads key=value with key a
// bare word (letters, digits, '_'): an option, known or not, and not a
// piece of a file's path.
func looksLikeOption(item string) bool {
	k, _, ok := strings.Cut(item, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// checkFast refuses a playout cap the search cannot have (or full_prob
// without one) and gives full_prob its default.
func (sp *Spec) checkFast(seen map[string]bool) error {
	switch {
	case sp.Fast == 0 && seen["full_prob"]:
		return errors.New("full_prob is the share of full searches of fast=N (playout cap randomization)")
	case sp.Fast == 0:
		return nil
	case sp.N < 1:
		return errors.New("fast=N caps a search: it needs sims=N with N >= 1")
	case sp.Fast > sp.N:
		n := "N"
		if sp.Name != "mcts" {
			n = "sims"
		}
		return fmt.Errorf("fast must be at most the full search's %s (%d), got %d", n, sp.N, sp.Fast)
	}
	if !seen["full_prob"] {
		sp.FullProb = DefaultFullProb
	}
	return nil
}

// checkGumbel refuses the options that do not go with gumbel=1 (or m
// without it) and gives m its default. byDefault says the agent searches
// with Gumbel unless told gumbel=0 (az), which the messages then say.
func (sp *Spec) checkGumbel(seen map[string]bool, byDefault bool) error {
	hint := ""
	if byDefault && !seen["gumbel"] {
		hint = fmt.Sprintf("; %s searches with gumbel=1 by default, gumbel=0 is PUCT", sp.Name)
	}
	gumbelOnly, puctOnly := seenKeys(seen, gumbelKeys), seenKeys(seen, puctKeys)
	switch {
	case !sp.Gumbel && len(gumbelOnly) > 0:
		return fmt.Errorf("%w: %s: an option of gumbel=1 only%s", ErrGumbel, strings.Join(gumbelOnly, ", "), hint)
	case !sp.Gumbel:
		return nil
	case sp.N < 1:
		return fmt.Errorf("%w: gumbel=1 needs a search: sims=N with N >= 1", ErrGumbel)
	case len(puctOnly) > 0:
		return fmt.Errorf("%w: gumbel=1 takes no %s: %s are options of the PUCT search (gumbel=1 has no exploration constant, its Gumbel numbers choose the move, and it searches one tree)%s",
			ErrGumbel, strings.Join(puctOnly, ", "), strings.Join(puctKeys, ", "), hint)
	}
	if sp.M == 0 {
		sp.M = DefaultGumbelM
	}
	return nil
}

// numOption is a numeric option of the spec grammar: its bounds (declared
// once, for ParseSpec and the docs) and where its value goes.
type numOption struct {
	isInt  bool
	lo, hi float64
	set    func(sp *Spec, v float64)
}

// numOptions are the numeric options, by key.
var numOptions = map[string]numOption{
	"c":         {lo: 0, hi: MaxC, set: func(sp *Spec, v float64) { sp.C = v }},
	"temp":      {lo: 0, hi: MaxTemp, set: func(sp *Spec, v float64) { sp.Temp = v }},
	"full_prob": {lo: 0, hi: 1, set: func(sp *Spec, v float64) { sp.FullProb = v }},
	"sims":      {isInt: true, lo: 0, hi: MaxN, set: func(sp *Spec, v float64) { sp.N = int(v) }},
	"fast":      {isInt: true, lo: 1, hi: MaxN, set: func(sp *Spec, v float64) { sp.Fast = int(v) }},
	"m":         {isInt: true, lo: 1, hi: MaxGumbelM, set: func(sp *Spec, v float64) { sp.M = int(v) }},
	"workers":   {isInt: true, lo: 1, hi: MaxWorkers, set: func(sp *Spec, v float64) { sp.Workers = int(v) }},
}

// valueRange is "lo..hi".
func (o numOption) valueRange() string { return fmt.Sprintf("%g..%g", o.lo, o.hi) }

// parse reads option k's value v, or says what it must be.
func (o numOption) parse(k, v string) (float64, error) {
	if o.isInt {
		n, err := strconv.Atoi(v)
		if err != nil || float64(n) < o.lo || float64(n) > o.hi {
			return 0, fmt.Errorf("%s must be an integer %s, got %q", k, o.valueRange(), v)
		}
		return float64(n), nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < o.lo || f > o.hi {
		return 0, fmt.Errorf("%s must be a number %s, got %q", k, o.valueRange(), v)
	}
	return f, nil
}

func (sp *Spec) set(k, v string) error {
	switch k {
	case "rollout":
		for i, n := range rolloutNames {
			if v == n {
				sp.Rollout = Rollout(i)
				return nil
			}
		}
		return fmt.Errorf("rollout must be %s, got %q", strings.Join(rolloutNames, " or "), v)
	case "prior":
		for i, n := range priorNames {
			if v == n {
				sp.Prior = Prior(i)
				return nil
			}
		}
		return fmt.Errorf("prior must be %s, got %q", strings.Join(priorNames, " or "), v)
	case "time":
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > MaxTime {
			return fmt.Errorf("time must be a duration 0..%v such as 50ms, got %q", MaxTime, v)
		}
		sp.Time = d
	case "gumbel":
		switch v {
		case "0":
			sp.Gumbel = false
		case "1":
			sp.Gumbel = true
		default:
			return fmt.Errorf("gumbel must be 0 or 1, got %q", v)
		}
	default:
		o, ok := numOptions[k]
		if !ok { // ParseSpec passes only the kind's keys: a key in kindTable without a parser
			return fmt.Errorf("option %q has no parser", k)
		}
		f, err := o.parse(k, v)
		if err != nil {
			return err
		}
		o.set(sp, f)
	}
	return nil
}

// SplitSpecs splits a list of agent specs, as given to --agents. Specs are
// separated by ';' ("mcts:400,c=2;random"). A list without ';' may also
// separate specs by commas, because an option always reads key=value and a
// spec never does: "mcts:400,c=2,random,greedy" is three specs, the
// first with an option. Each spec is checked with ParseSpec; the returned
// strings are the specs as written, trimmed.
func SplitSpecs(list string) ([]string, error) {
	var out []string
	if specs := splitSpecText(list, ListSeparator); len(specs) > 1 {
		for _, p := range specs {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	} else {
		for _, p := range splitSpecText(list, ',') {
			p = strings.TrimSpace(p)
			switch {
			case p == "":
			case looksLikeOption(p) && len(out) > 0:
				out[len(out)-1] += "," + p
			default:
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty agent list", ErrSpec)
	}
	for _, p := range out {
		if _, err := ParseSpec(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// seenKeys returns the keys of keys that the spec set, in keys' order.
func seenKeys(seen map[string]bool, keys []string) []string {
	var out []string
	for _, k := range keys {
		if seen[k] {
			out = append(out, k)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// LadderSpecs returns the agents "yutenv ladder" rates when given none, the
// published scale of docs/BASELINES.md: every built-in agent family at a few
// budgets, "random" (the scale's anchor, rated 0) first. It is the one list
// of them; the shipped network az is on it alone and with search (a
// ladder under rules az does not play leaves it out).
func LadderSpecs() []string {
	return []string{
		"random",
		"greedy",
		"mc:100",
		"mcts:100",
		"mcts:400",
		"mcts:2000",
		"az",
		"az,sims=200",
	}
}
