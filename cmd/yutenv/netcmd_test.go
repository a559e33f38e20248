package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
)

// TestNetCommandWritesTheShippedNetwork: "yutenv net az --out" writes the
// exact bytes agent az plays (their SHA-256 is the declared one), to a file
// or to standard output, and the description names its shape.
func TestNetCommandWritesTheShippedNetwork(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join("..", "..", "nnet", "shipped", "az.ynet"))
	require.NoError(t, err)
	t.Run("to a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "az.ynet")
		code, out, errs := runCmd(t, "net", "az", "--out", path)
		require.Equal(t, 0, code, errs)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, shipped, got)
		sum := sha256.Sum256(got)
		assert.Equal(t, nnet.AZChecksum, hex.EncodeToString(sum[:]))
		assert.Contains(t, out, "written to "+path)
		// The file is a network that net:PATH plays.
		m := evalJSON(t, "--a", "net:"+path, "--b", "random", "--games", "2")
		assert.Equal(t, 2, m.Games)
	})
	t.Run("to standard output", func(t *testing.T) {
		code, out, errs := runCmd(t, "net", "az", "--out", "-")
		require.Equal(t, 0, code, errs)
		assert.Equal(t, string(shipped), out)
	})
	t.Run("described as JSON", func(t *testing.T) {
		code, out, errs := runCmd(t, "net", "az", "--json")
		require.Equal(t, 0, code, errs)
		var info netInfo
		require.NoError(t, json.Unmarshal([]byte(out), &info))
		var meta struct { // what the network's record says of it
			Rules, Tier string
			Hidden      []int
		}
		b, err := os.ReadFile(filepath.Join("..", "..", "nnet", "shipped", "az.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &meta))
		assert.Equal(t, netInfo{Name: "az", SHA256: nnet.AZChecksum, Bytes: len(shipped), Tier: meta.Tier,
			ObsLayout: obs.LayoutVersion, Rules: meta.Rules, Hidden: meta.Hidden}, info)
	})
}

func TestNetCommandRefusals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown name", []string{"net", "mystery"}, `no shipped network "mystery"`},
		{"no name", []string{"net"}, "Usage: yutenv net NAME"},
		{"two names", []string{"net", "az", "az"}, "Usage: yutenv net NAME"},
		{"a folder that does not exist", []string{"net", "az", "--out", filepath.Join(t.TempDir(), "no", "az.ynet")}, "--out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCmd(t, tt.args...)
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, tt.want)
		})
	}
}
