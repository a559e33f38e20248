// Package mdgen builds the generated Markdown pages (docs/RULES.md,
// docs/OBSERVATIONS.md) a line at a time.
//
// Its one method, [Page.Linef], is a printf wrapper by name and signature, so
// go vet checks every call's format against its arguments: a page written
// through a closure (fmt.Fprintf(&b, format+"\n", args...)) is not checked,
// and an argument given to the wrong line printed "%!d(MISSING)" on one line
// and "%!(EXTRA int=2)" on the next.
package mdgen

import (
	"fmt"
	"strings"
)

// Page is a Markdown page being written. The zero value is an empty page.
type Page struct {
	b strings.Builder
}

// Linef appends one line: format and args as fmt.Sprintf reads them, then a
// newline.
func (p *Page) Linef(format string, args ...any) {
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteByte('\n')
}

// String is the page written so far.
func (p *Page) String() string { return p.b.String() }
