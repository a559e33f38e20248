package server

import (
	"fmt"
	"strings"

	"github.com/yutenv/yutenv/protocol"
)

// handler binds a declared protocol method (protocol.Method) to the code
// that serves it. A new method is one declaration in package protocol plus
// one entry of handlers.
type handler struct {
	protocol.Desc
	// handle serves a request's params; its errors name the method (bound).
	handle func(c *conn, params []byte) *Error
	// fn is the method of conn bound, as handlers names it: its name is
	// the method's wire name in lowerCamelCase (state_save: stateSave),
	// which TestHandlersAreNamedAfterTheirMethods holds.
	fn any
	// keys are the params' keys the method declares, "a, b, c" ("" for
	// none), for the error messages of the readers written by hand.
	keys string
}

// bound is the handler of method d: call serves its requests, fn is the
// method of conn behind call. Every error call returns reaches the client
// prefixed with d's name ("make: params.n: ..."): the one place a
// handler's messages name their method (handlers and their helpers do
// not). The prefix is built on the error path only: step and reset still
// allocate nothing.
func bound(d protocol.Desc, fn any, call func(*conn, []byte) *Error) handler {
	prefix := d.Name + ": "
	return handler{Desc: d, fn: fn, keys: strings.Join(protocol.Keys(d.Params), ", "), handle: func(c *conn, p []byte) *Error {
		if e := call(c, p); e != nil {
			return &Error{Code: e.Code, Message: prefix + e.Message}
		}
		return nil
	}}
}

// decoded binds m to h: its params are decoded into a P (by decodeParams,
// which refuses unknown keys and bad values) and handed to h.
func decoded[P, R any](m protocol.Method[P, R], h func(*conn, *P) *Error) handler {
	return bound(m.Desc, h, func(c *conn, p []byte) *Error {
		var pr P
		if e := decodeParams(p, &pr); e != nil {
			return e
		}
		return h(c, &pr)
	})
}

// byHand binds m to h, which reads its params by hand, straight from the
// frame (step and reset, which allocate nothing; selfplay_*, whose params
// fill a configuration): P then declares the keys that reader takes, and
// TestMethodParamsAreDeclared holds it to them.
func byHand[P, R any](m protocol.Method[P, R], h func(*conn, []byte) *Error) handler {
	return bound(m.Desc, h, h)
}

// handlers binds every declared method to its handler, in any order: bind
// puts them in id order and fails when a method has no handler or two.
var handlers = []handler{
	decoded(protocol.Hello, (*conn).hello),
	decoded(protocol.Ping, (*conn).ping),
	decoded(protocol.Make, (*conn).make),
	byHand(protocol.Reset, (*conn).reset),
	byHand(protocol.Step, (*conn).step),
	decoded(protocol.Close, (*conn).close),
	decoded(protocol.Stats, (*conn).stats),
	decoded(protocol.Save, (*conn).save),
	decoded(protocol.Load, (*conn).load),
	decoded(protocol.Render, (*conn).render),
	decoded(protocol.Observe, (*conn).observe),
	decoded(protocol.Share, (*conn).share),
	byHand(protocol.SelfplayNew, (*conn).selfplayNew),
	byHand(protocol.SelfplayNext, (*conn).selfplayNext),
	byHand(protocol.SelfplayClose, (*conn).selfplayClose),
	decoded(protocol.Game, (*conn).game),
	decoded(protocol.Initial, (*conn).initial),
	decoded(protocol.Apply, (*conn).apply),
	decoded(protocol.Query, (*conn).query),
	decoded(protocol.Describe, (*conn).describe),
	decoded(protocol.Position, (*conn).position),
	decoded(protocol.StateSave, (*conn).stateSave),
	decoded(protocol.StateLoad, (*conn).stateLoad),
	decoded(protocol.Analyse, (*conn).analyse),
	byHand(protocol.OpponentStep, (*conn).opponentStep),
	decoded(protocol.SetOpponents, (*conn).setOpponents),
}

// bind returns the handlers hs in the order of the declarations decls (a
// method's id is its position), or an error naming a declared method
// without a handler, one with two, or a handler of no declared method.
func bind(decls []protocol.Desc, hs []handler) ([]handler, error) {
	out := make([]handler, len(decls))
	for _, h := range hs {
		i := -1
		for j, d := range decls {
			if d.Name == h.Name {
				i = j
			}
		}
		switch {
		case i < 0:
			return nil, fmt.Errorf("server: a handler of %q, which protocol does not declare", h.Name)
		case out[i].handle != nil:
			return nil, fmt.Errorf("server: two handlers of %q", h.Name)
		}
		out[i] = h
	}
	for i, h := range out {
		if h.handle == nil {
			return nil, fmt.Errorf("server: no handler of %q", decls[i].Name)
		}
	}
	return out, nil
}

// Derived from protocol.Methods and handlers by init (a handler may use
// them: a variable initialised from handlers could not be).
var (
	// methods are the bound handlers, by method id.
	methods []handler
	// methodNames are the methods' names, by id.
	methodNames []string
	// methodIDs maps a name to its id; methodIDs[string(b)] does not allocate.
	methodIDs map[string]int
	// methodList is "hello, ping, ...", for the unknown-method error.
	methodList string
)

func init() {
	var err error
	if methods, err = bind(protocol.Methods(), handlers); err != nil {
		panic(err)
	}
	methodNames = make([]string, len(methods))
	methodIDs = make(map[string]int, len(methods))
	for i := range methods {
		methodNames[i] = methods[i].Name
		methodIDs[methods[i].Name] = i
	}
	methodList = strings.Join(methodNames, ", ")
}

// methodID returns the id of a method name, or -1.
func methodID(name []byte) int {
	if id, ok := methodIDs[string(name)]; ok {
		return id
	}
	return -1
}
