//go:build unix

package client

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/sys/unix"

	"github.com/yutenv/yutenv/protocol"
)

// Share calls share for handle h (spinUs: the server's poll, see
// docs/PROTOCOL.md) and returns its result and the region's file
// descriptor, which the caller maps (size ShareResult.Size) and closes.
// The connection must be a Unix socket.
func (c *Client) Share(h uint64, spinUs int) (*protocol.ShareResult, int, error) {
	uc, ok := c.nc.(*net.UnixConn)
	if !ok {
		return nil, -1, errors.New("share needs a Unix-socket connection")
	}
	if c.r.Buffered() > 0 {
		return nil, -1, fmt.Errorf("%w: unread bytes before share's reply", ErrProtocol)
	}
	c.nextID++
	body, err := msgpack.Marshal(map[string]any{"id": c.nextID, "method": protocol.Share.Name, "params": map[string]any{"handle": h, "spin_us": spinUs}})
	if err != nil {
		return nil, -1, err
	}
	if err := c.WriteFrame(body); err != nil {
		return nil, -1, err
	}
	// The descriptor rides on the reply's first bytes: read them with
	// their control message, then the rest of the frame as usual.
	buf, oob := make([]byte, 64<<10), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, -1, err
	}
	fd := -1
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
		if fds, err := unix.ParseUnixRights(&msgs[0]); err == nil && len(fds) == 1 {
			fd = fds[0]
		}
	}
	for n < 4 || n < 4+int(binary.BigEndian.Uint32(buf)) {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		k, err := c.r.Read(buf[n:])
		if err != nil {
			closeFD(fd)
			return nil, -1, err
		}
		n += k
	}
	raw, err := c.DecodeResponse(buf[4:n])
	if err != nil {
		closeFD(fd)
		return nil, -1, err
	}
	if fd < 0 {
		return nil, -1, fmt.Errorf("%w: share's reply carried no file descriptor", ErrProtocol)
	}
	var res protocol.ShareResult
	if err := msgpack.Unmarshal(raw, &res); err != nil {
		closeFD(fd)
		return nil, -1, fmt.Errorf("%w: share's result: %v", ErrProtocol, err)
	}
	return &res, fd, nil
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}
