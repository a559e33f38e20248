package server

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

// The state methods (docs/PROTOCOL.md, "Positions and search") are
// stateless: a client holds game states as packed bytes (env.PackedSize
// each, see env.State.AppendPacked) and sends them with every request, many
// to one bin. The only thing the server keeps is a game: the rules the
// packed states are read under, named by a small id on the connection.

// maxGames bounds the games one connection may declare.
const maxGames = 64

// game is one declared rule set: an initial state whose rules and chance
// tables every state read under it copies, and its observation encoders.
type game struct {
	proto env.State
	enc   map[obs.Tier]*obs.Encoder // made on first use
	mu    sync.Mutex
}

// encoder returns the game's encoder of tier t.
func (g *game) encoder(t obs.Tier) (*obs.Encoder, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.enc == nil {
		g.enc = map[obs.Tier]*obs.Encoder{}
	}
	if g.enc[t] == nil {
		e, err := obs.NewEncoder(g.proto.Rules(), t)
		if err != nil {
			return nil, err
		}
		g.enc[t] = e
	}
	return g.enc[t], nil
}

// stateConn is a connection's state-method data, made on first use.
type stateConn struct {
	games []*game
}

// lookupGame returns the game with id g.
func (c *conn) lookupGame(method string, id *int) (*game, *Error) {
	if id == nil {
		return nil, errorf(CodeBadRequest, "%s: missing params.game (declare one with method game)", method)
	}
	if c.st == nil || *id < 0 || *id >= len(c.st.games) {
		return nil, errorf(CodeUnknownHandle, "%s: no game %d on this connection", method, *id)
	}
	return c.st.games[*id], nil
}

// rows checks a bin of packed states and returns how many it holds.
func rows(method string, b []byte) (int, *Error) {
	if b == nil {
		return 0, errorf(CodeBadRequest, "%s: missing params.states", method)
	}
	if len(b)%env.PackedSize != 0 {
		return 0, errorf(CodeBadState, "%s: params.states: %d bytes is not a multiple of the state size %d", method, len(b), env.PackedSize)
	}
	n := len(b) / env.PackedSize
	if n > maxStateRows {
		return 0, errorf(CodeLimitExceeded, "%s: %d states, more than the %d a request may carry", method, n, maxStateRows)
	}
	return n, nil
}

// checkReply refuses a request whose reply would not fit in a frame.
func (c *conn) checkReply(method string, n, perRow int) *Error {
	size := 256 + n*perRow
	if size > c.srv.cfg.MaxFrame {
		return errorf(CodeLimitExceeded, "%s: %d states give a reply of about %d bytes, more than max_frame %d; send fewer", method, n, size, c.srv.cfg.MaxFrame)
	}
	// The reply, and the temporaries of building it (growBin's zeroed
	// block, analyse's columns): three times its size.
	return c.reserveReply(method, size, 3)
}

// gameParams are game's params.
type gameParams struct {
	Rules msgpack.RawMessage `msgpack:"rules"`
}

// gameMethod declares a rule set and describes it.
func (c *conn) gameMethod(pr *gameParams) *Error {
	rules := env.Standard()
	if pr.Rules != nil {
		r := reader{b: pr.Rules}
		var err error
		if rules, err = rulesParam(&r); err != nil {
			return paramError("game", "rules", err)
		}
	}
	if c.st == nil {
		c.st = &stateConn{}
	}
	if len(c.st.games) >= maxGames {
		return errorf(CodeLimitExceeded, "game: %d games declared on this connection, the most it may hold", maxGames)
	}
	proto, err := env.New(rules, 0, 0)
	if err != nil {
		return errorf(CodeInvalidRules, "game: %v", err)
	}
	g := &game{proto: proto}
	c.st.games = append(c.st.games, g)
	chance := rules.Probabilities()
	tiers := obj{}
	for _, t := range obs.Tiers() {
		enc, err := g.encoder(t)
		if err != nil {
			return errorf(CodeInternal, "game: %v", err)
		}
		tiers = append(tiers, kv{t.String(), enc.Size()})
	}
	return c.result("game", gameResult{
		Game: len(c.st.games) - 1, Rules: rules.String(), Players: rules.Players, Pieces: rules.Pieces,
		StateSize: env.PackedSize, Actions: env.NumActions, Chance: chance[:], ObsSize: tiers, ObsLayout: obs.LayoutVersion,
	})
}

