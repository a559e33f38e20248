package obs

import (
	"fmt"
	"math/bits"

	"github.com/yutenv/yutenv/env"
)

// Encoder writes observations of one tier. It is immutable after
// NewEncoder, so one Encoder may be used from many goroutines at once.
type Encoder struct {
	tier  Tier
	size  int
	rules env.Rules
	ctx   context // precomputed for rules
}

// NewEncoder returns an encoder of tier t for games under rules r. The rules
// must be valid (the error then wraps env.ErrInvalidRules); an unknown tier
// gives an error wrapping ErrBadTier.
func NewEncoder(r env.Rules, t Tier) (*Encoder, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("obs: %w: id %d", ErrBadTier, uint8(t))
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("obs: %w", err)
	}
	return &Encoder{tier: t, size: spaces[t].Size, rules: r, ctx: newContext(r)}, nil
}

// Tier returns the encoder's tier.
func (e *Encoder) Tier() Tier { return e.tier }

// Rules returns the rules the encoder was built for.
func (e *Encoder) Rules() env.Rules { return e.rules }

// Size returns the length of one observation.
func (e *Encoder) Size() int { return e.size }

// Space describes the observation: its size, bounds and named parts. The
// result is a fresh copy the caller may keep or change.
func (e *Encoder) Space() Space { return spaces[e.tier].clone() }

// Encode writes the observation of s seen by seat (the observer) into
// dst[:Size()], overwriting every one of those values. It does not
// allocate. Seat slots are relative to the observer: slot 0 is seat, slot k
// the k-th seat after it in turn order. The threat is that of the
// observer's opponents, and the per-action features and legal planes
// describe the observer's legal actions, so they are all zero unless seat is
// to move at a decision. The pool and the phase are the game's (the pool
// belongs to the seat to move). It is defined in every phase: at a chance
// node, at a decision and after the game, and for every seat of the game.
// The observation follows s's own rules; when they differ from the
// encoder's, the per-rules tables are rebuilt for the call (slower, still
// without allocating). Encode panics if len(dst) < Size() or seat is not a
// seat of s's game.
func (e *Encoder) Encode(s *env.State, seat int, dst []float32) {
	dst = dst[:e.size]
	if seat < 0 || seat >= s.Rules().Players {
		panic(fmt.Sprintf("obs: Encode: seat %d is not a seat of a %d-player game", seat, s.Rules().Players))
	}
	c := &e.ctx
	var local context
	if r := s.Rules(); r != e.rules {
		local = newContext(r)
		c = &local
	}
	switch e.tier {
	case Compact:
		c.compact(s, seat, dst)
	case Tactical:
		c.compact(s, seat, dst[:sizeCompact])
		c.tactical(s, seat, dst[sizeCompact:])
	case Planes:
		c.planes(s, seat, dst)
	}
}

// move is a precomputed destination: where a stack lands, or finish.
type move struct {
	to     env.Station
	route  env.Route
	finish bool
	ok     bool
}

// context holds what an encoding needs from the rules.
type context struct {
	players      int
	pieces       int
	invPieces    float32
	backDoEnters bool
	possible     uint8                       // bit t: throw t has a non-zero probability
	hit          [1 << env.NumThrows]float32 // hit[m]: P(a turn's first throw sequence holds a throw in the set m)
	rules        [numRules]float32

	// The board of the rules, from the engine's tables.
	moves      [env.NumRoutes][env.NumStations][env.NumThrows]move // where a stack goes with a throw
	entry      [env.NumThrows]move                                 // where an entered piece lands
	entryRoute env.Route                                           // the route pieces enter on
	distance   [env.NumRoutes][env.NumStations]float32             // steps to finish / the board's longest
	push       [env.NumRoutes][env.NumStations]move                // ok: a stack stopping here is pushed back to (to, route)
	board      [numBoardFeatures][env.NumStations]float32          // the static board planes
}

