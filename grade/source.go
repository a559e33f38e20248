package grade

import (
	"errors"
	"fmt"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/vecenv"
)

// Match is a Source of games played now: the graded agent against an
// opponent, on the seeds of yutenv eval. Game g seats the graded agent in
// seat g mod Players and the opponent in every other seat, with the game
// seed vecenv.GameSeed(Seed, g/Players), the agents reseeded before every
// decision (vecenv.Game), so a Match grades the very games yutenv eval
// --a AGENT --b OPPONENT --seed SEED plays.
type Match struct {
	Rules           env.Rules
	Agent, Opponent string
	Games           int
	Seed            uint64
	// OneSeat, if set, grades the agent in seat Seat only: game i of the
	// Match is then game i*Players+Seat of the seat-balanced match (its
	// seed, its seats and its index in the report), so that Games counts
	// games in that seat.
	OneSeat bool
	Seat    int
	// NewAgent, if not nil, builds the graded policy instead of Agent's
	// spec (a policy of the caller's; Agent then only names it). It is
	// reseeded before every decision if it is an agent.Reseeder.
	NewAgent func() (agent.Agent, error)
}

// Len returns m.Games.
func (m Match) Len() int { return m.Games }

// Decisions plays game g (under OneSeat, game g*Players+Seat of the
// balanced match) and returns the graded seat's decisions. A
// choice that is not legal, by either side, fails the game with an error
// wrapping ErrIllegal.
func (m Match) Decisions(p *vecenv.Players, g int) ([]Decision, error) {
	n := m.Rules.Players
	if m.OneSeat {
		if m.Seat < 0 || m.Seat >= n {
			return nil, fmt.Errorf("seat %d: the rules %s have seats 0..%d", m.Seat, m.Rules, n-1)
		}
		g = g*n + m.Seat
	}
	seat, x := g%n, vecenv.GameSeed(m.Seed, g/n)
	var me agent.Agent
	var err error
	if m.NewAgent != nil {
		if me, err = m.NewAgent(); err == nil {
			me = reseedable{me}
		}
	} else {
		me, err = p.Get(0, m.Agent)
	}
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", m.Agent, err)
	}
	opp, err := p.Get(1, m.Opponent)
	if err != nil {
		return nil, fmt.Errorf("opponent %s: %w", m.Opponent, err)
	}
	seats := make([]agent.Agent, n)
	for i := range seats {
		seats[i] = opp
	}
	seats[seat] = me
	var out []Decision
	game := vecenv.Game(m.Rules, x, env.AnySeat, seats)
	game.OnDecision = func(s *env.State, a env.Action, _ agent.Stats) error {
		if !s.IsLegal(a) {
			who := fmt.Sprintf("opponent %s", m.Opponent)
			if s.ToMove() == seat {
				who = fmt.Sprintf("agent %s", m.Agent)
			}
			return IllegalError(g, s, who, a)
		}
		if s.ToMove() == seat {
			out = append(out, Decision{Game: g, Seed: x, State: *s, Action: a})
		}
		return nil
	}
	if _, err := game.Play(); err != nil {
		if errors.Is(err, ErrIllegal) { // its line names the game
			return nil, err
		}
		return nil, fmt.Errorf("game %d: %w", g, err)
	}
	return out, nil
}

// reseedable reseeds the agent it wraps if it can be.
type reseedable struct{ agent.Agent }

// Reseed reseeds the agent if it is a Reseeder.
func (r reseedable) Reseed(seed uint64) {
	if rs, ok := r.Agent.(agent.Reseeder); ok {
		rs.Reseed(seed)
	}
}

// Records is a Source of recorded games (env.Record, docs/FORMATS.md):
// the decisions of Seat, or of every seat when Seat is negative. Build it
// with NewRecords, which checks the records' rules.
type Records struct {
	recs []*env.Record
	seat int
}

// NewRecords returns the Source of the decisions of seat (negative: every
// seat) in recs, which must all be of rules; names[i], if given, says
// where record i came from ("games.jsonl, game 3") for the error that
// refuses a record of other rules (wrapping ErrRules and naming both).
func NewRecords(recs []*env.Record, names []string, rules env.Rules, seat int) (*Records, error) {
	if seat >= rules.Players {
		return nil, fmt.Errorf("seat %d: the rules %s have seats 0..%d", seat, rules, rules.Players-1)
	}
	want := rules.String()
	for i, r := range recs {
		if got := r.Rules.String(); got != want {
			where := fmt.Sprintf("record %d", i)
			if i < len(names) {
				where = names[i]
			}
			return nil, fmt.Errorf("%w: %s is of rules %s, not %s (give --rules %s to grade it)", ErrRules, where, got, want, got)
		}
	}
	return &Records{recs: recs, seat: seat}, nil
}

// Len returns the number of records.
func (r *Records) Len() int { return len(r.recs) }

// Decisions replays record g and returns its decisions of the graded seat.
func (r *Records) Decisions(_ *vecenv.Players, g int) ([]Decision, error) {
	rec := r.recs[g]
	var out []Decision
	var before env.State
	_, err := rec.Replay(func(i int, _ env.Event, s *env.State) error {
		if i >= 0 {
			if st := rec.Steps[i]; st.Action != nil && (r.seat < 0 || st.Seat == r.seat) {
				out = append(out, Decision{Game: g, Seed: rec.Seed, State: before, Action: env.Action(*st.Action)})
			}
		}
		before = *s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record of game %d: %w", g, err)
	}
	return out, nil
}
