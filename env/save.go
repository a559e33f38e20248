package env

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vmihailenco/msgpack/v5"
)

// StateFormat and StateVersion identify a saved state blob.
const (
	StateFormat  = "yutenv-state"
	StateVersion = 1
)

// savedState is the msgpack layout of a saved state (docs/FORMATS.md).
type savedState struct {
	Format    string   `msgpack:"format"`
	Version   int      `msgpack:"version"`
	Position  Position `msgpack:"position"`
	RNG       []byte   `msgpack:"rng"`
	Start     int      `msgpack:"start"`
	Decisions counter  `msgpack:"decisions"`
	Throws    counter  `msgpack:"throws"`
}

// counter is a saved count (decisions, throws). It decodes any msgpack
// integer and refuses what does not fit in 0..2^32-1, where a plain uint32
// field would silently wrap a hostile 2^32+5 to 5 or -1 to 2^32-1.
type counter uint32

// DecodeMsgpack implements msgpack.CustomDecoder.
func (c *counter) DecodeMsgpack(d *msgpack.Decoder) error {
	v, err := d.DecodeInterfaceLoose()
	if err != nil {
		return err
	}
	switch n := v.(type) {
	case int64:
		if n < 0 || n > math.MaxUint32 {
			return fmt.Errorf("count %d out of range 0..%d", n, uint32(math.MaxUint32))
		}
		*c = counter(n)
	case uint64:
		if n > math.MaxUint32 {
			return fmt.Errorf("count %d out of range 0..%d", n, uint32(math.MaxUint32))
		}
		*c = counter(n)
	default:
		return fmt.Errorf("count: want an integer, got %T", v)
	}
	return nil
}

// MarshalBinary saves the whole state, rules and generator included, as a
// versioned msgpack map. Restoring it with UnmarshalState gives a state that
// plays on identically.
func (s *State) MarshalBinary() ([]byte, error) {
	rng, err := s.rng.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return msgpack.Marshal(savedState{
		Format: StateFormat, Version: StateVersion, Position: s.Position(), RNG: rng,
		Start: int(s.start), Decisions: counter(s.decisions), Throws: counter(s.throws),
	})
}

// MaxStateBlob bounds the size of a saved state that UnmarshalState reads. A
// real blob is a few hundred bytes; the bound keeps a hostile blob of deeply
// nested msgpack arrays from exhausting the stack of the recursive decoder
// (a fatal error, not a recoverable panic).
const MaxStateBlob = 64 << 10

// UnmarshalState restores a state saved by MarshalBinary. A blob that is
// truncated, corrupt, inconsistent, larger than MaxStateBlob or of a future
// version gives an error (wrapping ErrCorrupt or ErrVersion), never a panic.
func UnmarshalState(b []byte) (State, error) {
	if len(b) > MaxStateBlob {
		return State{}, fmt.Errorf("%w: state: %d bytes, more than the %d a saved state can take", ErrCorrupt, len(b), MaxStateBlob)
	}
	var v savedState
	if err := decodeStrict(b, &v); err != nil {
		return State{}, fmt.Errorf("%w: state: %v", ErrCorrupt, err)
	}
	switch {
	case v.Format != StateFormat:
		return State{}, fmt.Errorf("%w: state: format %q, want %q", ErrCorrupt, v.Format, StateFormat)
	case v.Version > StateVersion || v.Version < 1:
		return State{}, fmt.Errorf("%w: state version %d, this build reads 1..%d", ErrVersion, v.Version, StateVersion)
	}
	s, err := FromPosition(v.Position, 0)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) { // invalid rules inside a blob are corrupt data too
			return State{}, fmt.Errorf("%w: state: %w", ErrCorrupt, err)
		}
		return State{}, fmt.Errorf("state: %w", err)
	}
	var rng rand.PCG
	if err := rng.UnmarshalBinary(v.RNG); err != nil {
		return State{}, fmt.Errorf("%w: state: generator: %v", ErrCorrupt, err)
	}
	if v.Start < 0 || v.Start >= s.rules.Players {
		return State{}, fmt.Errorf("%w: state: start seat %d out of range", ErrCorrupt, v.Start)
	}
	s.rng, s.start, s.decisions, s.throws = rng, uint8(v.Start), uint32(v.Decisions), uint32(v.Throws)
	return s, nil
}

// decodeStrict decodes one msgpack value from b into v. It first walks the
// value with Skip, which fails on a truncated blob before anything is
// allocated for lengths the blob cannot hold, and refuses trailing bytes.
func decodeStrict(b []byte, v any) error {
	r := bytes.NewReader(b)
	if err := msgpack.NewDecoder(r).Skip(); err != nil {
		return err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d trailing bytes", r.Len())
	}
	d := msgpack.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields(true)
	return d.Decode(v)
}