func newContext(r env.Rules) context {
	c := context{
		players:      r.Players,
		pieces:       r.Pieces,
		invPieces:    1 / float32(r.Pieces),
		backDoEnters: r.BackDoEnters,
	}
	c.board = boardPlanes
	if r.Board == env.BoardLine {
		// A line has no corner, centre or diagonal; its end is its last space.
		c.board = [numBoardFeatures][env.NumStations]float32{}
		c.board[boardHome][r.Spaces-1] = 1
		c.entryRoute = env.RouteLine
	}
	longest := float32(max(maxSteps, r.LapSteps()-1))
	for rt := env.Route(0); rt < env.NumRoutes; rt++ {
		for st := env.Station(0); st < env.NumStations; st++ {
			for t := env.Throw(0); t < env.NumThrows; t++ {
				to, route, fin, ok := env.Destination(r, st, rt, t)
				c.moves[rt][st][t] = move{to: to, route: route, finish: fin, ok: ok}
			}
			if n := r.StepsToFinish(st, rt); n > 0 {
				c.distance[rt][st] = float32(n) / longest
			}
			if to, route, n := r.AfterObstacle(st, rt); n > 0 {
				c.push[rt][st] = move{to: to, route: route, ok: true}
			}
		}
	}
	for t := env.Throw(0); t < env.NumThrows; t++ {
		to, route, fin, ok := env.EntryDestination(r, t)
		c.entry[t] = move{to: to, route: route, finish: fin, ok: ok}
	}
	pr := r.Probabilities()
	for t := range pr {
		if pr[t] > 0 {
			c.possible |= 1 << t
		}
	}
	// A turn begins with throws until one is neither yut nor mo. With qb the
	// probability of a bonus throw outside m and qn that of a non-bonus
	// throw outside m, the sequence misses m with probability
	// qn * (1 + qb + qb^2 + ...) = qn / (1 - qb).
	for m := range c.hit {
		var qb, qn float64
		for t := env.Throw(0); t < env.NumThrows; t++ {
			if m&(1<<t) != 0 {
				continue
			}
			if t.Bonus() {
				qb += pr[t]
			} else {
				qn += pr[t]
			}
		}
		h := 1 - qn/(1-qb)
		c.hit[m] = float32(min(max(h, 0), 1))
	}
	c.rules = [numRules]float32{
		float32(r.Players) / env.MaxPlayers,
		float32(r.Pieces) / env.MaxPieces,
		float32(r.FlatProb),
		b2f(r.BackDo),
		b2f(r.CaptureBonusYutMo),
		b2f(r.Finish == env.FinishStop),
		b2f(r.BackDoEnters),
		b2f(r.End == env.EndRank),
	}
	return c
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// seatAt returns the absolute seat in slot k (0 = the observer me).
func (c *context) seatAt(me, k int) int { return (me + k) % c.players }

// legal returns the legal actions of seat me in s, appended to buf: none
// unless me is to move.
func legal(s *env.State, me int, buf []env.Action) []env.Action {
	if s.ToMove() != me {
		return buf
	}
	return s.LegalActions(buf)
}

// compact writes the compact tier into d (len sizeCompact).
func (c *context) compact(s *env.State, me int, d []float32) {
	clear(d)
	for k := 0; k < c.players; k++ {
		seat := c.seatAt(me, k)
		row := d[offBoard+k*numCells : offBoard+(k+1)*numCells]
		for b := s.Occupied(seat); b != 0; b &= b - 1 {
			st := env.Station(bits.TrailingZeros32(b))
			_, h, route, _ := s.StackAt(st)
			cell := int(cellOf[route][st])
			if route == env.RouteLine {
				cell = int(st) // a line's space i fills cell i
			}
			row[cell] = float32(h) * c.invPieces
		}
		d[offHand+k] = float32(s.Hand(seat)) * c.invPieces
		d[offFinished+k] = float32(s.Finished(seat)) * c.invPieces
		d[offSeats+2*k] = 1
		d[offSeats+2*k+1] = float32(s.Place(seat)) / numSeats
		d[offMissed+k] = float32(s.MissedTurns(seat))
		if seat == s.ToMove() {
			d[offToMove+k] = 1
		}
	}
	pool := s.Pool()
	for t, n := range pool {
		d[offPool+t] = float32(n)
	}
	d[offPhase+int(s.Phase())] = 1
	copy(d[offRules:], c.rules[:])
}

// reach fills m[st] with the set of throws (bit t) by which seat could land
// one of its stacks, or a piece from hand, on station st with a single
// result. skip names a station whose stack is ignored (captured), or is -1;
// captured says the seat has pieces in hand because of that capture.
func (c *context) reach(s *env.State, seat int, skip uint32, captured bool, m *[env.NumStations]uint8) {
	*m = [env.NumStations]uint8{}
	occ := s.Occupied(seat)
	occ &^= skip
	for b := occ; b != 0; b &= b - 1 {
		st := env.Station(bits.TrailingZeros32(b))
		_, _, route, _ := s.StackAt(st)
		row := &c.moves[route][st]
		for t := env.Throw(0); t < env.NumThrows; t++ {
			if mv := row[t]; mv.ok && !mv.finish && c.possible&(1<<t) != 0 {
				c.mark(m, mv, t)
			}
		}
	}
	if s.Hand(seat) == 0 && !captured {
		return
	}
	for t := env.Do; t < env.NumThrows; t++ {
		if mv := c.entry[t]; mv.ok && !mv.finish {
			c.mark(m, mv, t)
		}
	}
	if c.backDoEnters && occ == 0 {
		m[env.Home] |= 1 << env.BackDo
	}
}

// mark marks throw t in m on the station where move mv stops and, after a
// push obstacle there, where the push ends: a stack lands on both.
func (c *context) mark(m *[env.NumStations]uint8, mv move, t env.Throw) {
	m[mv.to] |= 1 << t
	if p := c.push[mv.route][mv.to]; p.ok {
		m[p.to] |= 1 << t
	}
}

// opponents returns the bit set of seats other than the observer me that
// will still take turns.
func (c *context) opponents(s *env.State, me int) uint8 {
	var o uint8
	if s.IsOver() {
		return 0
	}
	for i := 0; i < c.players; i++ {
		if i != me && s.Place(i) == 0 {
			o |= 1 << i
		}
	}
	return o
}

// threat fills th[st] with the probability that at least one opponent can
// hit station st on its next turn, and masks with each opponent's reach.
func (c *context) threat(s *env.State, me int, opp uint8, masks *[numSeats][env.NumStations]uint8, th *[env.NumStations]float32) {
	var miss [env.NumStations]float32
	for st := range miss {
		miss[st] = 1
	}
	// Seats in turn order from the seat to move, so that the float
	// products do not depend on how the seats are numbered.
	for k := 1; k < c.players; k++ {
		seat := c.seatAt(me, k)
		if opp&(1<<seat) == 0 {
			continue
		}
		c.reach(s, seat, 0, false, &masks[seat])
		for st, m := range masks[seat] {
			miss[st] *= 1 - c.hit[m]
		}
	}
	for st := range th {
		th[st] = 1 - miss[st]
	}
}

// tactical writes the threat and action parts into d (len sizeTactical-sizeCompact).
func (c *context) tactical(s *env.State, me int, d []float32) {
	clear(d)
	opp := c.opponents(s, me)
	var masks [numSeats][env.NumStations]uint8
	var th [env.NumStations]float32
	c.threat(s, me, opp, &masks, &th)
	copy(d, th[:])
	acts := d[offActions-offThreat:]
	var buf [env.NumActions]env.Action
	for _, a := range legal(s, me, buf[:0]) {
		f := acts[int(a)*numActionFeatures : (int(a)+1)*numActionFeatures]
		f[featLegal] = 1
		t := a.Throw()
		var mv move
		moved := 1
		from := c.entryRoute
		if a.IsEnter() {
			f[featEnter] = 1
			if t == env.BackDo {
				mv = move{to: env.Home, route: env.RouteOuter, ok: true}
			} else {
				mv = c.entry[t]
			}
		} else {
			_, moved, from, _ = s.StackAt(a.Station())
			mv = c.moves[from][a.Station()][t]
		}
		f[featMoved] = float32(moved) * c.invPieces
		if mv.finish {
			f[featFinishes] = float32(moved) * c.invPieces
			if s.Finished(me)+moved == c.pieces {
				f[featPlaces] = 1
			}
			continue
		}
		if t != env.BackDo && mv.route != from && mv.route != env.RouteOuter {
			f[featShortcut] = 1
		}
		if p := c.push[mv.route][mv.to]; p.ok {
			c.pushedMove(s, me, a, mv, p, moved, opp, &masks, &th, f)
			continue
		}
		f[featDistance] = c.distance[mv.route][mv.to]
		f[featExposure] = th[mv.to]
		owner, h, _, ok := s.StackAt(mv.to)
		switch {
		case !ok:
		case owner == me:
			f[featJoins] = float32(h+moved) * c.invPieces
		default:
			f[featCaptures] = float32(h) * c.invPieces
			f[featExposure] = c.exposureAfterCapture(s, me, opp, &masks, mv.to, captures{{owner, 1 << mv.to}})
		}
	}
}

// pushedMove writes the features of action a, whose stack stops on a push
// obstacle (mv) and is pushed back to p: it lands twice, on the obstacle and
// where the push stops, joining or capturing at each.
func (c *context) pushedMove(s *env.State, me int, a env.Action, mv, p move, moved int, opp uint8, masks *[numSeats][env.NumStations]uint8, th *[env.NumStations]float32, f []float32) {
	height, joined, captured := moved, false, 0
	var caps captures
	for i, at := range [2]env.Station{mv.to, p.to} {
		if !a.IsEnter() && at == a.Station() {
			continue // the moving stack left it
		}
		switch owner, h, _, ok := s.StackAt(at); {
		case !ok:
		case owner == me:
			height += h
			joined = true
		default:
			captured += h
			caps[i] = capture{seat: owner, stations: 1 << at}
		}
	}
	if joined {
		f[featJoins] = float32(height) * c.invPieces
	}
	f[featCaptures] = float32(captured) * c.invPieces
	f[featDistance] = c.distance[p.route][p.to]
	f[featExposure] = th[p.to]
	if captured > 0 {
		f[featExposure] = c.exposureAfterCapture(s, me, opp, masks, p.to, caps)
	}
}

// capture is a seat whose stacks on the stations of a bit set are captured
// (seat 0 with no stations: none).
type capture struct {
	seat     int
	stations uint32
}

// captures are the captures of one move: one, or two after a push obstacle.
type captures [2]capture

// exposureAfterCapture is the threat on station at once the captures caps
// are made: each victim's reach is recomputed without the captured stacks
// and with pieces in hand.
func (c *context) exposureAfterCapture(s *env.State, me int, opp uint8, masks *[numSeats][env.NumStations]uint8, at env.Station, caps captures) float32 {
	miss := float32(1)
	for k := 1; k < c.players; k++ {
		seat := c.seatAt(me, k)
		var gone uint32
		for _, cp := range caps {
			if cp.stations != 0 && cp.seat == seat {
				gone |= cp.stations
			}
		}
		switch {
		case gone != 0:
			var mv [env.NumStations]uint8
			c.reach(s, seat, gone, true, &mv)
			miss *= 1 - c.hit[mv[at]]
		case opp&(1<<seat) != 0:
			miss *= 1 - c.hit[masks[seat][at]]
		}
	}
	return 1 - miss
}

// planes writes the planes tier into d (len sizePlanes).
func (c *context) planes(s *env.State, me int, d []float32) {
	clear(d)
	const n = env.NumStations
	g := d[offGlobals:]
	for k := 0; k < c.players; k++ {
		seat := c.seatAt(me, k)
		for b := s.Occupied(seat); b != 0; b &= b - 1 {
			st := bits.TrailingZeros32(b)
			_, h, route, _ := s.StackAt(env.Station(st))
			d[(chHeight+k)*n+st] = float32(h) * c.invPieces
			d[(chLane+int(laneOf[route]))*n+st] = 1
		}
		g[gHand+k] = float32(s.Hand(seat)) * c.invPieces
		g[gFinished+k] = float32(s.Finished(seat)) * c.invPieces
		g[gPresent+k] = 1
		g[gPlace+k] = float32(s.Place(seat)) / numSeats
		g[gMissed+k] = float32(s.MissedTurns(seat))
		if seat == s.ToMove() {
			g[gToMove+k] = 1
		}
	}
	var masks [numSeats][env.NumStations]uint8
	var th [env.NumStations]float32
	c.threat(s, me, c.opponents(s, me), &masks, &th)
	copy(d[chThreat*n:], th[:])
	var buf [env.NumActions]env.Action
	for _, a := range legal(s, me, buf[:0]) {
		if a.IsEnter() {
			g[gEnter+int(a.Throw())] = 1
		} else {
			d[(chLegal+int(a.Throw()))*n+a.Source()] = 1
		}
	}
	for i := range c.board {
		copy(d[(chBoard+i)*n:], c.board[i][:])
	}
	pool := s.Pool()
	for t, v := range pool {
		g[gPool+t] = float32(v)
	}
	g[gPhase+int(s.Phase())] = 1
	copy(g[gRules:], c.rules[:])
}
