package obs

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// renderNonZero lists every non-zero value of an observation by label, one
// a line, so a golden file can be read and reviewed.
func renderNonZero(tier Tier, o []float32) string {
	var b strings.Builder
	sp := spaces[tier]
	for i, v := range o {
		if v != 0 {
			fmt.Fprintf(&b, "%s = %.7g\n", sp.Label(i), v)
		}
	}
	return b.String()
}

// Every tier of every golden position matches its file under testdata/golden
// (regenerate with go test ./obs -run TestGoldenFiles -update, then review).
func TestGoldenFiles(t *testing.T) {
	for _, g := range goldenPositions {
		for _, tier := range Tiers() {
			name := g.name + "." + tier.String() + ".golden"
			t.Run(name, func(t *testing.T) {
				s := g.pos.state(t)
				got := fmt.Sprintf("# %s, %s tier\n# %+v\n", g.name, tier, s.Position()) + renderNonZero(tier, encode(t, tier, &s))
				path := filepath.Join("testdata", "golden", name)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
					require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run with -update to create it")
				assert.Equal(t, string(want), got)
			})
		}
	}
}
