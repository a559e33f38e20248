package protocol

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		{"None", reflect.TypeFor[None](), nil},
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
	assert.Equal(t, KeySet{"handle", "actions", "info", "shared", "seq"}, StepKeys)
	assert.Equal(t, Keys(reflect.TypeFor[ResetParams]()), []string(ResetKeys))
	assert.Equal(t, StepActions, StepKeys.Of([]byte("actions")))
	assert.Equal(t, -1, StepKeys.Of([]byte("action")))
	assert.Equal(t, ResetInfo, ResetKeys.Index("info"))
	type two struct {
		A int `msgpack:"a"`
		B int `msgpack:"b"`
	}
	cases := []struct {
		name   string
		build  func()
		panics bool
	}{
		{"the fields", func() { KeysOf[two]("A", "B") }, false},
		{"a field without a case", func() { KeysOf[two]("A") }, true},
		{"cases out of order", func() { KeysOf[two]("B", "A") }, true},
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

func TestErrors(t *testing.T) {
	assert.Len(t, Codes(), 18)
	assert.Len(t, CodeInfos(), len(Codes()))
	e := Errorf(CodeBadRequest, "%s", "x")
	assert.True(t, errors.Is(e, &Error{Code: CodeBadRequest}))
	assert.True(t, errors.Is(e, &Error{Code: CodeBadRequest, Message: "x"}))
	assert.False(t, errors.Is(e, &Error{Code: CodeBadRequest, Message: "y"}))
	assert.False(t, errors.Is(e, &Error{Code: CodeInternal}))
	assert.Equal(t, "bad_request: x", e.Error())
}

// TestMethods: every method is declared once, in id order, with its
// params' and result's types; hello alone is the handshake.
func TestMethods(t *testing.T) {
	ms := Methods()
	names := map[string]bool{}
	for i, m := range ms {
		t.Run(m.Name, func(t *testing.T) {
			assert.False(t, names[m.Name], "declared twice")
			names[m.Name] = true
			assert.NotEmpty(t, m.Doc)
			require.NotNil(t, m.Params)
			require.NotNil(t, m.Result)
			assert.Equal(t, reflect.Struct, m.Params.Kind())
			assert.Equal(t, i == 0, m.Handshake, "hello alone is the handshake")
		})
	}
	assert.Equal(t, "hello", ms[0].Name)
	assert.Equal(t, Describe.Desc, ms[18])
	assert.Equal(t, reflect.TypeFor[DescribeResult](), Describe.Result)
	assert.Equal(t, []string{"rows", "reply", "search"}, Analyse.Draws.Names())
	assert.Empty(t, Ping.Draws.Names())
}

// TestMethodOrder pins the methods' ids: a method's id is its position in
// Methods, the order of the var block of method.go (declare appends each
// as it is initialised), and indexes the server's latency histograms and
// orders hello's methods. A new method is appended here and there; a
// declaration moved, or one that comes to depend on a variable declared
// after it (Go then initialises it later), fails here.
func TestMethodOrder(t *testing.T) {
	want := []string{
		"hello", "ping", "make", "reset", "step", "close", "stats", "save", "load",
		"render", "observe", "selfplay_new", "selfplay_next", "selfplay_close", "game",
		"initial", "apply", "query", "describe", "position", "state_save", "state_load", "analyse",
		"opponent_step", "set_opponents", "share",
	}
	var got []string
	for _, m := range Methods() {
		got = append(got, m.Name)
	}
	assert.Equal(t, want, got)
	// Each exported descriptor is the one Methods holds at its id.
	for _, d := range []Desc{Hello.Desc, Make.Desc, Step.Desc, SelfplayClose.Desc, Analyse.Desc, SetOpponents.Desc} {
		t.Run(d.Name, func(t *testing.T) {
			id := slices.Index(want, d.Name)
			require.GreaterOrEqual(t, id, 0)
			assert.Equal(t, d, Methods()[id])
		})
	}
	ms := Methods()
	ms[0].Name = "changed"
	assert.Equal(t, "hello", Methods()[0].Name, "Methods returns a copy")
	assert.PanicsWithValue(t, `protocol: method "late" declared after init; declare methods in the var block of method.go`,
		func() { declare[None, None]("late", "A method made after init.", 0) })
	assert.Len(t, Methods(), len(want), "a refused declaration is not listed")
}

func TestFrames(t *testing.T) {
	b := BeginFrame([]byte{9})
	b = append(b, "body"...)
	EndFrame(b, 1)
	assert.Equal(t, []byte{9, 0, 0, 0, 4, 'b', 'o', 'd', 'y'}, b)
	assert.Equal(t, b[1:], AppendFrame(nil, []byte("body")))
	var hdr [HeaderSize]byte
	n, err := ReadHeader(bytes.NewReader(b[1:]), &hdr)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	_, err = ReadHeader(bytes.NewReader(b[1:3]), &hdr)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	cases := []struct {
		name string
		in   error
		want error
	}{
		{"end of file inside a frame", io.EOF, io.ErrUnexpectedEOF},
		{"other errors unchanged", io.ErrClosedPipe, io.ErrClosedPipe},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.ErrorIs(t, Unexpected(tc.in), tc.want) })
	}
}
