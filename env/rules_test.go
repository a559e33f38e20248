package env_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// One subtest per bullet of RULES.md, each on a position built directly with
// env.FromPosition.

const (
	outer = env.RouteOuter
	c1    = env.RouteC1
	c2    = env.RouteC2
	cc1   = env.RouteCentreC1
	cc2   = env.RouteCentreC2
)

const (
	backDo = env.BackDo
	do     = env.Do
	gae    = env.Gae
	geol   = env.Geol
	yut    = env.Yut
	mo     = env.Mo
)

// stack is a short constructor for test positions.
func stack(seat int, st env.Station, r env.Route, height int) env.Stack {
	return env.Stack{Seat: seat, Station: st, Route: r, Height: height}
}

// act is a short constructor for actions: source 29 (env.EnterSource) enters.
func act(t env.Throw, source int) env.Action {
	if source == env.EnterSource {
		return env.EnterAction(t)
	}
	return env.NewAction(t, env.Station(source))
}

// setup describes a position; pieces neither on the board nor finished are in hand.
type setup struct {
	rules    string // ParseRules spec, "" for standard
	seat     int    // seat to move
	pool     []env.Throw
	throwing bool // the seat must throw (again) although the pool is not empty
	fin      [env.MaxPlayers]int
	place    [env.MaxPlayers]int
	stacks   []env.Stack
}

func (u setup) position(t testing.TB) env.Position {
	t.Helper()
	r := envtest.Rules(t, u.rules)
	p := env.Position{Rules: r, ToMove: u.seat, Phase: env.PhaseThrow, Finished: u.fin, Place: u.place, Stacks: u.stacks}
	for _, th := range u.pool {
		p.Pool[th]++
	}
	if len(u.pool) > 0 && !u.throwing {
		p.Phase = env.PhaseMove
	}
	for seat := 0; seat < r.Players; seat++ {
		p.Hand[seat] = r.Pieces - u.fin[seat]
	}
	for _, st := range u.stacks {
		p.Hand[st.Seat] -= st.Height
	}
	return p
}

func (u setup) state(t testing.TB) env.State {
	t.Helper()
	s, err := env.FromPosition(u.position(t), 1)
	require.NoError(t, err, "building the test position")
	return s
}

// moveCase applies one action to a position and checks everything after it.
type moveCase struct {
	name   string
	setup  setup
	act    env.Action
	after  []env.Stack          // every stack on the board after the move, by station
	event  func(*env.Event)     // changes to the default event (see defaultEvent)
	phase  env.Phase            // phase after the move
	toMove int                  // seat to move after the move
	check  func(*env.State)     // more checks, or nil
	legal  []env.Action         // if not nil, the legal actions before the move
	hands  *[env.MaxPlayers]int // if not nil, every seat's hand after the move
}

// defaultEvent is what an action reports unless the case says otherwise: a
// plain move by the seat to move, nothing captured, joined or finished, no
// bonus, the turn not ended.
func defaultEvent(s *env.State, a env.Action, toMove int) env.Event {
	ev := env.Event{Kind: env.EventMove, Seat: int8(s.ToMove()), Throw: a.Throw(), Action: a,
		CapturedSeat: -1, NextSeat: int8(toMove), Winner: -1, Moved: 1}
	if a.IsEnter() {
		ev.Entered, ev.From = true, env.Home
		return ev
	}
	_, h, r, ok := s.StackAt(a.Station())
	if ok {
		ev.From, ev.FromRoute, ev.Moved = a.Station(), r, uint8(h)
	}
	return ev
}

func runMoveCases(t *testing.T, cases []moveCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup.state(t)
			if tc.legal != nil {
				assert.Equal(t, tc.legal, s.LegalActions(nil), "legal actions before the move")
			}
			want := defaultEvent(&s, tc.act, tc.toMove)
			if tc.event != nil {
				tc.event(&want)
			}
			ev, err := s.Apply(tc.act)
			require.NoError(t, err, "apply %v", tc.act)
			assert.Equal(t, want, ev, "event")
			assert.Equal(t, tc.after, s.Position().Stacks, "stacks after the move")
			assert.Equal(t, tc.phase, s.Phase(), "phase after the move")
			assert.Equal(t, tc.toMove, s.ToMove(), "seat to move after the move")
			if tc.hands != nil {
				assert.Equal(t, *tc.hands, s.Position().Hand, "hands after the move")
			}
			assertConserved(t, &s)
			if tc.check != nil {
				tc.check(&s)
			}
		})
	}
}

// assertConserved checks hand + board + finished = pieces for every seat.
func assertConserved(t *testing.T, s *env.State) {
	t.Helper()
	r := s.Rules()
	board := make([]int, r.Players)
	for st := env.Station(0); st < env.NumStations; st++ {
		if seat, h, _, ok := s.StackAt(st); ok {
			board[seat] += h
		}
	}
	for seat := 0; seat < r.Players; seat++ {
		assert.Equal(t, r.Pieces, s.Hand(seat)+board[seat]+s.Finished(seat), "pieces of seat %d", seat)
	}
}

// to sets where the move stopped and the height there.
func to(st env.Station, r env.Route, height int) func(*env.Event) {
	return func(e *env.Event) { e.To, e.ToRoute, e.Height = st, r, uint8(height) }
}

// with combines event changes.
func with(fs ...func(*env.Event)) func(*env.Event) {
	return func(e *env.Event) {
		for _, f := range fs {
			f(e)
		}
	}
}

func shortcut(e *env.Event) { e.Shortcut = true }
func joined(e *env.Event)   { e.Joined = true }
func bonus(e *env.Event)    { e.BonusThrow = true }

func turnEnded(next int, discarded int) func(*env.Event) {
	return func(e *env.Event) { e.TurnEnded, e.NextSeat, e.Discarded = true, int8(next), uint8(discarded) }
}

func captured(seat, n int) func(*env.Event) {
	return func(e *env.Event) { e.Captured, e.CapturedSeat = uint8(n), int8(seat) }
}

func finished(n int) func(*env.Event) {
	return func(e *env.Event) { e.Finished, e.To, e.ToRoute, e.Height = uint8(n), env.Home, 0, 0 }
}

// one is a position where seat 0 moves with the given pool and stacks, and
// an extra do waits in the pool so that the turn goes on after the move.
func one(pool []env.Throw, stacks ...env.Stack) setup {
	return setup{pool: append(pool, do), stacks: stacks}
}

