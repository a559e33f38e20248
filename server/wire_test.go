package server

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/internal/msgp"
)

// nested returns depth one-element arrays around a nil.
func nested(depth int) []byte {
	return append(bytes.Repeat([]byte{0x91}, depth), 0xc0)
}

// TestDocExample checks the worked example of docs/PROTOCOL.md byte for
// byte: the request as documented, and the server's answer to it.
func TestDocExample(t *testing.T) {
	req := mustHex(t, "00 00 00 19 83 a2 69 64 01 a6 6d 65 74 68 6f 64 a4 70 69 6e 67 a6 70 61 72 61 6d 73 80")
	resp := mustHex(t, "00 00 00 0d 82 a2 69 64 01 a6 72 65 73 75 6c 74 80")
	body := msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "ping"}, {"params", msgp.Obj{}}})
	assert.Equal(t, req[4:], body, "the documented request is what the writer produces")
	ts := startServer(t, "unix", Config{})
	nc := ts.rawConn(t)
	c := client.NewClient(nc)
	_, err := c.Hello("")
	require.NoError(t, err)
	_, err = nc.Write(req)
	require.NoError(t, err)
	got := make([]byte, len(resp))
	_, err = readFull(nc, got)
	require.NoError(t, err)
	assert.Equal(t, resp, got)
}

func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}
