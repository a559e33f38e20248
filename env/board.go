package env

import "fmt"

// Station is one of the 29 points of the Yut board, numbered as in RULES.md:
// 0 is HOME, 0..19 the outer ring counter-clockwise, 20..28 the diagonals.
type Station uint8

// NumStations is the number of stations on the board.
const NumStations = 29

// Named stations.
const (
	// Home is station 0: where pieces start their lap and finish it.
	Home Station = 0
	// CornerC1 is station 5, the first corner; stopping there takes the C1 diagonal.
	CornerC1 Station = 5
	// CornerC2 is station 10, the second corner; stopping there takes the C2 diagonal.
	CornerC2 Station = 10
	// CornerC3 is station 15, the third corner; it has no shortcut.
	CornerC3 Station = 15
	// Centre is station 22, where both diagonals cross.
	Centre Station = 22
)

// String returns the station number, or its name for HOME, the corners and the centre.
func (s Station) String() string {
	switch s {
	case Home:
		return "HOME"
	case CornerC1:
		return "C1(5)"
	case CornerC2:
		return "C2(10)"
	case CornerC3:
		return "C3(15)"
	case Centre:
		return "centre(22)"
	}
	return fmt.Sprintf("%d", uint8(s))
}

// Route is the path a stack is following. Where a stack goes next depends on
// its route, not only on its station, so every stack carries one.
type Route uint8

// The routes of RULES.md. The centre route remembers which diagonal the stack
// came down, because a back-do from the centre returns along it.
const (
	// RouteOuter is the outer ring 0, 1, ..., 19, 0.
	RouteOuter Route = iota
	// RouteC1 is the diagonal from C1: 5, 20, 21, 22, 23, 24, 15, 16, ..., 19, 0.
	RouteC1
	// RouteC2 is the diagonal from C2: 10, 25, 26, 22, 27, 28, 0.
	RouteC2
	// RouteCentreC1 is the centre route 22, 27, 28, 0 entered from the C1 diagonal.
	RouteCentreC1
	// RouteCentreC2 is the centre route 22, 27, 28, 0 entered from the C2 diagonal.
	RouteCentreC2
	// RouteLine is the only route of a line board: spaces 0, 1, ..., N-1.
	RouteLine
)

// NumRoutes is the number of distinct routes (the centre counts twice, once per diagonal).
const NumRoutes = 6

var routeNames = [NumRoutes]string{"OUTER", "C1", "C2", "CENTRE/C1", "CENTRE/C2", "LINE"}

// String returns the route's name as in RULES.md ("OUTER", "C1", "C2", "CENTRE/C1", "CENTRE/C2", "LINE").
func (r Route) String() string {
	if int(r) < NumRoutes {
		return routeNames[r]
	}
	return fmt.Sprintf("Route(%d)", uint8(r))
}

