package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNetAgentEverywhere plays a network file through eval, play and
// selfplay, with and without search: the spec goes through the agent
// registry like any other.
func TestNetAgentEverywhere(t *testing.T) {
	net := "net:" + filepath.Join("..", "..", "nnet", "testdata", "go-tiny.ynet")
	m := evalJSON(t, "--a", net, "--b", "random", "--games", "4")
	assert.Equal(t, 4, m.Games)
	assert.Equal(t, net, m.A)
	m = evalJSON(t, "--a", net+",sims=4", "--b", net, "--games", "2")
	assert.Equal(t, net+",sims=4", m.A)

	dir := filepath.Join(t.TempDir(), "ds")
	code, _, errs := runCmd(t, "selfplay", "--games", "2", "--quiet", "--agents", net+";"+net+",sims=4", "--tier", "compact", "--out", dir)
	require.Equal(t, 0, code, errs)

	code, _, errs = runCmd(t, "eval", "--a", "net:/nonexistent.ynet", "--b", "random", "--games", "2", "--quiet")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "nonexistent.ynet")
}
