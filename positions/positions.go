package positions

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// ErrSize is matched (errors.Is) by the *SizeError of a slice of packed
// states whose length is not a multiple of env.PackedSize, or of a column
// of the wrong length.
var ErrSize = errors.New("wrong size")

// SizeError is a slice of the wrong length; it matches ErrSize.
type SizeError struct {
	// Name names the slice ("states", "actions", "throws"), Msg what is wrong.
	Name, Msg string
}

// Error returns "name: msg".
func (e *SizeError) Error() string { return e.Name + ": " + e.Msg }

// Is reports whether target is ErrSize.
func (e *SizeError) Is(target error) bool { return target == ErrSize }

// ErrRules is wrapped by the error of a saved state whose rules are not
// the game's.
var ErrRules = errors.New("other rules")

// RowError is the failure of one state: the lowest failing row of a call.
type RowError struct {
	// Row is the state's index.
	Row int
	// Err is what failed: env.ErrCorrupt or env.ErrVersion for a packed
	// state that does not read, env.ErrIllegalAction, env.ErrWrongPhase or
	// env.ErrBadInput for a refused action or throw, or a recovered panic.
	Err error
}

// Error returns "row N: err".
func (e *RowError) Error() string { return fmt.Sprintf("row %d: %v", e.Row, e.Err) }

// Unwrap returns Err.
func (e *RowError) Unwrap() error { return e.Err }

// Game is one rule set: an initial state whose rules and chance tables
// every state read under it copies, and its observation encoders (made on
// first use). It is safe for concurrent use.
type Game struct {
	proto env.State
	mu    sync.Mutex
	enc   map[obs.Tier]*obs.Encoder
}

// NewGame returns the game of rules (env.ErrInvalidRules when refused).
func NewGame(rules env.Rules) (*Game, error) {
	proto, err := env.New(rules, 0, 0)
	if err != nil {
		return nil, err
	}
	return &Game{proto: proto}, nil
}

// Rules returns the game's rules.
func (g *Game) Rules() env.Rules { return g.proto.Rules() }

// Proto returns the state every state of the game is unpacked into (copy
// it before Unpack).
func (g *Game) Proto() *env.State { return &g.proto }

