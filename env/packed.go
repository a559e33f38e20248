package env

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// PackedVersion is the version byte that opens every packed state this
// build writes. Version 2 added every seat's missed turns (skip obstacles)
// after the generator; Unpack still reads version 1 (PackedSizeV1 bytes,
// nobody misses a turn).
const PackedVersion = 2

// Offsets of the packed layout (docs/FORMATS.md, "Packed state").
const (
	pkVersion  = 0
	pkSeat     = 1
	pkPhase    = 2
	pkStart    = 3
	pkPool     = 4
	pkHand     = pkPool + NumThrows
	pkFinished = pkHand + MaxPlayers
	pkPlace    = pkFinished + MaxPlayers
	pkCells    = pkPlace + MaxPlayers
	pkCounters = pkCells + 2*NumStations
	pkRNG      = pkCounters + 8
	// PackedSizeV1 is the length in bytes of a version 1 packed state.
	PackedSizeV1 = pkRNG + 16
	pkMissed     = PackedSizeV1
	// PackedSize is the length in bytes of every packed state this build
	// writes (version 2).
	PackedSize = pkMissed + MaxPlayers
)

// AppendPacked appends the state's packed form, PackedSize bytes, to dst and
// returns it. The packed form is a fixed-size binary encoding of everything
// in the state but its rules: the position (missed turns included), the
// counters and the random number generator, so a state restored with Unpack
// plays on identically. It is the form in which the server's state methods
// pass states, many to a buffer. It does not allocate when dst has room.
func (s *State) AppendPacked(dst []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, PackedSize)[:n+PackedSize]
	b := (*[PackedSize]byte)(dst[n:]) // every byte is written below
	clear(b[pkCells:pkCounters])
	b[pkVersion] = PackedVersion
	b[pkSeat], b[pkPhase], b[pkStart] = s.seat, uint8(s.phase), s.start
	copy(b[pkPool:], s.pool[:])
	copy(b[pkHand:], s.hand[:])
	copy(b[pkFinished:], s.finished[:])
	copy(b[pkPlace:], s.place[:])
	for st, c := range s.cells {
		if c.height > 0 {
			b[pkCells+2*st] = c.height
			b[pkCells+2*st+1] = c.owner<<4 | uint8(c.route)
		}
	}
	binary.LittleEndian.PutUint32(b[pkCounters:], s.decisions)
	binary.LittleEndian.PutUint32(b[pkCounters+4:], s.throws)
	var rng [20]byte // "pcg:" then the two 64-bit halves, big-endian
	m, _ := s.rng.AppendBinary(rng[:0])
	copy(b[pkRNG:], m[4:])
	copy(b[pkMissed:], s.missed[:])
	return dst
}

// Unpack replaces s with the packed state b, keeping s's rules: build s with
// New (or FromPosition) under the rules the packed state was made with. It
// reads version 2 (PackedSize bytes) and version 1 (PackedSizeV1 bytes,
// which carry no missed turns: nobody misses one). b is
// checked as thoroughly as FromPosition checks a position; a short,
// inconsistent or foreign b gives an error wrapping ErrCorrupt (or
// ErrVersion) and leaves s unchanged. It does not allocate.
func (s *State) Unpack(b []byte) error {
	if len(b) != PackedSize || b[pkVersion] != PackedVersion {
		return s.unpackOther(b)
	}
	if b[pkPhase] > uint8(PhaseOver) {
		return fmt.Errorf("%w: packed state: unknown phase %d", ErrCorrupt, b[pkPhase])
	}
	p := Position{Rules: s.rules, ToMove: int(b[pkSeat]), Phase: Phase(b[pkPhase])}
	for t := range p.Pool {
		p.Pool[t] = int(b[pkPool+t])
	}
	for i := range MaxPlayers {
		p.Hand[i], p.Finished[i], p.Place[i] = int(b[pkHand+i]), int(b[pkFinished+i]), int(b[pkPlace+i])
	}
	if ghost := binary.LittleEndian.Uint32(b[pkMissed:]) >> (8 * s.rules.Players); ghost != 0 {
		return fmt.Errorf("%w: packed state: a seat a %d-player game does not have misses turns (bytes %#x)", ErrCorrupt, s.rules.Players, ghost)
	}
	var stacks [NumStations]Stack
	p.Stacks = stacks[:0]
	for st := range NumStations {
		h, or := b[pkCells+2*st], b[pkCells+2*st+1]
		if h == 0 {
			if or != 0 {
				return fmt.Errorf("%w: packed state: empty station %d has owner/route byte %#x", ErrCorrupt, st, or)
			}
			continue
		}
		p.Stacks = append(p.Stacks, Stack{Seat: int(or >> 4), Station: Station(st), Route: Route(or & 0xf), Height: int(h)})
	}
	c := *s
	if err := c.setPosition(p); err != nil {
		return err
	}
	if int(b[pkStart]) >= c.rules.Players {
		return fmt.Errorf("%w: packed state: start seat %d out of range 0..%d", ErrCorrupt, b[pkStart], c.rules.Players-1)
	}
	c.start = b[pkStart]
	c.missed = [MaxPlayers]uint8(b[pkMissed : pkMissed+MaxPlayers]) // any count 0..255 is a number of turns to miss
	c.decisions = binary.LittleEndian.Uint32(b[pkCounters:])
	c.throws = binary.LittleEndian.Uint32(b[pkCounters+4:])
	c.rng.Seed(binary.BigEndian.Uint64(b[pkRNG:]), binary.BigEndian.Uint64(b[pkRNG+8:]))
	*s = c
	return nil
}

// unpackOther is Unpack of anything but a version 2 state of the right
// size: a version 1 state (read as version 2 with nobody missing a turn),
// or an error.
func (s *State) unpackOther(b []byte) error {
	switch {
	case len(b) == 0:
		return fmt.Errorf("%w: packed state: 0 bytes, want %d", ErrCorrupt, PackedSize)
	case b[pkVersion] < 1 || b[pkVersion] > PackedVersion:
		return fmt.Errorf("%w: packed state version %d, this build reads 1..%d", ErrVersion, b[pkVersion], PackedVersion)
	case b[pkVersion] == PackedVersion:
		return fmt.Errorf("%w: packed state: %d bytes, want %d", ErrCorrupt, len(b), PackedSize)
	case len(b) != PackedSizeV1:
		return fmt.Errorf("%w: packed state version 1: %d bytes, want %d", ErrCorrupt, len(b), PackedSizeV1)
	}
	var v2 [PackedSize]byte
	copy(v2[:], b)
	v2[pkVersion] = PackedVersion
	return s.Unpack(v2[:])
}
