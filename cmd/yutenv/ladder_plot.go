package main

import (
	"fmt"
	"io"

	"github.com/yutenv/yutenv/render"
)

// plotLadder draws the ratings, strongest at the top, each with its
// interval as a bar, and writes the picture as PNG to w. It draws with the
// render package's rasterizer and fonts rather than a plotting library,
// whose fonts alone made the binary 5 MB larger (the wheels' size check,
// python/tests/test_wheels.py).
func plotLadder(w io.Writer, rep ladderReport) error {
	rows := make([]render.IntervalRow, len(rep.Ratings))
	for i, r := range rep.Ratings {
		rows[i] = render.IntervalRow{Label: r.Agent, Value: r.Elo, Low: r.Low, High: r.High}
	}
	title := fmt.Sprintf("yutenv ladder: rules %s, %d games per pair", rep.Rules, rep.GamesPerPair)
	xLabel := fmt.Sprintf("Elo (%s = %+.0f), 95%% interval", rep.Anchor, rep.AnchorElo)
	if err := render.IntervalChartPNG(w, title, xLabel, rows); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