func TestRuleEntering(t *testing.T) {
	runMoveCases(t, []moveCase{
		{name: "do enters onto 1", setup: one([]env.Throw{do}), act: act(do, 29),
			after: []env.Stack{stack(0, 1, outer, 1)}, event: to(1, outer, 1), phase: env.PhaseMove},
		{name: "gae enters onto 2", setup: one([]env.Throw{gae}), act: act(gae, 29),
			after: []env.Stack{stack(0, 2, outer, 1)}, event: to(2, outer, 1), phase: env.PhaseMove},
		{name: "geol enters onto 3", setup: one([]env.Throw{geol}), act: act(geol, 29),
			after: []env.Stack{stack(0, 3, outer, 1)}, event: to(3, outer, 1), phase: env.PhaseMove},
		{name: "yut enters onto 4", setup: one([]env.Throw{yut}), act: act(yut, 29),
			after: []env.Stack{stack(0, 4, outer, 1)}, event: to(4, outer, 1), phase: env.PhaseMove},
		{name: "mo enters onto C1 and takes the shortcut", setup: one([]env.Throw{mo}), act: act(mo, 29),
			after: []env.Stack{stack(0, 5, c1, 1)}, event: with(to(5, c1, 1), shortcut), phase: env.PhaseMove},
		{name: "entering onto own stack joins it", setup: one([]env.Throw{gae}, stack(0, 2, outer, 2)), act: act(gae, 29),
			after: []env.Stack{stack(0, 2, outer, 3)}, event: with(to(2, outer, 3), joined), phase: env.PhaseMove},
		{name: "mo entering onto own stack backed onto C1 gives the stack route C1",
			setup: one([]env.Throw{mo}, stack(0, 5, outer, 1)), act: act(mo, 29),
			after: []env.Stack{stack(0, 5, c1, 2)}, event: with(to(5, c1, 2), joined, shortcut), phase: env.PhaseMove},
		{name: "entering onto an opponent captures it", setup: setup{pool: []env.Throw{geol}, stacks: []env.Stack{stack(1, 3, outer, 2)}},
			act: act(geol, 29), after: []env.Stack{stack(0, 3, outer, 1)},
			event: with(to(3, outer, 1), captured(1, 2), bonus), phase: env.PhaseThrow, hands: &[4]int{3, 4}},
		{name: "no enter action with an empty hand",
			setup: setup{pool: []env.Throw{gae, do}, fin: [4]int{2}, stacks: []env.Stack{stack(0, 3, outer, 2)}}, legal: []env.Action{act(do, 3), act(gae, 3)},
			act: act(gae, 3), after: []env.Stack{stack(0, 5, c1, 2)}, event: with(to(5, c1, 2), shortcut), phase: env.PhaseMove},
		{name: "pieces in hand are one enter action per result",
			setup: setup{pool: []env.Throw{gae, gae, yut}}, legal: []env.Action{act(gae, 29), act(yut, 29)},
			act: act(gae, 29), after: []env.Stack{stack(0, 2, outer, 1)}, event: to(2, outer, 1), phase: env.PhaseMove},
	})
	t.Run("back-do cannot enter a piece", func(t *testing.T) {
		s := setup{pool: []env.Throw{backDo, gae}, stacks: []env.Stack{stack(0, 7, outer, 1)}}.state(t)
		assert.Equal(t, []env.Action{act(backDo, 7), act(gae, 7), act(gae, 29)}, s.LegalActions(nil))
		before := s
		_, err := s.Apply(act(backDo, 29))
		require.ErrorIs(t, err, env.ErrIllegalAction)
		assert.Equal(t, before, s)
	})
}

func TestRuleShortcuts(t *testing.T) {
	runMoveCases(t, []moveCase{
		{name: "stopping on C1 from OUTER takes route C1", setup: one([]env.Throw{gae}, stack(0, 3, outer, 1)), act: act(gae, 3),
			after: []env.Stack{stack(0, 5, c1, 1)}, event: with(to(5, c1, 1), shortcut), phase: env.PhaseMove},
		{name: "stopping on C2 from OUTER takes route C2", setup: one([]env.Throw{gae}, stack(0, 8, outer, 1)), act: act(gae, 8),
			after: []env.Stack{stack(0, 10, c2, 1)}, event: with(to(10, c2, 1), shortcut), phase: env.PhaseMove},
		{name: "stopping on the centre from C1 takes CENTRE and remembers C1", setup: one([]env.Throw{gae}, stack(0, 20, c1, 1)), act: act(gae, 20),
			after: []env.Stack{stack(0, 22, cc1, 1)}, event: with(to(22, cc1, 1), shortcut), phase: env.PhaseMove},
		{name: "stopping on the centre from C2 takes CENTRE and remembers C2", setup: one([]env.Throw{gae}, stack(0, 25, c2, 1)), act: act(gae, 25),
			after: []env.Stack{stack(0, 22, cc2, 1)}, event: with(to(22, cc2, 1), shortcut), phase: env.PhaseMove},
		{name: "geol from C1 stops on the centre and takes CENTRE", setup: one([]env.Throw{geol}, stack(0, 5, c1, 1)), act: act(geol, 5),
			after: []env.Stack{stack(0, 22, cc1, 1)}, event: with(to(22, cc1, 1), shortcut), phase: env.PhaseMove},
		{name: "passing C1 changes nothing", setup: one([]env.Throw{geol}, stack(0, 3, outer, 1)), act: act(geol, 3),
			after: []env.Stack{stack(0, 6, outer, 1)}, event: to(6, outer, 1), phase: env.PhaseMove},
		{name: "passing C2 changes nothing", setup: one([]env.Throw{mo}, stack(0, 8, outer, 1)), act: act(mo, 8),
			after: []env.Stack{stack(0, 13, outer, 1)}, event: to(13, outer, 1), phase: env.PhaseMove},
		{name: "a C1 stack passing the centre goes on to 23", setup: one([]env.Throw{gae}, stack(0, 21, c1, 1)), act: act(gae, 21),
			after: []env.Stack{stack(0, 23, c1, 1)}, event: to(23, c1, 1), phase: env.PhaseMove},
		{name: "a C1 stack passing the centre goes on to 24", setup: one([]env.Throw{geol}, stack(0, 21, c1, 1)), act: act(geol, 21),
			after: []env.Stack{stack(0, 24, c1, 1)}, event: to(24, c1, 1), phase: env.PhaseMove},
		{name: "a C1 stack passing the centre goes on to C3", setup: one([]env.Throw{yut}, stack(0, 21, c1, 1)), act: act(yut, 21),
			after: []env.Stack{stack(0, 15, c1, 1)}, event: to(15, c1, 1), phase: env.PhaseMove},
		{name: "a C1 stack goes on from C3 along the outer ring", setup: one([]env.Throw{mo}, stack(0, 23, c1, 1)), act: act(mo, 23),
			after: []env.Stack{stack(0, 18, c1, 1)}, event: to(18, c1, 1), phase: env.PhaseMove},
		{name: "a C2 stack passing the centre goes on to 27", setup: one([]env.Throw{gae}, stack(0, 26, c2, 1)), act: act(gae, 26),
			after: []env.Stack{stack(0, 27, c2, 1)}, event: to(27, c2, 1), phase: env.PhaseMove},
		{name: "a C2 stack passing the centre goes on to 28", setup: one([]env.Throw{yut}, stack(0, 25, c2, 1)), act: act(yut, 25),
			after: []env.Stack{stack(0, 28, c2, 1)}, event: to(28, c2, 1), phase: env.PhaseMove},
		{name: "the centre route goes 27, 28, HOME", setup: one([]env.Throw{gae}, stack(0, 22, cc1, 1)), act: act(gae, 22),
			after: []env.Stack{stack(0, 28, cc1, 1)}, event: to(28, cc1, 1), phase: env.PhaseMove},
		{name: "C3 has no shortcut", setup: one([]env.Throw{gae}, stack(0, 13, outer, 1)), act: act(gae, 13),
			after: []env.Stack{stack(0, 15, outer, 1)}, event: to(15, outer, 1), phase: env.PhaseMove},
		{name: "from C3 on OUTER the ring goes on", setup: one([]env.Throw{do}, stack(0, 15, outer, 1)), act: act(do, 15),
			after: []env.Stack{stack(0, 16, outer, 1)}, event: to(16, outer, 1), phase: env.PhaseMove},
		{name: "a C1 stack stopping on C3 keeps route C1", setup: one([]env.Throw{do}, stack(0, 24, c1, 1)), act: act(do, 24),
			after: []env.Stack{stack(0, 15, c1, 1)}, event: to(15, c1, 1), phase: env.PhaseMove},
		{name: "an OUTER stack that backed onto C1 goes on along OUTER", setup: one([]env.Throw{do}, stack(0, 5, outer, 1)), act: act(do, 5),
			after: []env.Stack{stack(0, 6, outer, 1)}, event: to(6, outer, 1), phase: env.PhaseMove},
		{name: "an OUTER stack that backed onto C2 goes on along OUTER", setup: one([]env.Throw{gae}, stack(0, 10, outer, 1)), act: act(gae, 10),
			after: []env.Stack{stack(0, 12, outer, 1)}, event: to(12, outer, 1), phase: env.PhaseMove},
		{name: "a C1 stack that backed onto the centre goes on to 23", setup: one([]env.Throw{do}, stack(0, 22, c1, 1)), act: act(do, 22),
			after: []env.Stack{stack(0, 23, c1, 1)}, event: to(23, c1, 1), phase: env.PhaseMove},
		{name: "a C2 stack that backed onto the centre goes on to 27", setup: one([]env.Throw{do}, stack(0, 22, c2, 1)), act: act(do, 22),
			after: []env.Stack{stack(0, 27, c2, 1)}, event: to(27, c2, 1), phase: env.PhaseMove},
		{name: "a C1 stack on C1 moves down the diagonal", setup: one([]env.Throw{do}, stack(0, 5, c1, 1)), act: act(do, 5),
			after: []env.Stack{stack(0, 20, c1, 1)}, event: to(20, c1, 1), phase: env.PhaseMove},
	})
}

