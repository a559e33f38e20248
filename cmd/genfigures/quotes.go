package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A quote is a figure quoted in prose without a marker that differs from the
// recorded one.
type quote struct {
	line     int    // 1-based line of the doc
	figure   string // FILE/KEY
	quoted   string // the number as the doc quotes it
	recorded string // the figure's text
}

func (q quote) String() string {
	return fmt.Sprintf("%d: quotes %s as %s, the results file records %s (write <!--fig %s-->%s<!--/fig-->)",
		q.line, q.figure, q.quoted, q.recorded, q.figure, q.recorded)
}

// blankRE finds what the check leaves out of a doc: the generated regions
// and the quoted figures, both written by the generator and checked by the
// freshness test.
var blankRE = regexp.MustCompile(`(?s)<!-- BEGIN GENERATED: figures .*?<!-- END GENERATED -->|<!--fig [a-z0-9_/]+-->.*?<!--/fig-->`)

// misquotes returns every figure of results quoted in doc, outside the
// markers, at another value than the recorded one.
func misquotes(doc string, results map[string]*Results) []quote {
	// Blank what the generator writes, keeping the newlines so that line
	// numbers stay.
	doc = blankRE.ReplaceAllStringFunc(doc, func(m string) string {
		return strings.Repeat("\n", strings.Count(m, "\n"))
	})
	var found []quote
	for _, file := range sortedKeys(results) {
		r := results[file]
		for _, key := range sortedKeys(r.Figures) {
			f := r.Figures[key]
			want, _ := parseNumbers(f.Text) // checked when the file was read
			for _, m := range f.Mentions {
				re := regexp.MustCompile(m) // checked when the file was read
				for _, loc := range re.FindAllStringSubmatchIndex(doc, -1) {
					got := doc[loc[2]:loc[3]]
					if n, err := parseNumbers(got); err == nil && sameNumbers(n, want) {
						continue
					}
					found = append(found, quote{
						line:     1 + strings.Count(doc[:loc[2]], "\n"),
						figure:   file + "/" + key,
						quoted:   got,
						recorded: f.Text,
					})
				}
			}
		}
	}
	return found
}

// A number is a figure's value and the unit of its last digit (0.01 for
// "0.94", 1000 for "356k").
type number struct{ value, unit float64 }

// numberRE finds the numbers of a figure's text: digits with thousands
// commas and a decimal part, then an optional k or M.
var numberRE = regexp.MustCompile(`(\d[\d,]*)(?:\.(\d+))?(?:([kM])\b)?`)

// parseNumbers reads the numbers of a figure's text: "356,000" is one,
// "8.8–8.9x" two, "356k" 356,000 to the thousand.
func parseNumbers(text string) ([]number, error) {
	var out []number
	for _, m := range numberRE.FindAllStringSubmatch(text, -1) {
		digits := strings.ReplaceAll(m[1], ",", "")
		unit := 1.0
		if m[2] != "" {
			digits += "." + m[2]
			unit = math.Pow(10, -float64(len(m[2])))
		}
		v, err := strconv.ParseFloat(digits, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", text, err)
		}
		scale := map[string]float64{"": 1, "k": 1e3, "M": 1e6}[m[3]]
		out = append(out, number{v * scale, unit * scale})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q holds no number", text)
	}
	return out, nil
}

// sameNumbers reports whether a and b are the same numbers at the precision
// of the coarser of each pair: 0.94 is 0.941, 356k is 356,000, 1.04 is not
// 0.94, and a range is not one number.
func sameNumbers(a, b []number) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		unit := math.Max(a[i].unit, b[i].unit)
		if math.Abs(a[i].value-b[i].value) > unit/2+1e-9*math.Abs(b[i].value) {
			return false
		}
	}
	return true
}
