// Package msgp is the msgpack subset yutenv's protocol speaks, without
// reflection or allocation: a checker that walks a value without recursion
// (CheckValue, CheckMap), a zero-copy Reader over a checked value, and
// append-style writers (Append*). Cold values are built as ordered maps
// (Obj) and written by AppendValue, so that every encoding is deterministic
// byte for byte.
//
// Kinds: the Reader's PeekKind and KindName name a value's kind by one
// byte: 'n' nil, 'b' bool, 'i' int, 'f' float, 's' str, 'B' bin, 'a' array,
// 'm' map, 'x' ext or reserved (refused by the checker).
package msgp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxDepth is the deepest nesting of maps and arrays a frame may have.
// msgpack's Decoder.Skip recurses once per level, so an unchecked 16 MiB
// frame of nested one-element arrays would overflow the goroutine stack (a
// fatal error, not a recoverable panic); CheckValue refuses it first.
const MaxDepth = 32

// ErrMalformed is wrapped by every error about malformed msgpack.
var ErrMalformed = errors.New("malformed msgpack")

// msgpack type codes.
const (
	mpNil     = 0xc0
	mpFalse   = 0xc2
	mpTrue    = 0xc3
	mpBin8    = 0xc4
	mpBin16   = 0xc5
	mpBin32   = 0xc6
	mpFloat32 = 0xca
	mpFloat64 = 0xcb
	mpUint8   = 0xcc
	mpUint16  = 0xcd
	mpUint32  = 0xce
	mpUint64  = 0xcf
	mpInt8    = 0xd0
	mpInt16   = 0xd1
	mpInt32   = 0xd2
	mpInt64   = 0xd3
	mpStr8    = 0xd9
	mpStr16   = 0xda
	mpStr32   = 0xdb
	mpArray16 = 0xdc
	mpArray32 = 0xdd
	mpMap16   = 0xde
	mpMap32   = 0xdf
)

// head describes the header of one msgpack value: its kind, the length of the
// header, and for containers the element count, for str/bin the payload size,
// for scalars the payload size in bytes after the header byte.
type head struct {
	kind byte // 'n' nil, 'b' bool, 'i' int, 'f' float, 's' str, 'B' bin, 'a' array, 'm' map, 'x' ext/reserved
	hlen int  // bytes of header (type byte plus length field)
	size int  // payload bytes after the header (str, bin, scalars)
	n    int  // elements (array) or pairs (map)
}

// readHead decodes the header at b[0]; ok is false if b is too short for the header.
func readHead(b []byte) (h head, ok bool) {
	if len(b) == 0 {
		return h, false
	}
	c := b[0]
	switch {
	case c <= 0x7f || c >= 0xe0:
		return head{kind: 'i', hlen: 1}, true
	case c >= 0x80 && c <= 0x8f:
		return head{kind: 'm', hlen: 1, n: int(c & 0x0f)}, true
	case c >= 0x90 && c <= 0x9f:
		return head{kind: 'a', hlen: 1, n: int(c & 0x0f)}, true
	case c >= 0xa0 && c <= 0xbf:
		return head{kind: 's', hlen: 1, size: int(c & 0x1f)}, true
	}
	be := func(w int) (int, bool) {
		if len(b) < 1+w {
			return 0, false
		}
		switch w {
		case 1:
			return int(b[1]), true
		case 2:
			return int(binary.BigEndian.Uint16(b[1:])), true
		default:
			return int(binary.BigEndian.Uint32(b[1:])), true
		}
	}
	sized := func(kind byte, w int, count bool) (head, bool) {
		v, ok := be(w)
		if !ok {
			return head{}, false
		}
		h := head{kind: kind, hlen: 1 + w}
		if count {
			h.n = v
		} else {
			h.size = v
		}
		return h, true
	}
	switch c {
	case mpNil:
		return head{kind: 'n', hlen: 1}, true
	case mpFalse, mpTrue:
		return head{kind: 'b', hlen: 1}, true
	case mpUint8, mpInt8:
		return head{kind: 'i', hlen: 1, size: 1}, true
	case mpUint16, mpInt16:
		return head{kind: 'i', hlen: 1, size: 2}, true
	case mpUint32, mpInt32:
		return head{kind: 'i', hlen: 1, size: 4}, true
	case mpUint64, mpInt64:
		return head{kind: 'i', hlen: 1, size: 8}, true
	case mpFloat32:
		return head{kind: 'f', hlen: 1, size: 4}, true
	case mpFloat64:
		return head{kind: 'f', hlen: 1, size: 8}, true
	case mpBin8:
		return sized('B', 1, false)
	case mpBin16:
		return sized('B', 2, false)
	case mpBin32:
		return sized('B', 4, false)
	case mpStr8:
		return sized('s', 1, false)
	case mpStr16:
		return sized('s', 2, false)
	case mpStr32:
		return sized('s', 4, false)
	case mpArray16:
		return sized('a', 2, true)
	case mpArray32:
		return sized('a', 4, true)
	case mpMap16:
		return sized('m', 2, true)
	case mpMap32:
		return sized('m', 4, true)
	}
	return head{kind: 'x', hlen: 1}, true // ext types and the reserved 0xc1
}