func TestRuleFinishing(t *testing.T) {
	runMoveCases(t, []moveCase{
		{name: "a move beyond HOME finishes the stack and extra steps are lost", setup: one([]env.Throw{mo}, stack(0, 18, outer, 2)), act: act(mo, 18),
			after: nil, event: finished(2), phase: env.PhaseMove,
			check: func(s *env.State) { assert.Equal(t, 2, s.Finished(0)) }},
		{name: "one step beyond HOME finishes", setup: one([]env.Throw{gae}, stack(0, 19, outer, 1)), act: act(gae, 19),
			after: nil, event: finished(1), phase: env.PhaseMove},
		{name: "stopping exactly on HOME waits on the board", setup: one([]env.Throw{gae}, stack(0, 18, outer, 1)), act: act(gae, 18),
			after: []env.Stack{stack(0, 0, outer, 1)}, event: to(0, outer, 1), phase: env.PhaseMove,
			check: func(s *env.State) { assert.Equal(t, 0, s.Finished(0)) }},
		{name: "stopping on HOME along C1 waits", setup: one([]env.Throw{geol}, stack(0, 17, c1, 1)), act: act(geol, 17),
			after: []env.Stack{stack(0, 0, c1, 1)}, event: to(0, c1, 1), phase: env.PhaseMove},
		{name: "stopping on HOME along C2 waits", setup: one([]env.Throw{do}, stack(0, 28, c2, 1)), act: act(do, 28),
			after: []env.Stack{stack(0, 0, c2, 1)}, event: to(0, c2, 1), phase: env.PhaseMove},
		{name: "stopping on HOME along the centre waits", setup: one([]env.Throw{geol}, stack(0, 22, cc2, 1)), act: act(geol, 22),
			after: []env.Stack{stack(0, 0, cc2, 1)}, event: to(0, cc2, 1), phase: env.PhaseMove},
		{name: "a stack waiting on HOME can be captured there",
			setup: setup{pool: []env.Throw{geol}, stacks: []env.Stack{stack(0, 17, outer, 1), stack(1, 0, c2, 2)}}, act: act(geol, 17),
			after: []env.Stack{stack(0, 0, outer, 1)}, event: with(to(0, outer, 1), captured(1, 2), bonus), phase: env.PhaseThrow,
			hands: &[4]int{3, 4}},
		{name: "any later forward move from HOME finishes (do)", setup: one([]env.Throw{do}, stack(0, 0, outer, 3)), act: act(do, 0),
			after: nil, event: finished(3), phase: env.PhaseMove},
		{name: "any later forward move from HOME finishes (mo, centre route)", setup: one([]env.Throw{mo}, stack(0, 0, cc1, 1)), act: act(mo, 0),
			after: nil, event: finished(1), phase: env.PhaseMove},
		{name: "a stack that backed onto HOME finishes with do", setup: one([]env.Throw{do}, stack(0, 0, outer, 1), stack(0, 3, outer, 1)), act: act(do, 0),
			after: []env.Stack{stack(0, 3, outer, 1)}, event: finished(1), phase: env.PhaseMove},
	})
}