// stateOp runs one state method over rows [lo, hi) of a request on the
// server's pool; the first failing row (lowest index) is reported.
type stateOp struct {
	g   *game
	in  []byte
	fn  func(i int, s *env.State) error
	mu  sync.Mutex
	bad int
	err error
}

func (o *stateOp) runRange(lo, hi int) {
	for i := lo; i < hi; i++ {
		s := o.g.proto
		if err := s.Unpack(o.in[i*env.PackedSize : (i+1)*env.PackedSize]); err != nil {
			o.fail(i, err)
			return
		}
		if err := o.fn(i, &s); err != nil {
			o.fail(i, err)
			return
		}
	}
}

func (o *stateOp) fail(i int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil || i < o.bad {
		o.bad, o.err = i, err
	}
}

// run runs fn over every row and turns the first failure into an error
// naming the row: bad_state for a packed state that does not read,
// illegal_action for a refused action or throw.
func (c *conn) runRows(method string, g *game, in []byte, n int, fn func(i int, s *env.State) error) *Error {
	o := &stateOp{g: g, in: in, fn: fn}
	c.srv.pool.Range(n, o.runRange, o.fail)
	if o.err == nil {
		return nil
	}
	code := CodeBadRequest
	switch {
	case errors.Is(o.err, env.ErrCorrupt) || errors.Is(o.err, env.ErrVersion):
		code = CodeBadState
	case errors.Is(o.err, env.ErrIllegalAction) || errors.Is(o.err, env.ErrWrongPhase) || errors.Is(o.err, env.ErrBadInput):
		code = CodeIllegalAction
	case strings.HasPrefix(o.err.Error(), "panic:"):
		code = CodeInternal
	}
	return errorf(code, "%s: row %d: %v", method, o.bad, o.err)
}

// growBin appends a bin header for n bytes to c.out and returns the n bytes
// after it, for workers to fill. It may move c.out, which makes the views
// of earlier calls stale: reserve room first (slices.Grow) when several are
// kept at once.
func (c *conn) growBin(n int) []byte {
	c.out = appendBinHeader(c.out, n)
	start := len(c.out)
	c.out = append(c.out, make([]byte, n)...)
	return c.out[start : start+n]
}

// initialParams are initial's params.
type initialParams struct {
	Game  *int   `msgpack:"game"`
	Seed  uint64 `msgpack:"seed"`
	N     *int   `msgpack:"n"`
	Start *int   `msgpack:"start"`
}

// initialStates makes n new games: seeds seed, seed+1, ...
func (c *conn) initialStates(pr *initialParams) *Error {
	g, e := c.lookupGame("initial", pr.Game)
	if e != nil {
		return e
	}
	n, start := 1, env.AnySeat
	if pr.N != nil {
		n = *pr.N
	}
	if n < 1 || n > maxStateRows {
		return errorf(CodeBadRequest, "initial: params.n: %d out of range 1..%d", n, maxStateRows)
	}
	if pr.Start != nil {
		start = *pr.Start
		if start < 0 || start >= g.proto.Rules().Players {
			return errorf(CodeBadRequest, "initial: params.start: seat %d out of range 0..%d", start, g.proto.Rules().Players-1)
		}
	}
	if e := c.checkReply("initial", n, env.PackedSize); e != nil {
		return e
	}
	c.out = appendMapHeader(c.out, 1)
	c.out = appendStr(c.out, "states")
	out := c.growBin(n * env.PackedSize)
	for i := range n {
		s, err := env.New(g.proto.Rules(), pr.Seed+uint64(i), start)
		if err != nil {
			return errorf(CodeInternal, "initial: %v", err)
		}
		s.AppendPacked(out[i*env.PackedSize : i*env.PackedSize])
	}
	return nil
}

// applyParams are apply's params.
type applyParams struct {
	Game    *int   `msgpack:"game"`
	States  []byte `msgpack:"states"`
	Actions []byte `msgpack:"actions"`
	Throws  []byte `msgpack:"throws"`
}

