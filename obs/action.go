package obs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/yutenv/yutenv/env"
)

// ErrBadAction is wrapped by every error about an action id or its parts.
var ErrBadAction = errors.New("bad action")

// ActionCount returns the size of the action space: 180 (6 throws x 30 sources).
func ActionCount() int { return env.NumActions }

// ActionNames returns the name of every action id, in id order: "back-do@0",
// ..., "gae@7", ..., "mo@enter".
func ActionNames() []string { return append([]string(nil), actionNames...) }

// EncodeAction returns the action that uses throw t on the stack at station
// source (0..28), or enters a piece when source is env.EnterSource (29).
// An out-of-range throw or source gives an error wrapping ErrBadAction.
func EncodeAction(t env.Throw, source int) (env.Action, error) {
	if t >= env.NumThrows {
		return 0, fmt.Errorf("%w: throw id %d out of range 0..%d", ErrBadAction, uint8(t), env.NumThrows-1)
	}
	if source < 0 || source >= env.NumSources {
		return 0, fmt.Errorf("%w: source %d out of range 0..%d (29 = enter)", ErrBadAction, source, env.NumSources-1)
	}
	return env.Action(int(t)*env.NumSources + source), nil
}

// DecodeAction splits an action into its throw and its source: a station
// 0..28, or env.EnterSource (29) to enter a piece. For an id outside the
// action space (check a.Valid()) the throw is not a valid throw.
func DecodeAction(a env.Action) (t env.Throw, source int) { return a.Throw(), a.Source() }

// Describe says in words what action a would do for the seat to move in s:
// "gae: stack at 7 -> 9", "mo: enter -> 5, takes the C1 shortcut",
// "do: stack of 2 at HOME -> finishes", "geol: stack at 3 -> 6, captures 2 of
// seat 1". An action that is not legal now is described as far as possible
// and marked "(illegal: reason)". Describe never panics, whatever a is.
func Describe(s *env.State, a env.Action) string { return describe(s, a, seatNumber) }

// DescribeNamed is Describe with every seat named by name(seat) where
// Describe writes "seat N": "geol: stack at 3 -> 6, captures 2 of greedy (B)"
// for a name that gives "greedy (B)" for seat 1. The name is the object of
// "captures 2 of" and the subject of "has no stack there" (an illegal
// action). A nil name is Describe's "seat N".
func DescribeNamed(s *env.State, a env.Action, name func(seat int) string) string {
	if name == nil {
		name = seatNumber
	}
	return describe(s, a, name)
}

// seatNumber names a seat as Describe does: "seat 1".
func seatNumber(seat int) string { return "seat " + strconv.Itoa(seat) }

// describe is Describe with seats named by name.
func describe(s *env.State, a env.Action, name func(seat int) string) string {
	if !a.Valid() {
		return fmt.Sprintf("action %d (illegal: out of range 0..%d)", uint8(a), env.NumActions-1)
	}
	r := s.Rules()
	me := s.ToMove()
	t := a.Throw()
	var b strings.Builder
	b.WriteString(t.String())
	b.WriteString(": ")
	stationName := stationName
	if r.Board == env.BoardLine {
		stationName = func(st env.Station) string { return strconv.Itoa(int(st)) } // a line has no HOME
	}

	moved := 1
	from := env.RouteOuter
	var to env.Station
	var route env.Route
	var finish, ok bool
	if a.IsEnter() {
		b.WriteString("enter")
		if t == env.BackDo {
			to, route, ok = env.Home, env.RouteOuter, r.BackDoEnters
		} else {
			to, route, finish, ok = env.EntryDestination(r, t)
		}
	} else {
		st := a.Station()
		seat, h, rt, here := s.StackAt(st)
		if !here || seat != me {
			fmt.Fprintf(&b, "stack at %s (illegal: %s has no stack there)", stationName(st), name(me))
			return b.String()
		}
		moved, from = h, rt
		if h > 1 {
			fmt.Fprintf(&b, "stack of %d at %s", h, stationName(st))
		} else {
			fmt.Fprintf(&b, "stack at %s", stationName(st))
		}
		to, route, finish, ok = env.Destination(r, st, rt, t)
	}
	switch {
	case !ok:
	case finish:
		b.WriteString(" -> finishes")
		if s.Finished(me)+moved == r.Pieces {
			placed := 0
			for i := 0; i < r.Players; i++ {
				if s.Place(i) != 0 {
					placed++
				}
			}
			if placed == 0 {
				b.WriteString(", wins")
			} else {
				fmt.Fprintf(&b, ", takes place %d", placed+1)
			}
		}
	default:
		b.WriteString(" -> ")
		b.WriteString(stationName(to))
		if t != env.BackDo && route != from && route != env.RouteOuter && route != env.RouteLine {
			fmt.Fprintf(&b, ", takes the %s shortcut", shortcutName(route))
		}
		if seat, h, _, here := s.StackAt(to); here {
			if seat == me {
				fmt.Fprintf(&b, ", joins own stack (height %d)", h+moved)
			} else {
				fmt.Fprintf(&b, ", captures %d of %s", h, name(seat))
			}
		}
		switch o := r.Obstacles[to]; {
		case o == env.ObstacleSkip:
			b.WriteString(", misses the next turn (obstacle)")
		case o > 0:
			fmt.Fprintf(&b, ", pushed back up to %d (obstacle)", o)
		}
	}
	if why := illegal(s, a); why != "" {
		b.WriteString(" (illegal: ")
		b.WriteString(why)
		b.WriteString(")")
	}
	return b.String()
}

// shortcutName names the shortcut a route begins with.
func shortcutName(r env.Route) string {
	switch r {
	case env.RouteCentreC1, env.RouteCentreC2:
		return "centre"
	}
	return r.String()
}

// illegal returns why a is not legal now, or "" if it is.
func illegal(s *env.State, a env.Action) string {
	if s.IsLegal(a) {
		return ""
	}
	me := s.ToMove()
	t := a.Throw()
	r := s.Rules()
	switch {
	case s.Phase() != env.PhaseMove:
		return "the state is in phase " + s.Phase().String() + ", not move"
	case s.Pool()[t] == 0:
		return "no " + t.String() + " in the pool"
	case a.IsEnter() && s.Hand(me) == 0:
		return "no piece in hand"
	case a.IsEnter() && t == env.BackDo && !r.BackDoEnters:
		return "back-do cannot enter a piece"
	case a.IsEnter() && t == env.BackDo:
		return "back-do enters only with nothing on the board"
	case t == env.BackDo && r.Board == env.BoardLine:
		return "back-do cannot leave the first space"
	case r.Finish == env.FinishExact:
		return "it would pass the end (finish=exact)"
	}
	return "refused by the rules"
}

// Adjacency returns the directed edges of the board graph as (from, to)
// station pairs: every forward one-step move of every route, each pair once
// (from env.Edges). A graph network can use it as its edge list; add the
// reversed edges for back-do if the network needs them.
func Adjacency() [][2]int {
	edges := env.Edges()
	out := make([][2]int, len(edges))
	for i, e := range edges {
		out[i] = [2]int{int(e.From), int(e.To)}
	}
	return out
}

// AdjacencyRoutes returns, for each edge of Adjacency in the same order, the
// name of the route it was first found on ("OUTER", "C1", "C2", "CENTRE/C1").
func AdjacencyRoutes() []string {
	edges := env.Edges()
	out := make([]string, len(edges))
	for i, e := range edges {
		out[i] = e.Route.String()
	}
	return out
}

// StationNames returns the names of the 29 stations in id order: "HOME", "1", ..., "28".
func StationNames() []string { return append([]string(nil), stationNames...) }
