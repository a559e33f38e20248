package render

import (
	"bytes"
	"image/png"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIntervalChartPNG(t *testing.T) {
	rows := []IntervalRow{
		{Label: "mcts:2000", Value: 469, Low: 443, High: 495},
		{Label: "greedy", Value: 348, Low: 322, High: 373},
		{Label: "random", Value: 0, Low: 0, High: 0},
	}
	var buf bytes.Buffer
	require.NoError(t, IntervalChartPNG(&buf, "title", "Elo", rows))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	assert.Equal(t, chartWidth, img.Bounds().Dx())
	assert.Equal(t, int(chartTop+chartRowH*3+chartBottom), img.Bounds().Dy(), "one row of height per rating")
	// The first row's dot is drawn in the bar colour at its value.
	ink := 0
	y := int(chartTop + chartRowH/2)
	for x := 0; x < chartWidth; x++ {
		r, g, b, _ := img.At(x, y).RGBA()
		if r>>8 == uint32(colChartBar.R) && g>>8 == uint32(colChartBar.G) && b>>8 == uint32(colChartBar.B) {
			ink++
		}
	}
	assert.Greater(t, ink, 20, "the first row's interval bar is drawn")
}

func TestIntervalChartRefuses(t *testing.T) {
	tests := []struct {
		name string
		rows []IntervalRow
	}{
		{"no rows", nil},
		{"NaN", []IntervalRow{{Label: "a", Value: math.NaN()}}},
		{"infinite", []IntervalRow{{Label: "a", Value: 1, Low: math.Inf(-1), High: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, IntervalChartPNG(&bytes.Buffer{}, "t", "x", tt.rows), ErrChart)
		})
	}
}

func TestTickStep(t *testing.T) {
	tests := []struct{ span, want float64 }{{495, 100}, {60, 10}, {12, 2}, {0, 1}, {3000, 500}}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) { assert.InDelta(t, tt.want, tickStep(tt.span), 1e-9) })
	}
}