func TestRuleBackDo(t *testing.T) {
	runMoveCases(t, []moveCase{
		{name: "from 1 to HOME", setup: one([]env.Throw{backDo}, stack(0, 1, outer, 1)), act: act(backDo, 1),
			after: []env.Stack{stack(0, 0, outer, 1)}, event: to(0, outer, 1), phase: env.PhaseMove},
		{name: "from HOME to 19 on OUTER", setup: one([]env.Throw{backDo}, stack(0, 0, outer, 1)), act: act(backDo, 0),
			after: []env.Stack{stack(0, 19, outer, 1)}, event: to(19, outer, 1), phase: env.PhaseMove},
		{name: "from HOME to 19 on C1", setup: one([]env.Throw{backDo}, stack(0, 0, c1, 2)), act: act(backDo, 0),
			after: []env.Stack{stack(0, 19, c1, 2)}, event: to(19, c1, 2), phase: env.PhaseMove},
		{name: "from HOME to 28 on C2", setup: one([]env.Throw{backDo}, stack(0, 0, c2, 1)), act: act(backDo, 0),
			after: []env.Stack{stack(0, 28, c2, 1)}, event: to(28, c2, 1), phase: env.PhaseMove},
		{name: "from HOME to 28 on CENTRE/C1", setup: one([]env.Throw{backDo}, stack(0, 0, cc1, 1)), act: act(backDo, 0),
			after: []env.Stack{stack(0, 28, cc1, 1)}, event: to(28, cc1, 1), phase: env.PhaseMove},
		{name: "from HOME to 28 on CENTRE/C2", setup: one([]env.Throw{backDo}, stack(0, 0, cc2, 1)), act: act(backDo, 0),
			after: []env.Stack{stack(0, 28, cc2, 1)}, event: to(28, cc2, 1), phase: env.PhaseMove},
		{name: "from C1 to 4 back on OUTER", setup: one([]env.Throw{backDo}, stack(0, 5, c1, 1)), act: act(backDo, 5),
			after: []env.Stack{stack(0, 4, outer, 1)}, event: to(4, outer, 1), phase: env.PhaseMove},
		{name: "from C2 to 9 back on OUTER", setup: one([]env.Throw{backDo}, stack(0, 10, c2, 1)), act: act(backDo, 10),
			after: []env.Stack{stack(0, 9, outer, 1)}, event: to(9, outer, 1), phase: env.PhaseMove},
		{name: "from the centre to 21 when it came from C1", setup: one([]env.Throw{backDo}, stack(0, 22, cc1, 1)), act: act(backDo, 22),
			after: []env.Stack{stack(0, 21, c1, 1)}, event: to(21, c1, 1), phase: env.PhaseMove},
		{name: "from the centre to 26 when it came from C2", setup: one([]env.Throw{backDo}, stack(0, 22, cc2, 1)), act: act(backDo, 22),
			after: []env.Stack{stack(0, 26, c2, 1)}, event: to(26, c2, 1), phase: env.PhaseMove},
		{name: "otherwise one back on OUTER", setup: one([]env.Throw{backDo}, stack(0, 7, outer, 1)), act: act(backDo, 7),
			after: []env.Stack{stack(0, 6, outer, 1)}, event: to(6, outer, 1), phase: env.PhaseMove},
		{name: "otherwise one back on C1 (16 to C3)", setup: one([]env.Throw{backDo}, stack(0, 16, c1, 1)), act: act(backDo, 16),
			after: []env.Stack{stack(0, 15, c1, 1)}, event: to(15, c1, 1), phase: env.PhaseMove},
		{name: "otherwise one back on C1 (C3 to 24)", setup: one([]env.Throw{backDo}, stack(0, 15, c1, 1)), act: act(backDo, 15),
			after: []env.Stack{stack(0, 24, c1, 1)}, event: to(24, c1, 1), phase: env.PhaseMove},
		{name: "otherwise one back on OUTER (C3 to 14)", setup: one([]env.Throw{backDo}, stack(0, 15, outer, 1)), act: act(backDo, 15),
			after: []env.Stack{stack(0, 14, outer, 1)}, event: to(14, outer, 1), phase: env.PhaseMove},
		{name: "otherwise one back on C2 (27 to the centre)", setup: one([]env.Throw{backDo}, stack(0, 27, c2, 1)), act: act(backDo, 27),
			after: []env.Stack{stack(0, 22, c2, 1)}, event: to(22, c2, 1), phase: env.PhaseMove},
		{name: "otherwise one back on CENTRE (27 to the centre)", setup: one([]env.Throw{backDo}, stack(0, 27, cc1, 1)), act: act(backDo, 27),
			after: []env.Stack{stack(0, 22, cc1, 1)}, event: to(22, cc1, 1), phase: env.PhaseMove},
		{name: "otherwise one back on CENTRE (28 to 27)", setup: one([]env.Throw{backDo}, stack(0, 28, cc2, 1)), act: act(backDo, 28),
			after: []env.Stack{stack(0, 27, cc2, 1)}, event: to(27, cc2, 1), phase: env.PhaseMove},
		{name: "backing onto C1 does not switch route", setup: one([]env.Throw{backDo}, stack(0, 6, outer, 1)), act: act(backDo, 6),
			after: []env.Stack{stack(0, 5, outer, 1)}, event: to(5, outer, 1), phase: env.PhaseMove},
		{name: "backing onto C2 does not switch route", setup: one([]env.Throw{backDo}, stack(0, 11, outer, 1)), act: act(backDo, 11),
			after: []env.Stack{stack(0, 10, outer, 1)}, event: to(10, outer, 1), phase: env.PhaseMove},
		{name: "backing onto the centre along C1 does not switch route", setup: one([]env.Throw{backDo}, stack(0, 23, c1, 1)), act: act(backDo, 23),
			after: []env.Stack{stack(0, 22, c1, 1)}, event: to(22, c1, 1), phase: env.PhaseMove},
		{name: "backing down C1 onto C1 keeps route C1", setup: one([]env.Throw{backDo}, stack(0, 20, c1, 1)), act: act(backDo, 20),
			after: []env.Stack{stack(0, 5, c1, 1)}, event: to(5, c1, 1), phase: env.PhaseMove},
		{name: "backing down C2 onto C2 keeps route C2", setup: one([]env.Throw{backDo}, stack(0, 25, c2, 1)), act: act(backDo, 25),
			after: []env.Stack{stack(0, 10, c2, 1)}, event: to(10, c2, 1), phase: env.PhaseMove},
		{name: "back-do captures", setup: setup{pool: []env.Throw{backDo}, stacks: []env.Stack{stack(0, 7, outer, 1), stack(1, 6, outer, 3)}}, act: act(backDo, 7),
			after: []env.Stack{stack(0, 6, outer, 1)}, event: with(to(6, outer, 1), captured(1, 3), bonus), phase: env.PhaseThrow,
			hands: &[4]int{3, 4}},
		{name: "back-do onto HOME captures", setup: setup{pool: []env.Throw{backDo}, stacks: []env.Stack{stack(0, 1, outer, 1), stack(1, 0, c1, 1)}}, act: act(backDo, 1),
			after: []env.Stack{stack(0, 0, outer, 1)}, event: with(to(0, outer, 1), captured(1, 1), bonus), phase: env.PhaseThrow},
		{name: "back-do joins own stack and gives it the mover's route",
			setup: one([]env.Throw{backDo}, stack(0, 22, cc2, 1), stack(0, 26, c2, 1), stack(0, 21, c1, 2)), act: act(backDo, 22),
			after: []env.Stack{stack(0, 21, c1, 2), stack(0, 26, c2, 2)}, event: with(to(26, c2, 2), joined), phase: env.PhaseMove},
	})
	t.Run("back-do with nothing on the board has no legal use", func(t *testing.T) {
		s := setup{fin: [4]int{1}}.state(t)
		ev, err := s.ApplyThrow(backDo)
		require.NoError(t, err)
		assert.Equal(t, env.Event{Kind: env.EventThrow, Seat: 0, Throw: backDo, CapturedSeat: -1, Winner: -1,
			TurnEnded: true, Discarded: 1, NextSeat: 1}, ev)
		assert.Equal(t, env.PhaseThrow, s.Phase())
		assert.Equal(t, 1, s.ToMove())
		assert.Equal(t, [env.NumThrows]uint8{}, s.Pool())
	})
	t.Run("back-do waits in the pool until a piece has entered", func(t *testing.T) {
		s := setup{pool: []env.Throw{backDo, gae}}.state(t)
		assert.Equal(t, []env.Action{act(gae, 29)}, s.LegalActions(nil))
		_, err := s.Apply(act(gae, 29))
		require.NoError(t, err)
		assert.Equal(t, []env.Action{act(backDo, 2)}, s.LegalActions(nil))
	})
}

