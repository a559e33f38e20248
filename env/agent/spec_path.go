package agent

import (
	"fmt"
	"strings"
)

// The quoting rule of a spec's PATH (net:PATH, optimal:PATH), declared once
// here: go generate ./cmd/genpy copies these constants into the Python
// package (yutenv._protocol), whose helpers (yutenv._specs) follow the same
// rule, and docs/BASELINES.md states it with the grammar.
//
// A PATH may be written bare (net:runs/a.ynet), running to the first item
// that reads key=value, or quoted between two PathQuote characters, a
// PathQuote inside it doubled (net:'runs/a,seed=3/x.ynet',sims=8;
// net:'it”s.ynet'). Quoted, any path a file system allows is read back as
// written: the separators of the grammar (',' between options, '=' in
// them, ';' between the specs of a list) lose their meaning inside the
// quotes, and nothing else is escaped (a Windows path keeps its
// backslashes). Spec.String quotes a PATH exactly when it holds a character
// of PathSpecial or begins or ends with a space (which ParseSpec would trim).
const (
	// PathQuote opens and closes a quoted PATH; doubled, it stands for itself.
	PathQuote = '\''
	// PathSpecial are the characters whose PATH Spec.String quotes: the
	// separators of the grammar and the quote itself.
	PathSpecial = ",;='"
	// ListSeparator separates the specs of a list (--agents; SplitSpecs).
	ListSeparator = ';'
)

// PathKinds returns the agent names whose argument is a PATH (net,
// optimal), in the docs' order.
func PathKinds() []string {
	var out []string
	for _, k := range kindTable {
		if k.arg == "PATH" {
			out = append(out, k.name)
		}
	}
	return out
}

// QuotePath returns path as a spec writes it: bare when it reads back as
// itself, else between quotes with each quote inside doubled.
func QuotePath(path string) string {
	if path != "" && !strings.ContainsAny(path, PathSpecial) && strings.TrimSpace(path) == path {
		return path
	}
	q := string(PathQuote)
	return q + strings.ReplaceAll(path, q, q+q) + q
}

// unquotePath reads a quoted PATH: text (trimmed) opens with PathQuote and
// ends with the quote that closes it. It returns the path and whether text
// was quoted at all; an error when a quote is not closed or text follows it.
func unquotePath(text string) (path string, quoted bool, err error) {
	text = strings.TrimSpace(text)
	if text == "" || text[0] != PathQuote {
		return "", false, nil
	}
	end := quotedEnd(text)
	if end < 0 {
		return "", true, fmt.Errorf("PATH opens a quote (%c) it does not close", PathQuote)
	}
	if end != len(text) {
		return "", true, fmt.Errorf("%q follows the quoted PATH: want ',' and an option", text[end:])
	}
	q := string(PathQuote)
	return strings.ReplaceAll(text[1:end-1], q+q, q), true, nil
}

// quotedEnd returns the index just after the quote that closes the quoted
// text opening s (s[0] is PathQuote), or -1 when none does.
func quotedEnd(s string) int {
	for i := 1; i < len(s); i++ {
		if s[i] != PathQuote {
			continue
		}
		if i+1 < len(s) && s[i+1] == PathQuote {
			i++ // a doubled quote: the character itself
			continue
		}
		return i + 1
	}
	return -1
}

// opensQuotedPath reports whether a quote right after piece (the text of a
// spec so far) opens a quoted PATH: piece is a PATH kind's name and ':'.
func opensQuotedPath(piece string) bool {
	name, rest, ok := strings.Cut(piece, ":")
	return ok && strings.TrimSpace(rest) == "" && kinds[strings.TrimSpace(name)].arg == "PATH"
}

// splitSpecText splits s at every sep that is not inside a quoted PATH. A
// quote opens one only right after "net:" or "optimal:" at the start of an
// item (after sep, ',' or the start of s); elsewhere (a bare path such as
// net:o'brien.ynet) it is a character like any other. An unclosed quote
// runs to the end of s (the parser then says so).
func splitSpecText(s string, sep byte) []string {
	var out []string
	start, item := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == PathQuote && opensQuotedPath(s[item:i]):
			end := quotedEnd(s[i:])
			if end < 0 {
				return append(out, s[start:])
			}
			i += end - 1
		case s[i] == sep:
			out = append(out, s[start:i])
			start, item = i+1, i+1
		case s[i] == ',':
			item = i + 1
		}
	}
	return append(out, s[start:])
}
