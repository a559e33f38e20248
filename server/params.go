package server

import (
	"bytes"
	"errors"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
	"github.com/yutenv/yutenv/vecenv/wire"
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
//     ("params.n: want int, got str", which the binder prefixes with the
//     method: "make: params.n: ...");
//  2. then msgpack/v5 decodes into v (DisallowUnknownFields), which can no
//     longer meet a value it would misread or a length it would trust.
func decodeParams(p []byte, v any) *Error {
	if p == nil {
		return nil
	}
	sp := msgp.SpecOf(reflect.TypeOf(v).Elem())
	r := msgp.NewReader(p)
	err := msgp.EachKey(&r, func(kb []byte) error {
		f := sp.Field(kb)
		if f == nil {
			return msgp.KeyError{Key: kb, Err: msgp.ErrUnknownKey}
		}
		if err := f.Check(&r); err != nil {
			return msgp.KeyError{Key: kb, Err: err}
		}
		return nil
	})
	if e := paramsError(sp.Keys, err); e != nil {
		return e
	}
	d := msgpack.NewDecoder(bytes.NewReader(p))
	d.DisallowUnknownFields(true)
	if err := d.Decode(v); err != nil {
		return errorf(protocol.CodeBadRequest, "params: %v", err)
	}
	return nil
}

// paramError is the protocol error of a bad param: a *wire.ParamError
// (bad_request, or invalid_rules for a wire.RulesError), or a protocol
// *Error passed on as it is.
func paramError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	code := protocol.CodeBadRequest
	if errors.As(err, new(wire.RulesError)) {
		code = protocol.CodeInvalidRules
	}
	var pe *wire.ParamError
	switch {
	case !errors.As(err, &pe):
		return errorf(code, "%v", err)
	case errors.Is(pe.Err, wire.ErrMissing):
		return errorf(code, "missing params.%s", pe.Key)
	}
	return errorf(code, "params.%s: %v", pe.Key, pe.Err)
}

// eachKeyOf reads the params map of a method whose params are read by
// hand (p nil: no keys), by msgp.EachKey: fn gets each key's position in ks
// (the params struct's fields), and a key ks does not hold is refused
// without calling fn; the error then lists the keys the method being
// served declares.
func (c *conn) eachKeyOf(ks protocol.KeySet, p []byte, fn func(k int, r *msgp.Reader) error) *Error {
	if p == nil {
		return nil
	}
	r := &c.params
	*r = msgp.NewReader(p)
	err := msgp.EachKey(r, func(kb []byte) error {
		k := ks.Of(kb)
		if k < 0 {
			return msgp.KeyError{Key: kb, Err: msgp.ErrUnknownKey}
		}
		if err := fn(k, r); err != nil {
			return msgp.KeyError{Key: kb, Err: err}
		}
		return nil
	})
	return paramsError(c.method.keys, err)
}

// paramsError turns an error of msgp.EachKey over a method's params, which
// are keys ("a, b, c"), into the protocol error (nil for nil).
func paramsError(keys string, err error) *Error {
	if err == nil {
		return nil // before the targets of errors.As, which live on the heap
	}
	var rk msgp.RepeatedKeyError
	var ke msgp.KeyError
	switch {
	case !errors.As(err, &ke) && errors.As(err, &rk):
		return errorf(protocol.CodeBadRequest, "parameter %q appears twice", msgp.Clip(rk.Key))
	case ke.Key == nil:
		return errorf(protocol.CodeBadRequest, "params: %v", err)
	case errors.Is(ke.Err, msgp.ErrUnknownKey):
		if keys == "" {
			return errorf(protocol.CodeBadRequest, "unknown parameter %q (it takes none)", msgp.Clip(ke.Key))
		}
		return errorf(protocol.CodeBadRequest, "unknown parameter %q (parameters: %s)", msgp.Clip(ke.Key), keys)
	}
	return paramError(&wire.ParamError{Key: string(ke.Key), Err: ke.Err})
}
