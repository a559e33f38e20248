package env_test

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/rules_wire.json from the current encoders")

// rulesWireGolden holds, per variant, the JSON and msgpack (hex) bytes that
// Rules encoded to when the form was written by struct tags. Saved files,
// datasets and records hold these bytes, so they must never change; a
// variant added later is checked once it is in the file (-update-wire).
const rulesWireGolden = "testdata/rules_wire.json"

type wireForms struct {
	JSON    string `json:"json"`
	Msgpack string `json:"msgpack"`
}

func TestRulesWireBytesUnchanged(t *testing.T) {
	got := map[string]wireForms{}
	for _, v := range env.Variants() {
		j, err := json.Marshal(v.Rules)
		require.NoError(t, err)
		m, err := msgpack.Marshal(v.Rules)
		require.NoError(t, err)
		got[v.Name] = wireForms{JSON: string(j), Msgpack: hex.EncodeToString(m)}
	}
	path := filepath.FromSlash(rulesWireGolden)
	if *updateWire {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var want map[string]wireForms
	require.NoError(t, json.Unmarshal(b, &want))
	require.NotEmpty(t, want)
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			g, ok := got[name]
			require.True(t, ok, "variant %q was removed from env.Variants", name)
			assert.Equal(t, w.JSON, g.JSON, "JSON")
			assert.Equal(t, w.Msgpack, g.Msgpack, "msgpack")
			// Both forms read back to the same rules.
			var fromJSON, fromMsgpack env.Rules
			require.NoError(t, json.Unmarshal([]byte(w.JSON), &fromJSON))
			m, err := hex.DecodeString(w.Msgpack)
			require.NoError(t, err)
			require.NoError(t, msgpack.Unmarshal(m, &fromMsgpack))
			assert.Equal(t, fromJSON, fromMsgpack)
		})
	}
}
