package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/latency"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/luck"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/render"
	"github.com/yutenv/yutenv/vecenv"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// hello checks the client's protocol version and token and sends the handshake.
func (c *conn) hello(pr *protocol.HelloParams) *Error {
	if want := c.srv.cfg.Token; want != "" {
		if pr.Token == nil {
			c.log.Warn("unauthorized: no token")
			return errorf(protocol.CodeUnauthorized, "this server requires a token: pass it in hello.params.token")
		}
		if subtle.ConstantTimeCompare([]byte(*pr.Token), []byte(want)) != 1 {
			c.log.Warn("unauthorized: wrong token")
			return errorf(protocol.CodeUnauthorized, "wrong token")
		}
	}
	if pr.Protocol != nil && *pr.Protocol != protocol.Version {
		return errorf(protocol.CodeVersionMismatch, "this server speaks protocol %d, the client asked for %d", protocol.Version, *pr.Protocol)
	}
	c.authed = true
	c.log.Debug("hello received", "client", msgp.Clip([]byte(pr.Client)))
	c.out = append(c.out, c.srv.hello...)
	return nil
}

// ping answers {}.
func (c *conn) ping(*protocol.None) *Error {
	c.out = msgp.AppendMapHeader(c.out, 0)
	return nil
}

// make creates a batch of envs.
func (c *conn) make(pr *protocol.MakeParams) *Error {
	cfg, seatSet, oppSet, err := wire.MakeConfig(pr)
	if err != nil {
		return paramError(err)
	}
	players := cfg.Rules.Players
	switch {
	case cfg.Mode == vecenv.Multi && (seatSet || oppSet):
		return errorf(protocol.CodeBadRequest, "seat and opponent apply to mode single only")
	case cfg.Seat >= players:
		return errorf(protocol.CodeBadRequest, "params.seat: %d is out of range 0..%d for %d players", cfg.Seat, players-1, players)
	}
	if pr.Luck != nil {
		name, mk, err := luck.For(*pr.Luck, cfg.Rules, c.netLoader(c.srv.ctx))
		switch {
		case errors.Is(err, errShuttingDown):
			return errorf(protocol.CodeShuttingDown, "params.%v", err)
		case err != nil:
			return errorf(netCode(err, protocol.CodeBadRequest), "params.%v", err)
		}
		if mk != nil {
			cfg.LuckName = name
			cfg.Luck = func() (vecenv.ThrowLuck, error) {
				v, err := mk()
				if err != nil {
					return nil, err
				}
				return luck.New(v), nil
			}
		}
	}
	opponent := "" // as the client named it, for the reply
	var opponents []string
	switch {
	case cfg.Mode == vecenv.Single && cfg.Opponents != nil:
		var e *Error
		if opponents, e = c.mixture(cfg.Rules, cfg.Opponents); e != nil {
			return e
		}
	case cfg.Mode == vecenv.Single:
		_, build, e := c.agentSpec(c.srv.ctx, "opponent", cfg.Opponent, 0)
		if e != nil {
			return e
		}
		if err := nnet.CheckSpecRules(build, cfg.Rules); err != nil {
			return errorf(protocol.CodeBadRequest, "params.opponent: %v", err)
		}
		opponent, cfg.Opponent = cfg.Opponent, build.String()
	default:
		cfg.Opponent = ""
	}
	if cfg.N > c.srv.cfg.MaxEnvsPerConn-c.envs {
		return errorf(protocol.CodeLimitExceeded, "%d envs would exceed the %d envs allowed per connection (%d held)", cfg.N, c.srv.cfg.MaxEnvsPerConn, c.envs)
	}
	space, err := obs.SpaceOf(cfg.Tier)
	if err != nil {
		return errorf(protocol.CodeBadRequest, "%v", err)
	}
	if size := wire.ResultBytes(cfg, space.Size); size > c.srv.cfg.MaxFrame {
		return errorf(protocol.CodeLimitExceeded, "a step of %d envs of tier %s returns about %d bytes, more than max_frame %d; use smaller batches", cfg.N, cfg.Tier, size, c.srv.cfg.MaxFrame)
	}
	bytes := cfg.Bytes(space.Size)
	if !c.srv.reserveEnvs(cfg.N, bytes) {
		return errorf(protocol.CodeLimitExceeded, "%d envs (%d bytes) would exceed the server's limit of %d envs or %d bytes of envs",
			cfg.N, bytes, c.srv.cfg.MaxEnvs, c.srv.cfg.MaxEnvBytes)
	}
	b, err := vecenv.New(cfg)
	if err != nil {
		c.srv.releaseEnvs(cfg.N, bytes)
		return errorf(netCode(err, protocol.CodeBadRequest), "%v", err)
	}
	c.nextHandle++
	h := c.nextHandle
	c.handles[h] = b
	c.envs += cfg.N
	c.srv.stats.handles.Add(1)
	return c.result(wire.MakeResult(cfg, b, h, opponent, opponents))
}

