package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// This file is the msgpack subset the protocol uses: a checker that walks a
// frame body without recursion or allocation, a zero-copy reader over a
// checked body, and append-style writers. Cold results are built as ordered
// values (obj) so that every response is deterministic byte for byte.

// maxDepth is the deepest nesting of maps and arrays a frame may have.
// msgpack's Decoder.Skip recurses once per level, so an unchecked 16 MiB
// frame of nested one-element arrays would overflow the goroutine stack (a
// fatal error, not a recoverable panic); checkValue refuses it first.
const maxDepth = 32

// errWire is wrapped by every error about malformed msgpack.
var errWire = errors.New("malformed msgpack")

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

// kindName names a head kind for error messages.
func kindName(k byte) string {
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

// checkValue walks the msgpack value at the start of b without recursion and
// returns its length in bytes. It refuses truncated values, lengths beyond
// the buffer, ext types, the reserved code and nesting deeper than maxDepth.
// It allocates nothing.
func checkValue(b []byte) (int, error) {
	var stack [maxDepth + 1]int // items still to read at each open level
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
			return 0, fmt.Errorf("%w: truncated at byte %d", errWire, off)
		}
		if h.kind == 'x' {
			return 0, fmt.Errorf("%w: unsupported type code 0x%02x at byte %d", errWire, b[off], off)
		}
		off += h.hlen
		rest := len(b) - off
		switch h.kind {
		case 'a', 'm':
			items := h.n
			if h.kind == 'm' {
				if items > rest/2 {
					return 0, fmt.Errorf("%w: map of %d pairs at byte %d exceeds the frame", errWire, h.n, off-h.hlen)
				}
				items *= 2
			}
			if items > rest {
				return 0, fmt.Errorf("%w: array of %d items at byte %d exceeds the frame", errWire, h.n, off-h.hlen)
			}
			if items > 0 {
				if depth == maxDepth {
					return 0, fmt.Errorf("%w: nesting deeper than %d", errWire, maxDepth)
				}
				depth++
				stack[depth] = items
			}
		default:
			if h.size > rest {
				return 0, fmt.Errorf("%w: %s of %d bytes at byte %d exceeds the frame", errWire, kindName(h.kind), h.size, off-h.hlen)
			}
			off += h.size
		}
	}
}

// checkBody validates a whole frame body: one msgpack map, nothing after it.
// It allocates nothing: the msgpack library's Decoder.Skip would read every
// bin and str of the frame into a buffer of the decoder's, as large as the
// largest of them, so the fuzzer (FuzzFrameDecoder) checks instead that
// what checkBody accepts the library accepts too.
func checkBody(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: empty body", errWire)
	}
	n, err := checkValue(b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("%w: %d trailing bytes after the request map", errWire, len(b)-n)
	}
	if h, _ := readHead(b); h.kind != 'm' {
		return fmt.Errorf("%w: the body is a %s, want a map", errWire, kindName(h.kind))
	}
	return nil
}

// reader reads values from a body that checkBody accepted. Its methods
// return views into the body (never copies) and type errors naming what was
// found; they never read past the end even on unchecked input.
type reader struct {
	b   []byte
	off int
}

// typeError is a value of the wrong msgpack type.
type typeError struct {
	want, got string
}

func (e *typeError) Error() string { return "want " + e.want + ", got " + e.got }

func (r *reader) head() (head, error) {
	h, ok := readHead(r.b[r.off:])
	if !ok || h.size > len(r.b)-r.off-h.hlen {
		return h, fmt.Errorf("%w: truncated at byte %d", errWire, r.off)
	}
	return h, nil
}

// peekKind returns the kind of the next value ('n', 'i', ...), or 0 at the end.
func (r *reader) peekKind() byte {
	h, ok := readHead(r.b[r.off:])
	if !ok {
		return 0
	}
	return h.kind
}

