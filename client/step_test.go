package client

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yutenv/yutenv/protocol"
)

// TestStepResultKeysAreDeclared: StepResult reads step's declared result
// keys by its tags, and a tag the declaration lacks fails.
func TestStepResultKeysAreDeclared(t *testing.T) {
	for i, k := range stepResultKeys {
		kept := stepResultField[i] >= 0
		assert.Equal(t, k != "final_info", kept, k)
	}
	assert.True(t, stepResultRaw[stepResultKeys.Index("info")], "info is kept raw")
	assert.False(t, stepResultRaw[stepResultKeys.Index("obs")])
	type bad struct {
		Obs  []byte `msgpack:"obs"`
		Typo []byte `msgpack:"rewards"`
	}
	assert.Panics(t, func() { stepResultFields(reflect.TypeFor[protocol.StepResult](), reflect.TypeFor[bad]()) })
}

func TestInt(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want int
		ok   bool
	}{
		{"int8", int8(-3), -3, true},
		{"uint16", uint16(9), 9, true},
		{"int64", int64(1 << 40), 1 << 40, true},
		{"uint64 too large", uint64(1 << 63), 0, false},
		{"a string", "7", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Int(tc.in)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