// lookup returns the batch of handle h (set false: the params lack it).
func (c *conn) lookup(h uint64, set bool) (*vecenv.Batch, *Error) {
	if !set {
		return nil, errorf(protocol.CodeBadRequest, "missing params.handle")
	}
	b, ok := c.handles[h]
	if !ok {
		return nil, errorf(protocol.CodeUnknownHandle, "no handle %d on this connection", h)
	}
	return b, nil
}

// lookupPtr is lookup of a decoded handle param (nil: missing).
func (c *conn) lookupPtr(h *uint64) (*vecenv.Batch, *Error) {
	if h == nil {
		return c.lookup(0, false)
	}
	return c.lookup(*h, true)
}

// reset starts a new episode in every env of a handle.
func (c *conn) reset(p []byte) *Error {
	a := &c.resetArgs
	if err := wire.ReadReset(p, &c.params, a); err != nil {
		return paramsError(c.method.keys, err)
	}
	b, e := c.lookup(a.Handle, a.HandleSet)
	if e != nil {
		return e
	}
	cfg := b.Config()
	n, players, o := cfg.N, cfg.Rules.Players, &a.Options
	switch {
	case a.SeedCount() >= 0 && a.SeedCount() != n:
		return errorf(protocol.CodeBadRequest, "params.seed: %d seeds for %d envs", a.SeedCount(), n)
	case o.Start >= players:
		return errorf(protocol.CodeBadRequest, "params.options.start: seat %d out of range 0..%d", o.Start, players-1)
	case o.SeatSet && cfg.Mode == vecenv.Multi:
		return errorf(protocol.CodeBadRequest, "params.options.seat applies to mode single only")
	case o.SeatSet && o.Seat >= players:
		return errorf(protocol.CodeBadRequest, "params.options.seat: %d out of range 0..%d", o.Seat, players-1)
	}
	a.Seed(b)
	o.Record = cfg.Info
	if a.Info >= 0 {
		o.Record = a.Info == 1
	}
	if a.Shared && c.regions[a.Handle] == nil {
		return errorf(protocol.CodeBadRequest, "params.shared: handle %d has no shared region (call share first)", a.Handle)
	}
	if e := c.reserveReply(wire.ReplyBytes(b, o.Record, c.srv.cfg.MaxFrame), 1); e != nil {
		return e
	}
	if err := b.Reset(c.srv.pool, *o); err != nil {
		return errorf(netCode(err, protocol.CodeInternal), "%v", err)
	}
	if a.Shared {
		c.out = wire.AppendSharedReset(c.out, b, o.Record, c.srv.cfg.MaxFrame)
		c.willPoll(a.Handle)
		return nil
	}
	c.out = wire.AppendReset(c.out, b, o.Record, c.srv.cfg.MaxFrame)
	return nil
}

// stepKind is what step and opponent_step differ by: the region op that
// requests it, whether it counts in the server's steps (an opponent_step
// completes a step already counted), the actions' check and the run.
type stepKind struct {
	op    uint32
	count bool
	check func(*vecenv.Batch) error
	run   func(*vecenv.Batch, *vecenv.Pool, bool) error
}