// KindName names a head kind for error messages.
func KindName(k byte) string {
	switch k {
	case 'n':
		return "nil"
	case 'b':
		return "bool"
	case 'i':
		return "int"
	case 'f':
		return "float"
	case 's':
		return "str"
	case 'B':
		return "bin"
	case 'a':
		return "array"
	case 'm':
		return "map"
	}
	return "ext"
}

// CheckOne checks that b is exactly one well-formed value (CheckValue),
// with no bytes after it: a blob another decoder will read (one that
// recurses per nesting level, bounded here first).
func CheckOne(b []byte) error {
	n, err := CheckValue(b)
	if err == nil && n != len(b) {
		err = fmt.Errorf("%d trailing bytes", len(b)-n)
	}
	return err
}

// CheckValue walks the msgpack value at the start of b without recursion and
// returns its length in bytes. It refuses truncated values, lengths beyond
// the buffer, ext types, the reserved code and nesting deeper than MaxDepth.
// It allocates nothing.
func CheckValue(b []byte) (int, error) {
	var stack [MaxDepth + 1]int // items still to read at each open level
	depth := 0
	stack[0] = 1
	off := 0
	for {
		for depth >= 0 && stack[depth] == 0 {
			depth--
		}
		if depth < 0 {
			return off, nil
		}
		stack[depth]--
		h, ok := readHead(b[off:])
		if !ok {
			return 0, fmt.Errorf("%w: truncated at byte %d", ErrMalformed, off)
		}
		if h.kind == 'x' {
			return 0, fmt.Errorf("%w: unsupported type code 0x%02x at byte %d", ErrMalformed, b[off], off)
		}
		off += h.hlen
		rest := len(b) - off
		switch h.kind {
		case 'a', 'm':
			items := h.n
			if h.kind == 'm' {
				if items > rest/2 {
					return 0, fmt.Errorf("%w: map of %d pairs at byte %d exceeds the frame", ErrMalformed, h.n, off-h.hlen)
				}
				items *= 2
			}
			if items > rest {
				return 0, fmt.Errorf("%w: array of %d items at byte %d exceeds the frame", ErrMalformed, h.n, off-h.hlen)
			}
			if items > 0 {
				if depth == MaxDepth {
					return 0, fmt.Errorf("%w: nesting deeper than %d", ErrMalformed, MaxDepth)
				}
				depth++
				stack[depth] = items
			}
		default:
			if h.size > rest {
				return 0, fmt.Errorf("%w: %s of %d bytes at byte %d exceeds the frame", ErrMalformed, KindName(h.kind), h.size, off-h.hlen)
			}
			off += h.size
		}
	}
}

// CheckMap validates a whole body (a protocol frame's): one msgpack map,
// nothing after it. It allocates nothing: the msgpack library's
// Decoder.Skip would read every bin and str of the body into a buffer of
// the decoder's, as large as the largest of them, so the fuzzer
// (FuzzCheckMap) checks instead that what CheckMap accepts the library
// accepts too.
func CheckMap(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: empty body", ErrMalformed)
	}
	n, err := CheckValue(b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("%w: %d trailing bytes after the request map", ErrMalformed, len(b)-n)
	}
	if h, _ := readHead(b); h.kind != 'm' {
		return fmt.Errorf("%w: the body is a %s, want a map", ErrMalformed, KindName(h.kind))
	}
	return nil
}

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

// Writers. Each appends one msgpack item to b and returns the extended slice.

// AppendMapHeader appends the header of a map of n pairs.
func AppendMapHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, mpMap16, byte(n>>8), byte(n))
	}
	return append(b, mpMap32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendArrayHeader appends the header of an array of n items.
func AppendArrayHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, mpArray16, byte(n>>8), byte(n))
	}
	return append(b, mpArray32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendStr appends s as a str.
func AppendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n <= 31:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, mpStr8, byte(n))
	case n <= math.MaxUint16:
		b = append(b, mpStr16, byte(n>>8), byte(n))
	default:
		b = append(b, mpStr32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

// AppendBinHeader appends the header of a bin of n bytes (always of
// the bin8/16/32 forms, never fixstr).
func AppendBinHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, mpBin8, byte(n))
	case n <= math.MaxUint16:
		return append(b, mpBin16, byte(n>>8), byte(n))
	}
	return append(b, mpBin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendBin appends p as a bin.
func AppendBin(b, p []byte) []byte { return append(AppendBinHeader(b, len(p)), p...) }

// AppendBool appends v.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, mpTrue)
	}
	return append(b, mpFalse)
}

