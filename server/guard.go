package server

import (
	"io"
	"net"
	"time"
)

// Log lines a client can cause before it has said hello (refused and
// evicted connections, wrong tokens, handshake timeouts) pass through one
// rate limiter per server, so a flood of hostile connections cannot flood
// the log: a burst of hostileLogBurst lines, then one every hostileLogEvery.
// (internal/ratelog).
const (
	hostileLogEvery = time.Second
	hostileLogBurst = 10
)

// lingerTimeout is how long a refused connection is kept half-closed,
// reading and discarding what the client sends, before it is closed.
const lingerTimeout = 500 * time.Millisecond

// refuse sends a refused connection its error frame and closes it with a
// lingering close: the server shuts its side for writing, then reads and
// discards what the client sends for up to lingerTimeout before closing.
// Closing at once would make a client that writes its hello just after the
// refusal see a broken pipe or a reset instead of the error frame waiting
// for it. At most MaxHandshakes refused connections linger at once; past
// that they are closed at once, so a flood of them costs no more than that.
func (s *Server) refuse(nc net.Conn, frame []byte) {
	s.connWG.Add(1)
	go func() {
		defer s.connWG.Done()
		defer nc.Close()
		nc.SetWriteDeadline(time.Now().Add(finalWriteTimeout))
		if _, err := nc.Write(frame); err != nil {
			return
		}
		cw, ok := nc.(interface{ CloseWrite() error })
		if !ok || s.lingering.Add(1) > int64(s.cfg.MaxHandshakes) {
			if ok {
				s.lingering.Add(-1)
			}
			return
		}
		defer s.lingering.Add(-1)
		cw.CloseWrite()
		nc.SetReadDeadline(time.Now().Add(lingerTimeout))
		io.Copy(io.Discard, io.LimitReader(nc, 1<<20))
	}()
}
