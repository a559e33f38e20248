package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/protocol"
)

// TestRulesMapMatchesString sends the same rules as a string and as a map
// (issue 22 item 7): both forms are read through the env's one table of
// rule options, so they mean the same rules, accept the same aliases and
// refuse the same mistakes with the same message.
func TestRulesMapMatchesString(t *testing.T) {
	ts := startServer(t, "unix", Config{})
	c := ts.client(t)
	same := []struct {
		name string
		str  string
		m    map[string]any
	}{
		{"board=line means the kata's length", "board=line", map[string]any{"board": "line"}},
		{"board=line with spaces", "board=line,spaces=7", map[string]any{"spaces": 7, "board": "line"}},
		{"alias p", "p=0.5", map[string]any{"p": 0.5}},
		{"alias backdo", "backdo=off", map[string]any{"backdo": false}},
		{"bools as on/off words", "pool=off,capture_bonus=off", map[string]any{"pool": "off", "capture_bonus": false}},
		{"obstacles", "obstacles=4:skip+9:back2", map[string]any{"obstacles": "4:skip+9:back2"}},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			byStr, err := c.Call("make", map[string]any{"rules": tt.str})
			require.NoError(t, err, "rules %q", tt.str)
			byMap, err := c.Call("make", map[string]any{"rules": tt.m})
			require.NoError(t, err, "rules %v", tt.m)
			assert.Equal(t, byStr["rules"], byMap["rules"])
			assert.Equal(t, byStr["obs_size"], byMap["obs_size"])
		})
	}

	refused := []struct {
		name string
		str  string
		m    map[string]any
		msg  string
	}{
		{"unknown key", "playerz=2", map[string]any{"playerz": 2}, `unknown rules key "playerz"`},
		{"out of range", "players=9", map[string]any{"players": 9}, "players must be 2 to 4, got 9"},
		{"bad enum", "end=last", map[string]any{"end": "last"}, "end must be one of first, rank"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, strErr := c.Call("make", map[string]any{"rules": tt.str})
			_, mapErr := c.Call("make", map[string]any{"rules": tt.m})
			require.Error(t, strErr)
			require.Error(t, mapErr)
			assert.Equal(t, protocol.CodeInvalidRules, errCode(strErr))
			assert.Equal(t, protocol.CodeInvalidRules, errCode(mapErr))
			assert.Contains(t, strErr.Error(), tt.msg)
			assert.Equal(t, strErr.Error(), mapErr.Error(), "one message in both forms")
		})
	}

	t.Run("an option given twice through an alias", func(t *testing.T) {
		_, strErr := c.Call("make", map[string]any{"rules": "p=0.5,flat_prob=0.55"})
		_, mapErr := c.Call("make", map[string]any{"rules": map[string]any{"p": 0.5, "flat_prob": 0.55}})
		for _, err := range []error{strErr, mapErr} {
			require.Error(t, err)
			assert.Equal(t, protocol.CodeInvalidRules, errCode(err))
			assert.Contains(t, err.Error(), `rules key "flat_prob" given more than once`)
		}
	})
}
