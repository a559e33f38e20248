// Command yutenv is the Yut Nori environment's one binary: it serves envs to
// Python, runs self-play and evaluation, benchmarks the engine, replays
// records and lets a person play. Run "yutenv help" for the subcommands.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	_ "github.com/yutenv/yutenv/nnet"  // registers the agent spec net:PATH
	_ "github.com/yutenv/yutenv/solve" // registers the agent spec optimal:PATH
)

// command is one subcommand. run gets the arguments after the subcommand's
// name and writes its normal output to stdout.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands holds every subcommand; each lives in its own file and adds
// itself from an init function.
var commands = map[string]command{}

// errUsage marks an error already explained by printed usage.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(stdout, "yutenv", Version)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "yutenv: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		var h *helpRequested
		if errors.As(err, &h) {
			// Asked for, so it is the command's output: `yutenv eval --help | less` shows it.
			fmt.Fprint(stdout, h.text)
			return 0
		}
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		if !errors.Is(err, errUsage) {
			fmt.Fprintf(stderr, "yutenv %s: %v\n", args[0], err)
		}
		return 1
	}
	return 0
}

// Version is the software version, recorded in datasets and the handshake.
const Version = "0.1.0"

func usage(w io.Writer) {
	fmt.Fprintln(w, "yutenv: a Yut Nori reinforcement-learning environment")
	fmt.Fprintln(w, "\nUsage: yutenv <command> [flags]   (yutenv <command> --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}

// newFlags returns a flag set for a subcommand that reports errors instead of
// exiting, with a usage line naming the command.
func newFlags(name, args string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		// fs.Output(): stderr after a flag error, the help text's buffer for --help (parseFlags).
		w := fs.Output()
		fmt.Fprintf(w, "Usage: yutenv %s %s\n\n", name, args)
		if !strings.Contains(args, "\n\n") {
			// No description of its own: the command's summary says what it does.
			s := commands[name].summary
			if s != "" {
				fmt.Fprintf(w, "%s%s.\n\n", strings.ToUpper(s[:1]), s[1:])
			}
		}
		fmt.Fprintf(w, "Flags:\n%s", fs.FlagUsages())
		if hasSpecFlag(fs) {
			fmt.Fprint(w, "\n"+agent.SpecHelp())
		}
		if fs.Lookup("rules") != nil {
			rulesHelp(w)
		}
	}
	fs.SortFlags = false
	return fs
}

// specAnnotation marks the flags whose values are agent specs: a command's
// help then lists the spec grammar (agent.SpecHelp).
const specAnnotation = "yutenv-agent-spec"

// takesSpecs marks the named flags of fs as agent specs.
func takesSpecs(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, specAnnotation, []string{"true"}); err != nil {
			panic(err) // a flag the command did not define: a bug, caught by the help tests
		}
	}
}

// hasSpecFlag reports whether any flag of fs takes an agent spec.
func hasSpecFlag(fs *pflag.FlagSet) bool {
	found := false
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[specAnnotation]; ok {
			found = true
		}
	})
	return found
}

// rulesHelp lists the rule options that --rules takes, from env.Options.
func rulesHelp(w io.Writer) {
	var presets []string
	for _, p := range env.Presets() {
		presets = append(presets, p.Name)
	}
	fmt.Fprintf(w, "\nRules (--rules): a preset (%s) first if wanted, then key=value pairs:\n", strings.Join(presets, ", "))
	for _, o := range env.Options() {
		key := o.Key
		if len(o.Aliases) > 0 {
			key += " (" + strings.Join(o.Aliases, ", ") + ")"
		}
		fmt.Fprintf(w, "  %-22s %s; standard %s\n", key, strings.Trim(o.Range(), "`"), orDash(o.Default()))
	}
	fmt.Fprintln(w, "  (docs/RULES.md explains each option)")
}

// orDash returns s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// helpRequested is what parseFlags returns for -h/--help: the help text, which run prints
// to standard output (it is what was asked for), exiting 0. It unwraps to pflag.ErrHelp.
type helpRequested struct{ text string }

func (h *helpRequested) Error() string { return pflag.ErrHelp.Error() }
func (h *helpRequested) Unwrap() error { return pflag.ErrHelp }

// parseFlags parses args and turns flag errors into errUsage after printing usage (to
// standard error); -h/--help becomes a *helpRequested holding the help text.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	out := fs.Output()
	var help strings.Builder
	fs.SetOutput(&help) // pflag prints the usage itself on -h/--help, and only then
	err := fs.Parse(args)
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return &helpRequested{text: help.String()}
		}
		// The error and where the flags are listed, not the whole help: the error stays on screen.
		fmt.Fprintf(fs.Output(), "yutenv %s: %v\n(yutenv %s --help lists its flags)\n", fs.Name(), err, fs.Name())
		return errUsage
	}
	return nil
}

// parseCommand parses a subcommand's flags, refuses positional arguments and
// reads its --rules flag: the opening every rules-playing subcommand shares.
func parseCommand(fs *pflag.FlagSet, args []string, rulesSpec *string) (env.Rules, error) {
	if err := parseFlags(fs, args); err != nil {
		return env.Rules{}, err
	}
	if fs.NArg() > 0 {
		return env.Rules{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return env.ParseRules(*rulesSpec)
}