// Encoder returns the game's encoder of tier t.
func (g *Game) Encoder(t obs.Tier) (*obs.Encoder, error) {
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

// Count returns how many packed states b holds (ErrSize when its length
// is not a multiple of env.PackedSize).
func Count(b []byte) (int, error) {
	if len(b)%env.PackedSize != 0 {
		return 0, &SizeError{"states", fmt.Sprintf("%d bytes is not a multiple of the state size %d", len(b), env.PackedSize)}
	}
	return len(b) / env.PackedSize, nil
}

// Unpack reads one packed state under the game's rules.
func (g *Game) Unpack(b []byte) (env.State, error) {
	s := g.proto
	err := s.Unpack(b)
	return s, err
}

// rowOp runs fn over the rows of a call on a pool; the first failing row
// (lowest index) is kept.
type rowOp struct {
	g   *Game
	in  []byte
	fn  func(i int, s *env.State) error
	mu  sync.Mutex
	bad int
	err error
}

func (o *rowOp) runRange(lo, hi int) {
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

func (o *rowOp) fail(i int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil || i < o.bad {
		o.bad, o.err = i, err
	}
}

// Each unpacks every state of in and calls fn with it on p's workers (a
// worker's panic is the row's error); it returns the lowest failing row's
// *RowError.
func (g *Game) Each(p *vecenv.Pool, in []byte, fn func(i int, s *env.State) error) error {
	n, err := Count(in)
	if err != nil {
		return err
	}
	o := &rowOp{g: g, in: in, fn: fn}
	p.Range(n, o.runRange, o.fail)
	if o.err != nil {
		return &RowError{Row: o.bad, Err: o.err}
	}
	return nil
}

// Initial writes n new games, seeds seed, seed+1, ..., starting seat
// start (env.AnySeat: drawn), to out (n*env.PackedSize bytes).
func (g *Game) Initial(seed uint64, start int, out []byte) error {
	for i := range len(out) / env.PackedSize {
		s, err := env.New(g.proto.Rules(), seed+uint64(i), start)
		if err != nil {
			return err
		}
		s.AppendPacked(out[i*env.PackedSize : i*env.PackedSize])
	}
	return nil
}

// Apply applies to every state of in one action (actions: one
// little-endian int32 a state) or one throw (throws: one int8 a state, a
// throw id or -1 to sample; actions nil) and writes the states to out
// (len(in) bytes).
func (g *Game) Apply(p *vecenv.Pool, in, actions, throws, out []byte) error {
	n, err := Count(in)
	switch {
	case err != nil:
		return err
	case actions != nil && len(actions) != 4*n:
		return &SizeError{"actions", fmt.Sprintf("%d bytes, want %d (one little-endian int32 per state)", len(actions), 4*n)}
	case actions == nil && len(throws) != n:
		return &SizeError{"throws", fmt.Sprintf("%d bytes, want %d (one int8 per state: a throw id, or -1 to sample)", len(throws), n)}
	}
	return g.Each(p, in, func(i int, s *env.State) error {
		var err error
		if actions != nil {
			a := int32(binary.LittleEndian.Uint32(actions[4*i:]))
			if a < 0 || a >= env.NumActions {
				return fmt.Errorf("%w: action id %d out of range 0..%d", env.ErrIllegalAction, a, env.NumActions-1)
			}
			_, err = s.Apply(env.Action(a))
		} else if t := int8(throws[i]); t < 0 {
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
}

// Query is what Game.Query reports of every state: the columns to fill,
// each nil when not asked for, one row a state.
type Query struct {
	// Phase and ToMove: one byte a state.
	Phase, ToMove []byte
	// Mask: env.NumActions bytes a state, 1 for a legal action.
	Mask []byte
	// Returns: Players little-endian float32 a state (env.State.Outcome).
	Returns []byte
	// Obs: Encoder.Size() little-endian float32 a state, as Seat sees it.
	Obs []byte
	// Encoder encodes Obs.
	Encoder *obs.Encoder
	// Seat is the seat Obs is seen by; -1: the seat to move.
	Seat int
}

// Query fills q's columns for every state of in.
func (g *Game) Query(p *vecenv.Pool, in []byte, q *Query) error {
	players := g.proto.Rules().Players
	var bufs sync.Pool
	d := 0
	if q.Obs != nil {
		d = q.Encoder.Size()
		bufs.New = func() any { b := make([]float32, d); return &b }
	}
	return g.Each(p, in, func(i int, s *env.State) error {
		if q.Phase != nil {
			q.Phase[i] = uint8(s.Phase())
		}
		if q.ToMove != nil {
			q.ToMove[i] = uint8(s.ToMove())
		}
		if q.Mask != nil {
			s.Mask(q.Mask[i*env.NumActions : (i+1)*env.NumActions])
		}
		if q.Returns != nil {
			for k := range players {
				binary.LittleEndian.PutUint32(q.Returns[4*(i*players+k):], math.Float32bits(float32(s.Outcome(k))))
			}
		}
		if q.Obs != nil {
			who := q.Seat
			if who < 0 {
				who = s.ToMove()
			}
			bp := bufs.Get().(*[]float32)
			q.Encoder.Encode(s, who, *bp)
			for k, v := range *bp {
				binary.LittleEndian.PutUint32(q.Obs[4*(i*d+k):], math.Float32bits(v))
			}
			bufs.Put(bp)
		}
		return nil
	})
}

// CheckDecisions refuses (env.ErrBadInput) a state that is not at a
// decision (phase move): an agent acts only there.
func (g *Game) CheckDecisions(p *vecenv.Pool, in []byte) error {
	return g.Each(p, in, func(i int, s *env.State) error {
		if s.Phase() != env.PhaseMove {
			return fmt.Errorf("%w: the state is in phase %s: an agent acts only at a decision (phase move)", env.ErrBadInput, s.Phase())
		}
		return nil
	})
}

// Description is one state made readable: describe's result
// (env.StateDesc, where the protocol declares it too).
type Description = env.StateDesc

// Describe describes one state (env.DescribeState).
func Describe(s *env.State) (Description, error) { return env.DescribeState(s) }

// FromDesc returns the packed state of a readable position under the
// game's rules, its chance stream seeded by seed.
func (g *Game) FromDesc(d *env.PositionDesc, seed uint64) ([]byte, error) {
	pos, err := d.Position(g.proto.Rules())
	if err != nil {
		return nil, err
	}
	s, err := env.FromPosition(pos, seed)
	if err != nil {
		return nil, err
	}
	return s.AppendPacked(nil), nil
}

// Load reads a saved-state blob (env.State.MarshalBinary) and returns it
// packed, with its rules. Given a game (g not nil), the blob's rules must
// be the game's (ErrRules).
func (g *Game) Load(blob []byte) ([]byte, env.Rules, error) {
	s, err := env.UnmarshalState(blob)
	if err != nil {
		return nil, env.Rules{}, err
	}
	if g != nil && s.Rules() != g.proto.Rules() {
		return nil, env.Rules{}, fmt.Errorf("the state is for rules %q, the game plays %q: %w", s.Rules().String(), g.proto.Rules().String(), ErrRules)
	}
	return s.AppendPacked(nil), s.Rules(), nil
}
