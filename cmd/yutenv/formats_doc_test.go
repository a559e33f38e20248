package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// jsonBlock matches a fenced json block of a Markdown page.
var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

// docExamples returns the json examples of docs/FORMATS.md, each joined
// into one line (the page wraps them between tokens).
func docExamples(t *testing.T) []string {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "FORMATS.md"))
	require.NoError(t, err)
	var out []string
	for _, m := range jsonBlock.FindAllSubmatch(page, -1) {
		var b strings.Builder
		for _, l := range strings.Split(string(m[1]), "\n") {
			b.WriteString(strings.TrimSpace(l))
		}
		out = append(out, b.String())
	}
	return out
}

// TestFormatsDocExamplesReplay replays the examples of docs/FORMATS.md: the
// record must pass replay --check, and every JSON line shown must be a line
// replay --format json prints for it, byte for byte. (The examples used to
// be wrong: the wrong first seat, action 59 after a gae, 65 for 63.)
func TestFormatsDocExamplesReplay(t *testing.T) {
	var records, lines []string
	for _, ex := range docExamples(t) {
		switch {
		case strings.HasPrefix(ex, `{"format":"yutenv-record"`):
			records = append(records, ex)
		case strings.HasPrefix(ex, `{"game":`):
			lines = append(lines, ex)
		case strings.HasPrefix(ex, `{"format":"yutenv-ladder-state"`):
			// A ladder state file: the reader accepts it.
			_, err := decodeLadderState([]byte(ex))
			assert.NoError(t, err, ex)
		case strings.HasPrefix(ex, `{"to_move":`):
			// A readable position: it must build a valid state of the standard rules.
			var d env.PositionDesc
			require.NoError(t, json.Unmarshal([]byte(ex), &d), ex)
			p, err := d.Position(env.Standard())
			require.NoError(t, err, ex)
			_, err = env.FromPosition(p, 1)
			assert.NoError(t, err, ex)
		default:
			t.Errorf("an example this test does not know how to check: %.60s", ex)
		}
	}
	require.Len(t, records, 1)
	require.NotEmpty(t, lines)
	path := filepath.Join(t.TempDir(), "example.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(records, "\n")+"\n"), 0o644))

	code, out, stderr := runCmd(t, "replay", "--check", path)
	require.Equal(t, 0, code, "the record example replays: %s%s", out, stderr)
	assert.Contains(t, out, "game 0: ok")

	code, out, stderr = runCmd(t, "replay", "--format", "json", path)
	require.Equal(t, 0, code, stderr)
	printed := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		assert.Contains(t, printed, l, "a JSON line of the page is printed as shown")
	}
}
