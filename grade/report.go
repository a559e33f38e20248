package grade

import (
	"fmt"
	"math"
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
	// MeanSE is the standard error of Mean, clustered by game, and
	// MeanLow and MeanHigh bound its 95% interval (the package doc gives
	// the formula); all three are nil (null) without two games holding a
	// graded decision each.
	MeanSE   *float64 `json:"mean_loss_se"`
	MeanLow  *float64 `json:"mean_loss_low"`
	MeanHigh *float64 `json:"mean_loss_high"`
	// QuantileError bounds the relative error of Median and P90: 0 when
	// they are exact (at most MaxExactLosses decisions), QuantileAccuracy
	// past that (the memory of a report is bounded).
	QuantileError float64 `json:"quantile_error"`
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
// keeping the worst costliest ones. A game's decisions are consecutive
// ones of the same Graded.Game; games beyond those count as games without
// a graded decision.
func Summarize(gs []Graded, reference string, games, worst int) *Report {
	s := newSummer(reference, worst)
	s.add(gs)
	return s.report(games)
}

// The memory of a report: up to MaxExactLosses graded decisions every loss
// is kept and the quantiles are exact; past them the losses go into a
// histogram of logarithmic bins (a fixed 90 KiB, whatever the games), from
// which the median and the 90th percentile are read within a relative
// error of QuantileAccuracy (Report.QuantileError says which). Every other
// figure (counts, mean, max, the histogram of BinEdges, the worst
// decisions) is kept exactly as the decisions come.
const (
	// MaxExactLosses is the most losses a report keeps (8 MiB): some
	// 25,000 games of the standard rules.
	MaxExactLosses = 1 << 20
	// QuantileAccuracy bounds the relative error of Median and P90 past
	// MaxExactLosses decisions.
	QuantileAccuracy = 1e-3
	// sketchMin is the smallest loss above 0 the bins tell apart: smaller
	// ones share the first bin (a median or p90 below it reads as it).
	sketchMin = 1e-9
)

// sketchGamma is the ratio of a bin's upper to its lower edge, chosen so
// that a bin's midpoint (sketch.value) is within QuantileAccuracy of every
// loss in it.
var sketchGamma = (1 + QuantileAccuracy) / (1 - QuantileAccuracy)

// sketch counts losses above 0 in logarithmic bins: bin k holds the
// losses in (sketchMin·γ^(k-1), sketchMin·γ^k], the first bin everything
// up to sketchMin, the last everything above the bins' range.
type sketch struct {
	counts []int64
}

// sketchBins is the number of bins: losses up to 4 (twice the largest
// loss of outcomes in [-1, 1]) have their own.
var sketchBins = int(math.Ceil(math.Log(4/sketchMin)/math.Log(sketchGamma))) + 1

// bin returns the bin of loss l > 0.
func (sk *sketch) bin(l float64) int {
	if l <= sketchMin {
		return 0
	}
	return min(int(math.Ceil(math.Log(l/sketchMin)/math.Log(sketchGamma))), sketchBins-1)
}

// value returns the loss a bin stands for: the midpoint of its edges in
// relative terms, within QuantileAccuracy of every loss in it.
func (sk *sketch) value(k int) float64 {
	if k == 0 {
		return sketchMin
	}
	return sketchMin * math.Pow(sketchGamma, float64(k)) * 2 / (sketchGamma + 1)
}

// add counts loss l (above 0).
func (sk *sketch) add(l float64) {
	if sk.counts == nil {
		sk.counts = make([]int64, sketchBins)
	}
	sk.counts[sk.bin(l)]++
}

// quantile returns the q-quantile, linear between ranks as the exact
// quantile, of zeros losses of 0 and the sketch's, n in all.
func (sk *sketch) quantile(zeros, n int, q float64) float64 {
	if n == 0 {
		return 0
	}
	pos := q * float64(n-1)
	i := int(math.Floor(pos))
	lo := sk.at(zeros, i)
	if i+1 >= n {
		return lo
	}
	return lo + (pos-float64(i))*(sk.at(zeros, i+1)-lo)
}

// at returns the estimate of the loss of rank i (0-based, in increasing
// order) among zeros losses of 0 and the sketch's.
func (sk *sketch) at(zeros, i int) float64 {
	if i < zeros {
		return 0
	}
	rank := int64(i - zeros)
	for k, c := range sk.counts {
		if rank < c {
			return sk.value(k)
		}
		rank -= c
	}
	return sk.value(len(sk.counts) - 1)
}

// summer aggregates graded decisions in game order, in bounded memory
// (MaxExactLosses).
type summer struct {
	ref      string
	worst    int
	maxExact int
	losses   []float64 // every loss, while there are at most maxExact
	sketched bool      // more: the losses above 0 are in sk, none in losses
	sk       sketch
	n        int // the losses added
	zeros    int
	errors   int
	blunders int
	total    float64
	max      float64
	bins     []int // the histogram of BinEdges
	forced   int
	games    int         // the games added
	clusters clusterSums // their summed losses and decisions
	top      []Graded    // the worst so far, costliest first
}

func newSummer(ref string, worst int) *summer {
	return &summer{ref: ref, worst: max(worst, 0), maxExact: MaxExactLosses, bins: make([]int, len(BinEdges)+1)}
}

// add takes graded decisions in game order: one game's, or several games'
// (a game's decisions are consecutive ones of the same Graded.Game).
func (s *summer) add(gs []Graded) {
	var loss, decisions float64 // of the game being added
	for i, g := range gs {
		if i > 0 && g.Game != gs[i-1].Game {
			s.endGame(loss, decisions)
			loss, decisions = 0, 0
		}
		if g.Forced {
			s.forced++
			continue
		}
		s.count(g.Loss)
		loss, decisions = loss+g.Loss, decisions+1
		if s.worst == 0 || (len(s.top) == s.worst && g.Loss <= s.top[len(s.top)-1].Loss) {
			continue
		}
		i := sort.Search(len(s.top), func(i int) bool { return s.top[i].Loss < g.Loss })
		s.top = slices.Insert(s.top, i, g)
		if len(s.top) > s.worst {
			s.top = s.top[:s.worst]
		}
	}
	s.endGame(loss, decisions)
}

// endGame takes a game's summed loss over its graded decisions into the
// interval's sums.
func (s *summer) endGame(loss, decisions float64) {
	s.games++
	s.clusters.add(loss, decisions)
}

// count takes one loss into the figures.
func (s *summer) count(l float64) {
	s.n++
	s.total += l
	s.max = max(s.max, l)
	switch {
	case l == 0:
		s.zeros++
	case l > BlunderLoss:
		s.blunders++
	}
	if l > ErrorLoss {
		s.errors++
	}
	s.bins[binOf(l)]++
	if !s.sketched && len(s.losses) < s.maxExact {
		s.losses = append(s.losses, l)
		return
	}
	if !s.sketched { // one too many: the kept losses move into the sketch
		for _, x := range s.losses {
			if x > 0 {
				s.sk.add(x)
			}
		}
		s.losses, s.sketched = nil, true
	}
	if l > 0 {
		s.sk.add(l)
	}
}

// report returns the figures of everything added, over games games.
func (s *summer) report(games int) *Report {
	r := &Report{Reference: s.ref, Games: games, Decisions: s.n, Forced: s.forced,
		ErrorLoss: ErrorLoss, BlunderLoss: BlunderLoss, Worst: []Worst{},
		Best: s.zeros, Errors: s.errors, Blunders: s.blunders}
	r.Histogram = histogram(s.bins, s.n)
	if n := float64(s.n); n > 0 {
		if !s.sketched { // every loss kept: exact quantiles, the mean summed in increasing order
			sorted := slices.Clone(s.losses)
			slices.Sort(sorted)
			total := 0.0
			for _, l := range sorted {
				total += l
			}
			r.Mean, r.Median, r.P90 = total/n, quantile(sorted, 0.5), quantile(sorted, 0.9)
		} else {
			r.Mean, r.Median, r.P90 = s.total/n, s.sk.quantile(s.zeros, s.n, 0.5), s.sk.quantile(s.zeros, s.n, 0.9)
			r.QuantileError = QuantileAccuracy
		}
		r.Max = s.max
		r.BestRate, r.ErrorRate, r.BlunderRate = float64(r.Best)/n, float64(r.Errors)/n, float64(r.Blunders)/n
		s.clusters.setInterval(r, max(games, s.games))
	}
	for _, g := range s.top {
		r.Worst = append(r.Worst, Worst{Graded: g, Move: g.Action.String(), MoveID: int(g.Action),
			BestMove: g.Best.String(), BestID: int(g.Best), Position: env.Describe(g.State.Position())})
	}
	return r
}

// binOf returns the bin of BinEdges that loss l falls in.
func binOf(l float64) int {
	if l <= 0 {
		return 0
	}
	return sort.Search(len(BinEdges), func(i int) bool { return BinEdges[i] > l }) // its lower edge is BinEdges[k-1]
}

// histogram returns the bins of BinEdges with their counts, of n losses.
func histogram(counts []int, n int) []Bin {
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
	for k := range bins {
		bins[k].Count = counts[k]
		if n > 0 {
			bins[k].Share = float64(counts[k]) / float64(n)
		}
	}
	return bins
}
