package render

import (
	"bytes"
	"image/color"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/yutenv/yutenv/env"
)

// svgFontFamily prefers the Go font the raster uses, then common sans fonts.
const svgFontFamily = "Go, 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif"

// SVG renders state s as a standalone SVG document of Width x Height. The
// output depends only on s and opts: the same state gives the same bytes. A
// nil s renders an empty board.
//
// Elements carry classes and data-* attributes for programs that read the
// drawing: each stack is a <g class="stack" data-seat data-station
// data-height data-route>, each seat's panel block a <g class="seat"
// data-seat data-hand data-board data-finished data-place>, the pool a
// <g class="pool" data-pool="n0,...,n5"> (counts by throw id), the legal
// highlights a <g class="legal" data-actions="id,...">, the last move a
// <g class="last-move" data-seat data-from data-to> (from "enter", to
// "finish" where it applies).
func SVG(s *env.State, opts Options) []byte {
	var b bytes.Buffer
	_ = WriteSVG(&b, s, opts) // a bytes.Buffer does not fail
	return b.Bytes()
}

// WriteSVG writes the SVG of SVG(s, opts) to w and returns the first write
// error.
func WriteSVG(w io.Writer, s *env.State, opts Options) error {
	if s == nil {
		s = &env.State{}
	}
	f := newFaces()
	defer f.close()
	board, overlay := build(s, opts, f)
	sw := &svgWriter{}
	sw.buf.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="720" height="480" viewBox="0 0 720 480" class="yut-board" font-family="`)
	sw.buf.WriteString(svgFontFamily)
	sw.buf.WriteString("\">\n")
	for _, it := range append(board, overlay...) {
		sw.item(it, 1)
	}
	sw.buf.WriteString("</svg>\n")
	_, err := w.Write(sw.buf.Bytes())
	return err
}

type svgWriter struct {
	buf bytes.Buffer
}

// num formats a coordinate with at most two decimals, the same on every machine.
func num(v float64) string {
	return strconv.FormatFloat(float64(int64(v*100+copySign(0.5, v)))/100, 'f', -1, 64)
}

func copySign(a, b float64) float64 {
	if b < 0 {
		return -a
	}
	return a
}

// hexColour returns "#rrggbb".
func hexColour(c color.NRGBA) string {
	const digits = "0123456789abcdef"
	b := []byte{'#', digits[c.R>>4], digits[c.R&15], digits[c.G>>4], digits[c.G&15], digits[c.B>>4], digits[c.B&15]}
	return string(b)
}

// paint writes a fill or stroke attribute (and its opacity when not opaque),
// or "none".
func (sw *svgWriter) paint(name string, c color.NRGBA) {
	if c.A == 0 {
		sw.attr(name, "none")
		return
	}
	sw.attr(name, hexColour(c))
	if c.A != 0xff {
		sw.attr(name+"-opacity", strconv.FormatFloat(float64(c.A)/255, 'f', 3, 64))
	}
}

func (sw *svgWriter) attr(k, v string) {
	sw.buf.WriteByte(' ')
	sw.buf.WriteString(k)
	sw.buf.WriteString(`="`)
	sw.buf.WriteString(escapeXML(v))
	sw.buf.WriteByte('"')
}

func (sw *svgWriter) stroke(c color.NRGBA, width float64, dash [2]float64) {
	sw.paint("stroke", c)
	if c.A == 0 {
		return
	}
	sw.attr("stroke-width", num(width))
	if dash[0] > 0 {
		sw.attr("stroke-dasharray", num(dash[0])+" "+num(dash[1]))
	}
}

func (sw *svgWriter) indent(depth int) {
	for i := 0; i < depth; i++ {
		sw.buf.WriteByte(' ')
	}
}

func (sw *svgWriter) item(it item, depth int) {
	sw.indent(depth)
	switch v := it.(type) {
	case circleItem:
		sw.buf.WriteString("<circle")
		sw.attr("cx", num(v.c.X))
		sw.attr("cy", num(v.c.Y))
		sw.attr("r", num(v.r))
		sw.paint("fill", v.fill)
		sw.stroke(v.stroke, v.width, v.dash)
		sw.buf.WriteString("/>\n")
	case rectItem:
		sw.buf.WriteString("<rect")
		sw.attr("x", num(v.x))
		sw.attr("y", num(v.y))
		sw.attr("width", num(v.w))
		sw.attr("height", num(v.h))
		if v.rx > 0 {
			sw.attr("rx", num(v.rx))
		}
		sw.paint("fill", v.fill)
		sw.stroke(v.stroke, v.width, v.dash)
		sw.buf.WriteString("/>\n")
	case pathItem:
		if v.closed {
			sw.buf.WriteString("<polygon")
		} else {
			sw.buf.WriteString("<polyline")
		}
		pts := make([]string, len(v.pts))
		for i, p := range v.pts {
			pts[i] = num(p.X) + "," + num(p.Y)
		}
		sw.attr("points", strings.Join(pts, " "))
		sw.paint("fill", v.fill)
		sw.stroke(v.stroke, v.width, [2]float64{})
		if v.stroke.A != 0 {
			sw.attr("stroke-linejoin", "round")
		}
		sw.buf.WriteString("/>\n")
	case textItem:
		sw.buf.WriteString("<text")
		sw.attr("x", num(v.p.X))
		sw.attr("y", num(v.p.Y))
		sw.attr("font-size", num(v.size))
		if v.bold {
			sw.attr("font-weight", "bold")
		}
		switch v.anchor {
		case anchorMiddle:
			sw.attr("text-anchor", "middle")
		case anchorEnd:
			sw.attr("text-anchor", "end")
		}
		sw.paint("fill", v.fill)
		sw.buf.WriteByte('>')
		sw.buf.WriteString(escapeXML(v.s))
		sw.buf.WriteString("</text>\n")
	case groupItem:
		sw.buf.WriteString("<g")
		if v.class != "" {
			sw.attr("class", v.class)
		}
		for _, kv := range v.data {
			sw.attr("data-"+kv[0], kv[1])
		}
		sw.buf.WriteString(">\n")
		for _, c := range v.items {
			sw.item(c, depth+1)
		}
		sw.indent(depth)
		sw.buf.WriteString("</g>\n")
	}
}

// escapeXML escapes text for an XML attribute or element and drops what XML
// cannot hold (invalid UTF-8 and control characters).
func escapeXML(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r == '\t' || r == '\n':
			b.WriteByte(' ')
		case unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
