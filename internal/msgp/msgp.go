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
