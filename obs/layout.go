package obs

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/yutenv/yutenv/env"
)

// Seat slots. Observations always have room for env.MaxPlayers seats, so a
// tier's size is the same under every rule set; slots of seats that do not
// exist in a smaller game are zeros (and their "present" feature is 0).
const numSeats = env.MaxPlayers

// seatNames name the seat slots, relative to the seat to move, in turn order.
var seatNames = []string{"self", "opp1", "opp2", "opp3"}

// Lanes. A stack's future depends on its station and its route. The routes
// C2 and CENTRE/C2 coincide on the stations they share (22, 27, 28, HOME:
// same forward moves, and a back-do from 22 returns to 26 on C2 either way),
// so both are encoded as the lane C2. On C1 and CENTRE/C1 the stations 22,
// 27, 28 and HOME behave differently, and so do OUTER and C1 on 15..19 and
// HOME, so those stay apart.
const (
	laneOuter    = 0
	laneC1       = 1
	laneC2       = 2
	laneCentreC1 = 3
	numLanes     = 4
)

var laneNames = []string{"OUTER", "C1", "C2", "CENTRE/C1"}

// laneOf maps a route to its lane.
var laneOf = [env.NumRoutes]uint8{
	env.RouteOuter:    laneOuter,
	env.RouteC1:       laneC1,
	env.RouteC2:       laneC2,
	env.RouteCentreC1: laneCentreC1,
	env.RouteCentreC2: laneC2,
	env.RouteLine:     laneOuter, // a line is one lane
}

// numCells is the number of distinct (station, lane) places a stack can be:
// OUTER 20 (1..19 and HOME), C1 12, C2 7, CENTRE/C1 4.
const numCells = 43

// cellOf[route][station] is the cell index of a stack at station on route,
// or -1 where the station is not on the route.
// cellNames name the cells "<station>@<lane>", such as "7@OUTER", "HOME@C1", "22@CENTRE/C1".
var cellOf, cellNames = buildCells()

// stationNames name the stations "HOME", "1", ..., "28".
var stationNames = func() []string {
	out := make([]string, env.NumStations)
	for s := range out {
		out[s] = stationName(env.Station(s))
	}
	return out
}()

// maxSteps is the largest env.StepsToFinish of any place on the board (20,
// from station 1 on OUTER); distances are divided by it.
var maxSteps = func() int {
	m := 0
	for s := env.Station(0); s < env.NumStations; s++ {
		for r := env.Route(0); r < env.NumRoutes; r++ {
			m = max(m, env.StepsToFinish(s, r))
		}
	}
	return m
}()

func buildCells() (cells [env.NumRoutes][env.NumStations]int8, names []string) {
	for r := range cells {
		for s := range cells[r] {
			cells[r][s] = -1
		}
	}
	for _, r := range []env.Route{env.RouteOuter, env.RouteC1, env.RouteC2, env.RouteCentreC1} {
		for i, st := range env.RouteStations(r) {
			if r == env.RouteOuter && i == 0 {
				continue // HOME as the start of OUTER is not a place to stand
			}
			cells[r][st] = int8(len(names))
			names = append(names, stationName(st)+"@"+laneNames[laneOf[r]])
		}
	}
	if len(names) != numCells {
		panic("obs: board routes changed: " + strconv.Itoa(len(names)) + " cells, want " + strconv.Itoa(numCells))
	}
	for s := env.Station(0); s < env.NumStations; s++ {
		if env.OnRoute(s, env.RouteCentreC2) {
			cells[env.RouteCentreC2][s] = cells[env.RouteC2][s]
		}
	}
	return cells, names
}

// stationName returns "HOME" for station 0 and the number otherwise.
func stationName(s env.Station) string {
	if s == env.Home {
		return "HOME"
	}
	return strconv.Itoa(int(s))
}

// Feature names of the smaller parts.
var (
	seatFeatureNames = []string{"present", "place"}
	phaseNames       = []string{"throw", "move", "over"}
	rulesNames       = []string{"players", "pieces", "flat_prob", "back_do", "capture_bonus_yut_mo", "finish_stop", "back_do_enters", "end_rank"}
	throwNames       = func() []string {
		out := make([]string, env.NumThrows)
		for t := range out {
			out[t] = env.Throw(t).String()
		}
		return out
	}()
	actionNames = func() []string {
		out := make([]string, env.NumActions)
		for a := range out {
			out[a] = env.Action(a).String()
		}
		return out
	}()
)

