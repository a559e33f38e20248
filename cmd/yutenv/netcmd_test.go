package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
)

// TestNetCommandWritesTheShippedNetwork: "yutenv net NAME --out" writes
// the exact bytes agent NAME plays (their SHA-256 is the declared one), to a
// file or to standard output, and the description is its record's, for
// every shipped name.
func TestNetCommandWritesTheShippedNetwork(t *testing.T) {
	for _, name := range nnet.ShippedNames() {
		t.Run(name, func(t *testing.T) {
			shipped, err := os.ReadFile(filepath.Join("..", "..", "nnet", "shipped", name+".ynet"))
			require.NoError(t, err)
			s, err := nnet.ShippedNet(name)
			require.NoError(t, err)
			sum := sha256.Sum256(shipped)
			require.Equal(t, s.SHA256, hex.EncodeToString(sum[:]))
			if name == nnet.AZName {
				require.Equal(t, nnet.AZChecksum, s.SHA256, "az is pinned")
			}
			t.Run("to a file", func(t *testing.T) {
				path := filepath.Join(t.TempDir(), name+".ynet")
				code, out, errs := runCmd(t, "net", name, "--out", path)
				require.Equal(t, 0, code, errs)
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, shipped, got)
				assert.Contains(t, out, "written to "+path)
				// The file is a network that net:PATH plays.
				m := evalJSON(t, "--a", "net:"+path, "--b", "random", "--games", "2", "--rules", s.Net.Rules)
				assert.Equal(t, 2, m.Games)
			})
			t.Run("to standard output", func(t *testing.T) {
				code, out, errs := runCmd(t, "net", name, "--out", "-")
				require.Equal(t, 0, code, errs)
				assert.Equal(t, string(shipped), out)
			})
			t.Run("described as JSON", func(t *testing.T) {
				code, out, errs := runCmd(t, "net", name, "--json")
				require.Equal(t, 0, code, errs)
				var info netInfo
				require.NoError(t, json.Unmarshal([]byte(out), &info))
				var meta struct { // what the network's record says of it
					SHA256, Rules, Tier string
					Hidden              []int
				}
				b, err := os.ReadFile(filepath.Join("..", "..", "nnet", "shipped", name+".json"))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &meta))
				assert.Equal(t, netInfo{Name: name, SHA256: meta.SHA256, Bytes: len(shipped), Tier: meta.Tier,
					ObsLayout: obs.LayoutVersion, Rules: meta.Rules, Hidden: meta.Hidden, Recommended: name == nnet.Recommended}, info)
			})
		})
	}
}

// TestNetCommandLists: "yutenv net" (or --list) is a table of every
// shipped network, and --json the same as an array of what "yutenv net
// NAME --json" says of each, exactly one recommended.
func TestNetCommandLists(t *testing.T) {
	names := nnet.ShippedNames()
	for _, args := range [][]string{{"net"}, {"net", "--list"}} {
		code, out, errs := runCmd(t, args...)
		require.Equal(t, 0, code, errs)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		require.Len(t, lines, 1+len(names), out)
		assert.Equal(t, []string{"NAME", "SHA-256", "BYTES", "RULES", "TIER", "RECOMMENDED"}, strings.Fields(lines[0]))
		for i, name := range names {
			info := describeNet(t, name)
			want := []string{name, info.SHA256, strconv.Itoa(info.Bytes), info.Rules, info.Tier}
			if info.Recommended {
				want = append(want, "yes")
			}
			assert.Equal(t, want, strings.Fields(lines[1+i]))
		}
	}
	code, out, errs := runCmd(t, "net", "--list", "--json")
	require.Equal(t, 0, code, errs)
	var infos []netInfo
	require.NoError(t, json.Unmarshal([]byte(out), &infos))
	require.Len(t, infos, len(names))
	recommended := 0
	for i, name := range names {
		assert.Equal(t, describeNet(t, name), infos[i])
		if infos[i].Recommended {
			recommended++
			assert.Equal(t, nnet.Recommended, name)
		}
	}
	assert.Equal(t, 1, recommended)
}

// describeNet returns what "yutenv net NAME --json" says.
func describeNet(t *testing.T, name string) netInfo {
	t.Helper()
	code, out, errs := runCmd(t, "net", name, "--json")
	require.Equal(t, 0, code, errs)
	var info netInfo
	require.NoError(t, json.Unmarshal([]byte(out), &info))
	return info
}

func TestNetCommandRefusals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown name", []string{"net", "mystery"}, `no shipped network "mystery": the binary ships ` + strings.Join(nnet.ShippedNames(), ", ")},
		{"--list and a name", []string{"net", "--list", "az"}, "Usage: yutenv net [NAME]"},
		{"two names", []string{"net", "az", "az"}, "Usage: yutenv net [NAME]"},
		{"--out without a name", []string{"net", "--out", filepath.Join(t.TempDir(), "x.ynet")}, "--out needs a NAME"},
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
