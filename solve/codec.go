package solve

import (
	"fmt"
	"math/bits"

	"github.com/yutenv/yutenv/env"
)

// Layout of a state key (a uint64), from the low bits:
//
//	bits 0-1    phase: 0 a chance node (the mover throws), 1 a decision
//	bits 2-25   the pool: 4 bits of count per throw id 0..5
//	bits 26-    the pieces, 6 bits each: first the mover's, then the
//	            other seat's, each seat's in a fixed order: its pieces in
//	            hand (0), its finished pieces (1), then its pieces on the
//	            board (2 + place index) in increasing station order, one
//	            entry per piece (a stack of height h repeats its place h times)
//
// Seats are relabelled so that the seat to move is always "the mover": the
// rules are symmetric between the two seats, so a position and its mirror
// have the same value for the seat to move, and the table holds one of them.
const (
	phaseBits = 2
	poolShift = phaseBits
	poolBits  = 4
	maxPool   = 1<<poolBits - 1 // the largest count of one throw in a key
	pieceBase = poolShift + env.NumThrows*poolBits
	pieceBits = 6
	// MaxPieces is the largest pieces option a key can hold.
	MaxPieces = (64 - pieceBase) / (2 * pieceBits)
)

// place is one station of the board together with the route a stack on it follows.
type place struct {
	st env.Station
	rt env.Route
}

// codec turns positions of one rule set into keys and back.
type codec struct {
	rules  env.Rules
	pieces int
	index  [env.NumStations][env.NumRoutes]int8 // place index, -1 where no stack may stand
	places []place
	win    winRules // the sure-win test's tables (surewin.go)
}

// newCodec returns the codec of rules r, which must be supported (check).
func newCodec(r env.Rules) (*codec, error) {
	c := &codec{rules: r, pieces: r.Pieces}
	for st := range env.Station(env.NumStations) {
		for rt := range env.Route(env.NumRoutes) {
			c.index[st][rt] = -1
			if !r.OnBoard(st, rt) {
				continue
			}
			if r.Board == env.BoardLine && r.Finish != env.FinishPass && int(st) == r.Spaces-1 {
				continue // the last space: a stack that stops there finishes
			}
			c.index[st][rt] = int8(len(c.places))
			c.places = append(c.places, place{st, rt})
		}
	}
	if len(c.places)+2 > 1<<pieceBits {
		return nil, fmt.Errorf("%w: %d places do not fit a key", ErrUnsupported, len(c.places))
	}
	c.win = newWinRules(c)
	return c, nil
}

// encode returns the key of s, a chance node or a decision of a two-seat
// game. ok is false when s cannot be keyed: the game is over, or a pool
// count exceeds maxPool.
func (c *codec) encode(s *env.State) (key uint64, ok bool) {
	ph := s.Phase()
	if ph == env.PhaseOver {
		return 0, false
	}
	key = uint64(ph)
	pool := s.Pool()
	for t, n := range pool {
		if n > maxPool {
			return 0, false
		}
		key |= uint64(n) << (poolShift + poolBits*uint(t))
	}
	shift := uint(pieceBase)
	me := s.ToMove()
	for k := range 2 {
		seat := me ^ k
		shift += pieceBits * uint(s.Hand(seat)) // hand pieces are zeros
		for range s.Finished(seat) {
			key |= 1 << shift
			shift += pieceBits
		}
		for b := s.Occupied(seat); b != 0; b &= b - 1 {
			st := env.Station(bits.TrailingZeros32(b))
			_, h, rt, _ := s.StackAt(st)
			v := uint64(c.index[st][rt]) + 2
			for range h {
				key |= v << shift
				shift += pieceBits
			}
		}
	}
	return key, true
}

// position returns the position of key, with the mover as seat 0. stacks
// is a buffer for the position's stacks.
func (c *codec) position(key uint64, stacks []env.Stack) (env.Position, error) {
	p := env.Position{Rules: c.rules, ToMove: 0, Phase: env.Phase(key & (1<<phaseBits - 1))}
	if p.Phase > env.PhaseMove {
		return p, fmt.Errorf("%w: key %#x: phase %d", ErrCorrupt, key, p.Phase)
	}
	for t := range env.NumThrows {
		p.Pool[t] = int(key >> (poolShift + poolBits*uint(t)) & maxPool)
	}
	shift := uint(pieceBase)
	p.Stacks = stacks[:0]
	for seat := range 2 {
		for range c.pieces {
			v := int(key >> shift & (1<<pieceBits - 1))
			shift += pieceBits
			switch {
			case v == 0:
				p.Hand[seat]++
			case v == 1:
				p.Finished[seat]++
			case v-2 >= len(c.places):
				return p, fmt.Errorf("%w: key %#x: place %d of %d", ErrCorrupt, key, v-2, len(c.places))
			default:
				pl := c.places[v-2]
				if n := len(p.Stacks); n > 0 && p.Stacks[n-1].Seat == seat && p.Stacks[n-1].Station == pl.st && p.Stacks[n-1].Route == pl.rt {
					p.Stacks[n-1].Height++
					continue
				}
				p.Stacks = append(p.Stacks, env.Stack{Seat: seat, Station: pl.st, Route: pl.rt, Height: 1})
			}
		}
		if p.Finished[seat] == c.pieces {
			p.Place[seat] = 1
		}
	}
	if key>>shift != 0 {
		return p, fmt.Errorf("%w: key %#x: bits beyond the pieces", ErrCorrupt, key)
	}
	return p, nil
}

// state returns the state of key (the mover is seat 0), checked by the engine.
func (c *codec) state(key uint64, stacks []env.Stack) (env.State, error) {
	p, err := c.position(key, stacks)
	if err != nil {
		return env.State{}, err
	}
	s, err := env.FromPosition(p, 0)
	if err != nil {
		return env.State{}, fmt.Errorf("%w: key %#x: %w", ErrCorrupt, key, err)
	}
	return s, nil
}
