package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/protocol"
)

// Agent optimal:PATH reads a table file; a client may not make the server
// open one (it would read any file of the server's machine).
func TestOptimalAgentRefusedToClients(t *testing.T) {
	ts, _ := netServer(t, Config{})
	c := ts.client(t)
	_, err := c.Call("make", map[string]any{"n": 1, "opponent": "optimal:/etc/passwd"})
	require.Error(t, err)
	assert.Equal(t, protocol.CodeBadRequest, errCode(err))
	assert.Contains(t, err.Error(), "does not open solved tables")
}