// The two step kinds, by vecenv.SharedOp value.
var (
	stepPlain    = &stepKind{vecenv.SharedOpStep, true, (*vecenv.Batch).CheckActions, (*vecenv.Batch).Step}
	stepOpponent = &stepKind{vecenv.SharedOpOpponent, false, (*vecenv.Batch).CheckOpponentActions, (*vecenv.Batch).OpponentStep}
)

// step applies one action per env. It is the hot path: it reads its params
// straight from the frame (wire.ReadStep) and allocates nothing.
func (c *conn) step(p []byte) *Error { return c.stepWith(p, stepPlain) }

// opponentStep applies the client-played opponents' actions to the envs
// waiting for them, as step does.
func (c *conn) opponentStep(p []byte) *Error { return c.stepWith(p, stepOpponent) }

// stepWith serves step and opponent_step: read the params, check the
// actions, run the batch and frame its rows (or, for a shared handle,
// serve the request under the region's req).
func (c *conn) stepWith(p []byte, k *stepKind) *Error {
	a := &c.stepArgs
	if err := wire.ReadStep(p, a); err != nil {
		return paramsError(c.method.keys, err)
	}
	b, e := c.lookup(a.Handle, a.HandleSet)
	if e != nil {
		return e
	}
	if !b.Started() {
		return errorf(protocol.CodeNeedsReset, "handle %d was never reset", a.Handle)
	}
	cfg := b.Config()
	record := cfg.Info
	if a.Info >= 0 {
		record = a.Info == 1
	}
	if a.Shared {
		if e := c.sharedStep(a.Handle, b, a, record, k); e != nil {
			return e
		}
		c.willPoll(a.Handle)
		return nil
	}
	if err := a.Actions(b.Actions()); err != nil {
		return paramError(err)
	}
	if e := checked(b, k.check); e != nil {
		return e
	}
	if e := c.reserveReply(wire.ReplyBytes(b, record, c.srv.cfg.MaxFrame), 1); e != nil {
		return e
	}
	if err := k.run(b, c.srv.pool, record); err != nil {
		return errorf(netCode(err, protocol.CodeInternal), "%v", err)
	}
	if k.count {
		c.srv.stats.steps.Add(uint64(cfg.N))
	}
	c.out = wire.AppendStep(c.out, b, record, c.srv.cfg.MaxFrame)
	return nil
}

// checked runs check, the actions' check, and turns its refusal into the
// error the client gets.
func checked(b *vecenv.Batch, check func(*vecenv.Batch) error) *Error {
	if err := check(b); err != nil {
		if errors.Is(err, vecenv.ErrIllegalAction) {
			return errorf(protocol.CodeIllegalAction, "%v", err)
		}
		return errorf(protocol.CodeBadRequest, "%v", err)
	}
	return nil
}

// mixture checks every entry of an opponent mixture as make's opponent is
// checked (agentSpec: the search budget, the network folder policy; the
// rules a network was trained on), except the client's own entries, and
// replaces each spec by the one to build agents from. It returns the specs
// as the client named them.
func (c *conn) mixture(rules env.Rules, mix []vecenv.Opponent) ([]string, *Error) {
	names := make([]string, len(mix))
	for i := range mix {
		names[i] = mix[i].Spec
		if mix[i].Spec == vecenv.Client {
			continue
		}
		field := fmt.Sprintf("opponents[%d]", i)
		_, build, e := c.agentSpec(c.srv.ctx, field, mix[i].Spec, 0)
		if e != nil {
			return nil, e
		}
		if err := nnet.CheckSpecRules(build, rules); err != nil {
			return nil, errorf(protocol.CodeBadRequest, "params.%s: %v", field, err)
		}
		mix[i].Spec = build.String()
	}
	return names, nil
}

