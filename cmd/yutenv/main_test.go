package main

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpDescribesEveryCommand: `yutenv CMD --help` exits 0 and says, on
// standard output (`yutenv eval --help | less`), what the command does (a
// paragraph between the usage line and the flags), not only which flags it takes.
func TestHelpDescribesEveryCommand(t *testing.T) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	require.NotEmpty(t, names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{name, "--help"}, &out, &errOut)
			assert.Equal(t, 0, code)
			assert.Empty(t, errOut.String(), "help asked for is output, not an error")
			help := out.String()
			require.True(t, strings.HasPrefix(help, "Usage: yutenv "+name), help)
			usage, rest, ok := strings.Cut(help, "\n\n")
			require.True(t, ok, help)
			desc, _, ok := strings.Cut(rest, "Flags:\n")
			require.True(t, ok, "no flags section after the usage line %q", usage)
			assert.GreaterOrEqual(t, len(strings.TrimSpace(desc)), 20, "%s --help has no description:\n%s", name, help)
		})
	}
}

// TestFlagErrorsAreShortAndOnStderr: a bad flag prints the error and where the
// flags are listed on standard error, exit 1, nothing on standard output.
func TestFlagErrorsAreShortAndOnStderr(t *testing.T) {
	for _, args := range [][]string{{"eval", "--bogus"}, {"serve", "--max-conns", "x"}, {"play", "-z"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := runCmd(t, args...)
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, "yutenv "+args[0]+": ")
			assert.Contains(t, errs, "(yutenv "+args[0]+" --help lists its flags)")
			assert.LessOrEqual(t, strings.Count(errs, "\n"), 2, errs)
		})
	}
}