func TestRuleStackingAndCapture(t *testing.T) {
	runMoveCases(t, []moveCase{
		{name: "stacking adopts the mover's route (C1 onto an OUTER stack)",
			setup: one([]env.Throw{gae}, stack(0, 3, outer, 1), stack(0, 5, outer, 2)), act: act(gae, 3),
			after: []env.Stack{stack(0, 5, c1, 3)}, event: with(to(5, c1, 3), joined, shortcut), phase: env.PhaseMove},
		{name: "stacking adopts the mover's route (OUTER onto a C1 stack)",
			setup: one([]env.Throw{backDo}, stack(0, 6, outer, 1), stack(0, 5, c1, 1)), act: act(backDo, 6),
			after: []env.Stack{stack(0, 5, outer, 2)}, event: with(to(5, outer, 2), joined), phase: env.PhaseMove},
		{name: "stacking adopts the mover's route (CENTRE/C2 onto a C1 stack)",
			setup: one([]env.Throw{do}, stack(0, 26, c2, 2), stack(0, 22, c1, 1)), act: act(do, 26),
			after: []env.Stack{stack(0, 22, cc2, 3)}, event: with(to(22, cc2, 3), joined, shortcut), phase: env.PhaseMove},
		{name: "stacking on HOME adopts the mover's route",
			setup: one([]env.Throw{gae}, stack(0, 26, c2, 1), stack(0, 0, outer, 1), stack(0, 28, c2, 1)), act: act(do, 28),
			after: []env.Stack{stack(0, 0, c2, 2), stack(0, 26, c2, 1)}, event: with(to(0, c2, 2), joined), phase: env.PhaseMove},
		{name: "a stack moves whole", setup: one([]env.Throw{geol}, stack(0, 7, outer, 4)), act: act(geol, 7),
			after: []env.Stack{stack(0, 10, c2, 4)}, event: with(to(10, c2, 4), shortcut), phase: env.PhaseMove},
		{name: "capture sends the whole stack to hand and earns a throw",
			setup: setup{pool: []env.Throw{gae, geol}, stacks: []env.Stack{stack(0, 6, outer, 1), stack(1, 8, outer, 3)}}, act: act(gae, 6),
			after: []env.Stack{stack(0, 8, outer, 1)}, event: with(to(8, outer, 1), captured(1, 3), bonus), phase: env.PhaseThrow,
			hands: &[4]int{3, 4}, check: func(s *env.State) {
				assert.Equal(t, [env.NumThrows]uint8{0, 0, 0, 1, 0, 0}, s.Pool(), "the rest of the pool stays")
			}},
		{name: "a stack moving onto an opponent captures it and stays whole",
			setup: setup{rules: "players=4,pieces=5", seat: 2, pool: []env.Throw{do}, stacks: []env.Stack{stack(2, 12, outer, 2), stack(3, 13, outer, 4)}},
			act:   act(do, 12), after: []env.Stack{stack(2, 13, outer, 2)}, event: with(to(13, outer, 2), captured(3, 4), bonus),
			phase: env.PhaseThrow, toMove: 2, hands: &[4]int{5, 5, 3, 5}},
		{name: "passing over pieces does nothing",
			setup: setup{pool: []env.Throw{gae, do}, stacks: []env.Stack{stack(0, 6, outer, 1), stack(1, 7, outer, 1)}}, act: act(gae, 6),
			after: []env.Stack{stack(1, 7, outer, 1), stack(0, 8, outer, 1)}, event: to(8, outer, 1), phase: env.PhaseMove},
		{name: "no capture bonus after yut",
			setup: setup{pool: []env.Throw{yut, do}, stacks: []env.Stack{stack(0, 6, outer, 1), stack(1, 10, outer, 1)}}, act: act(yut, 6),
			after: []env.Stack{stack(0, 10, c2, 1)}, event: with(to(10, c2, 1), captured(1, 1), shortcut), phase: env.PhaseMove},
		{name: "no capture bonus after mo, and the empty pool ends the turn",
			setup: setup{pool: []env.Throw{mo}, stacks: []env.Stack{stack(0, 6, outer, 1), stack(1, 11, outer, 1)}}, act: act(mo, 6),
			after: []env.Stack{stack(0, 11, outer, 1)}, event: with(to(11, outer, 1), captured(1, 1), turnEnded(1, 0)),
			phase: env.PhaseThrow, toMove: 1},
		{name: "capture bonus after yut with capture_bonus_yut_mo",
			setup: setup{rules: "capture_bonus_yut_mo=on", pool: []env.Throw{yut}, stacks: []env.Stack{stack(0, 6, outer, 1), stack(1, 10, outer, 1)}}, act: act(yut, 6),
			after: []env.Stack{stack(0, 10, c2, 1)}, event: with(to(10, c2, 1), captured(1, 1), shortcut, bonus), phase: env.PhaseThrow},
		{name: "capture bonus after mo with capture_bonus_yut_mo",
			setup: setup{rules: "capture_bonus_yut_mo=on", pool: []env.Throw{mo}, stacks: []env.Stack{stack(0, 6, outer, 1), stack(1, 11, outer, 1)}}, act: act(mo, 6),
			after: []env.Stack{stack(0, 11, outer, 1)}, event: with(to(11, outer, 1), captured(1, 1), bonus), phase: env.PhaseThrow},
	})
	t.Run("a station never holds two players", func(t *testing.T) {
		_, err := env.FromPosition(setup{stacks: []env.Stack{stack(0, 3, outer, 1)}}.position(t), 1)
		require.NoError(t, err)
		p := setup{stacks: []env.Stack{stack(0, 3, outer, 1), stack(1, 3, outer, 1)}}.position(t)
		_, err = env.FromPosition(p, 1)
		assert.ErrorIs(t, err, env.ErrCorrupt)
	})
}