// setOpponents replaces a handle's opponent mixture.
func (c *conn) setOpponents(pr *protocol.SetOpponentsParams) *Error {
	b, e := c.lookupPtr(pr.Handle)
	if e != nil {
		return e
	}
	if pr.Opponents == nil {
		return errorf(protocol.CodeBadRequest, "missing params.opponents")
	}
	mix, err := wire.Mixture(pr.Opponents, pr.Weights)
	if err != nil {
		return paramError(err)
	}
	names, e := c.mixture(b.Config().Rules, mix)
	if e != nil {
		return e
	}
	if err := b.SetOpponents(mix); err != nil {
		return errorf(netCode(err, protocol.CodeBadRequest), "%v", err)
	}
	weights := make([]float64, len(mix))
	for i, o := range mix {
		weights[i] = o.Weight
	}
	return c.result(protocol.SetOpponentsResult{Opponents: names, Weights: weights})
}

// close frees a handle.
func (c *conn) close(pr *protocol.HandleParams) *Error {
	b, e := c.lookupPtr(pr.Handle)
	if e != nil {
		return e
	}
	delete(c.handles, *pr.Handle)
	c.dropRegion(*pr.Handle)
	c.envs -= b.N()
	c.srv.releaseEnvs(b.N(), b.Bytes())
	c.srv.stats.handles.Add(-1)
	c.out = msgp.AppendMapHeader(c.out, 0)
	return nil
}

// stats reports the server's counters and latency percentiles.
func (c *conn) stats(*protocol.None) *Error {
	st := &c.srv.stats
	lat := msgp.Obj{}
	for m := range st.latency {
		if st.latency[m].Count() > 0 {
			lat = append(lat, msgp.KV{methodNames[m], st.latency[m].Summary()})
		}
	}
	return c.result(protocol.StatsResult{
		UptimeS: latency.Round2(time.Since(c.srv.started).Seconds()), Connections: st.connections.Load(),
		ConnectionsTotal: st.connectionsTotal.Load(), Envs: st.envs.Load(), Handles: st.handles.Load(),
		Steps: st.steps.Load(), Requests: st.requests.Load(), Errors: st.errors.Load(),
		Conn:      protocol.StatsConn{Envs: c.envs, Handles: len(c.handles), Requests: c.requests},
		LatencyUs: lat,
	})
}

// indexed looks up one env of a handle: the params handle and index.
func (c *conn) indexed(h, idx *uint64) (*vecenv.Batch, int, *Error) {
	b, e := c.lookupPtr(h)
	switch {
	case e != nil:
		return nil, 0, e
	case idx == nil:
		return nil, 0, errorf(protocol.CodeBadRequest, "missing params.index")
	case *idx >= uint64(b.N()):
		return nil, 0, errorf(protocol.CodeBadRequest, "params.index: %d out of range 0..%d", *idx, b.N()-1)
	case !b.Started():
		return nil, 0, errorf(protocol.CodeNeedsReset, "handle %d was never reset", *h)
	}
	return b, int(*idx), nil
}

// save returns one env's game state as the engine's versioned blob.
func (c *conn) save(pr *protocol.IndexParams) *Error {
	b, i, e := c.indexed(pr.Handle, pr.Index)
	if e != nil {
		return e
	}
	blob, err := b.State(i).MarshalBinary()
	if err != nil {
		return errorf(protocol.CodeInternal, "%v", err)
	}
	return c.result(protocol.StateResult{State: blob})
}