// applyStates applies one action, or one throw, to every state.
func (c *conn) applyStates(pr *applyParams) *Error {
	g, e := c.lookupGame("apply", pr.Game)
	if e != nil {
		return e
	}
	n, e := rows("apply", pr.States)
	if e != nil {
		return e
	}
	switch {
	case (pr.Actions == nil) == (pr.Throws == nil):
		return errorf(CodeBadRequest, "apply: give exactly one of params.actions and params.throws")
	case pr.Actions != nil && len(pr.Actions) != 4*n:
		return errorf(CodeBadRequest, "apply: params.actions: %d bytes, want %d (one little-endian int32 per state)", len(pr.Actions), 4*n)
	case pr.Throws != nil && len(pr.Throws) != n:
		return errorf(CodeBadRequest, "apply: params.throws: %d bytes, want %d (one int8 per state: a throw id, or -1 to sample)", len(pr.Throws), n)
	}
	if e := c.checkReply("apply", n, env.PackedSize); e != nil {
		return e
	}
	mark := len(c.out)
	c.out = appendMapHeader(c.out, 1)
	c.out = appendStr(c.out, "states")
	out := c.growBin(n * env.PackedSize)
	e = c.runRows("apply", g, pr.States, n, func(i int, s *env.State) error {
		var err error
		if pr.Actions != nil {
			a := int32(binary.LittleEndian.Uint32(pr.Actions[4*i:]))
			if a < 0 || a >= env.NumActions {
				return fmt.Errorf("%w: action id %d out of range 0..%d", env.ErrIllegalAction, a, env.NumActions-1)
			}
			_, err = s.Apply(env.Action(a))
		} else if t := int8(pr.Throws[i]); t < 0 {
			_, err = s.SampleThrow()
		} else {
			_, err = s.ApplyThrow(env.Throw(t))
		}
		if err != nil {
			return err
		}
		s.AppendPacked(out[i*env.PackedSize : i*env.PackedSize])
		return nil
	})
	if e != nil {
		c.out = c.out[:mark]
	}
	return e
}

// queryParams are query's params.
type queryParams struct {
	Game    *int    `msgpack:"game"`
	States  []byte  `msgpack:"states"`
	Mask    bool    `msgpack:"mask"`
	Returns bool    `msgpack:"returns"`
	Obs     *string `msgpack:"obs"`
	Seat    *int    `msgpack:"seat"`
}

// queryStates reports the phase, seat to move and, on request, the legal
// mask, the returns and an observation of every state.
func (c *conn) queryStates(pr *queryParams) *Error {
	g, e := c.lookupGame("query", pr.Game)
	if e != nil {
		return e
	}
	n, e := rows("query", pr.States)
	if e != nil {
		return e
	}
	players := g.proto.Rules().Players
	var enc *obs.Encoder
	seat := -1
	if pr.Obs != nil {
		t, err := obs.ParseTier(*pr.Obs)
		if err != nil {
			return errorf(CodeBadRequest, "query: params.obs: %v", err)
		}
		if enc, err = g.encoder(t); err != nil {
			return errorf(CodeInternal, "query: %v", err)
		}
	}
	if pr.Seat != nil {
		if seat = *pr.Seat; seat < -1 || seat >= players {
			return errorf(CodeBadRequest, "query: params.seat: %d out of range -1..%d (-1: the seat to move)", seat, players-1)
		}
		if enc == nil {
			return errorf(CodeBadRequest, "query: params.seat applies to params.obs only")
		}
	}
	per := 2
	keys := 2
	if pr.Mask {
		per += env.NumActions
		keys++
	}
	if pr.Returns {
		per += 4 * players
		keys++
	}
	if enc != nil {
		per += 4 * enc.Size()
		keys++
	}
	if e := c.checkReply("query", n, per+16); e != nil {
		return e
	}
	// Lay the reply out first; the pool's workers then fill every row in
	// place. A bad row truncates the reply back to nothing.
	mark := len(c.out)
	// One allocation up front: the bins below are views into c.out, so it
	// must not move while they are laid out (per covers every payload; 256
	// covers the keys and headers).
	c.out = slices.Grow(c.out, 256+n*per)
	c.out = appendMapHeader(c.out, keys)
	c.out = appendStr(c.out, "phase")
	phase := c.growBin(n)
	c.out = appendStr(c.out, "to_move")
	toMove := c.growBin(n)
	var mask, returns, obsOut []byte
	if pr.Mask {
		c.out = appendStr(c.out, "mask")
		mask = c.growBin(n * env.NumActions)
	}
	if pr.Returns {
		c.out = appendStr(c.out, "returns")
		returns = c.growBin(4 * n * players)
	}
	var bufs sync.Pool
	d := 0
	if enc != nil {
		d = enc.Size()
		c.out = appendStr(c.out, "obs")
		obsOut = c.growBin(4 * n * d)
		bufs.New = func() any { b := make([]float32, d); return &b }
	}
	e = c.runRows("query", g, pr.States, n, func(i int, s *env.State) error {
		phase[i], toMove[i] = uint8(s.Phase()), uint8(s.ToMove())
		if mask != nil {
			s.Mask(mask[i*env.NumActions : (i+1)*env.NumActions])
		}
		if returns != nil {
			for k := range players {
				binary.LittleEndian.PutUint32(returns[4*(i*players+k):], math.Float32bits(float32(s.Outcome(k))))
			}
		}
		if enc != nil {
			who := seat
			if who < 0 {
				who = s.ToMove()
			}
			bp := bufs.Get().(*[]float32)
			enc.Encode(s, who, *bp)
			for k, v := range *bp {
				binary.LittleEndian.PutUint32(obsOut[4*(i*d+k):], math.Float32bits(v))
			}
			bufs.Put(bp)
		}
		return nil
	})
	if e != nil {
		c.out = c.out[:mark]
		return e
	}
	return nil
}

