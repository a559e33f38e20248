package main

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpDescribesEveryCommand: `yutenv CMD --help` exits 0 and says what
// the command does (a paragraph between the usage line and the flags), not
// only which flags it takes.
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
			help := out.String() + errOut.String()
			require.True(t, strings.HasPrefix(help, "Usage: yutenv "+name), help)
			usage, rest, ok := strings.Cut(help, "\n\n")
			require.True(t, ok, help)
			desc, _, ok := strings.Cut(rest, "Flags:\n")
			require.True(t, ok, "no flags section after the usage line %q", usage)
			assert.GreaterOrEqual(t, len(strings.TrimSpace(desc)), 20, "%s --help has no description:\n%s", name, help)
		})
	}
}
