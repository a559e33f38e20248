package protocol

import (
	"encoding/binary"
	"errors"
	"io"
)

// Version is the version of docs/PROTOCOL.md this package declares.
const Version = 1

// DefaultMaxFrame is the largest frame body a server accepts and sends
// unless configured otherwise; a client assumes it until hello tells it
// the server's max_frame.
const DefaultMaxFrame = 16 << 20

// HeaderSize is the size of a frame's header: its body's length as a
// big-endian uint32.
const HeaderSize = 4

// BeginFrame appends a frame header to dst, to be filled in by EndFrame
// once the body after it is appended.
func BeginFrame(dst []byte) []byte { return append(dst, 0, 0, 0, 0) }

// EndFrame writes the length of the body of the frame that starts at
// b[start:] (begun by BeginFrame) into its header.
func EndFrame(b []byte, start int) {
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-HeaderSize))
}

// AppendFrame appends a whole frame carrying body to dst.
func AppendFrame(dst, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(body))), body...)
}

// ReadHeader reads a frame header from r into hdr and returns the body's
// declared length, which the caller checks against its limit before it
// reads the body.
func ReadHeader(r io.Reader, hdr *[HeaderSize]byte) (int, error) {
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint32(hdr[:])), nil
}

// Unexpected turns an end of file inside a frame into io.ErrUnexpectedEOF:
// the peer left mid-frame.
func Unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