// oneStateParams are the params of describe and state_save: one packed state.
type oneStateParams struct {
	Game  *int   `msgpack:"game"`
	State []byte `msgpack:"state"`
}

// oneState reads the one packed state of params {game, state}.
func (c *conn) oneState(method string, pr *oneStateParams) (env.State, *Error) {
	g, e := c.lookupGame(method, pr.Game)
	if e != nil {
		return env.State{}, e
	}
	s := g.proto
	if pr.State == nil {
		return s, errorf(CodeBadRequest, "%s: missing params.state", method)
	}
	if err := s.Unpack(pr.State); err != nil {
		return s, errorf(CodeBadState, "%s: params.state: %v", method, err)
	}
	return s, nil
}

// describeState returns one state's position, JSON form and text board.
func (c *conn) describeState(pr *oneStateParams) *Error {
	s, e := c.oneState("describe", pr)
	if e != nil {
		return e
	}
	js, err := json.Marshal(s.JSON())
	if err != nil {
		return errorf(CodeInternal, "describe: %v", err)
	}
	// The position is env.PositionDesc itself, encoded from its msgpack
	// tags, so a field added to it (missed turns) reaches the wire.
	pos, err := appendResult(nil, env.Describe(s.Position()))
	if err != nil {
		return errorf(CodeInternal, "describe: %v", err)
	}
	c.out = appendValue(c.out, obj{
		{"position", rawValue(pos)},
		{"start", s.StartSeat()},
		{"decisions", s.Decisions()},
		{"throws", s.Throws()},
		{"json", string(js)},
		{"text", s.Render()},
	})
	return nil
}

// positionParams are position's params.
type positionParams struct {
	Game     *int              `msgpack:"game"`
	Position *env.PositionDesc `msgpack:"position"`
	Seed     uint64            `msgpack:"seed"`
}

// positionState builds a state from a readable position.
func (c *conn) positionState(pr *positionParams) *Error {
	g, e := c.lookupGame("position", pr.Game)
	if e != nil {
		return e
	}
	if pr.Position == nil {
		return errorf(CodeBadRequest, "position: missing params.position")
	}
	pos, err := pr.Position.Position(g.proto.Rules())
	if err != nil {
		return errorf(CodeBadState, "position: %v", err)
	}
	s, err := env.FromPosition(pos, pr.Seed)
	if err != nil {
		return errorf(CodeBadState, "position: %v", err)
	}
	return c.result("position", stateResult{State: s.AppendPacked(nil)})
}

