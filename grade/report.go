package grade

import (
	"fmt"
	"slices"
	"sort"

	"github.com/yutenv/yutenv/env"
)

// BinEdges are the lower edges of the loss histogram's bins after the
// first (Report.Histogram): bin 0 holds the losses of exactly 0 (the
// reference's best chosen), bin k ≥ 1 the losses in [BinEdges[k-1],
// BinEdges[k]) (the last bin has no upper edge); BinEdges[0] is the
// smallest loss above 0.
var BinEdges = []float64{0, 0.005, 0.01, ErrorLoss, 0.05, BlunderLoss, 0.2, 0.5}

// Bin is one bin of the loss histogram.
type Bin struct {
	// Low and High bound the losses of the bin: Low ≤ loss < High
	// (High is null for the last bin; Low = High = 0 for the bin of
	// losses of exactly 0).
	Low  float64  `json:"low"`
	High *float64 `json:"high"`
	// Label is its range as text ("0", "[0.02, 0.05)", ">= 0.5").
	Label string `json:"label"`
	// Count is its decisions, Share their fraction of all graded decisions.
	Count int     `json:"count"`
	Share float64 `json:"share"`
}

// Worst is one of the costliest decisions, with what the user needs to
// look at it again.
type Worst struct {
	Graded
	// Move and BestMove name the action chosen and the reference's best
	// (env.Action.String), MoveID and BestID are their action ids.
	Move     string `json:"move"`
	MoveID   int    `json:"action"`
	BestMove string `json:"best_move"`
	BestID   int    `json:"best_action"`
	// Position is the state before the move as a readable position
	// (docs/FORMATS.md): saved to a file, yutenv analyse --position FILE
	// searches it again.
	Position env.PositionDesc `json:"position"`
}

// Report is what grading found. Its figures leave forced decisions out.
type Report struct {
	// Reference is the reference's canonical spec.
	Reference string `json:"reference"`
	// Games counts the games; Decisions the graded decisions, Forced the
	// forced ones (one legal action) left out of every figure.
	Games     int `json:"games"`
	Decisions int `json:"decisions"`
	Forced    int `json:"forced"`
	// Mean, Median, P90 and Max are figures of the losses (outcome units;
	// 0 without decisions).
	Mean   float64 `json:"mean_loss"`
	Median float64 `json:"median_loss"`
	P90    float64 `json:"p90_loss"`
	Max    float64 `json:"max_loss"`
	// Best counts the decisions of loss 0 (the reference's best chosen),
	// BestRate is their share.
	Best     int     `json:"best"`
	BestRate float64 `json:"best_rate"`
	// Errors and Blunders count the decisions losing more than ErrorLoss
	// and BlunderLoss; the rates are their shares.
	ErrorLoss   float64 `json:"error_loss"`
	BlunderLoss float64 `json:"blunder_loss"`
	Errors      int     `json:"errors"`
	Blunders    int     `json:"blunders"`
	ErrorRate   float64 `json:"error_rate"`
	BlunderRate float64 `json:"blunder_rate"`
	// Histogram is the losses in the bins of BinEdges.
	Histogram []Bin `json:"histogram"`
	// Worst is the costliest decisions, the costliest first (ties in game
	// and decision order).
	Worst []Worst `json:"worst"`
}

// Summarize returns the report of graded decisions (in the order they
// came: ties among the worst keep it) of games games graded by reference,
// keeping the worst costliest ones.
func Summarize(gs []Graded, reference string, games, worst int) *Report {
	s := newSummer(reference, worst)
	s.add(gs)
	return s.report(games)
}

// summer aggregates graded decisions in game order.
type summer struct {
	ref    string
	worst  int
	losses []float64
	forced int
	top    []Graded // the worst so far, costliest first
}

func newSummer(ref string, worst int) *summer { return &summer{ref: ref, worst: max(worst, 0)} }

// add takes one game's graded decisions.
func (s *summer) add(gs []Graded) {
	for _, g := range gs {
		if g.Forced {
			s.forced++
			continue
		}
		s.losses = append(s.losses, g.Loss)
		if s.worst == 0 || (len(s.top) == s.worst && g.Loss <= s.top[len(s.top)-1].Loss) {
			continue
		}
		i := sort.Search(len(s.top), func(i int) bool { return s.top[i].Loss < g.Loss })
		s.top = slices.Insert(s.top, i, g)
		if len(s.top) > s.worst {
			s.top = s.top[:s.worst]
		}
	}
}

// report returns the figures of everything added, over games games.
func (s *summer) report(games int) *Report {
	r := &Report{Reference: s.ref, Games: games, Decisions: len(s.losses), Forced: s.forced,
		ErrorLoss: ErrorLoss, BlunderLoss: BlunderLoss, Worst: []Worst{}}
	sorted := slices.Clone(s.losses)
	slices.Sort(sorted)
	total := 0.0
	for _, l := range sorted {
		total += l
		switch {
		case l == 0:
			r.Best++
		case l > BlunderLoss:
			r.Blunders++
		}
		if l > ErrorLoss {
			r.Errors++
		}
	}
	r.Histogram = histogram(sorted)
	if n := float64(len(sorted)); n > 0 {
		r.Mean, r.Median, r.P90, r.Max = total/n, quantile(sorted, 0.5), quantile(sorted, 0.9), sorted[len(sorted)-1]
		r.BestRate, r.ErrorRate, r.BlunderRate = float64(r.Best)/n, float64(r.Errors)/n, float64(r.Blunders)/n
	}
	for _, g := range s.top {
		r.Worst = append(r.Worst, Worst{Graded: g, Move: g.Action.String(), MoveID: int(g.Action),
			BestMove: g.Best.String(), BestID: int(g.Best), Position: env.Describe(g.State.Position())})
	}
	return r
}

// histogram counts sorted losses into the bins of BinEdges.
func histogram(sorted []float64) []Bin {
	bins := make([]Bin, len(BinEdges)+1)
	bins[0] = Bin{Label: "0", High: new(float64)}
	for k, lo := range BinEdges {
		b := &bins[k+1]
		b.Low = lo
		if k+1 < len(BinEdges) {
			hi := BinEdges[k+1]
			b.High = &hi
			b.Label = fmt.Sprintf("[%g, %g)", lo, hi)
			if lo == 0 {
				b.Label = fmt.Sprintf("(0, %g)", hi)
			}
		} else {
			b.Label = fmt.Sprintf(">= %g", lo)
		}
	}
	for _, l := range sorted {
		k := 0
		if l > 0 {
			k = sort.Search(len(BinEdges), func(i int) bool { return BinEdges[i] > l }) // the bin of l: its lower edge is BinEdges[k-1]
		}
		bins[k].Count++
	}
	for k := range bins {
		if len(sorted) > 0 {
			bins[k].Share = float64(bins[k].Count) / float64(len(sorted))
		}
	}
	return bins
}
