package agent

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specPathCase is a row of testdata/spec_paths.json, the table of the
// quoting rule that python/tests/test_specs.py checks the Python helpers
// against too.
type specPathCase struct {
	Path   string `json:"path"`
	Quoted string `json:"quoted"`
}

func readSpecPaths(t *testing.T) []specPathCase {
	t.Helper()
	b, err := os.ReadFile("testdata/spec_paths.json")
	require.NoError(t, err)
	var cases []specPathCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.NotEmpty(t, cases)
	return cases
}

// Every path a file system allows works in a spec: String quotes it when
// it holds a separator of the grammar, ParseSpec reads it back, and a list
// of such specs splits where it should.
func TestSpecPathQuoting(t *testing.T) {
	for _, c := range readSpecPaths(t) {
		t.Run(c.Path, func(t *testing.T) {
			assert.Equal(t, c.Quoted, QuotePath(c.Path))
			for _, kind := range PathKinds() {
				sp, err := DefaultSpec(kind)
				require.NoError(t, err)
				sp.Path = c.Path
				text := sp.String()
				assert.Equal(t, kind+":"+c.Quoted, text)
				got, err := ParseSpec(text)
				require.NoError(t, err)
				assert.Equal(t, sp, got)
			}
			sp, err := ParseSpec("net:" + c.Quoted + ",sims=8, gumbel=1")
			require.NoError(t, err)
			assert.Equal(t, c.Path, sp.Path)
			assert.Equal(t, 8, sp.N)
			assert.True(t, sp.Gumbel)
			list := "net:" + c.Quoted + ",sims=4;greedy; optimal:" + c.Quoted
			got, err := SplitSpecs(list)
			require.NoError(t, err)
			assert.Equal(t, []string{"net:" + c.Quoted + ",sims=4", "greedy", "optimal:" + c.Quoted}, got)
			got, err = SplitSpecs("random,net:" + c.Quoted + ",sims=4,greedy")
			require.NoError(t, err)
			assert.Equal(t, []string{"random", "net:" + c.Quoted + ",sims=4", "greedy"}, got)
		})
	}
}

func TestSpecPathErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{"net:'a.ynet", "PATH opens a quote (') it does not close"},
		{"net:'a.ynet''", "PATH opens a quote (') it does not close"},
		{"net:'a'b,sims=2", `"b" follows the quoted PATH`},
		{"net:''", "net needs the network file: net:PATH"},
		{"net:'',sims=2", "net needs the network file: net:PATH"},
		{"optimal:' '' '", ""}, // a quoted path of spaces and a quote is a path
		{"net:a;b.ynet", "a bare PATH cannot hold ';': quote it, net:'a;b.ynet'"},
		{"net:runs/a,seed=3/x.ynet", `net has no option "seed"`}, // bare: the reason to quote
		{"mcts:'400'", "count must be an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseSpec(tt.in)
			if tt.msg == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSpec)
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// A quote inside a bare PATH is a character like any other: only one right
// after "net:" opens a quoted PATH, so the bare paths that parsed before
// the quoting rule still do.
func TestSpecPathBareQuote(t *testing.T) {
	sp, err := ParseSpec("net:o'brien.ynet,sims=2")
	require.NoError(t, err)
	assert.Equal(t, "o'brien.ynet", sp.Path)
	assert.Equal(t, "net:'o''brien.ynet',sims=2", sp.String())
	got, err := SplitSpecs("net:o'brien.ynet;greedy")
	require.NoError(t, err)
	assert.Equal(t, []string{"net:o'brien.ynet", "greedy"}, got)
}

func TestPathKinds(t *testing.T) {
	assert.Equal(t, []string{"net", "optimal"}, PathKinds())
}

// FuzzSpecPath checks that any path round-trips through Spec.String and
// ParseSpec, alone, with options and in a list of specs.
func FuzzSpecPath(f *testing.F) {
	for _, c := range []string{"a.ynet", "runs/a,seed=3/x.ynet", "a;b", "o'brien", "'", "''", " x ", "a,sims=3", "=", "C:\\a\\b", "net:x", "\t'\n"} {
		f.Add(c, uint16(0))
		f.Add(c, uint16(16))
	}
	f.Fuzz(func(t *testing.T, path string, sims uint16) {
		if path == "" {
			return // a spec needs a file
		}
		sp, err := DefaultSpec("net")
		require.NoError(t, err)
		sp.Path, sp.N = path, int(sims)%MaxN
		text := sp.String()
		got, err := ParseSpec(text)
		if err != nil {
			t.Fatalf("path %q: %q does not parse: %v", path, text, err)
		}
		if got != sp {
			t.Fatalf("path %q: %q parses to %+v, want %+v", path, text, got, sp)
		}
		opt := Spec{Name: "optimal", Path: path}
		list := text + ";" + opt.String() + ";greedy"
		specs, err := SplitSpecs(list)
		if err != nil {
			t.Fatalf("path %q: list %q: %v", path, list, err)
		}
		if strings.Join(specs, "|") != text+"|"+opt.String()+"|greedy" {
			t.Fatalf("path %q: list %q splits into %q", path, list, specs)
		}
	})
}
