package server

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/yutenv/yutenv/internal/msgp"
)

// decodeParams is the one way the server reads the params of a method that
// is not on the hot path (every method but step and reset, whose rows are
// read by hand without allocating; see BenchmarkParams). v points to a
// struct whose msgpack tags name the parameters, in the order error
// messages list them; an int field may carry a `range:"lo,hi"` tag.
//
// It runs in two passes over a frame that checkBody accepted (so no length
// in it can claim more bytes than the frame holds):
//
//  1. a key pass, allocation free, that walks the params along v's type:
//     it refuses a repeated key, a key v does not have, a value of the
//     wrong msgpack type, an int outside its field's range and an array
//     longer than maxParamArray, in every nested map and array, with the
//     messages of the protocol ("make: params.n: want int, got str");
//  2. then msgpack/v5 decodes into v (DisallowUnknownFields), which can no
//     longer meet a value it would misread or a length it would trust.
func decodeParams(method string, p []byte, v any) *Error {
	if p == nil {
		return nil
	}
	sp := specOf(reflect.TypeOf(v).Elem())
	r := msgp.NewReader(p)
	err := msgp.EachKey(&r, func(kb []byte) error {
		f := sp.field(kb)
		if f == nil {
			return valueError{kb, errUnknownParam}
		}
		if err := checkParam(&r, f.typ, f.lo, f.hi); err != nil {
			return valueError{kb, err}
		}
		return nil
	})
	if e := paramsError(method, sp.keys, err); e != nil {
		return e
	}
	d := msgpack.NewDecoder(bytes.NewReader(p))
	d.DisallowUnknownFields(true)
	if err := d.Decode(v); err != nil {
		return errorf(CodeBadRequest, "%s: params: %v", method, err)
	}
	return nil
}

// maxParamArray bounds every array of the params decodeParams reads (the
// longest, a position's stacks, has at most 4 x 5 entries); bins and strs
// are bounded by the frame.
const maxParamArray = 64

// paramField is one key of a params struct.
type paramField struct {
	name   string
	typ    reflect.Type
	lo, hi int64 // range of an int field (lo > hi: the Go type's)
}

// paramSpec is the keys of a params struct.
type paramSpec struct {
	fields []paramField
	keys   string // "a, b, c", for messages
}

func (s *paramSpec) field(k []byte) *paramField {
	for i := range s.fields {
		if s.fields[i].name == string(k) {
			return &s.fields[i]
		}
	}
	return nil
}

var specs sync.Map // reflect.Type -> *paramSpec

// specOf returns the keys of struct type t, from its msgpack tags.
func specOf(t reflect.Type) *paramSpec {
	if s, ok := specs.Load(t); ok {
		return s.(*paramSpec)
	}
	s := &paramSpec{}
	var names []string
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("msgpack"), ",")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		f := paramField{name: name, typ: sf.Type, lo: 1, hi: 0}
		if r := sf.Tag.Get("range"); r != "" {
			a, b, _ := strings.Cut(r, ",")
			lo, err1 := strconv.ParseInt(a, 10, 64)
			hi, err2 := strconv.ParseInt(b, 10, 64)
			if err1 != nil || err2 != nil {
				panic(fmt.Sprintf("server: bad range tag %q on %s.%s", r, t, sf.Name))
			}
			f.lo, f.hi = lo, hi
		}
		s.fields = append(s.fields, f)
		names = append(names, name)
	}
	s.keys = strings.Join(names, ", ")
	got, _ := specs.LoadOrStore(t, s)
	return got.(*paramSpec)
}

var rawMessageType = reflect.TypeOf(msgpack.RawMessage(nil))

// checkParam checks (and steps over) the next value of r against Go type
// t; lo..hi is the range of an int (lo > hi: t's own).
func checkParam(r *msgp.Reader, t reflect.Type, lo, hi int64) error {
	if t == rawMessageType {
		_, err := r.Skip() // read later by a reader of its own (rules, seat)
		return err
	}
	if t.Kind() == reflect.Pointer {
		if r.IsNil() {
			return nil
		}
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		_, err := r.Bool()
		return err
	case reflect.String:
		_, err := r.Str()
		return err
	case reflect.Float32, reflect.Float64:
		_, err := r.Float()
		return err
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if lo > hi {
			bits := t.Bits()
			lo, hi = -1<<(bits-1), 1<<(bits-1)-1
		}
		_, err := r.IntIn(lo, hi)
		return err
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if lo <= hi {
			_, err := r.IntIn(lo, hi)
			return err
		}
		v, err := r.Uint64()
		if err == nil && t.Bits() < 64 && v > 1<<t.Bits()-1 {
			return fmt.Errorf("%d is out of range 0..%d", v, uint64(1)<<t.Bits()-1)
		}
		return err
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			_, err := r.Bin()
			return err
		}
		n, err := r.ArrayLen()
		if err != nil {
			return err
		}
		if n > maxParamArray || (t.Kind() == reflect.Array && n > t.Len()) {
			most := maxParamArray
			if t.Kind() == reflect.Array {
				most = t.Len()
			}
			return fmt.Errorf("%d items, at most %d", n, most)
		}
		for i := range n {
			if err := checkParam(r, t.Elem(), 1, 0); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case reflect.Struct:
		sp := specOf(t)
		return msgp.EachKey(r, func(kb []byte) error {
			f := sp.field(kb)
			if f == nil {
				return fmt.Errorf("unknown key %q (keys: %s)", msgp.Clip(kb), sp.keys)
			}
			if err := checkParam(r, f.typ, f.lo, f.hi); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			return nil
		})
	}
	panic(fmt.Sprintf("server: decodeParams: unsupported field type %s", t))
}
