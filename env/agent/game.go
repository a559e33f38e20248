package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/yutenv/yutenv/env"
)

// ErrSeats is returned when a game is given the wrong number of agents.
var ErrSeats = errors.New("wrong number of agents for the seats")

// ErrNotReseeder is returned when Game.Reseed is set and an agent is not a
// Reseeder.
var ErrNotReseeder = errors.New("the agent cannot be reseeded")

// Game describes one game between agents: the rules, the game's seed (its
// throws and, with Start = env.AnySeat, its first seat) and one agent per
// seat. The same Game with freshly seeded agents plays the same game; with
// Reseed set, the same Game plays the same game whatever the agents' history.
type Game struct {
	Rules env.Rules
	Seed  uint64
	Start int
	// Seats holds the agent of each seat; one agent may sit in several seats.
	Seats []Agent
	// Reseed, if not nil, gives the seed the agent of seat is reseeded with
	// right before it acts at the state whose decision counter
	// (env.State.Decisions) is decision; every agent must then be a
	// Reseeder. yutenv's one seed scheme (vecenv.AgentSeed) sets it, so a
	// game does not depend on what the agents did before it.
	Reseed func(seat, decision int) uint64
	// Record asks Play to keep the game record (every throw and action).
	Record bool
	// OnDecision, if not nil, is called at every decision with the state
	// before the action, the action and the agent's statistics (whose
	// Policy is only valid during the call). An error stops the game.
	OnDecision func(s *env.State, a env.Action, st Stats) error
	// OnThrow, if not nil, is called at every throw with the chance node
	// before it (valid only during the call) and the throw drawn, e.g. to
	// count its luck (package luck). An error stops the game.
	OnThrow func(s *env.State, t env.Throw) error
	// OnEnd, if not nil, is called once the game is over with its final
	// state (valid only during the call). An error fails the game.
	OnEnd func(s *env.State) error
}

// Result is how a game went.
type Result struct {
	// Winner is the first seat to finish; Places the 1-based place of every
	// seat (0 for seats not ranked when the game ended).
	Winner int
	Places []int
	// Outcomes is every seat's outcome in [-1, 1] (env.State.Outcome).
	Outcomes [env.MaxPlayers]float64
	// Decisions counts all actions; SeatDecisions those of each seat.
	Decisions     int
	SeatDecisions [env.MaxPlayers]int
	// SeatTime is the time each seat's agent spent choosing its actions.
	SeatTime [env.MaxPlayers]time.Duration
	// Record is the game record, when Game.Record was set.
	Record *env.Record
}

// Play plays the game to its end. The throws come from the state's own
// generator (env.State.SampleThrow), so two games with the same rules and
// seed see the same throws for as long as their moves agree.
func (g Game) Play() (Result, error) {
	if len(g.Seats) != g.Rules.Players {
		return Result{}, fmt.Errorf("%w: %d agents for %d seats", ErrSeats, len(g.Seats), g.Rules.Players)
	}
	s, err := env.New(g.Rules, g.Seed, g.Start)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if g.Record {
		res.Record = env.NewRecord(g.Rules, g.Seed, g.Start)
		res.Record.Players = make([]string, len(g.Seats))
		for i, a := range g.Seats {
			res.Record.Players[i] = a.Name()
		}
	}
	for !s.IsOver() {
		if s.IsChance() {
			var before env.State
			if g.OnThrow != nil {
				before = s
			}
			ev, err := s.SampleThrow()
			if err != nil {
				return res, err
			}
			if g.OnThrow != nil {
				if err := g.OnThrow(&before, ev.Throw); err != nil {
					return res, err
				}
			}
			if res.Record != nil {
				res.Record.Add(ev, &s)
			}
			continue
		}
		seat := s.ToMove()
		if g.Reseed != nil {
			r, ok := g.Seats[seat].(Reseeder)
			if !ok {
				return res, fmt.Errorf("seat %d (%s): %w", seat, g.Seats[seat].Name(), ErrNotReseeder)
			}
			r.Reseed(g.Reseed(seat, s.Decisions()))
		}
		t0 := time.Now()
		a, st, err := g.Seats[seat].ActStats(&s)
		res.SeatTime[seat] += time.Since(t0)
		if err != nil {
			return res, fmt.Errorf("seat %d (%s): %w", seat, g.Seats[seat].Name(), err)
		}
		if g.OnDecision != nil {
			if err := g.OnDecision(&s, a, st); err != nil {
				return res, err
			}
		}
		ev, err := s.Apply(a)
		if err != nil {
			return res, fmt.Errorf("seat %d (%s) chose %v: %w", seat, g.Seats[seat].Name(), a, err)
		}
		res.SeatDecisions[seat]++
		if res.Record != nil {
			res.Record.Add(ev, &s)
		}
	}
	if g.OnEnd != nil {
		if err := g.OnEnd(&s); err != nil {
			return res, err
		}
	}
	res.Winner = s.Winner()
	res.Decisions = s.Decisions()
	res.Places = make([]int, g.Rules.Players)
	for i := range res.Places {
		res.Places[i] = s.Place(i)
		res.Outcomes[i] = s.Outcome(i)
	}
	return res, nil
}
