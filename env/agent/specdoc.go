package agent

import (
	"fmt"
	"strconv"
	"strings"
)

// optionDoc documents one option key of the spec grammar. Which agents take
// it comes from kindTable, its default from DefaultSpec and its values from
// the limits above: only what it does is written here.
type optionDoc struct{ key, about string }

// optionDocs lists every option key ParseSpec accepts, in the docs' order.
var optionDocs = []optionDoc{
	{"rollout", "the policy that finishes simulated games"},
	{"prior", "`greedy`: PUCT with priors softmax(greedy score / 8); `none`: plain UCT"},
	{"c", "exploration constant (outcomes are in [-1, 1]); of the PUCT search only, for a network"},
	{"time", "wall-clock budget per decision (`50ms`; 0 = none); N stays the cap. A budget makes the search depend on the machine's speed, so it is no longer reproducible from the seed"},
	{"workers", "goroutines per decision. mcts and a network's PUCT search: root parallelism (independent trees with their own generators, visit counts summed); mc: the rollouts of every action split. N is the total over all workers, and results do not depend on scheduling"},
	{"temp", "0 plays the most visited action; T > 0 samples proportionally to visits^(1/T) (diverse self-play)"},
	{"sims", "simulations per decision of the network's search; 0: the network alone, its policy's most likely legal action"},
	{"gumbel", "1: Gumbel root selection with sequential halving (below; needs sims >= 1, takes " + strings.Join(gumbelKeys, ", ") + " and no " + strings.Join(puctKeys, ", ") + "); 0: PUCT"},
	{"m", "the root actions Gumbel's sequential halving starts from (only with gumbel=1)"},
	{"fast", "playout cap randomization (KataGo) for self-play: a decision not drawn as a full search runs only this many simulations, without temperature, and its policy is not a training target (a dataset's `policy_target` 0). At most N (sims); needs a search"},
	{"full_prob", "with `fast`: the probability that a decision runs the full search"},
}

// optionRange returns the values option key takes, from the limits.
func optionRange(key string) string {
	if o, ok := numOptions[key]; ok {
		return o.valueRange()
	}
	switch key {
	case "rollout":
		return strings.Join(rolloutNames, ", ")
	case "prior":
		return strings.Join([]string{priorNames[PriorGreedy], priorNames[PriorNone]}, ", ")
	case "time":
		return fmt.Sprintf("0..%v", MaxTime)
	case "gumbel":
		return "0, 1"
	}
	return ""
}

// optionDefault returns option key's value in the default spec of agent
// kind k (for gumbel: its value once sims >= 1).
func optionDefault(k kindInfo, key string) string {
	sp, _ := DefaultSpec(k.name)
	switch key {
	case "rollout":
		return sp.Rollout.String()
	case "prior":
		return sp.Prior.String()
	case "c":
		return strconv.FormatFloat(sp.C, 'g', -1, 64)
	case "time":
		return "none"
	case "workers":
		return strconv.Itoa(sp.Workers)
	case "temp":
		return strconv.FormatFloat(sp.Temp, 'g', -1, 64)
	case "sims":
		return strconv.Itoa(sp.N)
	case "gumbel":
		if k.gumbel {
			return "1"
		}
		return "0"
	case "m":
		return strconv.Itoa(DefaultGumbelM)
	case "fast":
		return "none"
	case "full_prob":
		return strconv.FormatFloat(DefaultFullProb, 'g', -1, 64)
	}
	return ""
}

// optionAgents returns the agents that take option key, and its default
// for each: "2.5" when all agree, else "2.5 (mcts), 1.5 (net, az)".
func optionAgents(key string) (agents []string, def string) {
	var order []string
	by := map[string][]string{}
	for _, k := range kindTable {
		if !contains(k.keys, key) {
			continue
		}
		agents = append(agents, k.name)
		d := optionDefault(k, key)
		if _, ok := by[d]; !ok {
			order = append(order, d)
		}
		by[d] = append(by[d], k.name)
	}
	if len(order) == 1 {
		return agents, order[0]
	}
	parts := make([]string, len(order))
	for i, d := range order {
		parts[i] = d + " (" + strings.Join(by[d], ", ") + ")"
	}
	return agents, strings.Join(parts, ", ")
}

