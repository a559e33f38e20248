package server

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/protocol"
)

// TestMethodNamesOnlyInTheDeclarations: the server's code names no method
// by a string literal, neither as a message's prefix ("make: ...": the
// binder prefixes every handler error with its method's name, once) nor
// as a value handed to a helper (c.lookupGame("analyse", ...)): a method's
// name is its declaration's (protocol.Method), and a helper that needs the
// method being served reads it from the connection (conn.method).
func TestMethodNamesOnlyInTheDeclarations(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var found []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			for _, m := range protocol.Methods() {
				if s == m.Name || strings.HasPrefix(s, m.Name+": ") {
					found = append(found, fset.Position(lit.Pos()).String()+": "+lit.Value)
				}
			}
			return true
		})
	}
	assert.Empty(t, found, "string literals naming a method:\n%s", strings.Join(found, "\n"))
}

// TestHandlerErrorsNameTheirMethodOnce: every error a handler returns, the
// binder's params errors included, reaches the client prefixed with its
// method's name exactly once ("close: no handle 99 ...", never "close:
// close: ..."), for an unknown parameter of every method and for a bad
// request each handler refuses itself.
func TestHandlerErrorsNameTheirMethodOnce(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 1})
	noGame := map[string]any{"game": 7, "states": []byte{}, "state": []byte{}, "agent": "random", "position": map[string]any{}}
	bad := map[string][]map[string]any{
		"hello":          {{"protocol": 99}},
		"ping":           {},
		"make":           {{"mode": "multi", "seat": 1}, {"opponent": "nope"}, {"opponent": "mcts:1000000"}, {"rules": "pieces=99"}},
		"reset":          {{}, {"handle": 99}, {"handle": h, "seed": []any{1, 2}}},
		"step":           {{}, {"handle": h, "actions": []any{0}}},
		"close":          {{}, {"handle": 99}},
		"stats":          {},
		"save":           {{"handle": h, "index": 0}, {"handle": h}},
		"load":           {{"handle": 99, "index": 0}},
		"render":         {{"handle": 99, "index": 0}},
		"observe":        {{"handle": h}},
		"selfplay_new":   {{}},
		"selfplay_next":  {{}, {"id": 5}},
		"selfplay_close": {{"id": 5}},
		"game":           {{"rules": "pieces=99"}},
		"initial":        {{}, {"game": 7}},
		"apply":          {noGame},
		"query":          {noGame},
		"describe":       {noGame},
		"position":       {noGame},
		"state_save":     {noGame},
		"state_load":     {{}, {"game": 7, "blob": []byte{1}}},
		"analyse":        {noGame},
		"opponent_step":  {{}},
		"set_opponents":  {{}, {"handle": h}},
		"share":          {{}, {"handle": 99}, {"handle": h, "spin_us": 1 << 30}},
	}
	for _, m := range protocol.Methods() {
		t.Run(m.Name, func(t *testing.T) {
			reqs, ok := bad[m.Name]
			require.True(t, ok, "a bad request of every method")
			for _, p := range append(reqs, map[string]any{"zz_unknown": 1}) {
				_, err := c.Call(m.Name, p)
				var e *Error
				require.True(t, errors.As(err, &e), "%v: %v", p, err)
				rest, ok := strings.CutPrefix(e.Message, m.Name+": ")
				assert.True(t, ok, "%v: %q does not open with %q", p, e.Message, m.Name+": ")
				assert.False(t, strings.HasPrefix(rest, m.Name+": "), "%v: %q names its method twice", p, e.Message)
			}
		})
	}
}
