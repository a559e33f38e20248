package obs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/OBSERVATIONS.md is what Markdown writes now; regenerate it with
// "go generate ./obs" after changing a layout.
func TestObservationsDocIsFresh(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Markdown(&b))
	path := filepath.Join("..", "docs", "OBSERVATIONS.md")
	got, err := os.ReadFile(path)
	require.NoError(t, err, "generate it with: go generate ./obs")
	if string(got) != b.String() {
		t.Fatalf("%s is stale: run go generate ./obs", path)
	}
	assert.NotContains(t, b.String(), "%!", "a Go format error (a verb without its argument, or an extra one)")
	for _, want := range []string{"| `compact` | 213 |", "| `tactical` | 2042 |", "| `planes` | 598 |", "`22@CENTRE/C1`", "| 18 | `board/diagonal` |"} {
		assert.Contains(t, b.String(), want)
	}
}