// Per-action features of the tactical tier, in order.
const (
	featLegal    = iota // 1 if the action is legal
	featEnter           // 1 if it enters a piece from hand
	featMoved           // pieces moved / pieces per seat
	featCaptures        // opponent pieces captured / pieces per seat
	featFinishes        // pieces finished / pieces per seat
	featPlaces          // 1 if it finishes the mover's last pieces
	featJoins           // height of the joined stack / pieces, if it lands on the mover's own stack
	featShortcut        // 1 if it stops on C1, C2 or the centre and takes the shortcut
	featDistance        // steps still to go after the move / 20 (0 once finished)
	featExposure        // probability that an opponent can hit the landing station next turn
	numActionFeatures
)

var actionFeatureNames = []string{"legal", "enter", "moved", "captures", "finishes", "places", "joins", "shortcut", "distance", "exposure"}

// Channels of the planes tier, in order.
const (
	chHeight   = 0                          // 4 channels: height / pieces of each seat slot's stack
	chLane     = chHeight + numSeats        // 4 channels: lane of the stack on the station (any owner)
	chThreat   = chLane + numLanes          // 1 channel: opponents' threat on the station
	chLegal    = chThreat + 1               // 6 channels: the stack here may move with throw t
	chBoard    = chLegal + env.NumThrows    // 4 channels: static board features
	numChannel = chBoard + numBoardFeatures // 19
)

// Static board channels of the planes tier.
const (
	boardHome     = iota // HOME (station 0)
	boardCorner          // the corners C1, C2, C3 (5, 10, 15)
	boardCentre          // the centre (22)
	boardDiagonal        // the diagonals (20..28)
	numBoardFeatures
)

var boardFeatureNames = []string{"home", "corner", "centre", "diagonal"}

// boardPlanes holds the static board channels, precomputed.
var boardPlanes = func() (p [numBoardFeatures][env.NumStations]float32) {
	p[boardHome][env.Home] = 1
	p[boardCorner][env.CornerC1] = 1
	p[boardCorner][env.CornerC2] = 1
	p[boardCorner][env.CornerC3] = 1
	p[boardCentre][env.Centre] = 1
	for s := 20; s < env.NumStations; s++ {
		p[boardDiagonal][s] = 1
	}
	return p
}()

var channelNames = func() []string {
	var out []string
	for _, s := range seatNames {
		out = append(out, "height/"+s)
	}
	for _, l := range laneNames {
		out = append(out, "lane/"+l)
	}
	out = append(out, "threat")
	for _, t := range throwNames {
		out = append(out, "legal/"+t)
	}
	for _, b := range boardFeatureNames {
		out = append(out, "board/"+b)
	}
	return out
}()

// Global features of the planes tier: offsets inside the globals part.
const (
	gHand     = 0
	gFinished = gHand + numSeats
	gPresent  = gFinished + numSeats
	gPlace    = gPresent + numSeats
	gPool     = gPlace + numSeats
	gPhase    = gPool + env.NumThrows
	gRules    = gPhase + 3
	gEnter    = gRules + numRules
	gMissed   = gEnter + env.NumThrows // layout 2 on
	gToMove   = gMissed + numSeats
	numGlobal = gToMove + numSeats // 47
)

const numRules = 8

var globalNames = func() []string {
	var out []string
	for _, f := range []string{"hand", "finished", "present", "place"} {
		for _, s := range seatNames {
			out = append(out, f+"/"+s)
		}
	}
	for _, t := range throwNames {
		out = append(out, "pool/"+t)
	}
	for _, p := range phaseNames {
		out = append(out, "phase/"+p)
	}
	for _, r := range rulesNames {
		out = append(out, "rules/"+r)
	}
	for _, t := range throwNames {
		out = append(out, "enter/"+t)
	}
	for _, f := range []string{"missed", "to_move"} {
		for _, s := range seatNames {
			out = append(out, f+"/"+s)
		}
	}
	return out
}()