func TestRuleTurn(t *testing.T) {
	t.Run("yut and mo chain throws into one pool", func(t *testing.T) {
		s := setup{}.state(t)
		for _, th := range []env.Throw{yut, mo, yut} {
			ev, err := s.ApplyThrow(th)
			require.NoError(t, err)
			assert.True(t, ev.BonusThrow, "%v earns a throw", th)
			assert.False(t, ev.TurnEnded)
			assert.Equal(t, env.PhaseThrow, s.Phase())
			assert.Equal(t, 0, s.ToMove())
		}
		ev, err := s.ApplyThrow(geol)
		require.NoError(t, err)
		assert.False(t, ev.BonusThrow)
		assert.Equal(t, env.PhaseMove, s.Phase())
		assert.Equal(t, [env.NumThrows]uint8{0, 0, 0, 1, 2, 1}, s.Pool())
		assert.Equal(t, []env.Action{act(geol, 29), act(yut, 29), act(mo, 29)}, s.LegalActions(nil))
	})
	t.Run("pooled results are chosen in any order", func(t *testing.T) {
		for _, first := range []env.Throw{gae, yut} {
			s := setup{pool: []env.Throw{yut, gae}, stacks: []env.Stack{stack(0, 11, outer, 1)}}.state(t)
			require.Equal(t, []env.Action{act(gae, 11), act(gae, 29), act(yut, 11), act(yut, 29)}, s.LegalActions(nil))
			_, err := s.Apply(act(first, 11))
			require.NoError(t, err)
			second := gae + yut - first
			assert.Equal(t, []env.Action{act(second, 11+first.Steps()), act(second, 29)}, s.LegalActions(nil))
			_, err = s.Apply(act(second, 11+first.Steps()))
			require.NoError(t, err)
			seat, h, r, ok := s.StackAt(17)
			assert.True(t, ok)
			assert.Equal(t, []int{0, 1, int(outer)}, []int{seat, h, int(r)})
		}
	})
	t.Run("a result is never split", func(t *testing.T) {
		s := setup{pool: []env.Throw{geol}, stacks: []env.Stack{stack(0, 2, outer, 1), stack(0, 4, outer, 1)}}.state(t)
		assert.Equal(t, []env.Action{act(geol, 2), act(geol, 4), act(geol, 29)}, s.LegalActions(nil))
		ev, err := s.Apply(act(geol, 2))
		require.NoError(t, err)
		assert.Equal(t, env.Station(5), ev.To, "geol moves one stack three steps")
		assert.False(t, ev.Joined, "no step of a split result stopped on 4")
	})
	t.Run("unusable results are discarded and the turn passes", func(t *testing.T) {
		s := setup{pool: []env.Throw{backDo, backDo, mo}, stacks: []env.Stack{stack(0, 18, outer, 1)}}.state(t)
		ev, err := s.Apply(act(mo, 18))
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.Finished)
		assert.True(t, ev.TurnEnded)
		assert.Equal(t, uint8(2), ev.Discarded)
		assert.Equal(t, int8(1), ev.NextSeat)
		assert.Equal(t, env.PhaseThrow, s.Phase())
		assert.Equal(t, 1, s.ToMove())
		assert.Equal(t, 0, s.PoolSize())
	})
	t.Run("the next player is skipped the same way", func(t *testing.T) {
		s := setup{rules: "players=3", seat: 0, pool: []env.Throw{gae}, stacks: []env.Stack{stack(0, 1, outer, 1)}}.state(t)
		ev, err := s.Apply(act(gae, 1))
		require.NoError(t, err)
		require.True(t, ev.TurnEnded)
		require.Equal(t, 1, s.ToMove())
		ev, err = s.ApplyThrow(backDo) // seat 1 has nothing on the board
		require.NoError(t, err)
		assert.True(t, ev.TurnEnded)
		assert.Equal(t, uint8(1), ev.Discarded)
		assert.Equal(t, int8(2), ev.NextSeat)
		assert.Equal(t, 2, s.ToMove())
		assert.Equal(t, env.PhaseThrow, s.Phase())
	})
	t.Run("turn order is by seat with 3 and 4 players", func(t *testing.T) {
		for _, n := range []int{3, 4} {
			for seat := 0; seat < n; seat++ {
				s := setup{rules: fmt.Sprintf("players=%d", n), seat: seat, pool: []env.Throw{do}}.state(t)
				ev, err := s.Apply(act(do, 29))
				require.NoError(t, err)
				assert.Equal(t, (seat+1)%n, s.ToMove(), "%d players, after seat %d", n, seat)
				assert.Equal(t, int8((seat+1)%n), ev.NextSeat)
			}
		}
	})
	t.Run("the first finisher wins and the game ends", func(t *testing.T) {
		s := setup{rules: "players=4", seat: 2, pool: []env.Throw{mo, gae}, fin: [4]int{0, 2, 3, 0},
			stacks: []env.Stack{stack(2, 19, c1, 1), stack(1, 3, outer, 2)}}.state(t)
		ev, err := s.Apply(act(gae, 19))
		require.NoError(t, err)
		want := env.Event{Kind: env.EventMove, Seat: 2, Throw: gae, Action: act(gae, 19), From: 19, FromRoute: c1,
			Moved: 1, Finished: 1, CapturedSeat: -1, Placed: true, GameOver: true, Winner: 2, NextSeat: 2, Discarded: 1}
		assert.Equal(t, want, ev)
		assert.True(t, s.IsOver())
		assert.Equal(t, 2, s.Winner())
		assert.Equal(t, []int{0, 0, 1, 0}, []int{s.Place(0), s.Place(1), s.Place(2), s.Place(3)})
		assert.Empty(t, s.LegalActions(nil))
		assert.Empty(t, s.ChanceOutcomes(nil))
		_, err = s.ApplyThrow(do)
		assert.ErrorIs(t, err, env.ErrWrongPhase)
		_, err = s.Apply(act(mo, 3))
		assert.ErrorIs(t, err, env.ErrWrongPhase)
		assert.Equal(t, 1.0, s.Outcome(2))
		assert.Equal(t, -1.0, s.Outcome(1))
	})
	t.Run("rank mode plays on after the first finisher", func(t *testing.T) {
		s := setup{rules: "players=3,end=rank", seat: 1, pool: []env.Throw{mo, gae}, fin: [4]int{0, 3, 0},
			stacks: []env.Stack{stack(1, 19, outer, 1)}}.state(t)
		ev, err := s.Apply(act(gae, 19))
		require.NoError(t, err)
		assert.True(t, ev.Placed)
		assert.False(t, ev.GameOver)
		assert.True(t, ev.TurnEnded)
		assert.Equal(t, uint8(1), ev.Discarded)
		assert.Equal(t, 2, s.ToMove())
		assert.Equal(t, env.PhaseThrow, s.Phase())
		assert.Equal(t, 1, s.Winner())
		assert.Equal(t, 1, s.Place(1))
		// Seat 2 passes; seat 0 is next and seat 1 is skipped from now on.
		_, err = s.ApplyThrow(backDo)
		require.NoError(t, err)
		assert.Equal(t, 0, s.ToMove())
		_, err = s.ApplyThrow(backDo)
		require.NoError(t, err)
		assert.Equal(t, 2, s.ToMove(), "the ranked seat 1 is skipped")
	})
	t.Run("rank mode ends when one seat is left", func(t *testing.T) {
		s := setup{rules: "players=3,end=rank", seat: 2, pool: []env.Throw{do}, fin: [4]int{1, 4, 3}, place: [4]int{0, 1, 0},
			stacks: []env.Stack{stack(2, 0, outer, 1), stack(0, 4, outer, 1)}}.state(t)
		ev, err := s.Apply(act(do, 0))
		require.NoError(t, err)
		assert.True(t, ev.Placed)
		assert.True(t, ev.GameOver)
		assert.Equal(t, int8(1), ev.Winner)
		assert.True(t, s.IsOver())
		assert.Equal(t, []int{3, 1, 2}, []int{s.Place(0), s.Place(1), s.Place(2)})
		assert.Equal(t, []float64{-1, 1, 0}, []float64{s.Outcome(0), s.Outcome(1), s.Outcome(2)})
	})
	t.Run("rank mode with two players ends at the first finisher", func(t *testing.T) {
		s := setup{rules: "end=rank", seat: 1, pool: []env.Throw{mo}, fin: [4]int{0, 3},
			stacks: []env.Stack{stack(1, 0, outer, 1)}}.state(t)
		ev, err := s.Apply(act(mo, 0))
		require.NoError(t, err)
		assert.True(t, ev.GameOver)
		assert.Equal(t, []int{2, 1}, []int{s.Place(0), s.Place(1)})
	})
	t.Run("the start seat can be named", func(t *testing.T) {
		for n := 2; n <= 4; n++ {
			r := env.Standard()
			r.Players = n
			for seat := 0; seat < n; seat++ {
				s, err := env.New(r, 99, seat)
				require.NoError(t, err)
				assert.Equal(t, seat, s.ToMove())
				assert.Equal(t, seat, s.StartSeat())
			}
			_, err := env.New(r, 99, n)
			assert.ErrorIs(t, err, env.ErrBadInput)
		}
	})
	t.Run("the start seat is drawn from the seed uniformly", func(t *testing.T) {
		const games = 12000
		for n := 2; n <= 4; n++ {
			r := env.Standard()
			r.Players = n
			counts := make([]float64, n)
			for seed := uint64(0); seed < games; seed++ {
				s, err := env.New(r, seed, env.AnySeat)
				require.NoError(t, err)
				again, _ := env.New(r, seed, env.AnySeat)
				require.Equal(t, s.ToMove(), again.ToMove(), "same seed, same start")
				counts[s.ToMove()]++
			}
			chi2 := 0.0
			for _, c := range counts {
				e := float64(games) / float64(n)
				chi2 += (c - e) * (c - e) / e
			}
			// 0.1% critical values for 1..3 degrees of freedom: fixed seeds, so this cannot flake.
			crit := []float64{10.83, 13.82, 16.27}[n-2]
			assert.Less(t, chi2, crit, "%d players: start seats %v", n, counts)
		}
	})
}

