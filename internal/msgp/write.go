package msgp

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

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
