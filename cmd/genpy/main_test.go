package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/protocol"
)

const generated = "../../python/yutenv/_protocol.py"

// python/yutenv/_protocol.py is what the generator writes now; regenerate it
// with "go generate ./cmd/genpy" after changing a declaration.
func TestProtocolModuleIsFresh(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "_protocol.py")
	b, err := render()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(fresh, b, 0o644))
	want, err := os.ReadFile(fresh)
	require.NoError(t, err)
	got, err := os.ReadFile(generated)
	require.NoError(t, err, "generate it with: go generate ./cmd/genpy")
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go generate ./cmd/genpy", generated)
	}
}

// The module holds every rule option and alias, and is valid Python.
func TestProtocolModuleContents(t *testing.T) {
	b, err := render()
	require.NoError(t, err)
	src := string(b)
	for _, o := range env.Options() {
		assert.Contains(t, src, `key="`+o.Key+`",`)
		for _, a := range o.Aliases {
			assert.Contains(t, src, `"`+a+`": "`+o.Key+`",`)
		}
	}
	assert.Contains(t, src, "NUM_ACTIONS: Final = 180\n")
	assert.Contains(t, src, "DO NOT EDIT")
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: not compiling the module")
	}
	cmd := exec.Command(python, "-c", "import ast, sys; ast.parse(sys.stdin.read())")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

const protocolDoc = "../../docs/PROTOCOL.md"

const baselinesDoc = "../../docs/BASELINES.md"

// The generated regions of docs/PROTOCOL.md (the method reference, from
// protocol.Methods) and docs/BASELINES.md (the agent spec grammar, from
// env/agent's tables) are what the generator writes now; the prose around
// them is kept.
func TestDocsAreFresh(t *testing.T) {
	methods := []string{}
	for _, m := range protocol.Methods() {
		methods = append(methods, "| [`"+m.Name+"`](#")
	}
	for _, tt := range []struct {
		path   string
		render func([]byte) ([]byte, error)
		rows   []string
	}{
		{protocolDoc, renderDoc, methods},
		{baselinesDoc, renderBaselines, []string{"| `random`", "| `greedy`", "| `mc:N`", "| `mcts:N`", "| `net:PATH`", "| `az`"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			got, err := os.ReadFile(tt.path)
			require.NoError(t, err)
			want, err := tt.render(got)
			require.NoError(t, err)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is stale: run go generate ./cmd/genpy", tt.path)
			}
			for _, row := range tt.rows {
				assert.Contains(t, string(got), row)
			}
		})
	}
}

// The generated table of error codes lists every code the server sends, in order.
func TestProtocolDocErrorCodes(t *testing.T) {
	b, err := os.ReadFile(protocolDoc)
	require.NoError(t, err)
	doc := string(b)
	start := strings.Index(doc, "| code | when | connection |")
	require.GreaterOrEqual(t, start, 0, "the error table")
	var listed []string
	for _, line := range strings.Split(doc[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		code, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		listed = append(listed, code)
	}
	var codes []string
	for _, c := range protocol.Codes() {
		codes = append(codes, string(c))
	}
	assert.Equal(t, codes, listed)
}

// A region without its markers, or a method without a section, is an
// error, not a silently wrong file.
func TestRenderDocErrors(t *testing.T) {
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"no begin marker", "# doc\n", "has no line"},
		{"no end marker", fmt.Sprintf(beginMarker, "methods") + "\n", "has no end marker"},
		{"no section", fmt.Sprintf(beginMarker, "methods") + "\n" + endMarker + "\n", "no section documents method hello"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderDoc([]byte(tt.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
