package env

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// The JSON and msgpack forms of Rules are derived from Options: a map with
// one entry per option, keyed by Option.Key, in table order, holding the
// Rules field the option names (Option.field) as that field's type encodes
// itself (ints, a float, bools, and enums and switches by name). An option
// declared with omitStandard is left out while it has its standard value,
// so files written before it existed read unchanged and standard files do
// not change. Reading goes through RulesBuilder, as the rules string does.

// rulesFields caches, per option, the index of the Rules field it names.
var rulesFields = func() [][]int {
	t := reflect.TypeFor[Rules]()
	out := make([][]int, len(options))
	for i := range options {
		f, ok := t.FieldByName(options[i].field)
		if !ok {
			panic(fmt.Sprintf("env: option %q names no Rules field %q", options[i].Key, options[i].field)) // a bug in the table, caught by every test
		}
		out[i] = f.Index
	}
	return out
}()

// fieldValue returns the Rules field of options[i] in r, as its own type.
func fieldValue(r *Rules, i int) any {
	return reflect.ValueOf(r).Elem().FieldByIndex(rulesFields[i]).Interface()
}

// wireOptions calls fn with every option that the encoded form of r holds
// and its field's value.
func (r *Rules) wireOptions(fn func(o *Option, v any) error) error {
	std := Standard()
	for i := range options {
		v := fieldValue(r, i)
		if options[i].omitStandard && v == fieldValue(&std, i) {
			continue
		}
		if err := fn(&options[i], v); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes the rules as a JSON object of the options (see above).
func (r Rules) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	err := r.wireOptions(func(o *Option, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(o.Key)
		val, err := json.Marshal(v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
		return err
	})
	b.WriteByte('}')
	return b.Bytes(), err
}

// EncodeMsgpack writes the rules as a msgpack map of the options (see above).
func (r Rules) EncodeMsgpack(e *msgpack.Encoder) error {
	n := 0
	_ = r.wireOptions(func(*Option, any) error { n++; return nil })
	if err := e.EncodeMapLen(n); err != nil {
		return err
	}
	return r.wireOptions(func(o *Option, v any) error {
		if err := e.EncodeString(o.Key); err != nil {
			return err
		}
		return e.Encode(v)
	})
}

// DecodeMsgpack reads rules from a msgpack map as UnmarshalJSON reads a JSON
// object: missing options keep their Standard values, aliases are accepted,
// an unknown or repeated key is an error. A nil map gives the zero Rules.
// The rules are not validated.
func (r *Rules) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeMapLen()
	if err != nil {
		return fmt.Errorf("%w: rules: want a map: %v", ErrInvalidRules, err)
	}
	if n < 0 {
		*r = Rules{}
		return nil
	}
	rb := NewRulesBuilder(Standard())
	for range n {
		key, err := d.DecodeString()
		if err != nil {
			return fmt.Errorf("%w: rules: key: %v", ErrInvalidRules, err)
		}
		x, err := d.DecodeInterfaceLoose()
		if err != nil {
			return fmt.Errorf("%w: rules: %s: %v", ErrInvalidRules, key, err)
		}
		v, err := ruleValueString(key, x)
		if err != nil {
			return err
		}
		if err := rb.Set(key, v); err != nil {
			return err
		}
	}
	*r = rb.build()
	return nil
}

// ruleValueString spells a decoded value of the rules map as the rules
// string does: numbers in decimal, bools as on/off, names as they are.
func ruleValueString(key string, x any) (string, error) {
	switch v := x.(type) {
	case json.Number:
		return v.String(), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case bool:
		return onOff(v), nil
	case string:
		return v, nil
	case []byte: // enums were written as msgpack bin by their MarshalText
		return string(v), nil
	}
	return "", fmt.Errorf("%w: rules: %s: want a number, bool or string, got %v", ErrInvalidRules, key, x)
}
