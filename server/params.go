package server

import (
	"bytes"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// decodeParams is the one way the server reads the params of a method that
// is not on the hot path (every method but step and reset, whose rows are
// read by hand without allocating; see BenchmarkParams). v points to a
// struct whose msgpack tags name the parameters, in the order error
// messages list them; an int field may carry a `range:"lo,hi"` tag.
//
// It runs in two passes over a frame that msgp.CheckMap accepted (so no length
// in it can claim more bytes than the frame holds):
//
//  1. a key pass, allocation free, that walks the params along v's type
//     (msgp.SpecOf, Field.Check): it refuses a repeated key, a key v does
//     not have, a value of the wrong msgpack type, an int outside its
//     field's range and an array longer than msgp.MaxArray, in every
//     nested map and array, with the messages of the protocol
//     ("make: params.n: want int, got str");
//  2. then msgpack/v5 decodes into v (DisallowUnknownFields), which can no
//     longer meet a value it would misread or a length it would trust.
func decodeParams(method string, p []byte, v any) *Error {
	if p == nil {
		return nil
	}
	sp := msgp.SpecOf(reflect.TypeOf(v).Elem())
	r := msgp.NewReader(p)
	err := msgp.EachKey(&r, func(kb []byte) error {
		f := sp.Field(kb)
		if f == nil {
			return valueError{kb, errUnknownParam}
		}
		if err := f.Check(&r); err != nil {
			return valueError{kb, err}
		}
		return nil
	})
	if e := paramsError(method, sp.Keys, err); e != nil {
		return e
	}
	d := msgpack.NewDecoder(bytes.NewReader(p))
	d.DisallowUnknownFields(true)
	if err := d.Decode(v); err != nil {
		return errorf(protocol.CodeBadRequest, "%s: params: %v", method, err)
	}
	return nil
}
