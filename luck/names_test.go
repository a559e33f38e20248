package luck

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/nnet/nettest"
)

// TestForNamesAndNetworks resolves every kind of name For takes, and
// refuses a network's value where it cannot value the game.
func TestForNamesAndNetworks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.ynet")
	nettest.Write(t, path, nettest.Net(nettest.Small(3), 16)) // records the standard rules
	comma := filepath.Join(dir, "a,b.ynet")                   // a path an agent spec quotes
	nettest.Write(t, comma, nettest.Net(nettest.Small(4), 16))
	anyRules := filepath.Join(dir, "any.ynet")
	n := nettest.Net(nettest.Small(5), 16)
	n.Rules = "" // records no rules: values any two-seat game of its tier's size
	nettest.Write(t, anyRules, n)
	pieces2 := envtest.Rules(t, "pieces=2")
	players3 := envtest.Rules(t, "players=3")

	for _, c := range []struct {
		name, value string
		rules       env.Rules
		load        Loader
		want        string // the resolved name, or "" when refused
		errs        string // a part of the refusal
	}{
		{"auto", "auto", env.Standard(), LoadFile, NameAZ, ""},
		{"auto elsewhere", "", players3, nil, NameProgress, ""},
		{"progress", NameProgress, players3, nil, NameProgress, ""},
		{"a network file", "net:" + path, env.Standard(), LoadFile, "net:" + path, ""},
		{"a quoted path", "net:'" + comma + "'", env.Standard(), LoadFile, "net:'" + comma + "'", ""},
		{"a file of no rules", "net:" + anyRules, pieces2, LoadFile, "net:" + anyRules, ""},
		{"search options", "net:" + path + ",sims=8", env.Standard(), LoadFile, "", "no search options"},
		{"no loader", "net:" + path, env.Standard(), nil, "", "not available here"},
		{"other rules", "net:" + path, pieces2, LoadFile, "", "rules the network was not trained for"},
		{"three seats", "net:" + anyRules, players3, LoadFile, "", "two seats, not 3"},
		{"missing", "net:" + filepath.Join(dir, "none.ynet"), env.Standard(), LoadFile, "", "none.ynet"},
		{"empty path", "net:", env.Standard(), LoadFile, "", "needs the network file"},
		{"unknown", "dice", env.Standard(), LoadFile, "", "must be one of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, mk, err := For(c.value, c.rules, c.load)
			if c.want == "" {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrName), "%v wraps ErrName", err)
				assert.Contains(t, err.Error(), c.errs)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			v, err := mk()
			require.NoError(t, err)
			assert.Equal(t, c.want, v.Name())
			s, err := env.New(c.rules, 1, 0)
			require.NoError(t, err)
			s.Advance()
			var vals [env.MaxPlayers]float64
			require.NoError(t, v.Values(&s, &vals))
			if c.rules.Players == 2 {
				assert.InDelta(t, -vals[0], vals[1], 1e-12, "two seats: one's value is the other's negation")
			}
		})
	}
}

// A refused network file's error says which refusal it is, for a caller
// that branches (the server maps them to its codes).
func TestForKeepsTheNetworkErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.ynet")
	require.NoError(t, os.WriteFile(bad, []byte("not a network"), 0o644))
	_, _, err := For("net:"+bad, env.Standard(), LoadFile)
	require.Error(t, err)
	assert.ErrorIs(t, err, nnet.ErrNet)
	pieces2 := envtest.Rules(t, "pieces=2")
	good := filepath.Join(dir, "good.ynet")
	nettest.Write(t, good, nettest.Net(nettest.Small(3), 16))
	_, _, err = For("net:"+good, pieces2, LoadFile)
	assert.ErrorIs(t, err, nnet.ErrRules)
}
