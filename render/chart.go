package render

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/vector"
)

// IntervalRow is one row of an interval chart: a label, an estimate and
// the interval around it (Low <= Value <= High).
type IntervalRow struct {
	Label            string
	Value, Low, High float64
}

// ErrChart is returned by IntervalChartPNG for rows it cannot draw.
var ErrChart = errors.New("render: bad chart")

// Interval chart layout, in pixels.
const (
	chartWidth  = 840
	chartRowH   = 34.0
	chartTop    = 56.0
	chartBottom = 64.0
	chartRight  = 28.0
	chartFont   = 14.0
)

var (
	colChartInk  = color.NRGBA{0x22, 0x22, 0x22, 0xff}
	colChartGrid = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}
	colChartBar  = color.NRGBA{0x35, 0x5f, 0x9e, 0xff}
)

// IntervalChartPNG draws rows, the first at the top, each as a dot at its
// Value on a horizontal bar from Low to High, labelled on the left, over an
// x axis with round ticks, with title above and xLabel below, and writes the
// picture as PNG. It draws with the package's own rasterizer and the Go
// fonts, so a chart adds no font or plotting library to the binary (the
// ladder's plot: yutenv ladder --png).
func IntervalChartPNG(w io.Writer, title, xLabel string, rows []IntervalRow) error {
	if len(rows) == 0 {
		return fmt.Errorf("%w: no rows", ErrChart)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		for _, v := range []float64{r.Value, r.Low, r.High} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s: a value is not finite", ErrChart, r.Label)
			}
		}
		lo, hi = math.Min(lo, r.Low), math.Max(hi, r.High)
	}
	step := tickStep(hi - lo)
	lo, hi = math.Floor(lo/step)*step-step/2, math.Ceil(hi/step)*step+step/2
	f := newFaces()
	defer f.close()
	left := 0.0
	for _, r := range rows {
		left = math.Max(left, f.measure(r.Label, chartFont, false))
	}
	left += 24
	height := chartTop + chartRowH*float64(len(rows)) + chartBottom
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, int(height)))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	x := func(v float64) float64 { return left + (v-lo)/(hi-lo)*(chartWidth-chartRight-left) }
	axisY := chartTop + chartRowH*float64(len(rows))
	items := []item{textItem{p: point{chartWidth / 2, 30}, s: title, size: 16, bold: true, anchor: anchorMiddle, fill: colChartInk}}
	for k := math.Ceil(lo / step); k*step <= hi; k++ {
		t := k * step
		if t == 0 {
			t = 0 // not -0
		}
		items = append(items,
			pathItem{pts: []point{{x(t), chartTop - 8}, {x(t), axisY}}, stroke: colChartGrid, width: 1},
			textItem{p: point{x(t), axisY + 20}, s: strconv.FormatFloat(t, 'f', -1, 64), size: 12, anchor: anchorMiddle, fill: colChartInk})
	}
	items = append(items,
		pathItem{pts: []point{{left, axisY}, {chartWidth - chartRight, axisY}}, stroke: colChartInk, width: 1.2},
		textItem{p: point{(left + chartWidth - chartRight) / 2, axisY + 46}, s: xLabel, size: 13, anchor: anchorMiddle, fill: colChartInk})
	for i, r := range rows {
		y := chartTop + chartRowH*(float64(i)+0.5)
		items = append(items,
			textItem{p: point{left - 12, y + 5}, s: r.Label, size: chartFont, anchor: anchorEnd, fill: colChartInk},
			pathItem{pts: []point{{x(r.Low), y}, {x(r.High), y}}, stroke: colChartBar, width: 2},
			pathItem{pts: []point{{x(r.Low), y - 6}, {x(r.Low), y + 6}}, stroke: colChartBar, width: 2},
			pathItem{pts: []point{{x(r.High), y - 6}, {x(r.High), y + 6}}, stroke: colChartBar, width: 2},
			circleItem{c: point{x(r.Value), y}, r: 4.5, fill: colChartBar})
	}
	c := &canvas{img: img, z: vector.NewRasterizer(1, 1), f: f}
	for _, it := range items {
		c.item(it)
	}
	return png.Encode(w, img)
}

// tickStep returns a round step (1, 2 or 5 times a power of ten) that cuts
// span into about six intervals.
func tickStep(span float64) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}