// AppendNil appends nil.
func AppendNil(b []byte) []byte { return append(b, mpNil) }

// AppendInt appends v in its shortest encoding.
func AppendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return AppendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(int8(v)))
	case v >= math.MinInt8:
		return append(b, mpInt8, byte(v))
	case v >= math.MinInt16:
		return append(b, mpInt16, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return append(b, mpInt32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return binary.BigEndian.AppendUint64(append(b, mpInt64), uint64(v))
}

// AppendUint appends v in its shortest encoding.
func AppendUint(b []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, mpUint8, byte(v))
	case v <= math.MaxUint16:
		return append(b, mpUint16, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(b, mpUint32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return binary.BigEndian.AppendUint64(append(b, mpUint64), v)
}

// AppendFloat64 appends v as a float64.
func AppendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, mpFloat64), math.Float64bits(v))
}

// AppendFloat32 appends v as a float32.
func AppendFloat32(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(append(b, mpFloat32), math.Float32bits(v))
}

// LittleEndian reports whether the machine stores numbers little-endian, so
// that float32 and int32 slices can cross the wire without conversion.
var LittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// AppendF32Bin appends v as a bin of little-endian float32.
func AppendF32Bin(b []byte, v []float32) []byte {
	b = AppendBinHeader(b, 4*len(v))
	if LittleEndian {
		if len(v) == 0 {
			return b
		}
		return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))...)
	}
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// AppendI8Bin appends v as a bin of int8.
func AppendI8Bin(b []byte, v []int8) []byte {
	b = AppendBinHeader(b, len(v))
	if len(v) == 0 {
		return b
	}
	return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v))...)
}

// KV is one key and value of an ordered map. It is an alias of an unnamed
// struct so that KV{"key", value} may be written without field names.
type KV = struct {
	K string
	V any
}

// Obj is a msgpack map whose keys keep their order, so encodings are
// deterministic byte for byte.
type Obj []KV

// Raw is an already-encoded msgpack value, appended as is.
type Raw []byte

// AppendValue appends a Go value made of the types below. It panics on any
// other type: that is a bug of the caller's, never input.
func AppendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return AppendNil(b)
	case bool:
		return AppendBool(b, x)
	case int:
		return AppendInt(b, int64(x))
	case int8:
		return AppendInt(b, int64(x))
	case int64:
		return AppendInt(b, x)
	case uint32:
		return AppendUint(b, uint64(x))
	case uint64:
		return AppendUint(b, x)
	case float32:
		return AppendFloat32(b, x)
	case float64:
		return AppendFloat64(b, x)
	case string:
		return AppendStr(b, x)
	case []byte:
		return AppendBin(b, x)
	case Raw:
		return append(b, x...)
	case []string:
		b = AppendArrayHeader(b, len(x))
		for _, s := range x {
			b = AppendStr(b, s)
		}
		return b
	case []int:
		b = AppendArrayHeader(b, len(x))
		for _, n := range x {
			b = AppendInt(b, int64(n))
		}
		return b
	case []uint64:
		b = AppendArrayHeader(b, len(x))
		for _, n := range x {
			b = AppendUint(b, n)
		}
		return b
	case []any:
		b = AppendArrayHeader(b, len(x))
		for _, e := range x {
			b = AppendValue(b, e)
		}
		return b
	case []Obj:
		b = AppendArrayHeader(b, len(x))
		for _, e := range x {
			b = AppendValue(b, e)
		}
		return b
	case Obj:
		b = AppendMapHeader(b, len(x))
		for _, e := range x {
			b = AppendStr(b, e.K)
			b = AppendValue(b, e.V)
		}
		return b
	}
	panic(fmt.Sprintf("msgp: AppendValue: unsupported type %T", v))
}

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// AppendEncoded appends v encoded by the msgpack library (a struct's
// fields in declaration order, by their msgpack tags) with integers in
// their smallest form: the bytes the Append writers write for the same
// values.
func AppendEncoded(dst []byte, v any) ([]byte, error) {
	w := appendWriter{b: dst}
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&w)
	enc.UseCompactInts(true)
	err := enc.Encode(v)
	return w.b, err
}

// MarshalMsgpack encodes o for the msgpack library (an ordered map inside
// a struct the library encodes).
func (o Obj) MarshalMsgpack() ([]byte, error) { return AppendValue(nil, o), nil }

// DecodeMsgpack decodes a map into o, keeping its order.
func (o *Obj) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeMapLen()
	if err != nil {
		return err
	}
	*o = (*o)[:0]
	for range max(n, 0) {
		k, err := d.DecodeString()
		if err != nil {
			return err
		}
		v, err := d.DecodeInterface()
		if err != nil {
			return err
		}
		*o = append(*o, KV{k, v})
	}
	return nil
}
