package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
)

// The generated regions of docs/PROTOCOL.md and docs/BASELINES.md: each
// lies between a begin marker naming it and the end marker; the prose around
// them is kept.
const (
	beginMarker = "<!-- BEGIN GENERATED: %s (go generate ./cmd/genpy; do not edit) -->"
	endMarker   = "<!-- END GENERATED -->"
)

// region is one generated region of a document: its name and its text.
type region struct {
	name   string
	render func(doc []byte) (string, error)
}

// protocolRegions are the generated regions of docs/PROTOCOL.md.
var protocolRegions = []region{
	{"methods", methodsTable},
	{"errors", errorsTable},
	{"selfplay", selfplayTable},
	{"shared layout", sharedTable},
}

// baselinesRegions are the generated regions of docs/BASELINES.md: the
// agent spec grammar, from env/agent's tables.
var baselinesRegions = []region{
	{"agent specs", func([]byte) (string, error) { return agent.SpecMarkdown(), nil }},
}

// renderDoc returns doc (docs/PROTOCOL.md) with every generated region
// written anew from the server's declarations.
func renderDoc(doc []byte) ([]byte, error) {
	return renderRegions("docs/PROTOCOL.md", doc, protocolRegions)
}

// renderBaselines returns doc (docs/BASELINES.md) with its generated region
// written anew.
func renderBaselines(doc []byte) ([]byte, error) {
	return renderRegions("docs/BASELINES.md", doc, baselinesRegions)
}

// renderRegions returns doc (the file named name) with each of regions
// written anew.
func renderRegions(name string, doc []byte, regions []region) ([]byte, error) {
	for _, r := range regions {
		begin := []byte(fmt.Sprintf(beginMarker, r.name))
		i := bytes.Index(doc, begin)
		if i < 0 {
			return nil, fmt.Errorf("%s has no line %s", name, begin)
		}
		start := i + len(begin)
		n := bytes.Index(doc[start:], []byte(endMarker))
		if n < 0 {
			return nil, fmt.Errorf("%s: region %s has no end marker %s", name, r.name, endMarker)
		}
		body, err := r.render(doc)
		if err != nil {
			return nil, fmt.Errorf("region %s: %w", r.name, err)
		}
		out := append([]byte{}, doc[:start]...)
		out = append(out, "\n"+body...)
		doc = append(out, doc[start+n:]...)
	}
	return doc, nil
}

// headingRE matches a method's section heading.
var headingRE = regexp.MustCompile(`(?m)^###+ (.+)$`)

// anchor returns the link target of the section that documents method
// (a heading that is its name, or else that names it among others).
func anchor(doc []byte, method string) (string, error) {
	var found string
	for _, m := range headingRE.FindAllSubmatch(doc, -1) {
		h := string(m[1])
		if h == method {
			return "#" + slug(h), nil
		}
		if found == "" && regexp.MustCompile(`\b`+regexp.QuoteMeta(method)+`\b`).MatchString(h) {
			found = "#" + slug(h)
		}
	}
	if found == "" {
		return "", errors.New("no section documents method " + method + ": add a heading naming it")
	}
	return found, nil
}

// slug is GitHub's anchor of a heading: lower case, spaces to dashes,
// punctuation other than - and _ dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeList returns "`a`, `b`", or "none".
func codeList(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	return "`" + strings.Join(keys, "`, `") + "`"
}

// methodsTable is the reference of every method: its params' and result's
// keys, from protocol.Methods.
func methodsTable(doc []byte) (string, error) {
	var b strings.Builder
	b.WriteString("| method | params | result | draws | |\n|---|---|---|---|---|\n")
	for _, m := range protocol.Methods() {
		a, err := anchor(doc, m.Name)
		if err != nil {
			return "", err
		}
		result := "`{}`"
		if keys := protocol.Keys(m.Result); len(keys) > 0 {
			result = codeList(keys)
		}
		draws := strings.Join(m.Draws.Names(), ", ")
		fmt.Fprintf(&b, "| [`%s`](%s) | %s | %s | %s | %s |\n", m.Name, a, codeList(protocol.Keys(m.Params)), result, draws, m.Doc)
	}
	return b.String(), nil
}

// errorsTable is the table of error codes: when each is sent and what
// becomes of the connection, from protocol.CodeInfos.
func errorsTable([]byte) (string, error) {
	var b strings.Builder
	b.WriteString("| code | when | connection |\n|---|---|---|\n")
	for _, c := range protocol.CodeInfos() {
		if c.When == "" || c.Connection == "" {
			return "", fmt.Errorf("error code %s is not documented", c.Code)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Code, c.When, c.Connection)
	}
	return b.String(), nil
}

// selfplayTable is the table of selfplay_new's params: the numeric ones
// from az.Settings, with their ranges and defaults.
func selfplayTable([]byte) (string, error) {
	var b strings.Builder
	b.WriteString("| param | type | default | meaning |\n|---|---|---|---|\n")
	b.WriteString("| `rules` | str\\|map | standard | as in `make` |\n")
	fmt.Fprintf(&b, "| `tier` | str | %s | the tier of the observations sent |\n", az.DefaultTier)
	b.WriteString("| `seed` | uint64 | 0 | game g has the game seed `seed + g`, and the search moving seat j at decision d is reseeded with `Seed(seed + g, 1, j, d)`: the one seed scheme of [Env semantics](#env-semantics) (\"Seeds and determinism\"), as for `yutenv selfplay --seed` |\n")
	b.WriteString("| `out` | str | required | the dataset directory, on the server's machine: inside one of its `--out-dir` folders (see [Paths a client names](#paths-a-client-names)) |\n")
	b.WriteString("| `gumbel` | bool | false | Gumbel root selection with sequential halving (Danihelka et al., ICLR 2022; [BASELINES.md](BASELINES.md), \"Gumbel search\"): the policy target written is the improved policy `softmax(logit + σ(completed Q))`, not the visit distribution (the visit counts stay in `visits`); the Gumbel numbers explore, so `temperature_moves` and `dirichlet_alpha` must be 0 (else `bad_request`), and `c` is not used |\n")
	for _, st := range az.Settings() {
		typ := "float"
		if st.Int {
			typ = "int"
		}
		num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		fmt.Fprintf(&b, "| `%s` | %s %s..%s | %s | %s |\n", st.Key, typ, num(st.Min), num(st.Max), num(st.Default), st.Doc)
	}
	return b.String(), nil
}

// sharedTable is the table of a shared region's fields (share), from
// vecenv.SharedLayoutOf: the header's words at fixed offsets, then the
// arrays, of a same_step batch with an opponent mixture (every field).
func sharedTable([]byte) (string, error) {
	cfg := vecenv.Config{N: 1, Autoreset: vecenv.SameStep, Mode: vecenv.Single, Opponents: []vecenv.Opponent{{Spec: "random", Weight: 1}, {Spec: "greedy", Weight: 1}}}
	l := vecenv.SharedLayoutOf(cfg, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "Layout version %d. All values little-endian.\n\n", l.Version)
	b.WriteString("| field | offset | type | shape | meaning |\n|---|---|---|---|---|\n")
	for _, f := range l.Fields {
		off := strconv.Itoa(f.Offset)
		if f.Offset >= vecenv.SharedArrays {
			off = "in `fields`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.Name, off, f.Type, f.Dims, f.Doc)
	}
	return b.String(), nil
}
