package server

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/positions"
)

// Every method's reader takes exactly the params its declaration names: an
// unknown key is refused with the declared keys, and no declared key is
// unknown to the reader (hand-written or typed).
func TestMethodParamsAreDeclared(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	for _, m := range Methods() {
		t.Run(m.Name, func(t *testing.T) {
			_, err := c.Call(m.Name, map[string]any{"zz_unknown": 1})
			require.Error(t, err)
			assert.Equal(t, CodeBadRequest, errCode(err))
			keys := strings.Join(Keys(m.Params), ", ")
			if keys == "" {
				assert.Contains(t, err.Error(), `unknown parameter "zz_unknown" (it takes none)`)
			} else {
				assert.Contains(t, err.Error(), `unknown parameter "zz_unknown" (parameters: `+keys+`)`)
			}
			for _, k := range Keys(m.Params) {
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
	ts := startServer(t, "unix", Config{})
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

	for _, m := range Methods() {
		t.Run(m.Name, func(t *testing.T) {
			results := got[m.Name]
			require.NotEmpty(t, results, "the test calls every method")
			want := Keys(m.Result)
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

func TestKeys(t *testing.T) {
	type inner struct {
		A int `msgpack:"a"`
		B int `msgpack:"b,omitempty"`
	}
	type other struct {
		B int `msgpack:"b"`
		C int `msgpack:"c"`
	}
	for _, tt := range []struct {
		name string
		typ  reflect.Type
		want []string
	}{
		{"nil", nil, nil},
		{"none", reflect.TypeFor[none](), nil},
		{"tags and options", reflect.TypeFor[inner](), []string{"a", "b"}},
		{"skipped fields", reflect.TypeFor[struct {
			A int `msgpack:"a"`
			B int `msgpack:"-"`
			C int
			d int `msgpack:"d"`
		}](), []string{"a"}},
		{"embedded forms, keys once", reflect.TypeFor[struct {
			inner
			other
		}](), []string{"a", "b", "c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Keys(tt.typ))
		})
	}
}

// TestHandReadKeysComeFromTheTags: a hand reader's key set is its params
// struct's tags, field by field, and a struct whose fields differ from the
// reader's cases (a field added without a case) fails at init.
func TestHandReadKeysComeFromTheTags(t *testing.T) {
	assert.Equal(t, keySet{"handle", "actions", "info"}, stepKeys)
	assert.Equal(t, Keys(reflect.TypeFor[resetParams]()), []string(resetKeys))
	assert.Equal(t, stepActions, stepKeys.of([]byte("actions")))
	assert.Equal(t, -1, stepKeys.of([]byte("action")))
	assert.Equal(t, resetInfo, resetKeys.index("info"))
	type two struct {
		A int `msgpack:"a"`
		B int `msgpack:"b"`
	}
	cases := []struct {
		name   string
		build  func()
		panics bool
	}{
		{"the fields", func() { keysOf[two]("A", "B") }, false},
		{"a field without a case", func() { keysOf[two]("A") }, true},
		{"cases out of order", func() { keysOf[two]("B", "A") }, true},
		{"selfplay_new's params", func() { checkSelfplayKeys(selfplayNewKeys, az.Settings()) }, false},
		{"a setting the struct lacks", func() {
			checkSelfplayKeys(selfplayNewKeys, append(az.Settings(), az.Setting{Key: "resign"}))
		}, true},
		{"a param without a setting", func() { checkSelfplayKeys(append(selfplayNewKeys, "resign"), az.Settings()) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.panics {
				assert.Panics(t, tc.build)
			} else {
				assert.NotPanics(t, tc.build)
			}
		})
	}
}

// TestClientCallsByDeclaration: the client names a method by its declared
// params and result types (Do), never by a string of its own.
func TestClientCallsByDeclaration(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	_, err := Do[none, none](c, &none{})
	require.NoError(t, err)
	g, err := Do[gameParams, gameResult](c, &gameParams{})
	require.NoError(t, err)
	n := 3
	st, err := Do[initialParams, statesResult](c, &initialParams{Game: &g.Game, N: &n, Seed: 7})
	require.NoError(t, err)
	assert.Len(t, st.States, 3*env.PackedSize)
	one, err := Do[oneStateParams, positions.Description](c, &oneStateParams{Game: &g.Game, State: st.States[:env.PackedSize]})
	require.NoError(t, err)
	assert.Equal(t, "throw", one.Position.Phase)
	_, err = Do[oneStateParams, positions.Description](c, &oneStateParams{Game: &g.Game})
	assert.Equal(t, CodeBadRequest, errCode(err), "a server error is an *Error")
	assert.Equal(t, "step", stepMethod)
	assert.Equal(t, "state_save", methodOf[oneStateParams, blobResult]())
	assert.Panics(t, func() { methodOf[none, gameResult]() }, "no method has these types")
}

// TestStepResultKeysAreDeclared: the client's StepResult reads step's
// declared result keys by its tags, and a tag the declaration lacks fails.
func TestStepResultKeysAreDeclared(t *testing.T) {
	for i, k := range stepResultKeys {
		kept := stepResultField[i] >= 0
		assert.Equal(t, k != "final_info", kept, k)
	}
	assert.True(t, stepResultRaw[stepResultKeys.index("info")], "info is kept raw")
	assert.False(t, stepResultRaw[stepResultKeys.index("obs")])
	type bad struct {
		Obs  []byte `msgpack:"obs"`
		Typo []byte `msgpack:"rewards"`
	}
	assert.Panics(t, func() { stepResultFields(reflect.TypeFor[stepResult](), reflect.TypeFor[bad]()) })
}

// TestStepAndResetAllocateNothing: a step and a reset with info off, once
// warm, allocate nothing in the server or in the client's Step.
func TestStepAndResetAllocateNothing(t *testing.T) {
	if raceEnabled {
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
