package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

const generated = "../../python/yutenv/_protocol.py"

// python/yutenv/_protocol.py is what the generator writes now; regenerate it
// with "go generate ./internal/genpy" after changing a declaration.
func TestProtocolModuleIsFresh(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "_protocol.py")
	b, err := render()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(fresh, b, 0o644))
	want, err := os.ReadFile(fresh)
	require.NoError(t, err)
	got, err := os.ReadFile(generated)
	require.NoError(t, err, "generate it with: go generate ./internal/genpy")
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go generate ./internal/genpy", generated)
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
