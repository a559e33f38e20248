package server

import (
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// Every method's reader takes exactly the params its declaration names: an
// unknown key is refused with the declared keys, and no declared key is
// unknown to the reader (hand-written or typed).
func TestMethodParamsAreDeclared(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	for _, m := range protocol.Methods() {
		t.Run(m.Name, func(t *testing.T) {
			_, err := c.Call(m.Name, map[string]any{"zz_unknown": 1})
			require.Error(t, err)
			assert.Equal(t, protocol.CodeBadRequest, errCode(err))
			keys := strings.Join(protocol.Keys(m.Params), ", ")
			if keys == "" {
				assert.Contains(t, err.Error(), `unknown parameter "zz_unknown" (it takes none)`)
			} else {
				assert.Contains(t, err.Error(), `unknown parameter "zz_unknown" (parameters: `+keys+`)`)
			}
			for _, k := range protocol.Keys(m.Params) {
				// A value of no param's type: every reader refuses it,
				// but as a bad value of a key it knows.
				_, err := c.Call(m.Name, map[string]any{k: map[string]any{"zz": []any{1}}})
				if err != nil {
					assert.NotContains(t, err.Error(), "unknown parameter", "key %s", k)
				}
			}
		})
	}
}

// The keys of every result, the hand-written ones included, are among the
// keys its declaration names (Method.Result).
func TestMethodResultsAreDeclared(t *testing.T) {
	ts := startServer(t, "unix", Config{OutDirs: tempOut})
	c := ts.dial(t)
	got := map[string][]map[string]any{}
	call := func(method string, params map[string]any) map[string]any {
		t.Helper()
		res, err := c.Call(method, params)
		require.NoError(t, err, method)
		got[method] = append(got[method], res)
		return res
	}
	call("hello", nil)
	call("ping", nil)
	h := call("make", map[string]any{"n": 2, "info": true, "autoreset": "same_step"})["handle"]
	mask := call("reset", map[string]any{"handle": h, "seed": 1})["mask"].([]byte)
	for range 2000 { // until an episode ends and autoresets
		acts := []any{}
		for e := range 2 {
			acts = append(acts, max(0, slices.Index(mask[e*env.NumActions:(e+1)*env.NumActions], 1)))
		}
		res := call("step", map[string]any{"handle": h, "actions": acts, "info": true})
		mask = res["mask"].([]byte)
		if _, ok := res["final_obs"]; ok {
			break
		}
	}
	st := call("save", map[string]any{"handle": h, "index": 0})["state"]
	call("load", map[string]any{"handle": h, "index": 1, "state": st})
	for _, f := range []string{"text", "svg", "rgb"} {
		call("render", map[string]any{"handle": h, "index": 0, "format": f})
	}
	call("observe", map[string]any{"handle": h, "seat": 1})
	call("stats", nil)
	call("close", map[string]any{"handle": h})
	// A mixture with a client-played entry: reset waits for it (seat 0 begins, the learner is 1).
	mh := call("make", map[string]any{"n": 2, "info": true, "seat": 1, "opponents": []any{"client", "greedy"}, "weights": []any{1, 1e-9}})["handle"]
	res := call("reset", map[string]any{"handle": mh, "seed": 1, "options": map[string]any{"start": 0}})
	require.Equal(t, []byte{1, 1}, res["pending"], "both envs wait for the client's opponent")
	answer := func(res map[string]any) { // until no env waits (bonus throws: the opponent may move again)
		for range 100 {
			if !slices.Contains(res["pending"].([]byte), 1) {
				return
			}
			mask := res["mask"].([]byte)
			if len(mask) == env.NumActions { // load's reply: env 1's row alone
				mask = append(make([]byte, env.NumActions), mask...)
			}
			acts := []any{max(0, slices.Index(mask[:env.NumActions], 1)), max(0, slices.Index(mask[env.NumActions:], 1))}
			res = call("opponent_step", map[string]any{"handle": mh, "actions": acts, "info": true})
		}
	}
	answer(res)
	answer(call("load", map[string]any{"handle": mh, "index": 1, "state": st}))
	call("set_opponents", map[string]any{"handle": mh, "opponents": []any{"random", "greedy"}})
	call("share", map[string]any{"handle": mh, "spin_us": 10})
	call("reset", map[string]any{"handle": mh, "seed": 2, "shared": true})
	g := call("game", map[string]any{"rules": "standard"})["game"]
	states := call("initial", map[string]any{"game": g, "seed": 1, "n": 2, "start": 0})["states"].([]byte)
	thrown := call("apply", map[string]any{"game": g, "states": states, "throws": []byte{2, 2}})["states"]
	call("query", map[string]any{"game": g, "states": states, "mask": true, "returns": true, "obs": "compact"})
	one := map[string]any{"game": g, "state": states[:env.PackedSize]}
	d := call("describe", one)
	call("position", map[string]any{"game": g, "position": d["position"]})
	blob := call("state_save", one)["blob"]
	call("state_load", map[string]any{"game": g, "blob": blob})
	call("analyse", map[string]any{"game": g, "states": thrown, "agent": "random"})
	run := call("selfplay_new", selfplayParams(filepath.Join(t.TempDir(), "sp")))["id"]
	call("selfplay_next", map[string]any{"id": run})
	call("selfplay_close", map[string]any{"id": run})

	for _, m := range protocol.Methods() {
		t.Run(m.Name, func(t *testing.T) {
			results := got[m.Name]
			require.NotEmpty(t, results, "the test calls every method")
			want := protocol.Keys(m.Result)
			for _, res := range results {
				for k := range res {
					assert.True(t, slices.Contains(want, k), "result key %q is not declared (declared: %v)", k, want)
				}
			}
		})
	}
}

// Looking a method up by name, on every request, allocates nothing.
func TestMethodIDAllocatesNothing(t *testing.T) {
	for i, name := range methodNames {
		b := []byte(name)
		assert.Equal(t, i, methodID(b))
		assert.Zero(t, testing.AllocsPerRun(100, func() { methodID(b) }), name)
	}
	assert.Equal(t, -1, methodID([]byte("nope")))
}

// TestBind: every declared method gets exactly one handler, in id order;
// a declared method without a handler, one with two and a handler of an
// undeclared method are refused.
func TestBind(t *testing.T) {
	decls := protocol.Methods()
	bound, err := bind(decls, handlers)
	require.NoError(t, err)
	for i, h := range bound {
		assert.Equal(t, decls[i], h.Desc, "id %d", i)
	}
	stray := handlers[0]
	stray.Name = "nope"
	cases := []struct {
		name string
		hs   []handler
		want string
	}{
		{"a method without a handler", handlers[1:], `no handler of "hello"`},
		{"a method with two", append(slices.Clone(handlers), handlers[3]), `two handlers of "reset"`},
		{"a handler of no method", append(slices.Clone(handlers), stray), `a handler of "nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bind(decls, tc.hs)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestHandlersAreNamedAfterTheirMethods: the conn method bound to each
// protocol method is named after it, by one rule (handlerName: the wire
// name in lowerCamelCase), so that a method's handler is found by its name.
func TestHandlersAreNamedAfterTheirMethods(t *testing.T) {
	prefix := reflect.TypeFor[conn]().PkgPath() + ".(*conn)."
	for _, h := range methods {
		t.Run(h.Name, func(t *testing.T) {
			require.NotNil(t, h.fn)
			f := runtime.FuncForPC(reflect.ValueOf(h.fn).Pointer())
			require.NotNil(t, f)
			assert.Equal(t, prefix+handlerName(h.Name), f.Name())
		})
	}
	for _, tc := range []struct{ wire, want string }{
		{"make", "make"},
		{"state_save", "stateSave"},
		{"set_opponents", "setOpponents"},
		{"selfplay_new", "selfplayNew"},
	} {
		t.Run("rule "+tc.wire, func(t *testing.T) { assert.Equal(t, tc.want, handlerName(tc.wire)) })
	}
}

// handlerName is the name of the conn method serving the protocol method
// of wire name name, by the rule: name in lowerCamelCase (state_save:
// stateSave).
func handlerName(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if p := parts[i]; p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// TestStepAndResetAllocateNothing: a step and a reset with info off, once
// warm, allocate nothing in the server or in the client's Step.
func TestStepAndResetAllocateNothing(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	ts := startServer(t, "unix", Config{Workers: 1})
	c := ts.client(t)
	h := makeHandle(t, c, map[string]any{"n": 8, "opponent": "greedy"})
	mask := do(t, c, "reset", map[string]any{"handle": h, "seed": 1})["mask"].([]byte)
	reset := msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "reset"}, {"params", msgp.Obj{{"handle", h}, {"seed", 2}}}})
	actions := make([]int32, 8)
	_, err := c.Step(h, actions, 0)
	require.Error(t, err, "all zeros are illegal: the refusal's path is warm too")
	firstLegal(mask, actions)
	res, err := c.Step(h, actions, 0)
	require.NoError(t, err)
	cases := []struct {
		name string
		run  func()
	}{
		{"step", func() {
			firstLegal(res.Mask, actions)
			res, err = c.Step(h, actions, 0)
		}},
		{"reset", func() {
			if err = c.WriteFrame(reset); err == nil {
				_, err = c.ReadFrame()
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.run() // warm
			allocs := testing.AllocsPerRun(200, tc.run)
			require.NoError(t, err)
			assert.Zero(t, allocs)
		})
	}
}