// head returns the agent's name with its argument: "random", "mc[:N]",
// "net:PATH".
func (k kindInfo) head() string {
	switch {
	case k.arg == "":
		return k.name
	case k.defaultN > 0:
		return k.name + "[:" + k.arg + "]"
	default:
		return k.name + ":" + k.arg
	}
}

// SpecHelp is the spec grammar as the CLI's help prints it: every agent
// name with what it takes, every option with its values and defaults. It is
// written from the same tables ParseSpec reads.
func SpecHelp() string {
	var b strings.Builder
	b.WriteString("Agent specs (SPEC): a name, then key=value options, comma-separated (e.g. mcts:400,c=2):\n")
	for _, k := range kindTable {
		var what []string
		if k.defaultN > 0 {
			what = append(what, fmt.Sprintf("N %s (default %d)", k.nText, k.defaultN))
		}
		if k.gumbel {
			what = append(what, "searches with gumbel=1 unless gumbel=0")
		}
		if len(k.keys) > 0 {
			what = append(what, "options "+strings.Join(k.keys, ", "))
		}
		fmt.Fprintf(&b, "  %-22s %s\n", k.head(), orNone(strings.Join(what, "; ")))
	}
	b.WriteString("Options of agent specs, each at most once:\n")
	for _, o := range optionDocs {
		_, def := optionAgents(o.key)
		fmt.Fprintf(&b, "  %-22s %s; default %s\n", o.key+"=", optionRange(o.key), def)
	}
	fmt.Fprintf(&b, "  gumbel=1 takes %s and no %s.\n", strings.Join(gumbelKeys, ", "), strings.Join(puctKeys, ", "))
	fmt.Fprintf(&b, "  %s\n", pathRuleText(""))
	b.WriteString("  (docs/BASELINES.md explains each agent and option)\n")
	return b.String()
}

// orNone returns s, or "no options" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "no options"
	}
	return s
}

// SpecMarkdown is the spec grammar as docs/BASELINES.md shows it: a table of
// the agents' forms and a table of the options, written from the same tables
// ParseSpec reads (go generate ./cmd/genpy writes it into the docs).
func SpecMarkdown() string {
	var b strings.Builder
	b.WriteString("| spec | what it does |\n|---|---|\n")
	for _, k := range kindTable {
		for _, f := range k.forms {
			fmt.Fprintf(&b, "| `%s` | %s |\n", f.form, f.about)
		}
	}
	b.WriteString("\nOptions (`key=value` after the spec, each at most once; `agent.ParseSpec` rejects anything else\n" +
		"with a message naming what is allowed):\n\n")
	b.WriteString("| key | agents | values | default | |\n|---|---|---|---|---|\n")
	for _, o := range optionDocs {
		agents, def := optionAgents(o.key)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", o.key, strings.Join(agents, ", "), optionRange(o.key), def, o.about)
	}
	var counted []string
	for _, k := range kindTable {
		if k.defaultN > 0 {
			counted = append(counted, fmt.Sprintf("%s:N (N %s, default %d)", k.name, k.nText, k.defaultN))
		}
	}
	fmt.Fprintf(&b, "\nCounts: %s; N is 1..%d. `gumbel=1` takes `%s` and no `%s`. Lists of specs (`--agents`) are separated by `%c`.\n", strings.Join(counted, ", "), MaxN, strings.Join(gumbelKeys, "`, `"), strings.Join(puctKeys, "`, `"), ListSeparator)
	fmt.Fprintf(&b, "\n%s\n", pathRuleText("`"))
	return b.String()
}

// pathRuleText states the quoting rule of PATH (QuotePath) in one
// paragraph, code written between tick.
func pathRuleText(tick string) string {
	c := func(s string) string { return tick + s + tick }
	var special []string
	for _, r := range PathSpecial {
		special = append(special, c(string(r)))
	}
	q := string(PathQuote)
	kinds := make([]string, 0, 2)
	for _, k := range PathKinds() {
		kinds = append(kinds, c(k+":PATH"))
	}
	return fmt.Sprintf("A PATH (%s) that holds one of %s or begins or ends with a space is written between quotes (%s), "+
		"a quote inside doubled: %s, %s. Nothing else is escaped (a Windows path keeps its backslashes); "+
		"the canonical form of a spec quotes exactly such paths.",
		strings.Join(kinds, ", "), strings.Join(special, " "), c(q),
		c("net:"+QuotePath("runs/a,seed=3/x.ynet")+",sims=8"), c("net:"+QuotePath("it's.ynet")))
}
