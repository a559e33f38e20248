package msgp

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// This file checks a msgpack value against a Go struct type before the
// msgpack library decodes it, so that the library never meets a value it
// would misread or a length it would trust.

// MaxArray bounds every array Field.Check reads (the protocol's longest,
// a position's stacks, has at most 4 x 5 entries); bins and strs are
// bounded by the body.
const MaxArray = 64

// Field is one key of a struct, from its msgpack tag.
type Field struct {
	Name   string
	Type   reflect.Type
	Lo, Hi int64 // range of an int field, from its `range:"lo,hi"` tag (Lo > Hi: the Go type's)
}

// Spec is the keys of a struct type, in field order.
type Spec struct {
	Fields []Field
	Keys   string // "a, b, c", for messages
}

// Field returns the field of key k, or nil; it allocates nothing.
func (s *Spec) Field(k []byte) *Field {
	for i := range s.Fields {
		if s.Fields[i].Name == string(k) {
			return &s.Fields[i]
		}
	}
	return nil
}

var specs sync.Map // reflect.Type -> *Spec

// SpecOf returns the keys of struct type t, from the msgpack tags of its
// exported fields (cached). It panics on a malformed range tag: a bug of
// the struct's, never input.
func SpecOf(t reflect.Type) *Spec {
	if s, ok := specs.Load(t); ok {
		return s.(*Spec)
	}
	s := &Spec{}
	var names []string
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("msgpack"), ",")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		f := Field{Name: name, Type: sf.Type, Lo: 1, Hi: 0}
		if r := sf.Tag.Get("range"); r != "" {
			a, b, _ := strings.Cut(r, ",")
			lo, err1 := strconv.ParseInt(a, 10, 64)
			hi, err2 := strconv.ParseInt(b, 10, 64)
			if err1 != nil || err2 != nil {
				panic(fmt.Sprintf("msgp: bad range tag %q on %s.%s", r, t, sf.Name))
			}
			f.Lo, f.Hi = lo, hi
		}
		s.Fields = append(s.Fields, f)
		names = append(names, name)
	}
	s.Keys = strings.Join(names, ", ")
	got, _ := specs.LoadOrStore(t, s)
	return got.(*Spec)
}

var rawMessageType = reflect.TypeOf(msgpack.RawMessage(nil))

// Check checks (and steps over) the next value of r against f's type and
// range, without allocating: a value of the wrong msgpack type, an int
// out of range, an array longer than MaxArray (or than a Go array), and in
// a nested struct a repeated or unknown key are errors naming where they
// are ("stacks: [0]: height: want int, got float"). A pointer may be nil;
// a msgpack.RawMessage is stepped over unchecked (its owner reads it). It
// panics on a Go type it cannot check: a bug of the struct's.
func (f *Field) Check(r *Reader) error { return check(r, f.Type, f.Lo, f.Hi) }

// check checks (and steps over) the next value of r against Go type t;
// lo..hi is the range of an int (lo > hi: t's own).
func check(r *Reader, t reflect.Type, lo, hi int64) error {
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
		if n > MaxArray || (t.Kind() == reflect.Array && n > t.Len()) {
			most := MaxArray
			if t.Kind() == reflect.Array {
				most = t.Len()
			}
			return fmt.Errorf("%d items, at most %d", n, most)
		}
		for i := range n {
			if err := check(r, t.Elem(), 1, 0); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case reflect.Struct:
		sp := SpecOf(t)
		return EachKey(r, func(kb []byte) error {
			f := sp.Field(kb)
			if f == nil {
				return fmt.Errorf("unknown key %q (keys: %s)", Clip(kb), sp.Keys)
			}
			if err := f.Check(r); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
			return nil
		})
	}
	panic(fmt.Sprintf("msgp: Field.Check: unsupported field type %s", t))
}
