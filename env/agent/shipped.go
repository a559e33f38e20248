package agent

import "regexp"

// IsShipped reports whether name is the agent of a network shipped inside
// the binary: az, and every name package nnet adds with RegisterShipped.
// Such an agent takes net's options (sims, gumbel, c, ...) and no PATH.
func IsShipped(name string) bool { return kinds[name].shipped }

// IsNetwork reports whether name is an agent played by a network: net
// (a file) or a shipped one (IsShipped).
func IsNetwork(name string) bool { return name == "net" || IsShipped(name) }

// shippedName is the form of a shipped network's name: a lowercase word
// that a spec reads back unchanged (no ':', ',', '=', space or quote).
var shippedName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// RegisterShipped adds name to the spec grammar as the agent of a network
// shipped inside the binary, with az's forms and options (az itself is
// declared in the grammar's table, so that a program that does not link
// package nnet still names it), and installs its constructor f. Package
// nnet calls it in its init, once for each network it ships. It panics on
// a name that is not a lowercase word or that the grammar already holds as
// another kind of agent (a programming error).
func RegisterShipped(name string, f func(sp Spec, seed uint64) (Agent, error)) {
	if !shippedName.MatchString(name) {
		panic("agent.RegisterShipped: bad name " + name)
	}
	if k, ok := kinds[name]; ok {
		if !k.shipped {
			panic("agent.RegisterShipped: " + name + " is already an agent of another kind")
		}
		Register(name, f)
		return
	}
	k := kindInfo{name: name, keys: shippedKeys, gumbel: true, shipped: true,
		forms: []specForm{
			{name, "another network shipped inside the binary, alone; `yutenv net " + name + "` describes it (rules, tier, SHA-256). Like az it plays only the rules it was trained for and refuses others with an error naming them"},
			{name + ",sims=N[,m=M]", "that network guiding a Gumbel search; `" + name + ",sims=N,gumbel=0` the PUCT search, as az"},
		}}
	kindTable = append(kindTable, k)
	kinds[name] = k
	externalHome[name] = "nnet"
	Register(name, f)
}