// Offsets of the compact parts (also the start of the tactical tier).
const (
	offBoard    = 0
	offHand     = offBoard + numSeats*numCells
	offFinished = offHand + numSeats
	offSeats    = offFinished + numSeats
	offPool     = offSeats + numSeats*2
	offPhase    = offPool + env.NumThrows
	offRules    = offPhase + 3
	offMissed   = offRules + numRules // layout 2 on
	offToMove   = offMissed + numSeats
	sizeCompact = offToMove + numSeats // 213

	offThreat    = sizeCompact
	offActions   = offThreat + env.NumStations
	sizeTactical = offActions + env.NumActions*numActionFeatures // 2042

	offPlanes  = 0
	offGlobals = numChannel * env.NumStations
	sizePlanes = offGlobals + numGlobal // 598
)

// LayoutVersion numbers the layout of the observation tiers: their parts,
// offsets and sizes. A change to any tier's layout bumps it, and datasets
// and network files record it, so that one made under another layout is
// refused rather than misread. Layout 1 (compact 205, tactical 2034, planes
// 590 values) had neither the seats' missed turns nor the seat to move;
// layout 2 appends both, per seat slot, to the compact part and to the
// planes globals.
const LayoutVersion = 2

// ErrLayout is wrapped by every error about data made for another
// observation layout (a dataset, a network file).
var ErrLayout = errors.New("observation layout mismatch")

// CheckLayout checks the observation layout recorded in a file against
// LayoutVersion; 0, a file written before layouts were recorded, is layout
// 1. The error wraps ErrLayout and names both layouts.
func CheckLayout(recorded int) error {
	if recorded == 0 {
		recorded = 1
	}
	if recorded != LayoutVersion {
		return fmt.Errorf("%w: made for observation layout %d, this build reads layout %d", ErrLayout, recorded, LayoutVersion)
	}
	return nil
}

// poolHigh is the largest pool count the engine allows for one throw kind.
const poolHigh = 255

// actionFeatureDocs explains each per-action feature of the tactical tier.
var actionFeatureDocs = [numActionFeatures]string{
	featLegal:    "1 if the action is legal now; every other feature of an illegal action is 0",
	featEnter:    "1 if the action enters a piece from hand",
	featMoved:    "pieces moved / pieces (1 / pieces when entering)",
	featCaptures: "opponent pieces captured / pieces",
	featFinishes: "pieces that leave the board / pieces",
	featPlaces:   "1 if the move finishes the mover's last pieces (a win under end=first)",
	featJoins:    "height of the stack formed / pieces, if the move stops on the mover's own stack, else 0",
	featShortcut: "1 if the move stops on C1, C2 or the centre and takes its shortcut",
	featDistance: "steps the moved stack still needs to finish after the move / 20 (0 once finished; HOME is 1/20)",
	featExposure: "the threat on the landing station after the move (0 when the move finishes): see Threat",
}

// channelDocs explains each group of planes channels.
var channelDocs = map[string]string{
	"height":         "height / pieces of that seat slot's stack on the station (0 if none)",
	"lane":           "1 if the stack on the station (whoever owns it) follows that lane; C2 also stands for CENTRE/C2",
	"threat":         "probability that some opponent can land on the station on its next turn (see Threat)",
	"legal":          "1 if moving the mover's stack on the station with that throw is legal now",
	"board/home":     "1 on HOME (station 0)",
	"board/corner":   "1 on the corners C1 (5), C2 (10) and C3 (15)",
	"board/centre":   "1 on the centre (22)",
	"board/diagonal": "1 on the diagonal stations 20..28",
}

// globalDocs explains each group of planes global features.
var globalDocs = map[string]string{
	"hand":     "pieces in hand / pieces, per seat slot",
	"finished": "pieces finished / pieces, per seat slot",
	"present":  "1 if the seat slot is a seat of this game",
	"place":    "final place / 4 once the seat is ranked, else 0",
	"pool":     "raw count of each throw result in the pool of the seat to move",
	"phase":    "one-hot phase: throw (chance node), move (decision), over",
	"rules":    "the rule set, as in the compact part rules",
	"enter":    "1 if entering a piece with that throw is legal now",
	"missed":   "turns the seat slot will miss because of skip obstacles (raw count)",
	"to_move":  "1 for the seat slot whose turn it is (throw or move), else 0",
}

// rulesDocs explains each rules feature.
var rulesDocs = [numRules]string{
	"players / 4", "pieces / 5", "flat_prob (0.5 to 0.65)", "1 if back-do is on",
	"1 if a capture with yut or mo also earns a throw", "1 if finish=stop (reaching HOME finishes)",
	"1 if back-do with nothing on the board enters a piece onto HOME", "1 if end=rank (play on until every place is ranked)",
}
