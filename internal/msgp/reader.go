package msgp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Reader reads values from a body that CheckValue or CheckMap accepted.
// Its methods return views into the body (never copies) and type errors
// naming what was found; they never read past the end even on unchecked
// input. Its zero value reads nothing; NewReader reads b.
type Reader struct {
	b   []byte
	off int
}

// NewReader returns a Reader at the start of b (a value, so that it can
// live on the caller's stack).
func NewReader(b []byte) Reader { return Reader{b: b} }

// Offset is how many bytes of its body r has read.
func (r *Reader) Offset() int { return r.off }

// TypeError is a value of the wrong msgpack type.
type TypeError struct {
	want, got string
}

// Error returns "want X, got Y".
func (e *TypeError) Error() string { return "want " + e.want + ", got " + e.got }

func (r *Reader) head() (head, error) {
	h, ok := readHead(r.b[r.off:])
	if !ok || h.size > len(r.b)-r.off-h.hlen {
		return h, fmt.Errorf("%w: truncated at byte %d", ErrMalformed, r.off)
	}
	return h, nil
}

// PeekKind returns the kind of the next value ('n', 'i', ...), or 0 at the end.
func (r *Reader) PeekKind() byte {
	h, ok := readHead(r.b[r.off:])
	if !ok {
		return 0
	}
	return h.kind
}

