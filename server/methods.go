package server

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/render"
	"github.com/yutenv/yutenv/vecenv"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// paramError is a bad parameter; eachKeyOf turns it into bad_request unless
// it already is a protocol *Error.
func paramError(method, key string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	code := protocol.CodeBadRequest
	var re rulesError
	if errors.As(err, &re) {
		code = protocol.CodeInvalidRules
	}
	return errorf(code, "%s: params.%s: %v", method, key, err)
}

// rulesError is a rules param the engine refused (invalid_rules): the
// method that read it names itself and the param (paramError), once.
type rulesError struct{ err error }

func (e rulesError) Error() string { return e.err.Error() }
func (e rulesError) Unwrap() error { return e.err }

// errUnknownParam marks a key a method does not take.
var errUnknownParam = errors.New("unknown parameter")

// valueError is a failure reading the value of key.
type valueError struct {
	key []byte
	err error
}

func (e valueError) Error() string { return fmt.Sprintf("%s: %v", msgp.Clip(e.key), e.err) }
func (e valueError) Unwrap() error { return e.err }

// eachKeyOf reads the params map of a method whose params are read by
// hand (p nil: no keys), by msgp.EachKey: fn gets each key's position in ks
// (the params struct's fields), and a key ks does not hold is refused
// without calling fn; the error then lists the keys the method declares.
// It allocates nothing on success (reset's params: no key is copied, and
// the reader is the connection's).
func (c *conn) eachKeyOf(method string, ks protocol.KeySet, p []byte, fn func(k int, r *msgp.Reader) error) *Error {
	if p == nil {
		return nil
	}
	r := &c.params
	*r = msgp.NewReader(p)
	err := msgp.EachKey(r, func(kb []byte) error {
		k := ks.Of(kb)
		if k < 0 {
			return valueError{kb, errUnknownParam}
		}
		if err := fn(k, r); err != nil {
			return valueError{kb, err}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	return paramsError(method, declaredKeys(method), err)
}

// paramsError turns an error of msgp.EachKey over a method's params into the
// protocol error (nil for nil).
func paramsError(method, keys string, err error) *Error {
	if err == nil {
		return nil // before the targets of errors.As, which live on the heap
	}
	var rk msgp.RepeatedKeyError
	var ve valueError
	switch {
	case !errors.As(err, &ve) && errors.As(err, &rk):
		return errorf(protocol.CodeBadRequest, "%s: parameter %q appears twice", method, msgp.Clip(rk.Key))
	case ve.key == nil:
		return errorf(protocol.CodeBadRequest, "%s: params: %v", method, err)
	case errors.Is(ve.err, errUnknownParam):
		if keys == "" {
			return errorf(protocol.CodeBadRequest, "%s: unknown parameter %q (it takes protocol.None)", method, msgp.Clip(ve.key))
		}
		return errorf(protocol.CodeBadRequest, "%s: unknown parameter %q (parameters: %s)", method, msgp.Clip(ve.key), keys)
	}
	return paramError(method, string(ve.key), ve.err)
}

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
	c.log.Debug("hello", "client", msgp.Clip([]byte(pr.Client)))
	c.out = append(c.out, c.srv.hello...)
	return nil
}

// ping answers {}.
func (c *conn) ping(*protocol.None) *Error {
	c.out = msgp.AppendMapHeader(c.out, 0)
	return nil
}

// choice returns the index of s in names.
func choice(s string, names []string) (int, error) {
	for i, n := range names {
		if s == n {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", msgp.Clip([]byte(s)), strings.Join(names, ", "))
}

// rulesParam reads the rules: an env.ParseRules string or a map of its
// keys, read by msgp.EachKey and set on top of env.Standard by an
// env.RulesBuilder (bools as on/off, numbers in decimal, strs as they are),
// so the map and the string accept the same keys and aliases, fill in the
// same defaults and refuse a repeated key with the same message.
func rulesParam(r *msgp.Reader) (env.Rules, error) {
	switch r.PeekKind() {
	case 's':
		s, _ := r.Str()
		rules, err := env.ParseRules(string(s))
		if err != nil {
			return rules, rulesError{err}
		}
		return rules, nil
	case 'm':
	default:
		_, err := r.Str()
		return env.Rules{}, fmt.Errorf("want str or map: %w", err)
	}
	b := env.NewRulesBuilder(env.Standard())
	var setErr error
	err := msgp.EachKey(r, func(k []byte) error {
		var v string
		switch r.PeekKind() {
		case 'b':
			on, _ := r.Bool()
			v = "off"
			if on {
				v = "on"
			}
		case 'i':
			x, neg, _ := r.Int()
			if neg {
				v = strconv.FormatInt(int64(x), 10)
			} else {
				v = strconv.FormatUint(x, 10)
			}
		case 'f':
			f, _ := r.Float()
			v = strconv.FormatFloat(f, 'g', -1, 64)
		case 's':
			s, _ := r.Str()
			v = string(s)
		default:
			return fmt.Errorf("%s: want bool, int, float or str, got %s", msgp.Clip(k), msgp.KindName(r.PeekKind()))
		}
		if setErr == nil {
			setErr = b.Set(string(k), v)
		}
		return nil
	})
	if err != nil {
		return env.Rules{}, err
	}
	var rules env.Rules
	if setErr == nil {
		rules, setErr = b.Rules()
	}
	if setErr != nil {
		return rules, rulesError{setErr}
	}
	return rules, nil
}

// seatParam reads a seat: an int in 0..MaxPlayers-1 or "random".
func seatParam(r *msgp.Reader) (int, error) {
	if r.PeekKind() == 's' {
		s, _ := r.Str()
		if string(s) != "random" {
			return 0, fmt.Errorf("want a seat number or \"random\", got %q", msgp.Clip(s))
		}
		return vecenv.RandomSeat, nil
	}
	v, err := r.IntIn(0, env.MaxPlayers-1)
	return int(v), err
}

// makeConfig turns make's params into a batch configuration.
func makeConfig(pr *protocol.MakeParams) (cfg vecenv.Config, seatSet, oppSet bool, e *Error) {
	cfg = vecenv.Config{Rules: env.Standard(), Tier: DefaultTier, N: 1, Opponent: "random", Reward: vecenv.RewardWin,
		MaxDecisions: pr.MaxDecisions, Info: pr.Info}
	var err error
	if pr.Rules != nil {
		r := msgp.NewReader(pr.Rules)
		if cfg.Rules, err = rulesParam(&r); err != nil {
			return cfg, false, false, paramError("make", "rules", err)
		}
	}
	if pr.Tier != nil {
		if cfg.Tier, err = obs.ParseTier(*pr.Tier); err != nil {
			return cfg, false, false, paramError("make", "tier", err)
		}
	}
	if pr.N != nil {
		cfg.N = *pr.N
	}
	choices := []struct {
		key   string
		s     *string
		names []string
		set   func(int)
	}{
		{"mode", pr.Mode, vecenv.ModeNames(), func(i int) { cfg.Mode = vecenv.Mode(i) }},
		{"autoreset", pr.Autoreset, vecenv.AutoresetNames(), func(i int) { cfg.Autoreset = vecenv.Autoreset(i) }},
		{"reward", pr.Reward, vecenv.RewardNames(), func(i int) { cfg.Reward = vecenv.Reward(i) }},
		{"illegal", pr.Illegal, vecenv.IllegalNames(), func(i int) { cfg.Illegal = vecenv.Illegal(i) }},
	}
	for _, ch := range choices {
		if ch.s == nil {
			continue
		}
		i, err := choice(*ch.s, ch.names)
		if err != nil {
			return cfg, false, false, paramError("make", ch.key, err)
		}
		ch.set(i)
	}
	if pr.Seat != nil {
		r := msgp.NewReader(pr.Seat)
		if cfg.Seat, err = seatParam(&r); err != nil {
			return cfg, false, false, paramError("make", "seat", err)
		}
	}
	if pr.Opponent != nil {
		cfg.Opponent = *pr.Opponent
	}
	return cfg, pr.Seat != nil, pr.Opponent != nil, nil
}

// makeHandle creates a batch of envs.
func (c *conn) makeHandle(pr *protocol.MakeParams) *Error {
	cfg, seatSet, oppSet, e := makeConfig(pr)
	if e != nil {
		return e
	}
	players := cfg.Rules.Players
	switch {
	case cfg.Mode == vecenv.Multi && (seatSet || oppSet):
		return errorf(protocol.CodeBadRequest, "make: seat and opponent apply to mode single only")
	case cfg.Seat >= players:
		return errorf(protocol.CodeBadRequest, "make: params.seat: %d is out of range 0..%d for %d players", cfg.Seat, players-1, players)
	}
	opponent := "" // as the client named it, for the reply
	if cfg.Mode == vecenv.Single {
		_, build, e := c.agentSpec(c.srv.ctx, "make", "opponent", cfg.Opponent, 0)
		if e != nil {
			return e
		}
		if err := nnet.CheckSpecRules(build, cfg.Rules); err != nil {
			return errorf(protocol.CodeBadRequest, "make: params.opponent: %v", err)
		}
		opponent, cfg.Opponent = cfg.Opponent, build.String()
	} else {
		cfg.Opponent = ""
	}
	if cfg.N > c.srv.cfg.MaxEnvsPerConn-c.envs {
		return errorf(protocol.CodeLimitExceeded, "make: %d envs would exceed the %d envs allowed per connection (%d held)", cfg.N, c.srv.cfg.MaxEnvsPerConn, c.envs)
	}
	space, err := obs.SpaceOf(cfg.Tier)
	if err != nil {
		return errorf(protocol.CodeBadRequest, "make: %v", err)
	}
	if size := wire.ResultBytes(cfg, space.Size); size > c.srv.cfg.MaxFrame {
		return errorf(protocol.CodeLimitExceeded, "make: a step of %d envs of tier %s returns about %d bytes, more than max_frame %d; use smaller batches", cfg.N, cfg.Tier, size, c.srv.cfg.MaxFrame)
	}
	bytes := cfg.Bytes(space.Size)
	if !c.srv.reserveEnvs(cfg.N, bytes) {
		return errorf(protocol.CodeLimitExceeded, "make: %d envs (%d bytes) would exceed the server's limit of %d envs or %d bytes of envs",
			cfg.N, bytes, c.srv.cfg.MaxEnvs, c.srv.cfg.MaxEnvBytes)
	}
	b, err := vecenv.New(cfg)
	if err != nil {
		c.srv.releaseEnvs(cfg.N, bytes)
		return errorf(netCode(err, protocol.CodeBadRequest), "make: %v", err)
	}
	c.nextHandle++
	h := c.nextHandle
	c.handles[h] = b
	c.envs += cfg.N
	c.srv.stats.handles.Add(1)
	var seat any = cfg.Seat
	if cfg.Seat == vecenv.RandomSeat {
		seat = "random"
	}
	rewardShape := []int{cfg.N}
	if cfg.Mode == vecenv.Multi {
		rewardShape = []int{cfg.N, players}
	}
	return c.result("make", protocol.MakeResult{
		Handle: h, N: cfg.N, Players: players,
		Mode: cfg.Mode.String(), Autoreset: cfg.Autoreset.String(), Reward: cfg.Reward.String(),
		Illegal: cfg.Illegal.String(), Tier: cfg.Tier.String(), Opponent: opponent, Seat: seat,
		MaxDecisions: uint64(cfg.MaxDecisions), Info: cfg.Info, Rules: cfg.Rules.String(),
		ObsSize: b.ObsSize(), ObsLayout: obs.LayoutVersion, ObsSpace: spaceValue(b.Encoder().Space()), Actions: env.NumActions,
		RewardShape: rewardShape,
	})
}

// lookup returns the batch of handle h (nil: missing).
func (c *conn) lookup(method string, h *uint64) (*vecenv.Batch, *Error) {
	if h == nil {
		return nil, errorf(protocol.CodeBadRequest, "%s: missing params.handle", method)
	}
	b, ok := c.handles[*h]
	if !ok {
		return nil, errorf(protocol.CodeUnknownHandle, "%s: no handle %d on this connection", method, *h)
	}
	return b, nil
}

// reset starts a new episode in every env of a handle.
func (c *conn) reset(p []byte) *Error {
	var seedSet bool
	var seed uint64
	seedN := -1 // length of a seed array, -1 without one
	var seedList msgp.Reader
	start, seat, seatSet := env.AnySeat, 0, false
	var info *bool
	b, _, e := c.handleParams("reset", p, func(k int, r *msgp.Reader) (err error) {
		switch k {
		case protocol.ResetSeed:
			switch r.PeekKind() {
			case 'n':
				r.IsNil()
			case 'a':
				// Checked here, stored once the handle's env count is
				// known: nothing is allocated for a claimed length.
				seedN, _ = r.ArrayLen()
				seedList = *r
				for i := range seedN {
					if _, err = r.Uint64(); err != nil {
						return fmt.Errorf("[%d]: %w", i, err)
					}
				}
			default:
				seed, err = r.Uint64()
				seedSet = true
			}
		case protocol.ResetOpts:
			if r.IsNil() {
				return nil
			}
			start, seat, seatSet, err = resetOptions(r)
			return err
		case protocol.ResetInfo:
			v, err := r.Bool()
			info = &v
			return err
		}
		return err
	})
	if e != nil {
		return e
	}
	cfg := b.Config()
	n, players := cfg.N, cfg.Rules.Players
	switch {
	case seedN >= 0 && seedN != n:
		return errorf(protocol.CodeBadRequest, "reset: params.seed: %d seeds for %d envs", seedN, n)
	case start >= players:
		return errorf(protocol.CodeBadRequest, "reset: params.options.start: seat %d out of range 0..%d", start, players-1)
	case seatSet && cfg.Mode == vecenv.Multi:
		return errorf(protocol.CodeBadRequest, "reset: params.options.seat applies to mode single only")
	case seatSet && seat >= players:
		return errorf(protocol.CodeBadRequest, "reset: params.options.seat: %d out of range 0..%d", seat, players-1)
	}
	if seedN < 0 {
		if !seedSet {
			seed = rand.Uint64()
		}
		b.SeedAll(seed)
	} else {
		for i := range b.Seeds() {
			b.Seeds()[i], _ = seedList.Uint64() // checked while reading the params
		}
	}
	record := cfg.Info
	if info != nil {
		record = *info
	}
	if e := c.reserveReply("reset", wire.ReplyBytes(b, record, c.srv.cfg.MaxFrame), 1); e != nil {
		return e
	}
	if err := b.Reset(c.srv.pool, vecenv.ResetOptions{Start: start, Seat: seat, SeatSet: seatSet, Record: record}); err != nil {
		return errorf(netCode(err, protocol.CodeInternal), "reset: %v", err)
	}
	c.out = wire.AppendReset(c.out, b, record, c.srv.cfg.MaxFrame)
	return nil
}

// resetOptions reads reset's options map (by msgp.EachKey): start and seat.
func resetOptions(r *msgp.Reader) (start, seat int, seatSet bool, err error) {
	start = env.AnySeat
	err = msgp.EachKey(r, func(k []byte) error {
		switch protocol.ResetOptKeys.Of(k) {
		case protocol.OptStart:
			if r.IsNil() {
				start = env.AnySeat
				return nil
			}
			v, err := r.IntIn(0, env.MaxPlayers-1)
			if err != nil {
				return fmt.Errorf("start: %w", err)
			}
			start = int(v)
		case protocol.OptSeat:
			var err error
			if seat, err = seatParam(r); err != nil {
				return fmt.Errorf("seat: %w", err)
			}
			seatSet = true
		default:
			return fmt.Errorf("unknown option %q (options: %s)", msgp.Clip(k), strings.Join(protocol.ResetOptKeys, ", "))
		}
		return nil
	})
	return start, seat, seatSet, err
}

// step applies one action per env. It is the hot path: it reads its params
// with msgp.EachKey straight from the frame and allocates nothing.
func (c *conn) step(p []byte) *Error {
	var h uint64
	var hset bool
	var actions []byte
	var list msgp.Reader
	listN := -1
	var info int8 = -1
	r := msgp.NewReader(p)
	var err error
	if p != nil {
		err = msgp.EachKey(&r, func(kb []byte) error {
			var err error
			switch protocol.StepKeys.Of(kb) {
			case protocol.StepHandle:
				h, err = r.Uint64()
				hset = true
			case protocol.StepActions:
				switch r.PeekKind() {
				case 'B':
					actions, _ = r.Bin()
					listN = -1
				case 'a':
					listN, _ = r.ArrayLen()
					list = r
					_, err = r.SkipN(listN)
				default:
					err = fmt.Errorf("want bin of int32 or array of int, got %s", msgp.KindName(r.PeekKind()))
				}
			case protocol.StepInfo:
				var v bool
				v, err = r.Bool()
				info = 0
				if v {
					info = 1
				}
			default:
				err = errUnknownParam
			}
			if err != nil {
				return valueError{kb, err}
			}
			return nil
		})
	}
	if err != nil {
		return paramsError("step", declaredKeys("step"), err)
	}
	var hp *uint64
	if hset {
		hp = &h
	}
	b, e := c.lookup("step", hp)
	if e != nil {
		return e
	}
	if !b.Started() {
		return errorf(protocol.CodeNeedsReset, "step: handle %d was never reset", h)
	}
	cfg := b.Config()
	nEnv := cfg.N
	acts := b.Actions()
	switch {
	case actions != nil:
		if len(actions) != 4*nEnv {
			return errorf(protocol.CodeBadRequest, "step: params.actions: %d bytes, want %d (N = %d little-endian int32)", len(actions), 4*nEnv, nEnv)
		}
		for i := range acts {
			acts[i] = int32(binary.LittleEndian.Uint32(actions[4*i:]))
		}
	case listN >= 0:
		if listN != nEnv {
			return errorf(protocol.CodeBadRequest, "step: params.actions: %d actions for %d envs", listN, nEnv)
		}
		for i := range acts {
			v, err := list.IntIn(math.MinInt32, math.MaxInt32)
			if err != nil {
				return errorf(protocol.CodeBadRequest, "step: params.actions[%d]: %v", i, err)
			}
			acts[i] = int32(v)
		}
	default:
		return errorf(protocol.CodeBadRequest, "step: missing params.actions")
	}
	if err := b.CheckActions(); err != nil {
		if errors.Is(err, vecenv.ErrIllegalAction) {
			return errorf(protocol.CodeIllegalAction, "step: %v", err)
		}
		return errorf(protocol.CodeBadRequest, "step: %v", err)
	}
	record := cfg.Info
	if info >= 0 {
		record = info == 1
	}
	if e := c.reserveReply("step", wire.ReplyBytes(b, record, c.srv.cfg.MaxFrame), 1); e != nil {
		return e
	}
	if err := b.Step(c.srv.pool, record); err != nil {
		return errorf(netCode(err, protocol.CodeInternal), "step: %v", err)
	}
	c.srv.stats.steps.Add(uint64(nEnv))
	c.out = wire.AppendStep(c.out, b, record, c.srv.cfg.MaxFrame)
	return nil
}

// closeHandle frees a handle.
func (c *conn) closeHandle(pr *protocol.HandleParams) *Error {
	b, e := c.lookup("close", pr.Handle)
	if e != nil {
		return e
	}
	delete(c.handles, *pr.Handle)
	c.envs -= b.N()
	c.srv.releaseEnvs(b.N(), b.Bytes())
	c.srv.stats.handles.Add(-1)
	c.out = msgp.AppendMapHeader(c.out, 0)
	return nil
}

// handleParams reads reset's params: the handle, and the other keys of
// protocol.ResetKeys by fn; it looks the handle up.
func (c *conn) handleParams(method string, p []byte, fn func(k int, r *msgp.Reader) error) (*vecenv.Batch, uint64, *Error) {
	var h uint64
	var hset bool
	e := c.eachKeyOf(method, protocol.ResetKeys, p, func(k int, r *msgp.Reader) (err error) {
		if k == protocol.ResetHandle {
			h, err = r.Uint64()
			hset = true
			return err
		}
		return fn(k, r)
	})
	if e != nil {
		return nil, h, e
	}
	var hp *uint64
	if hset {
		hp = &h
	}
	b, e := c.lookup(method, hp)
	return b, h, e
}

// statsResult reports the server's counters and latency percentiles.
func (c *conn) statsResult(*protocol.None) *Error {
	st := &c.srv.stats
	lat := msgp.Obj{}
	for m := range st.latency {
		if st.latency[m].count.Load() > 0 {
			lat = append(lat, msgp.KV{methodNames[m], st.latency[m].summary()})
		}
	}
	return c.result("stats", protocol.StatsResult{
		UptimeS: round2(time.Since(c.srv.started).Seconds()), Connections: st.connections.Load(),
		ConnectionsTotal: st.connectionsTotal.Load(), Envs: st.envs.Load(), Handles: st.handles.Load(),
		Steps: st.steps.Load(), Requests: st.requests.Load(), Errors: st.errors.Load(),
		Conn:      protocol.StatsConn{Envs: c.envs, Handles: len(c.handles), Requests: c.requests},
		LatencyUs: lat,
	})
}

// indexed looks up one env of a handle: the params handle and index.
func (c *conn) indexed(method string, h, idx *uint64) (*vecenv.Batch, int, *Error) {
	b, e := c.lookup(method, h)
	switch {
	case e != nil:
		return nil, 0, e
	case idx == nil:
		return nil, 0, errorf(protocol.CodeBadRequest, "%s: missing params.index", method)
	case *idx >= uint64(b.N()):
		return nil, 0, errorf(protocol.CodeBadRequest, "%s: params.index: %d out of range 0..%d", method, *idx, b.N()-1)
	case !b.Started():
		return nil, 0, errorf(protocol.CodeNeedsReset, "%s: handle %d was never reset", method, *h)
	}
	return b, int(*idx), nil
}

// save returns one env's game state as the engine's versioned blob.
func (c *conn) save(pr *protocol.IndexParams) *Error {
	b, i, e := c.indexed("save", pr.Handle, pr.Index)
	if e != nil {
		return e
	}
	blob, err := b.State(i).MarshalBinary()
	if err != nil {
		return errorf(protocol.CodeInternal, "save: %v", err)
	}
	return c.result("save", protocol.StateResult{State: blob})
}

// load replaces one env's game with a saved state.
func (c *conn) load(pr *protocol.LoadParams) *Error {
	b, i, e := c.indexed("load", pr.Handle, pr.Index)
	if e != nil {
		return e
	}
	blob := pr.State
	if blob == nil {
		return errorf(protocol.CodeBadRequest, "load: missing params.state")
	}
	players := b.Config().Rules.Players
	if pr.Seat != nil && (b.Config().Mode != vecenv.Single || *pr.Seat >= players) {
		return errorf(protocol.CodeBadRequest, "load: params.seat: only in mode single, 0..%d", players-1)
	}
	// The engine's decoder walks the blob with Decoder.Skip, which recurses
	// per nesting level: bound the depth first.
	if n, err := msgp.CheckValue(blob); err != nil || n != len(blob) {
		if err == nil {
			err = fmt.Errorf("%d trailing bytes", len(blob)-n)
		}
		return errorf(protocol.CodeBadState, "load: %v", err)
	}
	s, err := env.UnmarshalState(blob)
	if err != nil {
		return errorf(protocol.CodeBadState, "load: %v", err)
	}
	if s.Rules() != b.Config().Rules {
		return errorf(protocol.CodeBadState, "load: the state is for rules %q, the handle plays %q", s.Rules().String(), b.Config().Rules.String())
	}
	seat := vecenv.RandomSeat
	if pr.Seat != nil {
		seat = *pr.Seat
	}
	if err := b.Load(i, s, seat); err != nil {
		return errorf(protocol.CodeInternal, "load: %v", err)
	}
	o, m, toMove := b.Row(i)
	c.out = wire.AppendRow(msgp.AppendMapHeader(c.out, 3), o, m, []int8{toMove})
	return nil
}

// render returns one env's position as text, SVG, or an RGB image
// (height x width x 3 bytes, row-major) for Gymnasium's rgb_array mode.
func (c *conn) render(pr *protocol.RenderParams) *Error {
	b, i, e := c.indexed("render", pr.Handle, pr.Index)
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
		return c.result("render", protocol.RenderText{Text: st.Render()})
	case "svg":
		return c.result("render", protocol.RenderSVG{SVG: string(render.SVG(st, render.Options{Numbers: true}))})
	case "rgb":
		// The image, its copy in the reply and the renderer's canvas.
		if e := c.reserveReply("render", 64+3*render.Width*render.Height, 3); e != nil {
			return e
		}
		rgb := render.RGB(st, render.Options{}, nil)
		return c.result("render", protocol.RenderRGB{Height: render.Height, Width: render.Width, RGB: rgb})
	default:
		return errorf(protocol.CodeUnsupported, "render: format %q is not supported (formats: text, svg, rgb)", msgp.Clip([]byte(format)))
	}
}

// observe returns every env's observation and mask as seen by one seat: the
// mask row is all zero exactly when that seat cannot act in that env.
func (c *conn) observe(pr *protocol.ObserveParams) *Error {
	b, e := c.lookup("observe", pr.Handle)
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
		return errorf(protocol.CodeBadRequest, "observe: missing params.seat")
	case seat >= players:
		return errorf(protocol.CodeBadRequest, "observe: params.seat: %d out of range 0..%d", seat, players-1)
	case !b.Started():
		return errorf(protocol.CodeNeedsReset, "observe: handle %d was never reset", h)
	}
	if e := c.reserveReply("observe", 64+b.N()*(4*b.ObsSize()+env.NumActions), 2); e != nil {
		return e
	}
	o := make([]float32, b.N()*b.ObsSize())
	m := make([]uint8, b.N()*env.NumActions)
	if err := b.Observe(seat, o, m); err != nil {
		return errorf(protocol.CodeInternal, "observe: %v", err)
	}
	out := msgp.AppendMapHeader(c.out, 2)
	out = msgp.AppendStr(out, "obs")
	out = msgp.AppendF32Bin(out, o)
	out = msgp.AppendStr(out, "mask")
	c.out = msgp.AppendBin(out, m)
	return nil
}
