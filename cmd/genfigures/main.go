// Command genfigures writes the docs' figures from the results files
// (docs/results/*.json, one a measurement, each with its command, machine
// and date), so that every quantity is recorded once:
//
//   - a generated table lies between
//     <!-- BEGIN GENERATED: figures FILE/TABLE (go generate ./cmd/genfigures; do not edit) -->
//     and <!-- END GENERATED -->, and is written anew from table TABLE of
//     docs/results/FILE.json, with its source line;
//   - a figure quoted in prose is written <!--fig FILE/KEY-->TEXT<!--/fig-->,
//     and TEXT is written anew from figure KEY of FILE.json.
//
// It rewrites README.md, python/README.md and docs/*.md under -root.
// TestDocsAreFresh fails when one is stale, and TestProseQuotesTheRecordedFigures
// when a figure is quoted without a marker at another value than the
// recorded one (each figure's mentions say how prose quotes it).
package main

//go:generate go run . -root ../..

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Markers of the generated regions and of the quoted figures.
const (
	beginMarker = "<!-- BEGIN GENERATED: figures %s (go generate ./cmd/genfigures; do not edit) -->"
	endMarker   = "<!-- END GENERATED -->"
)

var (
	// beginRE finds the begin marker of a figures region; its group is
	// FILE/TABLE.
	beginRE = regexp.MustCompile(`<!-- BEGIN GENERATED: figures ([a-z0-9_]+/[a-z0-9_]+) \(go generate \./cmd/genfigures; do not edit\) -->`)
	// figRE finds a quoted figure: FILE/KEY and the text.
	figRE = regexp.MustCompile(`<!--fig ([a-z0-9_]+)/([a-z0-9_]+)-->(.*?)<!--/fig-->`)
	// anyFigRE finds anything that looks like a figure marker, to refuse a
	// misspelt one instead of leaving it unfilled.
	anyFigRE = regexp.MustCompile(`<!--\s*/?fig\b`)
	// codeSpanRE finds an inline code span.
	codeSpanRE = regexp.MustCompile("`[^`\n]+`")
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "genfigures:", err)
		os.Exit(1)
	}
}

// run rewrites every doc under root from the results files.
func run(root string) error {
	results, err := loadResults(root)
	if err != nil {
		return err
	}
	docs, err := docPaths(root)
	if err != nil {
		return err
	}
	for _, rel := range docs {
		path := filepath.Join(root, rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := render(rel, b, results)
		if err != nil {
			return err
		}
		if !bytes.Equal(out, b) {
			if err := os.WriteFile(path, out, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// docPaths lists the user docs under root, relative to it: README.md,
// python/README.md and docs/*.md.
func docPaths(root string) ([]string, error) {
	docs := []string{"README.md", filepath.Join("python", "README.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, p := range more {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, rel)
	}
	return docs, nil
}

// render returns doc (the file rel, relative to the repository root) with
// every generated region and every quoted figure written anew from results.
func render(rel string, doc []byte, results map[string]*Results) ([]byte, error) {
	var errs []error
	var out []byte
	rest := doc
	for {
		loc := beginRE.FindSubmatchIndex(rest)
		if loc == nil {
			out = append(out, rest...)
			break
		}
		name := string(rest[loc[2]:loc[3]])
		out = append(out, rest[:loc[1]]...)
		rest = rest[loc[1]:]
		end := bytes.Index(rest, []byte(endMarker))
		if end < 0 {
			return nil, fmt.Errorf("%s: region figures %s has no end marker %s", rel, name, endMarker)
		}
		body, err := renderTable(rel, name, results)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rel, err))
		}
		out = append(out, "\n"+body...)
		rest = rest[end:]
	}
	out = figRE.ReplaceAllFunc(out, func(m []byte) []byte {
		sub := figRE.FindSubmatch(m)
		file, key := string(sub[1]), string(sub[2])
		text, err := figureText(file, key, results)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rel, err))
			return m
		}
		return []byte(fmt.Sprintf("<!--fig %s/%s-->%s<!--/fig-->", file, key, text))
	})
	// A marker inside an inline code span (`<!--fig NAME/KEY-->`) is
	// documentation of the syntax, not a marker.
	plain := codeSpanRE.ReplaceAll(out, nil)
	if n, m := len(anyFigRE.FindAll(plain, -1)), 2*len(figRE.FindAll(plain, -1)); n != m {
		errs = append(errs, fmt.Errorf("%s: %d figure markers, of which %d are not <!--fig FILE/KEY-->TEXT<!--/fig--> on one line", rel, n, n-m))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// renderTable renders the region FILE/TABLE of the doc rel.
func renderTable(rel, name string, results map[string]*Results) (string, error) {
	file, table, _ := strings.Cut(name, "/")
	r, ok := results[file]
	if !ok {
		return "", fmt.Errorf("region figures %s: no results file %s/%s.json", name, ResultsDir, file)
	}
	return r.markdown(table, rel)
}

// figureText is the text of figure FILE/KEY.
func figureText(file, key string, results map[string]*Results) (string, error) {
	r, ok := results[file]
	if !ok {
		return "", fmt.Errorf("figure %s/%s: no results file %s/%s.json", file, key, ResultsDir, file)
	}
	f, ok := r.Figures[key]
	if !ok {
		return "", fmt.Errorf("figure %s/%s: %s.json has no figure %q", file, key, file, key)
	}
	return f.Text, nil
}
