package nnet

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResearchCheckpointsMatchTheirREADME holds every training checkpoint
// kept in research/az2 to the SHA-256 its README declares, and checks that
// each parses as a network, so a stage of a long training run is verified
// before the next stage starts from it on another machine.
func TestResearchCheckpointsMatchTheirREADME(t *testing.T) {
	dir := filepath.Join("..", "research", "az2")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	// Every checkpoint has a section "## NAME.ynet: ..." and a line "SHA-256 `HEX`".
	section := regexp.MustCompile("(?m)^## ([a-z0-9_-]+\\.ynet):[^\n]*\n(?s:(.*?))(?:\n## |\\z)")
	sum := regexp.MustCompile("SHA-256 `([0-9a-f]{64})`")
	files, err := filepath.Glob(filepath.Join(dir, "*.ynet"))
	require.NoError(t, err)
	declared := map[string]string{}
	for _, m := range section.FindAllStringSubmatch(string(readme), -1) {
		s := sum.FindStringSubmatch(m[2])
		require.NotNil(t, s, "section %s declares its SHA-256", m[1])
		declared[m[1]] = s[1]
	}
	assert.Len(t, declared, len(files), "every checkpoint has its section in research/az2/README.md")
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, ok := declared[name]
			require.True(t, ok, "%s has no section in README.md", name)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			got := sha256.Sum256(b)
			assert.Equal(t, want, hex.EncodeToString(got[:]))
			n, err := Parse(b)
			require.NoError(t, err)
			assert.NotEmpty(t, n.Trunk)
		})
	}
}