func TestRuleIllegalActions(t *testing.T) {
	positions := map[string]setup{
		"start of a turn": {pool: []env.Throw{gae}},
		"stacks and pool": {pool: []env.Throw{backDo, do, mo}, stacks: []env.Stack{stack(0, 0, c2, 1), stack(0, 22, cc1, 2), stack(1, 3, outer, 1)}},
		"4 players":       {rules: "players=4", seat: 3, pool: []env.Throw{yut, yut}, stacks: []env.Stack{stack(3, 9, outer, 1), stack(2, 10, c2, 1)}},
		"back_do_enters":  {rules: "back_do_enters=on", pool: []env.Throw{backDo, gae}},
	}
	for name, u := range positions {
		t.Run(name, func(t *testing.T) {
			s := u.state(t)
			legal := map[env.Action]bool{}
			for _, a := range s.LegalActions(nil) {
				legal[a] = true
			}
			require.NotEmpty(t, legal)
			for id := 0; id < 256; id++ {
				a := env.Action(id)
				if legal[a] {
					continue
				}
				before := s
				ev, err := s.Apply(a)
				require.Error(t, err, "action %v", a)
				assert.ErrorIs(t, err, env.ErrIllegalAction, "action %v", a)
				assert.Equal(t, env.Event{}, ev)
				assert.Equal(t, before, s, "the state is unchanged after %v", a)
				assert.False(t, s.IsLegal(a))
			}
			before := s
			_, err := s.ApplyThrow(do)
			assert.ErrorIs(t, err, env.ErrWrongPhase)
			_, err = s.SampleThrow()
			assert.ErrorIs(t, err, env.ErrWrongPhase)
			assert.Equal(t, before, s)
		})
	}
	t.Run("an action at a chance node", func(t *testing.T) {
		s := setup{}.state(t)
		before := s
		_, err := s.Apply(act(do, 29))
		assert.ErrorIs(t, err, env.ErrWrongPhase)
		assert.Equal(t, before, s)
	})
	t.Run("an impossible throw", func(t *testing.T) {
		s := setup{rules: "back_do=off"}.state(t)
		before := s
		_, err := s.ApplyThrow(backDo)
		assert.ErrorIs(t, err, env.ErrBadInput)
		_, err = s.ApplyThrow(env.Throw(6))
		assert.ErrorIs(t, err, env.ErrBadInput)
		assert.Equal(t, before, s)
	})
}

