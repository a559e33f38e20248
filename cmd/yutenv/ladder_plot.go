package main

import (
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ratingPoints are the ratings as plot points with their intervals.
type ratingPoints struct {
	plotter.XYs
	plotter.XErrors
}

// plotLadder draws the ratings, strongest at the top, each with its
// interval as an error bar, and writes the plot as PNG to w. It uses
// gonum.org/v1/plot: axes, ticks, labels and error bars are what that
// library does well, and the render package only draws boards.
func plotLadder(w io.Writer, rep ladderReport) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("yutenv ladder: rules %s, %d games per pair", rep.Rules, rep.GamesPerPair)
	p.X.Label.Text = fmt.Sprintf("Elo (%s = %+.0f), 95%% interval", rep.Anchor, rep.AnchorElo)
	n := len(rep.Ratings)
	pts := ratingPoints{XYs: make(plotter.XYs, n), XErrors: make(plotter.XErrors, n)}
	names := make([]string, n)
	for i, r := range rep.Ratings {
		y := n - 1 - i // strongest at the top
		pts.XYs[y] = plotter.XY{X: r.Elo, Y: float64(y)}
		pts.XErrors[y].Low, pts.XErrors[y].High = r.Elo-r.Low, r.High-r.Elo
		names[y] = r.Agent
	}
	sc, err := plotter.NewScatter(pts.XYs)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	bars, err := plotter.NewXErrorBars(pts)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	p.Add(plotter.NewGrid(), bars, sc)
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	lo, hi := rep.Ratings[0].High, rep.Ratings[0].Low
	for _, r := range rep.Ratings {
		lo, hi = min(lo, r.Low), max(hi, r.High)
	}
	pad := max(0.06*(hi-lo), 10)
	p.X.Min, p.X.Max = lo-pad, hi+pad
	wt, err := p.WriterTo(7*vg.Inch, vg.Length(1+0.45*float64(n))*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
