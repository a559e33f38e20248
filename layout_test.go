// Package layout_test holds the module's layout: which package may import
// which (the layers), declared once in layers below.
package layout_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/yutenv/yutenv/"

// layers lists every package of the module, bottom layer first, with the
// packages of the module it may import (run-time imports; tests may also use
// test helpers such as nnet/nettest). A package may list only packages above
// it in this table, so the table has no cycle and nothing imports up:
// dependencies point one way, cmd -> server -> (az, positions, analysis,
// dataset, vecenv/wire) -> vecenv -> (obs, env/agent) -> env. A new package
// is placed here, or the test fails.
var layers = []struct {
	pkg string
	may []string
}{
	// Leaf libraries: nothing of ours.
	{"internal/israce", nil},      // tests only: is the race detector on
	{"internal/browsertest", nil}, // tests only: headless Chromium
	{"internal/detmath", nil},
	{"internal/confine", nil},
	{"internal/userfile", nil}, // the files a user names: read bounded, written atomically
	{"internal/msgp", nil},
	{"internal/ratelog", nil},
	{"internal/mdgen", nil}, // the generated Markdown pages, a vet-checked line at a time
	{"stats", nil},
	{"env", []string{"internal/mdgen"}},
	{"internal/latency", []string{"internal/msgp"}},
	{"env/envtest", []string{"env"}}, // the rules a test names, in one line

	// Over the game.
	{"env/agent", []string{"env", "internal/detmath"}},
	{"obs", []string{"env", "internal/mdgen"}},
	{"render", []string{"env"}},
	{"protocol", []string{"env", "internal/msgp"}},
	{"client", []string{"protocol", "internal/msgp"}},
	{"nnet", []string{"env", "env/agent", "obs", "internal/confine", "internal/detmath", "internal/userfile"}},
	{"nnet/nettest", []string{"nnet", "env", "obs"}},
	// The luck of a game's throws, valued by a network or a heuristic; a
	// network file's value is named as an agent's network is (env/agent's
	// spec grammar).
	{"luck", []string{"env", "env/agent", "nnet"}},
	{"analysis", []string{"env", "env/agent"}},
	{"solve", []string{"env", "env/agent", "internal/userfile"}},

	// The RL-environment semantics, and the work the server's methods do over them.
	{"vecenv", []string{"env", "env/agent", "obs"}},
	{"vecenv/wire", []string{"vecenv", "protocol", "env", "obs", "internal/msgp"}},
	{"positions", []string{"vecenv", "env", "obs", "internal/msgp"}},
	{"dataset", []string{"vecenv", "env", "env/agent", "obs", "internal/userfile"}},
	// Decisions graded against a reference search, in games played by the
	// game runner of vecenv or read from records.
	{"grade", []string{"stats", "vecenv", "env", "env/agent"}},
	// az reads its own params off the wire (Config.SetParam: wire.Rules).
	{"az", []string{"dataset", "vecenv", "vecenv/wire", "env", "env/agent", "obs", "internal/msgp"}},

	// The transport over all of them.
	{"server", []string{"analysis", "az", "dataset", "luck", "positions", "protocol", "render", "nnet", "vecenv", "vecenv/wire",
		"env", "env/agent", "obs", "internal/confine", "internal/latency", "internal/msgp", "internal/ratelog"}},

	// Commands: the binary, and the generators of docs and of the Python
	// constants (each reads the declarations it writes out).
	{"cmd/yutenv", []string{"server", "dataset", "grade", "luck", "nnet", "protocol", "render", "solve", "stats", "vecenv", "env", "env/agent", "obs", "internal/userfile"}},
	{"env/internal/genrules", []string{"env"}},
	{"obs/internal/gendocs", []string{"obs"}},
	{"cmd/genpy", []string{"az", "dataset", "luck", "nnet", "protocol", "vecenv", "env", "env/agent", "obs"}},
	// The docs' measured figures, from their results files (no package of ours).
	{"cmd/genfigures", nil},
}

type goPackage struct {
	ImportPath string
	Imports    []string
	GoFiles    []string
}

// packages lists the module's packages with their run-time imports.
func packages(t *testing.T) []goPackage {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-json=ImportPath,Imports,GoFiles", "./...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(p.GoFiles) > 0 { // not a directory of tests alone, such as this one
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

// TestLayersAreATable checks the table itself: each package once, and each
// allowed import a package below it.
func TestLayersAreATable(t *testing.T) {
	rank := map[string]int{}
	for i, l := range layers {
		if _, dup := rank[l.pkg]; dup {
			t.Errorf("layers: %s is listed twice", l.pkg)
		}
		rank[l.pkg] = i
	}
	for i, l := range layers {
		for _, m := range l.may {
			r, ok := rank[m]
			switch {
			case !ok:
				t.Errorf("layers: %s may import %s, which is not in the table", l.pkg, m)
			case r >= i:
				t.Errorf("layers: %s may import %s, which is not below it: the table would allow a cycle", l.pkg, m)
			}
		}
	}
}

// TestNoImportUpTheLayers checks every package's imports against layers.
func TestNoImportUpTheLayers(t *testing.T) {
	may := map[string][]string{}
	for _, l := range layers {
		may[l.pkg] = l.may
	}
	for _, p := range packages(t) {
		pkg, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		allowed, ok := may[pkg]
		if !ok {
			t.Errorf("%s is not in the layers table of layout_test.go: place it in its layer", pkg)
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if ours && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s, which is not below it (layout_test.go allows %v)", pkg, dep, allowed)
			}
		}
	}
}

// TestNoImportCycle follows the imports themselves: Go refuses a cycle
// through run-time imports at compile time, so this guards the table's
// promise (every import points down) independently of the table.
func TestNoImportCycle(t *testing.T) {
	graph := map[string][]string{}
	for _, p := range packages(t) {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				graph[p.ImportPath] = append(graph[p.ImportPath], imp)
			}
		}
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string)
	visit = func(n string) {
		state[n] = open
		stack = append(stack, n)
		for _, m := range graph[n] {
			switch state[m] {
			case open:
				i := slices.Index(stack, m)
				t.Errorf("import cycle: %s -> %s", strings.Join(stack[i:], " -> "), m)
			case unseen:
				visit(m)
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for n := range graph {
		if state[n] == unseen {
			visit(n)
		}
	}
}

// maxLines is the most lines a hand-written file may have: a longer one holds
// several concerns, to be split by concern (in Go, declarations moved to files
// of the package named for theirs). Tests, testdata and generated files
// ("// Code generated ... DO NOT EDIT." at the top) are exempt. The Python
// package's files are held to the same rule by python/tests/test_layout.py.
const maxLines = 600

func TestNoHandWrittenFileOverMaxLines(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "python") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(b) {
			return nil
		}
		if n := bytes.Count(b, []byte("\n")); n > maxLines {
			t.Errorf("%s has %d lines (at most %d for a hand-written file): split it by concern", path, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// generated is Go's marker of a generated file.
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