// saveState returns one state as the engine's saved-state blob (rules included).
func (c *conn) saveState(pr *oneStateParams) *Error {
	s, e := c.oneState("state_save", pr)
	if e != nil {
		return e
	}
	blob, err := s.MarshalBinary()
	if err != nil {
		return errorf(CodeInternal, "state_save: %v", err)
	}
	return c.result("state_save", blobResult{Blob: blob})
}

// stateLoadParams are state_load's params.
type stateLoadParams struct {
	Game *int   `msgpack:"game"`
	Blob []byte `msgpack:"blob"`
}

// loadState reads a saved-state blob into a packed state and its rules.
// Given a game, the blob's rules must be the game's.
func (c *conn) loadState(pr *stateLoadParams) *Error {
	var g *game
	if pr.Game != nil {
		var e *Error
		if g, e = c.lookupGame("state_load", pr.Game); e != nil {
			return e
		}
	}
	if pr.Blob == nil {
		return errorf(CodeBadRequest, "state_load: missing params.blob")
	}
	if n, err := checkValue(pr.Blob); err != nil || n != len(pr.Blob) {
		if err == nil {
			err = fmt.Errorf("%d trailing bytes", len(pr.Blob)-n)
		}
		return errorf(CodeBadState, "state_load: %v", err)
	}
	s, err := env.UnmarshalState(pr.Blob)
	if err != nil {
		return errorf(CodeBadState, "state_load: %v", err)
	}
	if g != nil && s.Rules() != g.proto.Rules() {
		return errorf(CodeBadState, "state_load: the state is for rules %q, the game plays %q", s.Rules().String(), g.proto.Rules().String())
	}
	return c.result("state_load", stateRulesResult{State: s.AppendPacked(nil), Rules: s.Rules().String()})
}

// analyseParams are analyse's params.
type analyseParams struct {
	Game   *int    `msgpack:"game"`
	States []byte  `msgpack:"states"`
	Agent  *string `msgpack:"agent"`
	Seed   uint64  `msgpack:"seed"`
}

// analyseStates asks a built-in agent for its action at every state, with
// its search policy over the 180 actions and its value estimate. The states
// are shared among the server's workers, one agent each; state i is
// searched with the agent reseeded to seed+i, so the answer does not depend
// on how the work was split.
func (c *conn) analyseStates(pr *analyseParams) *Error {
	g, e := c.lookupGame("analyse", pr.Game)
	if e != nil {
		return e
	}
	n, e := rows("analyse", pr.States)
	if e != nil {
		return e
	}
	if pr.Agent == nil {
		return errorf(CodeBadRequest, "analyse: missing params.agent")
	}
	sp, build, e := c.agentSpec(c.srv.ctx, "analyse", "agent", *pr.Agent)
	if e != nil {
		return e
	}
	if e := c.srv.limits.Analyse(*pr.Agent, sp, n); e != nil {
		return e
	}
	players := g.proto.Rules().Players
	if e := c.checkReply("analyse", n, 4+4*env.NumActions+4+4*players); e != nil {
		return e
	}
	// Check every state first (the workers read them again: unpacking costs
	// far less than a search, and no copy of N states is kept).
	if e := c.runRows("analyse", g, pr.States, n, func(i int, s *env.State) error {
		if s.Phase() != env.PhaseMove {
			return fmt.Errorf("%w: the state is in phase %s: an agent acts only at a decision (phase move)", env.ErrBadInput, s.Phase())
		}
		return nil
	}); e != nil {
		e.Code = CodeBadRequest
		return e
	}
	res := analyseOut{
		actions: make([]byte, 4*n), policy: make([]byte, 4*n*env.NumActions),
		value: make([]byte, 4*n), values: make([]byte, 4*n*players), players: players,
	}
	ctx, stop := c.watch()
	defer stop()
	if e := c.srv.analyse(ctx, g, build, pr.Seed, pr.States, n, &res); e != nil {
		return e
	}
	actions, policy, value, values := res.actions, res.policy, res.value, res.values
	return c.result("analyse", analyseResult{Agent: sp.String(), Actions: actions, Policy: policy, Value: value, Values: values})
}

// safeAct runs an agent's ActStats and turns a panic into an error.
func safeAct(ag agent.Agent, s *env.State) (a env.Action, st agent.Stats, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return ag.ActStats(s)
}