func TestRuleVariants(t *testing.T) {
	runMoveCases(t, []moveCase{
		{name: "finish=stop: stopping on HOME finishes", setup: setup{rules: "finish=stop", pool: []env.Throw{gae, do}, stacks: []env.Stack{stack(0, 18, outer, 2)}},
			act: act(gae, 18), after: nil, event: finished(2), phase: env.PhaseMove},
		{name: "finish=stop: reaching HOME along the centre finishes", setup: setup{rules: "finish=stop", pool: []env.Throw{geol, do}, stacks: []env.Stack{stack(0, 22, cc1, 1)}},
			act: act(geol, 22), after: nil, event: finished(1), phase: env.PhaseMove},
		{name: "finish=stop: one short of HOME stays", setup: setup{rules: "finish=stop", pool: []env.Throw{do, do}, stacks: []env.Stack{stack(0, 18, outer, 1)}},
			act: act(do, 18), after: []env.Stack{stack(0, 19, outer, 1)}, event: to(19, outer, 1), phase: env.PhaseMove},
		{name: "finish=stop: back-do from 1 waits on HOME", setup: setup{rules: "finish=stop", pool: []env.Throw{backDo, do}, stacks: []env.Stack{stack(0, 1, outer, 1)}},
			act: act(backDo, 1), after: []env.Stack{stack(0, 0, outer, 1)}, event: to(0, outer, 1), phase: env.PhaseMove},
		{name: "back_do_enters: back-do with nothing on the board enters onto HOME",
			setup: setup{rules: "back_do_enters=on", pool: []env.Throw{backDo, do}}, legal: []env.Action{act(backDo, 29), act(do, 29)},
			act: act(backDo, 29), after: []env.Stack{stack(0, 0, outer, 1)}, event: to(0, outer, 1), phase: env.PhaseMove},
		{name: "back_do_enters: entering onto HOME captures",
			setup: setup{rules: "back_do_enters=on", pool: []env.Throw{backDo}, stacks: []env.Stack{stack(1, 0, c2, 2)}},
			act:   act(backDo, 29), after: []env.Stack{stack(0, 0, outer, 1)}, event: with(to(0, outer, 1), captured(1, 2), bonus), phase: env.PhaseThrow},
		{name: "back_do_enters: not while a stack is on the board",
			setup: setup{rules: "back_do_enters=on", pool: []env.Throw{backDo, do}, stacks: []env.Stack{stack(0, 4, outer, 1)}},
			legal: []env.Action{act(backDo, 4), act(do, 4), act(do, 29)},
			act:   act(backDo, 4), after: []env.Stack{stack(0, 3, outer, 1)}, event: to(3, outer, 1), phase: env.PhaseMove},
		{name: "pieces=1: finishing the only piece wins",
			setup: setup{rules: "pieces=1", seat: 1, pool: []env.Throw{do}, stacks: []env.Stack{stack(1, 0, outer, 1)}},
			act:   act(do, 0), after: nil, phase: env.PhaseOver, toMove: 1,
			event: with(finished(1), func(e *env.Event) { e.Placed, e.GameOver, e.Winner = true, true, 1 })},
		{name: "pieces=5: stacks of five move whole",
			setup: setup{rules: "pieces=5", pool: []env.Throw{do, do}, stacks: []env.Stack{stack(0, 4, outer, 5)}},
			act:   act(do, 4), after: []env.Stack{stack(0, 5, c1, 5)}, event: with(to(5, c1, 5), shortcut), phase: env.PhaseMove},
	})
	t.Run("back_do=off: never thrown, the marked stick counts as do", func(t *testing.T) {
		s := setup{rules: "back_do=off"}.state(t)
		got := s.ChanceOutcomes(nil)
		require.Len(t, got, 5)
		assert.Equal(t, do, got[0].Throw)
		assert.InDelta(t, 4*0.6*0.4*0.4*0.4, got[0].Prob, 1e-15)
		_, err := env.FromPosition(setup{rules: "back_do=off", pool: []env.Throw{backDo, do}}.position(t), 1)
		assert.ErrorIs(t, err, env.ErrCorrupt)
	})
	t.Run("flat_prob sets the chance outcomes", func(t *testing.T) {
		s := setup{rules: "flat_prob=0.5"}.state(t)
		var probs []float64
		for _, o := range s.ChanceOutcomes(nil) {
			probs = append(probs, o.Prob)
		}
		assert.InDeltaSlice(t, []float64{1.0 / 16, 3.0 / 16, 6.0 / 16, 4.0 / 16, 1.0 / 16, 1.0 / 16}, probs, 1e-15)
	})
	t.Run("rules are validated", func(t *testing.T) {
		for _, spec := range []string{"players=1", "players=5", "pieces=0", "pieces=6", "flat_prob=0.49", "flat_prob=0.66",
			"flat_prob=NaN", "shortcut=choice", "finish=sometimes", "end=never", "back_do=off,back_do_enters=on",
			"colour=red", "players",
			"board=square", "spaces=15", "board=line,spaces=0", "board=line,spaces=30", "board=line,back_do_enters=on",
			"pool=maybe", "capture_bonus=off,capture_bonus_yut_mo=on", "pool=off,capture_bonus_yut_mo=on",
			"obstacles=0:skip", "obstacles=29:skip", "obstacles=4", "obstacles=4:back0", "obstacles=4:back29", "obstacles=4:skip+4:back1",
			"board=line,obstacles=14:skip", "kata,obstacles=14:back2", "players=2,players=3"} {
			_, err := env.ParseRules(spec)
			assert.ErrorIs(t, err, env.ErrInvalidRules, spec)
		}
		for _, spec := range []string{"players=2,players=3", "kata,pool=on,pool=off", "p=0.5,flat_prob=0.6", "backdo=off,back_do=on"} {
			_, err := env.ParseRules(spec)
			require.ErrorIs(t, err, env.ErrInvalidRules, spec)
			assert.Regexp(t, `rules key "(players|pool|flat_prob|back_do)" given more than once`, err.Error(), spec)
		}
		r, err := env.ParseRules(" players=3, pieces=5 ,flat_prob=0.5,back_do=off,capture_bonus_yut_mo=on,finish=stop,end=rank")
		require.NoError(t, err)
		assert.Equal(t, env.Rules{Players: 3, Pieces: 5, FlatProb: 0.5, CaptureBonusYutMo: true, Finish: env.FinishStop, End: env.EndRank}, r)
		back, err := env.ParseRules(r.String())
		require.NoError(t, err)
		assert.Equal(t, r, back)
		assert.Equal(t, "standard", env.Standard().String())
		_, err = env.New(env.Rules{}, 1, 0)
		assert.True(t, errors.Is(err, env.ErrInvalidRules))
	})
}

// TestValidateAllocatesNothing: New validates its rules for every game (a
// playout, a reset), so Validate and New allocate nothing under every
// variant. (Formatting every option's value to range-check it once cost one
// allocation a game, 6% of random playouts.)
func TestValidateAllocatesNothing(t *testing.T) {
	for _, v := range env.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			r := v.Rules
			require.NoError(t, r.Validate())
			assert.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Validate() }), "Validate")
			assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = env.New(r, 7, env.AnySeat) }), "New")
		})
	}
}
