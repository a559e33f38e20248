package env_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// docs/RULES.md is what RulesMarkdown writes now from the engine's tables;
// regenerate it with "go generate ./env" after changing a table or a rule.
func TestRulesDocIsFresh(t *testing.T) {
	var b strings.Builder
	require.NoError(t, env.RulesMarkdown(&b))
	path := filepath.Join("..", "docs", "RULES.md")
	got, err := os.ReadFile(path)
	require.NoError(t, err, "generate it with: go generate ./env")
	if string(got) != b.String() {
		t.Fatalf("%s is stale: run go generate ./env", path)
	}
	doc := b.String()
	assert.NotContains(t, doc, "%!", "a Go format error (a verb without its argument, or an extra one)")
	for _, want := range []string{
		"| `OUTER` | 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0 |",
		"| `CENTRE/C2` | 22, 27, 28, 0 |",
		"| `gae@7` | 67 |", "| `mo@enter` | 179 |",
		"| `kata` | `pieces=2,flat_prob=0.5,back_do=off,finish=exact,board=line,spaces=15,pool=off,capture_bonus=off` |",
		"## Stations", "## Action encoding", "## The line board",
	} {
		assert.Contains(t, doc, want)
	}
	// Every rules key is documented.
	for _, o := range env.Options() {
		assert.Contains(t, doc, "| `"+o.Key+"` |", o.Key)
	}
}
