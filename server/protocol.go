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
	handle func(c *conn, params []byte) *Error
	// fn is the method of conn bound, as handlers names it: its name is
	// the method's wire name in lowerCamelCase (state_save: stateSave),
	// which TestHandlersAreNamedAfterTheirMethods holds.
	fn any
}

// decoded binds m to h: its params are decoded into a P (by decodeParams,
// which refuses unknown keys and bad values) and handed to h.
func decoded[P, R any](m protocol.Method[P, R], h func(*conn, *P) *Error) handler {
	return handler{Desc: m.Desc, fn: h, handle: func(c *conn, p []byte) *Error {
		var pr P
		if e := decodeParams(m.Name, p, &pr); e != nil {
			return e
		}
		return h(c, &pr)
	}}
}

// byHand binds m to h, which reads its params by hand, straight from the
// frame (step and reset, which allocate nothing; selfplay_*, whose params
// fill a configuration): P then declares the keys that reader takes, and
// TestMethodParamsAreDeclared holds it to them.
func byHand[P, R any](m protocol.Method[P, R], h func(*conn, []byte) *Error) handler {
	return handler{Desc: m.Desc, fn: h, handle: h}
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
	// methodKeys maps a name to its params' keys, "a, b, c", for errors.
	methodKeys map[string]string
)

func init() {
	var err error
	if methods, err = bind(protocol.Methods(), handlers); err != nil {
		panic(err)
	}
	methodNames = make([]string, len(methods))
	methodIDs = make(map[string]int, len(methods))
	methodKeys = make(map[string]string, len(methods))
	for i := range methods {
		methodNames[i] = methods[i].Name
		methodIDs[methods[i].Name] = i
		methodKeys[methods[i].Name] = strings.Join(protocol.Keys(methods[i].Params), ", ")
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

// declaredKeys returns the params' keys method declares, "a, b, c" (""
// for none), for the error messages of the readers written by hand.
func declaredKeys(method string) string { return methodKeys[method] }