// Skip steps over the next value and returns its bytes.
func (r *Reader) Skip() ([]byte, error) {
	n, err := CheckValue(r.b[r.off:])
	if err != nil {
		return nil, err
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v, nil
}

// MapLen reads a map header.
func (r *Reader) MapLen() (int, error) {
	h, err := r.head()
	if err != nil {
		return 0, err
	}
	if h.kind != 'm' {
		return 0, &TypeError{"map", KindName(h.kind)}
	}
	r.off += h.hlen
	return h.n, nil
}

// ArrayLen reads an array header.
func (r *Reader) ArrayLen() (int, error) {
	h, err := r.head()
	if err != nil {
		return 0, err
	}
	if h.kind != 'a' {
		return 0, &TypeError{"array", KindName(h.kind)}
	}
	r.off += h.hlen
	return h.n, nil
}

// bytesOf reads a str or bin (as kind says) and returns a view of its payload.
func (r *Reader) bytesOf(kind byte) ([]byte, error) {
	h, err := r.head()
	if err != nil {
		return nil, err
	}
	if h.kind != kind {
		return nil, &TypeError{KindName(kind), KindName(h.kind)}
	}
	start := r.off + h.hlen
	r.off = start + h.size
	return r.b[start:r.off:r.off], nil
}

// Str reads a str and returns a view of its bytes.
func (r *Reader) Str() ([]byte, error) { return r.bytesOf('s') }

// Bin reads a bin and returns a view of its bytes.
func (r *Reader) Bin() ([]byte, error) { return r.bytesOf('B') }

// F32Bin reads a bin of little-endian float32 into dst, reused when it
// has the room, and returns the values.
func (r *Reader) F32Bin(dst []float32) ([]float32, error) {
	b, err := r.Bin()
	if err != nil {
		return dst, err
	}
	if len(b)%4 != 0 {
		return dst, fmt.Errorf("%d bytes is not a whole number of float32", len(b))
	}
	n := len(b) / 4
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst, nil
}

// Bool reads a bool.
func (r *Reader) Bool() (bool, error) {
	h, err := r.head()
	if err != nil {
		return false, err
	}
	if h.kind != 'b' {
		return false, &TypeError{"bool", KindName(h.kind)}
	}
	v := r.b[r.off] == mpTrue
	r.off++
	return v, nil
}

// Int reads any msgpack integer. neg reports a negative value, in which
// case v holds it as int64 bits; otherwise v is the unsigned value.
func (r *Reader) Int() (v uint64, neg bool, err error) {
	h, err := r.head()
	if err != nil {
		return 0, false, err
	}
	if h.kind != 'i' {
		return 0, false, &TypeError{"int", KindName(h.kind)}
	}
	c := r.b[r.off]
	p := r.b[r.off+1:]
	r.off += h.hlen + h.size
	switch {
	case c <= 0x7f:
		return uint64(c), false, nil
	case c >= 0xe0:
		return uint64(int64(int8(c))), true, nil
	}
	switch c {
	case mpUint8:
		return uint64(p[0]), false, nil
	case mpUint16:
		return uint64(binary.BigEndian.Uint16(p)), false, nil
	case mpUint32:
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case mpUint64:
		return binary.BigEndian.Uint64(p), false, nil
	case mpInt8:
		x := int64(int8(p[0]))
		return uint64(x), x < 0, nil
	case mpInt16:
		x := int64(int16(binary.BigEndian.Uint16(p)))
		return uint64(x), x < 0, nil
	case mpInt32:
		x := int64(int32(binary.BigEndian.Uint32(p)))
		return uint64(x), x < 0, nil
	default: // mpInt64
		x := int64(binary.BigEndian.Uint64(p))
		return uint64(x), x < 0, nil
	}
}

// IntIn reads an integer and checks it lies in [lo, hi].
func (r *Reader) IntIn(lo, hi int64) (int64, error) {
	v, neg, err := r.Int()
	if err != nil {
		return 0, err
	}
	if (!neg && v > math.MaxInt64) || int64(v) < lo || int64(v) > hi {
		if neg {
			return 0, fmt.Errorf("%d is out of range %d..%d", int64(v), lo, hi)
		}
		return 0, fmt.Errorf("%d is out of range %d..%d", v, lo, hi)
	}
	return int64(v), nil
}

// Uint64 reads a non-negative integer of the full uint64 range.
func (r *Reader) Uint64() (uint64, error) {
	v, neg, err := r.Int()
	if err != nil {
		return 0, err
	}
	if neg {
		return 0, fmt.Errorf("%d is negative, want 0..2^64-1", int64(v))
	}
	return v, nil
}

// Float reads a float or an integer as float64.
func (r *Reader) Float() (float64, error) {
	h, err := r.head()
	if err != nil {
		return 0, err
	}
	switch h.kind {
	case 'i':
		v, neg, err := r.Int()
		if neg {
			return float64(int64(v)), err
		}
		return float64(v), err
	case 'f':
		p := r.b[r.off+1:]
		r.off += 1 + h.size
		if h.size == 4 {
			return float64(math.Float32frombits(binary.BigEndian.Uint32(p))), nil
		}
		return math.Float64frombits(binary.BigEndian.Uint64(p)), nil
	}
	return 0, &TypeError{"float", KindName(h.kind)}
}

// SkipN steps over n values and returns how many it stepped over.
func (r *Reader) SkipN(n int) (int, error) {
	for i := range n {
		if _, err := r.Skip(); err != nil {
			return i, err
		}
	}
	return n, nil
}

// MaxKeys bounds the keys of every map EachKey reads. It must stay above
// the largest params map the protocol declares (selfplay_new's, 19 keys):
// package server's TestMaxKeysHoldsEveryDeclaredParams fails when a new
// param would cross it.
const MaxKeys = 32

// RepeatedKeyError is a key that appears twice in one map: ambiguous, so
// refused.
type RepeatedKeyError struct{ Key []byte }

// Error quotes the key.
func (e RepeatedKeyError) Error() string { return fmt.Sprintf("key %q appears twice", Clip(e.Key)) }

// ErrUnknownKey marks a key a map's reader does not take.
var ErrUnknownKey = errors.New("unknown parameter")

// KeyError is a failure reading the value of Key (or Key itself, with
// ErrUnknownKey), as the reader given to EachKey returns it.
type KeyError struct {
	Key []byte // the key, a view into the map read
	Err error  // what went wrong (ErrUnknownKey: the key itself)
}

// Error names the key.
func (e KeyError) Error() string { return fmt.Sprintf("%s: %v", Clip(e.Key), e.Err) }

// Unwrap returns Err.
func (e KeyError) Unwrap() error { return e.Err }

// EachKey reads a map whose keys are strs: it reads the map header,
// refuses more than MaxKeys keys before reading any, and calls fn for
// every key, which must consume the key's value from r. A key that is not
// a str or appears twice (RepeatedKeyError) is an error, and so is fn's.
// It allocates nothing on success.
func EachKey(r *Reader, fn func(k []byte) error) error {
	n, err := r.MapLen()
	if err != nil {
		return err
	}
	if n > MaxKeys {
		return fmt.Errorf("%d keys, more than any map of the protocol has (%d)", n, MaxKeys)
	}
	var seen [MaxKeys][]byte
	for i := range n {
		kb, err := r.Str()
		if err != nil {
			return fmt.Errorf("keys must be strings: %w", err)
		}
		for _, prev := range seen[:i] {
			if string(prev) == string(kb) {
				return RepeatedKeyError{kb}
			}
		}
		seen[i] = kb
		if err := fn(kb); err != nil {
			return err
		}
	}
	return nil
}

// Clip shortens untrusted text (a key, a name) quoted in an error message.
func Clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// IsNil consumes a nil and reports true, or leaves anything else in place.
func (r *Reader) IsNil() bool {
	if r.off < len(r.b) && r.b[r.off] == mpNil {
		r.off++
		return true
	}
	return false
}
