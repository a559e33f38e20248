package obs

import (
	"fmt"
	"strings"
)

// Part is one named slice of the flat observation vector: the Size-long
// vector holds, from Offset on, the product of Shape values in row-major (C)
// order, so in Python obs[Offset:Offset+prod(Shape)].reshape(Shape).
type Part struct {
	// Name identifies the part ("board", "pool", "actions", "planes", ...).
	Name string `json:"name" msgpack:"name"`
	// Offset is where the part starts in the flat vector.
	Offset int `json:"offset" msgpack:"offset"`
	// Shape is the part's shape, row-major.
	Shape []int `json:"shape" msgpack:"shape"`
	// Names has a name for every index of the first axis: a channel, a row
	// or a feature ("self", "legal/gae", "gae@7", ...).
	Names []string `json:"names" msgpack:"names"`
	// Axes names each axis of Shape ("seat", "cell", "channel", "station", ...).
	Axes []string `json:"axes" msgpack:"axes"`
	// Labels has a name for every index of every axis (Labels[0] is Names).
	Labels [][]string `json:"labels" msgpack:"labels"`
	// Low and High bound every value of the part.
	Low  float32 `json:"low" msgpack:"low"`
	High float32 `json:"high" msgpack:"high"`
	// Doc says in a sentence what the values mean.
	Doc string `json:"doc" msgpack:"doc"`
}

// Len returns the number of values in the part (the product of Shape).
func (p Part) Len() int {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	return n
}

// Space describes a tier's flat float32 observation: its size, its bounds and
// the parts it is made of, in order, covering the vector without gaps.
type Space struct {
	// Tier is the tier's name ("compact", "tactical", "planes").
	Tier string `json:"tier" msgpack:"tier"`
	// Size is the length of the flat vector.
	Size int `json:"size" msgpack:"size"`
	// Dtype is always "float32".
	Dtype string `json:"dtype" msgpack:"dtype"`
	// Low and High bound every value of the vector (the loosest of the parts' bounds).
	Low  float32 `json:"low" msgpack:"low"`
	High float32 `json:"high" msgpack:"high"`
	// Parts lists the slices of the vector in order.
	Parts []Part `json:"parts" msgpack:"parts"`
}

// Part returns the part with the given name and whether there is one.
func (sp Space) Part(name string) (Part, bool) {
	for _, p := range sp.Parts {
		if p.Name == name {
			return p, true
		}
	}
	return Part{}, false
}

// Label names element i of the flat vector, such as "board[self,7@OUTER]" or
// "actions[gae@7,captures]", or returns "" if i is out of range.
func (sp Space) Label(i int) string {
	for _, p := range sp.Parts {
		if i < p.Offset || i >= p.Offset+p.Len() {
			continue
		}
		rest := i - p.Offset
		idx := make([]string, len(p.Shape))
		for ax := len(p.Shape) - 1; ax >= 0; ax-- {
			j := rest % p.Shape[ax]
			rest /= p.Shape[ax]
			if ax < len(p.Labels) && j < len(p.Labels[ax]) {
				idx[ax] = p.Labels[ax][j]
			} else {
				idx[ax] = fmt.Sprint(j)
			}
		}
		return p.Name + "[" + strings.Join(idx, ",") + "]"
	}
	return ""
}

// clone returns a deep copy, so callers may change what they get.
func (sp Space) clone() Space {
	out := sp
	out.Parts = make([]Part, len(sp.Parts))
	for i, p := range sp.Parts {
		p.Shape = append([]int(nil), p.Shape...)
		p.Names = append([]string(nil), p.Names...)
		p.Axes = append([]string(nil), p.Axes...)
		labels := make([][]string, len(p.Labels))
		for j, l := range p.Labels {
			labels[j] = append([]string(nil), l...)
		}
		p.Labels = labels
		out.Parts[i] = p
	}
	return out
}

// part builds a Part; labels has one list per axis.
func part(name string, off int, low, high float32, doc string, axes []string, labels ...[]string) Part {
	shape := make([]int, len(labels))
	for i, l := range labels {
		shape[i] = len(l)
	}
	return Part{Name: name, Offset: off, Shape: shape, Names: labels[0], Axes: axes, Labels: labels, Low: low, High: high, Doc: doc}
}

func compactParts() []Part {
	return []Part{
		part("board", offBoard, 0, 1,
			"height / pieces of each seat's stack on each (station, lane) cell; lane C2 also stands for CENTRE/C2",
			[]string{"seat", "cell"}, seatNames, cellNames),
		part("hand", offHand, 0, 1, "pieces in hand / pieces", []string{"seat"}, seatNames),
		part("finished", offFinished, 0, 1, "pieces finished / pieces", []string{"seat"}, seatNames),
		part("seats", offSeats, 0, 1,
			"present: 1 if the seat plays in this game; place: final place / 4 once ranked, else 0",
			[]string{"seat", "feature"}, seatNames, seatFeatureNames),
		part("pool", offPool, 0, poolHigh, "count of each throw result waiting in the pool of the seat to move (raw count)",
			[]string{"throw"}, throwNames),
		part("phase", offPhase, 0, 1, "one-hot phase: throw (chance node), move (decision), over", []string{"phase"}, phaseNames),
		part("rules", offRules, 0, 1,
			"the rule set: players / 4, pieces / 5, flat_prob, and 0/1 flags",
			[]string{"rule"}, rulesNames),
		part("missed", offMissed, 0, poolHigh, "turns the seat will miss because of skip obstacles (raw count)",
			[]string{"seat"}, seatNames),
		part("to_move", offToMove, 0, 1, "1 for the seat whose turn it is (to throw or to move), else 0",
			[]string{"seat"}, seatNames),
	}
}

func buildSpace(t Tier) Space {
	var parts []Part
	switch t {
	case Compact:
		parts = compactParts()
	case Tactical:
		parts = append(compactParts(),
			part("threat", offThreat, 0, 1,
				"probability that some opponent can land on the station with one result of its next turn (see Threat)",
				[]string{"station"}, stationNames),
			part("actions", offActions, 0, 1,
				"ten features of each of the 180 actions, all 0 for an illegal action",
				[]string{"action", "feature"}, actionNames, actionFeatureNames))
	case Planes:
		parts = []Part{
			part("planes", offPlanes, 0, 1, "channels over the 29 stations",
				[]string{"channel", "station"}, channelNames, stationNames),
			part("globals", offGlobals, 0, poolHigh, "global features; pool counts are raw, the rest in [0, 1]",
				[]string{"feature"}, globalNames),
		}
	}
	sp := Space{Tier: t.String(), Dtype: "float32", Parts: parts}
	sp.Low, sp.High = parts[0].Low, parts[0].High
	for _, p := range parts {
		sp.Size += p.Len()
		sp.Low = min(sp.Low, p.Low)
		sp.High = max(sp.High, p.High)
	}
	return sp
}

// spaces holds the space of every tier, built once.
var spaces = func() (out [numTiers]Space) {
	for _, t := range Tiers() {
		out[t] = buildSpace(t)
	}
	return out
}()

// SpaceOf returns the space of tier t (the same under every rule set), or an
// error wrapping ErrBadTier.
func SpaceOf(t Tier) (Space, error) {
	if !t.Valid() {
		return Space{}, fmt.Errorf("%w: id %d", ErrBadTier, uint8(t))
	}
	return spaces[t].clone(), nil
}
