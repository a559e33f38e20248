package server

import (
	"errors"
	"strings"

	"github.com/yutenv/yutenv/analysis"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/positions"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// The state methods (docs/PROTOCOL.md, "Positions and search") are
// stateless: a client holds game states as packed bytes (env.PackedSize
// each, see env.State.AppendPacked) and sends them with every request, many
// to one bin. The only thing the server keeps is a game: the rules the
// packed states are read under, named by a small id on the connection.

// maxGames bounds the games one connection may declare.
const maxGames = 64

// stateConn is a connection's state-method data, made on first use.
type stateConn struct {
	games []*positions.Game
}

// lookupGame returns the game with id g.
func (c *conn) lookupGame(id *int) (*positions.Game, *Error) {
	if id == nil {
		return nil, errorf(protocol.CodeBadRequest, "missing params.game (declare one with method game)")
	}
	if c.st == nil || *id < 0 || *id >= len(c.st.games) {
		return nil, errorf(protocol.CodeUnknownHandle, "no game %d on this connection", *id)
	}
	return c.st.games[*id], nil
}

// rows checks a bin of packed states and returns how many it holds.
func (c *conn) rows(b []byte) (int, *Error) {
	if b == nil {
		return 0, errorf(protocol.CodeBadRequest, "missing params.states")
	}
	n, err := positions.Count(b)
	if err != nil {
		return 0, errorf(protocol.CodeBadState, "params.%v", err)
	}
	if n > c.budget.Rows {
		return 0, errorf(protocol.CodeLimitExceeded, "%d states, more than the %d a request may carry", n, c.budget.Rows)
	}
	return n, nil
}

// checkReply refuses a request whose reply would not fit in a frame.
func (c *conn) checkReply(n, perRow int) *Error {
	size := 256 + n*perRow
	if size > c.budget.Reply {
		return errorf(protocol.CodeLimitExceeded, "%d states give a reply of about %d bytes, more than max_frame %d; send fewer", n, size, c.budget.Reply)
	}
	// The reply, and the temporaries of building it (positions.AppendBin's zeroed
	// block, analyse's columns): three times its size.
	return c.reserveReply(size, 3)
}

// game declares a rule set and describes it.
func (c *conn) game(pr *protocol.GameParams) *Error {
	rules := env.Standard()
	if pr.Rules != nil {
		r := msgp.NewReader(pr.Rules)
		var err error
		if rules, err = wire.Rules(&r); err != nil {
			return paramError(&wire.ParamError{Key: "rules", Err: err})
		}
	}
	if c.st == nil {
		c.st = &stateConn{}
	}
	if len(c.st.games) >= maxGames {
		return errorf(protocol.CodeLimitExceeded, "%d games declared on this connection, the most it may hold", maxGames)
	}
	g, err := positions.NewGame(rules)
	if err != nil {
		return errorf(protocol.CodeInvalidRules, "%v", err)
	}
	c.st.games = append(c.st.games, g)
	chance := rules.Probabilities()
	tiers := msgp.Obj{}
	for _, t := range obs.Tiers() {
		enc, err := g.Encoder(t)
		if err != nil {
			return errorf(protocol.CodeInternal, "%v", err)
		}
		tiers = append(tiers, msgp.KV{t.String(), enc.Size()})
	}
	return c.result(protocol.GameResult{
		Game: len(c.st.games) - 1, Rules: rules.String(), Players: rules.Players, Pieces: rules.Pieces,
		StateSize: env.PackedSize, Actions: env.NumActions, Chance: chance[:], ObsSize: tiers, ObsLayout: obs.LayoutVersion,
	})
}

// rowsError turns the error of a positions call over a request's states
// into the protocol error naming the first failing row: bad_state for a
// packed state that does not read, illegal_action for a refused action or
// throw, bad_request for a column of the wrong size.
func rowsError(err error) *Error {
	if err == nil {
		return nil
	}
	code := protocol.CodeBadRequest
	var re *positions.RowError
	switch {
	case errors.Is(err, positions.ErrSize):
		return errorf(protocol.CodeBadRequest, "params.%v", err)
	case !errors.As(err, &re):
	case errors.Is(err, env.ErrCorrupt) || errors.Is(err, env.ErrVersion):
		code = protocol.CodeBadState
	case errors.Is(err, env.ErrIllegalAction) || errors.Is(err, env.ErrWrongPhase) || errors.Is(err, env.ErrBadInput):
		code = protocol.CodeIllegalAction
	case strings.HasPrefix(re.Err.Error(), "panic:"):
		code = protocol.CodeInternal
	}
	return errorf(code, "%v", err)
}

// initial makes n new games: seeds seed, seed+1, ...
func (c *conn) initial(pr *protocol.InitialParams) *Error {
	g, e := c.lookupGame(pr.Game)
	if e != nil {
		return e
	}
	n, start := 1, env.AnySeat
	if pr.N != nil {
		n = *pr.N
	}
	if n < 1 || n > c.budget.Rows {
		return errorf(protocol.CodeBadRequest, "params.n: %d out of range 1..%d", n, c.budget.Rows)
	}
	if pr.Start != nil {
		start = *pr.Start
		if start < 0 || start >= g.Rules().Players {
			return errorf(protocol.CodeBadRequest, "params.start: seat %d out of range 0..%d", start, g.Rules().Players-1)
		}
	}
	if e := c.checkReply(n, env.PackedSize); e != nil {
		return e
	}
	var out []byte
	c.out, out = positions.AppendBin(msgp.AppendStr(msgp.AppendMapHeader(c.out, 1), "states"), n*env.PackedSize)
	if err := g.Initial(pr.Seed, start, out); err != nil {
		return errorf(protocol.CodeInternal, "%v", err)
	}
	return nil
}

// apply applies one action, or one throw, to every state.
func (c *conn) apply(pr *protocol.ApplyParams) *Error {
	g, e := c.lookupGame(pr.Game)
	if e != nil {
		return e
	}
	n, e := c.rows(pr.States)
	if e != nil {
		return e
	}
	if (pr.Actions == nil) == (pr.Throws == nil) {
		return errorf(protocol.CodeBadRequest, "give exactly one of params.actions and params.throws")
	}
	if e := c.checkReply(n, env.PackedSize); e != nil {
		return e
	}
	mark := len(c.out)
	var out []byte
	c.out, out = positions.AppendBin(msgp.AppendStr(msgp.AppendMapHeader(c.out, 1), "states"), n*env.PackedSize)
	if e := rowsError(g.Apply(c.srv.pool, pr.States, pr.Actions, pr.Throws, out)); e != nil {
		c.out = c.out[:mark]
		return e
	}
	return nil
}

// query reports the phase, seat to move and, on request, the legal
// mask, the returns and an observation of every state.
func (c *conn) query(pr *protocol.QueryParams) *Error {
	g, e := c.lookupGame(pr.Game)
	if e != nil {
		return e
	}
	n, e := c.rows(pr.States)
	if e != nil {
		return e
	}
	players := g.Rules().Players
	var enc *obs.Encoder
	seat := -1
	if pr.Obs != nil {
		t, err := obs.ParseTier(*pr.Obs)
		if err != nil {
			return errorf(protocol.CodeBadRequest, "params.obs: %v", err)
		}
		if enc, err = g.Encoder(t); err != nil {
			return errorf(protocol.CodeInternal, "%v", err)
		}
	}
	if pr.Seat != nil {
		if seat = *pr.Seat; seat < -1 || seat >= players {
			return errorf(protocol.CodeBadRequest, "params.seat: %d out of range -1..%d (-1: the seat to move)", seat, players-1)
		}
		if enc == nil {
			return errorf(protocol.CodeBadRequest, "params.seat applies to params.obs only")
		}
	}
	q := positions.Query{Encoder: enc, Seat: seat}
	if e := c.checkReply(n, q.RowBytes(players, pr.Mask, pr.Returns)+16); e != nil {
		return e
	}
	// Lay the reply out first; the pool's workers then fill every row in
	// place. A bad row truncates the reply back to nothing.
	mark := len(c.out)
	c.out = q.Layout(c.out, n, players, pr.Mask, pr.Returns)
	if e := rowsError(g.Query(c.srv.pool, pr.States, &q)); e != nil {
		c.out = c.out[:mark]
		return e
	}
	return nil
}

// oneState reads the one packed state of params {game, state}.
func (c *conn) oneState(pr *protocol.StateParams) (env.State, *Error) {
	g, e := c.lookupGame(pr.Game)
	if e != nil {
		return env.State{}, e
	}
	if pr.State == nil {
		return env.State{}, errorf(protocol.CodeBadRequest, "missing params.state")
	}
	s, err := g.Unpack(pr.State)
	if err != nil {
		return s, errorf(protocol.CodeBadState, "params.state: %v", err)
	}
	return s, nil
}

// describe returns one state's position, JSON form and text board.
func (c *conn) describe(pr *protocol.StateParams) *Error {
	s, e := c.oneState(pr)
	if e != nil {
		return e
	}
	d, err := positions.Describe(&s)
	if err != nil {
		return errorf(protocol.CodeInternal, "%v", err)
	}
	return c.result(d)
}

// position builds a state from a readable position.
func (c *conn) position(pr *protocol.PositionParams) *Error {
	g, e := c.lookupGame(pr.Game)
	if e != nil {
		return e
	}
	if pr.Position == nil {
		return errorf(protocol.CodeBadRequest, "missing params.position")
	}
	st, err := g.FromDesc(pr.Position, pr.Seed)
	if err != nil {
		return errorf(protocol.CodeBadState, "%v", err)
	}
	return c.result(protocol.StateResult{State: st})
}

// stateSave returns one state as the engine's saved-state blob (rules included).
func (c *conn) stateSave(pr *protocol.StateParams) *Error {
	s, e := c.oneState(pr)
	if e != nil {
		return e
	}
	blob, err := s.MarshalBinary()
	if err != nil {
		return errorf(protocol.CodeInternal, "%v", err)
	}
	return c.result(protocol.BlobResult{Blob: blob})
}

// stateLoad reads a saved-state blob into a packed state and its rules.
// Given a game, the blob's rules must be the game's.
func (c *conn) stateLoad(pr *protocol.StateLoadParams) *Error {
	var g *positions.Game
	if pr.Game != nil {
		var e *Error
		if g, e = c.lookupGame(pr.Game); e != nil {
			return e
		}
	}
	if pr.Blob == nil {
		return errorf(protocol.CodeBadRequest, "missing params.blob")
	}
	if err := msgp.CheckOne(pr.Blob); err != nil {
		return errorf(protocol.CodeBadState, "%v", err)
	}
	st, rules, err := g.Load(pr.Blob)
	if err != nil {
		return errorf(protocol.CodeBadState, "%v", err)
	}
	return c.result(protocol.StateRulesResult{State: st, Rules: rules.String()})
}

// analyse asks a built-in agent for its action at every state, with
// its search policy over the 180 actions and its value estimate. The states
// are shared among the server's workers, one agent each; state i is
// searched with the agent reseeded to seed+i, so the answer does not depend
// on how the work was split.
func (c *conn) analyse(pr *protocol.AnalyseParams) *Error {
	g, e := c.lookupGame(pr.Game)
	if e != nil {
		return e
	}
	n, e := c.rows(pr.States)
	if e != nil {
		return e
	}
	if pr.Agent == nil {
		return errorf(protocol.CodeBadRequest, "missing params.agent")
	}
	sp, build, e := c.agentSpec(c.srv.ctx, "agent", *pr.Agent, n)
	if e != nil {
		return e
	}
	players := g.Rules().Players
	if e := c.checkReply(n, analysis.RowBytes(players)); e != nil {
		return e
	}
	// Check every state first (the workers read them again: unpacking costs
	// far less than a search, and no copy of N states is kept).
	if e := rowsError(g.CheckDecisions(c.srv.pool, pr.States)); e != nil {
		e.Code = protocol.CodeBadRequest
		return e
	}
	res := analysis.NewOut(n, players)
	ctx, stop := c.watch()
	defer stop()
	if e := c.srv.analyse(ctx, g, build, pr.Seed, pr.States, res); e != nil {
		return e
	}
	return c.result(protocol.AnalyseResult{Agent: sp.String(), Actions: res.Actions, Policy: res.Policy, Value: res.Value, Values: res.Values})
}