// load replaces one env's game with a saved state.
func (c *conn) load(pr *protocol.LoadParams) *Error {
	b, i, e := c.indexed(pr.Handle, pr.Index)
	if e != nil {
		return e
	}
	blob := pr.State
	if blob == nil {
		return errorf(protocol.CodeBadRequest, "missing params.state")
	}
	players := b.Config().Rules.Players
	if pr.Seat != nil && (b.Config().Mode != vecenv.Single || *pr.Seat >= players) {
		return errorf(protocol.CodeBadRequest, "params.seat: only in mode single, 0..%d", players-1)
	}
	// The engine's decoder walks the blob with Decoder.Skip, which recurses
	// per nesting level: bound the depth first.
	if err := msgp.CheckOne(blob); err != nil {
		return errorf(protocol.CodeBadState, "%v", err)
	}
	s, err := env.UnmarshalState(blob)
	if err != nil {
		return errorf(protocol.CodeBadState, "%v", err)
	}
	if s.Rules() != b.Config().Rules {
		return errorf(protocol.CodeBadState, "the state is for rules %q, the handle plays %q", s.Rules().String(), b.Config().Rules.String())
	}
	seat := vecenv.RandomSeat
	if pr.Seat != nil {
		seat = *pr.Seat
	}
	if err := b.Load(i, s, seat); err != nil {
		return errorf(protocol.CodeInternal, "%v", err)
	}
	o, m, toMove := b.Row(i)
	if rows := b.Rows(); rows.Opponent != nil {
		c.out = wire.AppendRow(msgp.AppendMapHeader(c.out, 5), o, m, []int8{toMove})
		c.out = wire.AppendMixed(c.out, rows.Opponent[i:i+1], rows.Pending[i:i+1])
		return nil
	}
	c.out = wire.AppendRow(msgp.AppendMapHeader(c.out, 3), o, m, []int8{toMove})
	return nil
}

// render returns one env's position as text, SVG, or an RGB image
// (height x width x 3 bytes, row-major) for Gymnasium's rgb_array mode.
func (c *conn) render(pr *protocol.RenderParams) *Error {
	b, i, e := c.indexed(pr.Handle, pr.Index)
	if e != nil {
		return e
	}
	format := "text"
	if pr.Format != nil {
		format = *pr.Format
	}
	st := b.State(i)
	switch format {
	case "text":
		return c.result(protocol.RenderText{Text: st.Render()})
	case "svg":
		return c.result(protocol.RenderSVG{SVG: string(render.SVG(st, render.Options{Numbers: true}))})
	case "rgb":
		// The image, its copy in the reply and the renderer's canvas.
		if e := c.reserveReply(64+3*render.Width*render.Height, 3); e != nil {
			return e
		}
		rgb := render.RGB(st, render.Options{}, nil)
		return c.result(protocol.RenderRGB{Height: render.Height, Width: render.Width, RGB: rgb})
	default:
		return errorf(protocol.CodeUnsupported, "format %q is not supported (formats: text, svg, rgb)", msgp.Clip([]byte(format)))
	}
}

// observe returns every env's observation and mask as seen by one seat: the
// mask row is all zero exactly when that seat cannot act in that env.
func (c *conn) observe(pr *protocol.ObserveParams) *Error {
	b, e := c.lookupPtr(pr.Handle)
	if e != nil {
		return e
	}
	seat := -1
	if pr.Seat != nil {
		seat = *pr.Seat
	}
	h := *pr.Handle
	players := b.Config().Rules.Players
	switch {
	case seat < 0:
		return errorf(protocol.CodeBadRequest, "missing params.seat")
	case seat >= players:
		return errorf(protocol.CodeBadRequest, "params.seat: %d out of range 0..%d", seat, players-1)
	case !b.Started():
		return errorf(protocol.CodeNeedsReset, "handle %d was never reset", h)
	}
	if e := c.reserveReply(64+b.N()*(4*b.ObsSize()+env.NumActions), 2); e != nil {
		return e
	}
	o := make([]float32, b.N()*b.ObsSize())
	m := make([]uint8, b.N()*env.NumActions)
	if err := b.Observe(seat, o, m); err != nil {
		return errorf(protocol.CodeInternal, "%v", err)
	}
	out := msgp.AppendMapHeader(c.out, 2)
	out = msgp.AppendStr(out, "obs")
	out = msgp.AppendF32Bin(out, o)
	out = msgp.AppendStr(out, "mask")
	c.out = msgp.AppendBin(out, m)
	return nil
}