// skip steps over the next value and returns its bytes.
func (r *reader) skip() ([]byte, error) {
	n, err := checkValue(r.b[r.off:])
	if err != nil {
		return nil, err
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v, nil
}

// mapLen reads a map header.
func (r *reader) mapLen() (int, error) {
	h, err := r.head()
	if err != nil {
		return 0, err
	}
	if h.kind != 'm' {
		return 0, &typeError{"map", kindName(h.kind)}
	}
	r.off += h.hlen
	return h.n, nil
}

// arrayLen reads an array header.
func (r *reader) arrayLen() (int, error) {
	h, err := r.head()
	if err != nil {
		return 0, err
	}
	if h.kind != 'a' {
		return 0, &typeError{"array", kindName(h.kind)}
	}
	r.off += h.hlen
	return h.n, nil
}

// bytesOf reads a str or bin (as kind says) and returns a view of its payload.
func (r *reader) bytesOf(kind byte) ([]byte, error) {
	h, err := r.head()
	if err != nil {
		return nil, err
	}
	if h.kind != kind {
		return nil, &typeError{kindName(kind), kindName(h.kind)}
	}
	start := r.off + h.hlen
	r.off = start + h.size
	return r.b[start:r.off:r.off], nil
}

// str reads a str and returns a view of its bytes.
func (r *reader) str() ([]byte, error) { return r.bytesOf('s') }

// bin reads a bin and returns a view of its bytes.
func (r *reader) bin() ([]byte, error) { return r.bytesOf('B') }

// boolean reads a bool.
func (r *reader) boolean() (bool, error) {
	h, err := r.head()
	if err != nil {
		return false, err
	}
	if h.kind != 'b' {
		return false, &typeError{"bool", kindName(h.kind)}
	}
	v := r.b[r.off] == mpTrue
	r.off++
	return v, nil
}

// integer reads any msgpack integer. neg reports a negative value, in which
// case v holds it as int64 bits; otherwise v is the unsigned value.
func (r *reader) integer() (v uint64, neg bool, err error) {
	h, err := r.head()
	if err != nil {
		return 0, false, err
	}
	if h.kind != 'i' {
		return 0, false, &typeError{"int", kindName(h.kind)}
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

// intIn reads an integer and checks it lies in [lo, hi].
func (r *reader) intIn(lo, hi int64) (int64, error) {
	v, neg, err := r.integer()
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

// uint64v reads a non-negative integer of the full uint64 range.
func (r *reader) uint64v() (uint64, error) {
	v, neg, err := r.integer()
	if err != nil {
		return 0, err
	}
	if neg {
		return 0, fmt.Errorf("%d is negative, want 0..2^64-1", int64(v))
	}
	return v, nil
}

// float reads a float or an integer as float64.
func (r *reader) float() (float64, error) {
	h, err := r.head()
	if err != nil {
		return 0, err
	}
	switch h.kind {
	case 'i':
		v, neg, err := r.integer()
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
	return 0, &typeError{"float", kindName(h.kind)}
}

// isNil consumes a nil and reports true, or leaves anything else in place.
func (r *reader) isNil() bool {
	if r.off < len(r.b) && r.b[r.off] == mpNil {
		r.off++
		return true
	}
	return false
}

// Writers. Each appends one msgpack item to b and returns the extended slice.

func appendMapHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, mpMap16, byte(n>>8), byte(n))
	}
	return append(b, mpMap32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, mpArray16, byte(n>>8), byte(n))
	}
	return append(b, mpArray32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendStr(b []byte, s string) []byte {
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

func appendBinHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, mpBin8, byte(n))
	case n <= math.MaxUint16:
		return append(b, mpBin16, byte(n>>8), byte(n))
	}
	return append(b, mpBin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendBin(b, p []byte) []byte { return append(appendBinHeader(b, len(p)), p...) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, mpTrue)
	}
	return append(b, mpFalse)
}

func appendNil(b []byte) []byte { return append(b, mpNil) }

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(b, uint64(v))
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

func appendUint(b []byte, v uint64) []byte {
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

func appendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, mpFloat64), math.Float64bits(v))
}

func appendFloat32(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(append(b, mpFloat32), math.Float32bits(v))
}

// littleEndian reports whether the machine stores numbers little-endian, so
// that float32 and int32 slices can cross the wire without conversion.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// appendF32Bin appends v as a bin of little-endian float32.
func appendF32Bin(b []byte, v []float32) []byte {
	b = appendBinHeader(b, 4*len(v))
	if littleEndian {
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

// appendI8Bin appends v as a bin of int8.
func appendI8Bin(b []byte, v []int8) []byte {
	b = appendBinHeader(b, len(v))
	if len(v) == 0 {
		return b
	}
	return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v))...)
}

// kv is one key and value of an ordered map.
type kv struct {
	k string
	v any
}

// obj is a msgpack map whose keys keep their order, so responses are
// deterministic byte for byte.
type obj []kv

// rawValue is an already-encoded msgpack value, appended as is.
type rawValue []byte

// appendValue appends a Go value made of the types below. It panics on any
// other type: that is a bug in this package, never input.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return appendNil(b)
	case bool:
		return appendBool(b, x)
	case int:
		return appendInt(b, int64(x))
	case int8:
		return appendInt(b, int64(x))
	case int64:
		return appendInt(b, x)
	case uint32:
		return appendUint(b, uint64(x))
	case uint64:
		return appendUint(b, x)
	case float32:
		return appendFloat32(b, x)
	case float64:
		return appendFloat64(b, x)
	case string:
		return appendStr(b, x)
	case []byte:
		return appendBin(b, x)
	case rawValue:
		return append(b, x...)
	case []string:
		b = appendArrayHeader(b, len(x))
		for _, s := range x {
			b = appendStr(b, s)
		}
		return b
	case []int:
		b = appendArrayHeader(b, len(x))
		for _, n := range x {
			b = appendInt(b, int64(n))
		}
		return b
	case []uint64:
		b = appendArrayHeader(b, len(x))
		for _, n := range x {
			b = appendUint(b, n)
		}
		return b
	case []any:
		b = appendArrayHeader(b, len(x))
		for _, e := range x {
			b = appendValue(b, e)
		}
		return b
	case []obj:
		b = appendArrayHeader(b, len(x))
		for _, e := range x {
			b = appendValue(b, e)
		}
		return b
	case obj:
		b = appendMapHeader(b, len(x))
		for _, e := range x {
			b = appendStr(b, e.k)
			b = appendValue(b, e.v)
		}
		return b
	}
	panic(fmt.Sprintf("server: appendValue: unsupported type %T", v))
}
