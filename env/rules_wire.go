package env

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// The JSON and msgpack forms of Rules are derived from Options. At start-up
// a wire struct is built from the table (reflect.StructOf): one field per
// option, in table order, of the type of the Rules field the option names
// (Option.field), tagged with the option's key; an option declared
// omitStandard is tagged omitempty/omitzero, so it is left out while it has
// its zero (standard) value, and files written before it existed read
// unchanged. JSON is written by encoding/json from a wire struct that holds
// a copy of the Rules fields, msgpack by typed encoder calls in the same
// order with the same omissions, and msgpack is read back through the wire
// struct; so the bytes are what one struct with a json and a msgpack tag
// per field wrote (env/testdata/rules_wire.json holds them), without a tag
// per field to keep in step with the options. JSON is read through
// RulesBuilder (UnmarshalJSON).

// rulesWire is the wire struct type and, per option, the index of the
// Rules field it copies.
var rulesWire, rulesFields = func() (reflect.Type, [][]int) {
	t := reflect.TypeFor[Rules]()
	idx := make([][]int, len(options))
	fields := make([]reflect.StructField, len(options))
	for i := range options {
		o := &options[i]
		f, ok := t.FieldByName(o.field)
		if !ok {
			panic(fmt.Sprintf("env: option %q names no Rules field %q", o.Key, o.field)) // a bug in the table, caught by every test
		}
		if o.omitStandard && !reflect.ValueOf(Standard()).FieldByIndex(f.Index).IsZero() {
			panic(fmt.Sprintf("env: option %q: omitStandard needs a standard value of zero", o.Key))
		}
		tag := fmt.Sprintf(`json:"%s" msgpack:"%s"`, o.Key, o.Key)
		if o.omitStandard {
			tag = fmt.Sprintf(`json:"%s,omitzero" msgpack:"%s,omitempty"`, o.Key, o.Key)
		}
		idx[i] = f.Index
		fields[i] = reflect.StructField{Name: o.field, Type: f.Type, Tag: reflect.StructTag(tag)}
	}
	return reflect.StructOf(fields), idx
}()

// wire is a wire struct and a Rules to copy through, reused from wirePool
// so that saving and loading a state allocate nothing for the rules.
type wire struct {
	rules Rules
	ptr   any // *wire struct
}

var wirePool = sync.Pool{New: func() any { return &wire{ptr: reflect.New(rulesWire).Interface()} }}

// toWire copies r into a wire struct from the pool; give it back with wirePool.Put.
func toWire(r Rules) *wire {
	w := wirePool.Get().(*wire)
	w.rules = r
	dst, src := reflect.ValueOf(w.ptr).Elem(), reflect.ValueOf(&w.rules).Elem()
	for i := range options {
		dst.Field(i).Set(src.FieldByIndex(rulesFields[i]))
	}
	return w
}

// fromWire returns the rules the wire struct holds.
func (w *wire) fromWire() Rules {
	src, dst := reflect.ValueOf(w.ptr).Elem(), reflect.ValueOf(&w.rules).Elem()
	for i := range options {
		dst.FieldByIndex(rulesFields[i]).Set(src.Field(i))
	}
	return w.rules
}

// MarshalJSON writes the rules as a JSON object of the options (see above).
func (r Rules) MarshalJSON() ([]byte, error) {
	w := toWire(r)
	defer wirePool.Put(w)
	return json.Marshal(w.ptr)
}

// EncodeMsgpack writes the rules as a msgpack map of the options (see above).
// It writes each field with the encoder's own typed calls, as msgpack's
// struct encoding does (the golden bytes test holds it to that), which
// saves the copies the encoder's reflection makes of addressable fields.
func (r Rules) EncodeMsgpack(e *msgpack.Encoder) error {
	w := wirePool.Get().(*wire)
	defer wirePool.Put(w)
	w.rules = r
	src := reflect.ValueOf(&w.rules).Elem()
	n := 0
	for i := range options {
		if !options[i].omitStandard || !src.FieldByIndex(rulesFields[i]).IsZero() {
			n++
		}
	}
	if err := e.EncodeMapLen(n); err != nil {
		return err
	}
	for i := range options {
		f := src.FieldByIndex(rulesFields[i])
		if options[i].omitStandard && f.IsZero() {
			continue
		}
		if err := e.EncodeString(options[i].Key); err != nil {
			return err
		}
		if err := encodeField(e, f); err != nil {
			return err
		}
	}
	return nil
}

// encodeField writes one Rules field: an int, float or bool as itself,
// anything else (enums, switches, obstacles) by its text form as bytes.
func encodeField(e *msgpack.Encoder, f reflect.Value) error {
	switch f.Kind() {
	case reflect.Int:
		return e.EncodeInt(f.Int())
	case reflect.Float64:
		return e.EncodeFloat64(f.Float())
	case reflect.Bool:
		return e.EncodeBool(f.Bool())
	}
	m, ok := f.Addr().Interface().(encoding.TextMarshaler)
	if !ok {
		return fmt.Errorf("%w: rules: field of type %s has no text form", ErrInvalidRules, f.Type())
	}
	b, err := m.MarshalText()
	if err != nil {
		return err
	}
	return e.EncodeBytes(b)
}

// DecodeMsgpack reads rules written by EncodeMsgpack: options that the map
// leaves out keep their Standard values. An unknown key is skipped, or
// refused by a decoder that disallows unknown fields (saved states); a value
// of the wrong type is an error. The rules are not validated.
func (r *Rules) DecodeMsgpack(d *msgpack.Decoder) error {
	w := toWire(Standard())
	defer wirePool.Put(w)
	if err := d.Decode(w.ptr); err != nil {
		return fmt.Errorf("%w: rules: %v", ErrInvalidRules, err)
	}
	*r = w.fromWire()
	return nil
}

// ruleValueString spells a decoded JSON value of a rules object as the
// rules string does: numbers in decimal, bools as on/off, names as they are.
func ruleValueString(key string, x any) (string, error) {
	switch v := x.(type) {
	case json.Number:
		return v.String(), nil
	case bool:
		return onOff(v), nil
	case string:
		return v, nil
	}
	return "", fmt.Errorf("%w: rules: %s: want a number, bool or string, got %v", ErrInvalidRules, key, x)
}
