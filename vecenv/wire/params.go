package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv"
)

// DefaultTier is the observation tier make uses when none is given.
const DefaultTier = obs.Compact

// ParamError is a bad param: the server answers bad_request (or
// invalid_rules for a RulesError) naming the method and params.Key.
type ParamError struct {
	Key string // the param's key, "seat", "actions[3]"
	Err error  // what is wrong with it (ErrMissing: it is absent)
}

// Error names the key.
func (e *ParamError) Error() string { return "params." + e.Key + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *ParamError) Unwrap() error { return e.Err }

// ErrMissing is a required param that is absent (ParamError.Err).
var ErrMissing = errors.New("missing")

// RulesError is a rules param the engine refused (invalid_rules).
type RulesError struct {
	Err error // the engine's refusal
}

// Error returns the engine's message.
func (e RulesError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e RulesError) Unwrap() error { return e.Err }

// Rules reads the rules param: an env.ParseRules string or a map of its
// keys, read by msgp.EachKey and set on top of env.Standard by an
// env.RulesBuilder (bools as on/off, numbers in decimal, strs as they are),
// so the map and the string accept the same keys and aliases, fill in the
// same defaults and refuse a repeated key with the same message. Rules the
// engine refuses are a RulesError.
func Rules(r *msgp.Reader) (env.Rules, error) {
	switch r.PeekKind() {
	case 's':
		s, _ := r.Str()
		rules, err := env.ParseRules(string(s))
		if err != nil {
			return rules, RulesError{err}
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
		return rules, RulesError{setErr}
	}
	return rules, nil
}

// Seat reads a seat: an int in 0..env.MaxPlayers-1 or "random"
// (vecenv.RandomSeat).
func Seat(r *msgp.Reader) (int, error) {
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

// Choice returns the index of s in names.
func Choice(s string, names []string) (int, error) {
	for i, n := range names {
		if s == n {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", msgp.Clip([]byte(s)), strings.Join(names, ", "))
}

// MakeConfig turns make's params into a batch configuration, filling in
// the defaults; seatSet and oppSet report whether the params named a seat
// and an opponent. A bad param is a *ParamError.
func MakeConfig(pr *protocol.MakeParams) (cfg vecenv.Config, seatSet, oppSet bool, err error) {
	cfg = vecenv.Config{Rules: env.Standard(), Tier: DefaultTier, N: 1, Opponent: "random", Reward: vecenv.RewardWin,
		MaxDecisions: pr.MaxDecisions, Info: pr.Info}
	if pr.Rules != nil {
		r := msgp.NewReader(pr.Rules)
		if cfg.Rules, err = Rules(&r); err != nil {
			return cfg, false, false, &ParamError{"rules", err}
		}
	}
	if pr.Tier != nil {
		if cfg.Tier, err = obs.ParseTier(*pr.Tier); err != nil {
			return cfg, false, false, &ParamError{"tier", err}
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
		i, err := Choice(*ch.s, ch.names)
		if err != nil {
			return cfg, false, false, &ParamError{ch.key, err}
		}
		ch.set(i)
	}
	if pr.Seat != nil {
		r := msgp.NewReader(pr.Seat)
		if cfg.Seat, err = Seat(&r); err != nil {
			return cfg, false, false, &ParamError{"seat", err}
		}
	}
	if pr.Opponent != nil {
		cfg.Opponent = *pr.Opponent
	}
	switch {
	case pr.Opponents != nil && pr.Opponent != nil:
		return cfg, false, false, &ParamError{"opponents", errors.New("give opponent (one spec) or opponents (a mixture), not both")}
	case pr.Opponents != nil:
		if cfg.Opponents, err = Mixture(pr.Opponents, pr.Weights); err != nil {
			return cfg, false, false, err
		}
		cfg.Opponent = ""
	case pr.Weights != nil:
		return cfg, false, false, &ParamError{"weights", errors.New("weights apply to an opponents mixture")}
	}
	return cfg, pr.Seat != nil, pr.Opponent != nil || pr.Opponents != nil, nil
}

// Mixture reads an opponent mixture: opponents, an array of 1 to
// vecenv.MaxOpponents agent specs (vecenv.Client for an entry the client
// plays), and weights, nil (every weight 1) or an array of as many finite
// numbers > 0. A bad param is a *ParamError.
func Mixture(opponents, weights []byte) ([]vecenv.Opponent, error) {
	r := msgp.NewReader(opponents)
	n, err := r.ArrayLen()
	if err != nil {
		return nil, &ParamError{"opponents", fmt.Errorf("want an array of agent specs: %w", err)}
	}
	if n < 1 || n > vecenv.MaxOpponents {
		return nil, &ParamError{"opponents", fmt.Errorf("%d entries, want 1..%d", n, vecenv.MaxOpponents)}
	}
	mix := make([]vecenv.Opponent, n)
	for i := range mix {
		s, err := r.Str()
		if err != nil {
			return nil, &ParamError{fmt.Sprintf("opponents[%d]", i), fmt.Errorf("want an agent spec: %w", err)}
		}
		mix[i] = vecenv.Opponent{Spec: string(s), Weight: 1}
	}
	if weights == nil {
		return mix, nil
	}
	r = msgp.NewReader(weights)
	m, err := r.ArrayLen()
	if err != nil {
		return nil, &ParamError{"weights", fmt.Errorf("want an array of numbers: %w", err)}
	}
	if m != n {
		return nil, &ParamError{"weights", fmt.Errorf("%d weights for %d opponents", m, n)}
	}
	for i := range mix {
		w, err := r.Float()
		if err == nil && !(w > 0 && w <= math.MaxFloat64) {
			err = fmt.Errorf("%v: want a finite number > 0", w)
		}
		if err != nil {
			return nil, &ParamError{fmt.Sprintf("weights[%d]", i), err}
		}
		mix[i].Weight = w
	}
	return mix, nil
}

// MakeResult is make's result for batch b of cfg, made as handle h;
// opponent is the opponent as the client named it ("" in mode multi or
// for a mixture), and opponents the specs of a mixture as the client named
// them (nil without one).
func MakeResult(cfg vecenv.Config, b *vecenv.Batch, h uint64, opponent string, opponents []string) protocol.MakeResult {
	var weights []float64
	if opponents != nil {
		for _, o := range cfg.Opponents {
			weights = append(weights, o.Weight)
		}
	}
	var seat any = cfg.Seat
	if cfg.Seat == vecenv.RandomSeat {
		seat = "random"
	}
	players := cfg.Rules.Players
	rewardShape := []int{cfg.N}
	if cfg.Mode == vecenv.Multi {
		rewardShape = []int{cfg.N, players}
	}
	return protocol.MakeResult{
		Handle: h, N: cfg.N, Players: players,
		Mode: cfg.Mode.String(), Autoreset: cfg.Autoreset.String(), Reward: cfg.Reward.String(),
		Illegal: cfg.Illegal.String(), Tier: cfg.Tier.String(), Opponent: opponent, Seat: seat,
		Opponents: opponents, Weights: weights,
		MaxDecisions: uint64(cfg.MaxDecisions), Info: cfg.Info, Luck: luckName(cfg), Rules: cfg.Rules.String(),
		ObsSize: b.ObsSize(), ObsLayout: obs.LayoutVersion, ObsSpace: Space(b.Encoder().Space()), Actions: env.NumActions,
		RewardShape: rewardShape,
	}
}

// luckName is make's luck: the value function's name, or "" (absent) when off.
func luckName(cfg vecenv.Config) string {
	if cfg.Luck == nil {
		return ""
	}
	return cfg.LuckName
}

// Space converts an observation space to its wire form (make's obs_space,
// hello's tiers).
func Space(sp obs.Space) msgp.Obj {
	parts := make([]msgp.Obj, len(sp.Parts))
	for i, p := range sp.Parts {
		names := p.Names
		if names == nil {
			names = []string{}
		}
		axes := p.Axes
		if axes == nil {
			axes = []string{}
		}
		parts[i] = msgp.Obj{
			{"name", p.Name}, {"offset", p.Offset}, {"shape", p.Shape}, {"names", names},
			{"axes", axes}, {"low", p.Low}, {"high", p.High}, {"doc", p.Doc},
		}
	}
	return msgp.Obj{
		{"tier", sp.Tier}, {"size", sp.Size}, {"dtype", sp.Dtype},
		{"low", sp.Low}, {"high", sp.High}, {"parts", parts},
	}
}

// ResetArgs are reset's params (protocol.ResetParams) as read by
// ReadReset, without allocating: a seed list is checked and kept as a
// reader over the frame until the batch's size is known.
type ResetArgs struct {
	// Handle is the handle param; HandleSet reports whether it was given.
	Handle    uint64
	HandleSet bool
	// Options are the options map's start and seat (Record is Info's).
	Options vecenv.ResetOptions
	// Info is -1 (the handle's default), 0 or 1.
	Info int8
	// Shared leaves the rows in the handle's shared region.
	Shared  bool
	seed    uint64
	seedSet bool
	seedN   int // length of a seed array, -1 without one
	seeds   msgp.Reader
}

// ReadReset reads reset's params p (nil: none) with r, the caller's
// reader, into a; an error is what msgp.EachKey returns, its keys'
// failures as msgp.KeyError. It allocates nothing on success.
func ReadReset(p []byte, r *msgp.Reader, a *ResetArgs) error {
	*a = ResetArgs{Options: vecenv.ResetOptions{Start: env.AnySeat}, Info: -1, seedN: -1}
	if p == nil {
		return nil
	}
	*r = msgp.NewReader(p)
	return msgp.EachKey(r, func(kb []byte) (err error) {
		switch protocol.ResetKeys.Of(kb) {
		case protocol.ResetHandle:
			a.Handle, err = r.Uint64()
			a.HandleSet = true
		case protocol.ResetSeed:
			switch r.PeekKind() {
			case 'n':
				r.IsNil()
			case 'a':
				// Checked here, stored once the handle's env count is
				// known: nothing is allocated for a claimed length.
				a.seedN, _ = r.ArrayLen()
				a.seeds = *r
				for i := range a.seedN {
					if _, err = r.Uint64(); err != nil {
						err = fmt.Errorf("[%d]: %w", i, err)
						break
					}
				}
			default:
				a.seed, err = r.Uint64()
				a.seedSet = true
			}
		case protocol.ResetOpts:
			if !r.IsNil() {
				err = resetOptions(r, &a.Options)
			}
		case protocol.ResetInfo:
			a.Info, err = infoFlag(r)
		case protocol.ResetShared:
			a.Shared, err = r.Bool()
		default:
			err = msgp.ErrUnknownKey
		}
		if err != nil {
			return msgp.KeyError{Key: kb, Err: err}
		}
		return nil
	})
}

// infoFlag reads reset's and step's info flag (a bool) as 1 or 0.
func infoFlag(r *msgp.Reader) (int8, error) {
	v, err := r.Bool()
	if v {
		return 1, err
	}
	return 0, err
}

// resetOptions reads reset's options map (by msgp.EachKey): start and seat.
func resetOptions(r *msgp.Reader, o *vecenv.ResetOptions) error {
	return msgp.EachKey(r, func(k []byte) error {
		switch protocol.ResetOptKeys.Of(k) {
		case protocol.OptStart:
			if r.IsNil() {
				o.Start = env.AnySeat
				return nil
			}
			v, err := r.IntIn(0, env.MaxPlayers-1)
			if err != nil {
				return fmt.Errorf("start: %w", err)
			}
			o.Start = int(v)
		case protocol.OptSeat:
			var err error
			if o.Seat, err = Seat(r); err != nil {
				return fmt.Errorf("seat: %w", err)
			}
			o.SeatSet = true
		default:
			return fmt.Errorf("unknown option %q (options: %s)", msgp.Clip(k), strings.Join(protocol.ResetOptKeys, ", "))
		}
		return nil
	})
}

// SeedCount is the length of the seed list, -1 without one.
func (a *ResetArgs) SeedCount() int { return a.seedN }

// Seed sets the seeds of b's envs: the list's, or seed, seed+1, ... from
// the one seed given (a random one without).
func (a *ResetArgs) Seed(b *vecenv.Batch) {
	if a.seedN < 0 {
		if !a.seedSet {
			a.seed = rand.Uint64()
		}
		b.SeedAll(a.seed)
		return
	}
	for i := range b.Seeds() {
		b.Seeds()[i], _ = a.seeds.Uint64() // checked by ReadReset
	}
}

// StepArgs are step's params (protocol.StepParams) as read by ReadStep,
// without allocating: the actions stay in the frame until Actions.
type StepArgs struct {
	// Handle is the handle param; HandleSet reports whether it was given.
	Handle    uint64
	HandleSet bool
	// Info is -1 (the handle's default), 0 or 1.
	Info int8
	// Shared rings the handle's shared region for request Seq; the
	// actions are then the region's.
	Shared bool
	Seq    uint32
	bin    []byte      // actions as a bin of int32
	list   msgp.Reader // actions as an array of int
	listN  int
}

// ReadStep reads step's params p (nil: none) into a; an error is what
// msgp.EachKey returns, its keys' failures as msgp.KeyError. It allocates
// nothing on success.
func ReadStep(p []byte, a *StepArgs) error {
	*a = StepArgs{Info: -1, listN: -1}
	if p == nil {
		return nil
	}
	r := msgp.NewReader(p)
	return msgp.EachKey(&r, func(kb []byte) error {
		var err error
		switch protocol.StepKeys.Of(kb) {
		case protocol.StepHandle:
			a.Handle, err = r.Uint64()
			a.HandleSet = true
		case protocol.StepActions:
			switch r.PeekKind() {
			case 'B':
				a.bin, _ = r.Bin()
				a.listN = -1
			case 'a':
				a.listN, _ = r.ArrayLen()
				a.list = r
				_, err = r.SkipN(a.listN)
			default:
				err = fmt.Errorf("want bin of int32 or array of int, got %s", msgp.KindName(r.PeekKind()))
			}
		case protocol.StepInfo:
			a.Info, err = infoFlag(&r)
		case protocol.StepShared:
			a.Shared, err = r.Bool()
		case protocol.StepSeq:
			var v uint64
			if v, err = r.Uint64(); err == nil && v > math.MaxUint32 {
				err = fmt.Errorf("%d is out of range 0..%d", v, uint32(math.MaxUint32))
			}
			a.Seq = uint32(v)
		default:
			err = msgp.ErrUnknownKey
		}
		if err != nil {
			return msgp.KeyError{Key: kb, Err: err}
		}
		return nil
	})
}

// HasActions reports whether the params carry actions.
func (a *StepArgs) HasActions() bool { return a.bin != nil || a.listN >= 0 }

// Actions copies the actions into dst, one per env; a wrong count or
// value is a *ParamError (missing: ErrMissing).
func (a *StepArgs) Actions(dst []int32) error {
	n := len(dst)
	switch {
	case a.bin != nil:
		if len(a.bin) != 4*n {
			return &ParamError{"actions", fmt.Errorf("%d bytes, want %d (N = %d little-endian int32)", len(a.bin), 4*n, n)}
		}
		for i := range dst {
			dst[i] = int32(binary.LittleEndian.Uint32(a.bin[4*i:]))
		}
	case a.listN >= 0:
		if a.listN != n {
			return &ParamError{"actions", fmt.Errorf("%d actions for %d envs", a.listN, n)}
		}
		for i := range dst {
			v, err := a.list.IntIn(math.MinInt32, math.MaxInt32)
			if err != nil {
				return &ParamError{"actions[" + strconv.Itoa(i) + "]", err}
			}
			dst[i] = int32(v)
		}
	default:
		return &ParamError{"actions", ErrMissing}
	}
	return nil
}