// ParseRoute is the inverse of Route.String.
func ParseRoute(s string) (Route, error) {
	for i, n := range routeNames {
		if n == s {
			return Route(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown route %q (want OUTER, C1, C2, CENTRE/C1, CENTRE/C2 or LINE)", ErrBadInput, s)
}

// routeStations lists each route of the cross board's stations in order.
// Every route ends at HOME. RouteLine has no fixed stations: a line's length
// is part of the rules (see lineStations).
// The first entry of RouteOuter is HOME as the starting point of entering
// pieces; no stack ever stands on it as index 0.
var routeStations = [NumRoutes][]Station{
	RouteOuter:    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0},
	RouteC1:       {5, 20, 21, 22, 23, 24, 15, 16, 17, 18, 19, 0},
	RouteC2:       {10, 25, 26, 22, 27, 28, 0},
	RouteCentreC1: {22, 27, 28, 0},
	RouteCentreC2: {22, 27, 28, 0},
}

// RouteStations returns a copy of the stations of route r of the cross board
// in order (nil for RouteLine; see Rules.Route).
func RouteStations(r Route) []Station {
	return append([]Station(nil), routeStations[r]...)
}

// OnRoute reports whether a stack at station s can be following route r.
func OnRoute(s Station, r Route) bool {
	return int(r) < NumRoutes && int(s) < NumStations && routeIndex[r][s] >= 0
}

// routeIndex[r][s] is the index of station s on route r (HOME is the last
// index), or -1 if s is not on r.
var routeIndex [NumRoutes][NumStations]int8

// A destination packs a station and a route into one byte (5 bits + 3 bits),
// or is one of the two markers below.
type dest uint8

const (
	destFinish  dest = 0xFF // the stack leaves the board, finished
	destInvalid dest = 0xFE // the station is not on the route, or the move is not allowed (exact finish)
)

func packDest(s Station, r Route) dest { return dest(uint8(s) | uint8(r)<<5) }
func (d dest) station() Station        { return Station(d & 31) }
func (d dest) route() Route            { return Route(d >> 5) }

// layoutTables are the moves of one board layout under one finish mode:
// move[r][s][t] is where a stack on route r at station s goes with throw t,
// entry[t] where a piece entered with throw t lands.
type layoutTables struct {
	move  [NumRoutes][NumStations][NumThrows]dest
	entry [NumThrows]dest
}

// numFinishModes is the number of finish modes; every layout has a table per mode.
const numFinishModes = int(FinishWrap) + 1

// numLayouts counts the tables: the cross board, then every line length.
const numLayouts = numFinishModes * (1 + MaxSpaces - MinSpaces + 1)

// layouts holds the move tables of every board and finish mode (about 120 KB,
// built once), so a State names its table by a small index and holds no pointer.
var layouts [numLayouts]layoutTables

// hasLayout reports whether the board and finish mode of r have move tables
// (cheaper than Validate, for the per-move lookups of Destination).
func hasLayout(r Rules) bool {
	if r.Finish > FinishWrap {
		return false
	}
	switch r.Board {
	case BoardCross:
		return r.Spaces == 0
	case BoardLine:
		return r.Spaces >= MinSpaces && r.Spaces <= MaxSpaces
	}
	return false
}

// layoutIndex returns the index into layouts of valid rules r.
func layoutIndex(r Rules) uint8 {
	i := 0
	if r.Board == BoardLine {
		i = 1 + r.Spaces - MinSpaces
	}
	return uint8(i*numFinishModes + int(r.Finish))
}

// lineStations returns the route of a line of n spaces as computeMove reads
// it: index 0 is the start before the first space (off the board), index
// i is space i-1, and the last index is the last space, n-1.
func lineStations(n int) []Station {
	seq := make([]Station, n+1)
	for i := 1; i <= n; i++ {
		seq[i] = Station(i - 1)
	}
	return seq
}

func init() {
	for r := range routeIndex {
		for s := range routeIndex[r] {
			routeIndex[r][s] = -1
		}
		for i, s := range routeStations[r] {
			if i == 0 && r == int(RouteOuter) {
				continue // HOME as a start is not a place to stand on OUTER
			}
			routeIndex[r][s] = int8(i)
		}
	}
	for f := FinishMode(0); int(f) < numFinishModes; f++ {
		lt := &layouts[layoutIndex(Rules{Finish: f})]
		for r := Route(0); r < NumRoutes; r++ {
			for s := Station(0); s < NumStations; s++ {
				for t := Throw(0); t < NumThrows; t++ {
					lt.move[r][s][t] = destInvalid
					if r != RouteLine {
						lt.move[r][s][t] = computeMove(routeStations[r], r, int(routeIndex[r][s]), t, f, false)
					}
				}
			}
		}
		for t := Throw(0); t < NumThrows; t++ {
			lt.entry[t] = destInvalid
			if t != BackDo {
				lt.entry[t] = computeMove(routeStations[RouteOuter], RouteOuter, 0, t, f, false)
			}
		}
		for n := MinSpaces; n <= MaxSpaces; n++ {
			lt := &layouts[layoutIndex(Rules{Board: BoardLine, Spaces: n, Finish: f})]
			seq := lineStations(n)
			for r := Route(0); r < NumRoutes; r++ {
				for s := Station(0); s < NumStations; s++ {
					for t := Throw(0); t < NumThrows; t++ {
						lt.move[r][s][t] = destInvalid
						if r == RouteLine && int(s) < n {
							lt.move[r][s][t] = computeMove(seq, r, int(s)+1, t, f, true)
						}
					}
				}
			}
			for t := Throw(0); t < NumThrows; t++ {
				lt.entry[t] = destInvalid
				if t != BackDo {
					lt.entry[t] = computeMove(seq, RouteLine, 0, t, f, true)
				}
			}
		}
	}
}

// computeMove applies one throw to a stack at index i of the route seq (route
// r) under finish mode f. On a line (line = true) index 0 is the start off
// the board and back-do never leaves the first space.
func computeMove(seq []Station, r Route, i int, t Throw, f FinishMode, line bool) dest {
	if i < 0 {
		return destInvalid
	}
	last := len(seq) - 1
	if t == BackDo {
		switch {
		case line && i <= 1:
			return destInvalid // no space behind the first one
		case line:
			return packDest(seq[i-1], r)
		case i == last: // from HOME to the station before it on this route
			return packDest(seq[last-1], r)
		case r == RouteOuter && i == 1:
			return packDest(Home, RouteOuter)
		case i == 0 && r == RouteC1:
			return packDest(4, RouteOuter)
		case i == 0 && r == RouteC2:
			return packDest(9, RouteOuter)
		case i == 0 && r == RouteCentreC1:
			return packDest(21, RouteC1)
		case i == 0 && r == RouteCentreC2:
			return packDest(26, RouteC2)
		}
		return packDest(seq[i-1], r)
	}
	j := i + t.Steps()
	switch {
	case i == last && !line && f == FinishExact:
		// A stack standing on HOME (put there by back-do) leaves by going
		// past it, and under exact any forward move from HOME is exact
		// (RULES.md, "Finishing").
		return destFinish
	case j == last && f != FinishPass:
		return destFinish
	case j > last && f == FinishExact:
		return destInvalid
	case j > last && f == FinishWrap:
		// Past the end the stack goes on from the start: on the cross board
		// HOME is followed by station 1 of OUTER, on a line the last space
		// by the first. Only stopping on the end finishes.
		if !line {
			seq, r = routeStations[RouteOuter], RouteOuter
		}
		j -= last // steps past the end: index 1 is the first place after it
		last = len(seq) - 1
		for j > last {
			j -= last
		}
		if j == last {
			return destFinish
		}
	case j > last:
		return destFinish
	}
	s := seq[j]
	if line {
		return packDest(s, r)
	}
	// Forced shortcuts, taken only by stopping.
	switch {
	case r == RouteOuter && s == CornerC1:
		return packDest(s, RouteC1)
	case r == RouteOuter && s == CornerC2:
		return packDest(s, RouteC2)
	case r == RouteC1 && s == Centre:
		return packDest(s, RouteCentreC1)
	case r == RouteC2 && s == Centre:
		return packDest(s, RouteCentreC2)
	}
	return packDest(s, r)
}

// Edge is a directed edge of the board graph: a forward step from one
// station to the next along some route.
type Edge struct {
	From, To Station
	Route    Route
}

// Edges returns every forward one-step edge of every route, each (From, To)
// pair once, in route order. The final step of each route goes to HOME.
func Edges() []Edge {
	var out []Edge
	seen := map[[2]Station]bool{}
	for r := Route(0); r < NumRoutes; r++ {
		seq := routeStations[r]
		for i := 0; i+1 < len(seq); i++ {
			k := [2]Station{seq[i], seq[i+1]}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, Edge{From: seq[i], To: seq[i+1], Route: r})
		}
	}
	return out
}

// Destination returns where a stack on route r at station s lands with throw
// t under the given rules (their board and finish mode): the station and
// route after the move, or finished = true if the stack leaves the board. ok
// is false if s is not on r, or the throw cannot move it (back-do on the
// first space of a line, a move past the end under finish=exact).
func Destination(rules Rules, s Station, r Route, t Throw) (to Station, route Route, finished, ok bool) {
	if int(r) >= NumRoutes || int(s) >= NumStations || int(t) >= NumThrows || !hasLayout(rules) {
		return 0, 0, false, false
	}
	return decodeDest(layouts[layoutIndex(rules)].move[r][s][t])
}

// EntryDestination returns where a piece entered from hand with throw t lands.
func EntryDestination(rules Rules, t Throw) (to Station, route Route, finished, ok bool) {
	if int(t) >= NumThrows || !hasLayout(rules) {
		return 0, 0, false, false
	}
	return decodeDest(layouts[layoutIndex(rules)].entry[t])
}

func decodeDest(d dest) (Station, Route, bool, bool) {
	switch d {
	case destInvalid:
		return 0, 0, false, false
	case destFinish:
		return 0, 0, true, true
	}
	return d.station(), d.route(), false, true
}

// StepsToFinish returns how many forward steps a stack on route r at station
// s of the cross board still needs to leave the board (one more than the
// steps to HOME, since a stack must pass HOME), or -1 if s is not on r. For
// any board use Rules.StepsToFinish.
func StepsToFinish(s Station, r Route) int {
	if !OnRoute(s, r) {
		return -1
	}
	return len(routeStations[r]) - int(routeIndex[r][s])
}

// StepsToFinish returns how many forward steps a stack on route rt at
// station s of these rules' board still needs to leave it: on the cross
// board as the function StepsToFinish, on a line of N spaces N-s (the steps
// to pass the last space). It is -1 if s is not a place of the board.
func (r Rules) StepsToFinish(s Station, rt Route) int {
	if r.Board != BoardLine {
		return StepsToFinish(s, rt)
	}
	if rt != RouteLine || int(s) >= r.Spaces {
		return -1
	}
	return r.Spaces - int(s)
}

// LapSteps returns the steps from hand to finished: 21 on the cross board
// (20 stations and passing HOME), N+1 on a line of N spaces.
func (r Rules) LapSteps() int {
	if r.Board == BoardLine {
		return r.Spaces + 1
	}
	return len(routeStations[RouteOuter])
}

// OnBoard reports whether a stack may stand on station s following route rt
// on these rules' board.
func (r Rules) OnBoard(s Station, rt Route) bool {
	if r.Board == BoardLine {
		return rt == RouteLine && int(s) < r.Spaces
	}
	return rt != RouteLine && OnRoute(s, rt)
}

// NumPlaces returns how many stations the rules' board has: 29 on the cross,
// N on a line of N spaces (stations 0..N-1).
func (r Rules) NumPlaces() int {
	if r.Board == BoardLine {
		return r.Spaces
	}
	return NumStations
}
