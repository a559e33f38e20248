package server

import (
	"bufio"
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/yutenv/yutenv/analysis"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/positions"
	"github.com/yutenv/yutenv/protocol"
)

// analyse searches the packed states of in with agent sp, state i
// reseeded to seed+i, into out (package analysis), on the server's search
// cores (Server.cores: Limits.SearchWorkers cores taken in turns, and the
// others while the client is the server's only one). Cancelling ctx (the
// client hung up, or the shutdown's deadline passed) stops the searches
// within 16 simulations.
func (s *Server) analyse(ctx context.Context, g *positions.Game, sp agent.Spec, seed uint64, in []byte, out *analysis.Out) *Error {
	j := analysis.NewJob(g.Proto(), sp, seed, in, out, s.limits.AnalyseChunk(sp))
	var re *analysis.RowError
	switch err := j.Run(ctx, s.cores); {
	case errors.As(err, &re):
		return errorf(netCode(re.Err, protocol.CodeInternal), "%v", err)
	case s.ctx.Err() != nil:
		return errorf(protocol.CodeShuttingDown, "cancelled: the server is shutting down")
	case ctx.Err() != nil:
		return errorf(protocol.CodeShuttingDown, "cancelled: the client hung up")
	}
	return nil
}

// watch returns a context for the request being served that is cancelled
// when its client hangs up (the socket reads end of file or fails) or when
// the server's own context ends (Close, or a Shutdown past its deadline).
// A goroutine reads ahead into the connection's buffer while the request
// runs (what it reads stays there for the next frames); stop ends it and
// must be called before the connection reads again. A graceful shutdown's
// wake-up (conn.interrupt) does not end the watch: the request may finish,
// and a client that leaves meanwhile still cancels it. A client that half
// closes its socket (shutdown(SHUT_WR)) counts as gone.
func (c *conn) watch() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(c.srv.ctx)
	var mu sync.Mutex // orders ending and the read deadline between the two goroutines
	ending := false
	c.nc.SetReadDeadline(time.Time{}) // the request's time is the server's, not the client's silence
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, err := c.r.Peek(c.r.Buffered() + 1)
			switch {
			case err == nil:
				continue // more frames arrived: still there
			case errors.Is(err, bufio.ErrBufferFull):
				return // too much read ahead to watch further
			case errors.Is(err, os.ErrDeadlineExceeded):
				mu.Lock()
				end := ending
				if !end {
					c.nc.SetReadDeadline(time.Time{}) // the shutdown's wake-up: watch on
				}
				mu.Unlock()
				if end {
					return
				}
				continue
			}
			c.log.Info("client hung up during a request; cancelling it", "err", err)
			cancel()
			return
		}
	}()
	return ctx, func() {
		mu.Lock()
		ending = true
		c.nc.SetReadDeadline(time.Now())
		mu.Unlock()
		<-done
		cancel()
	}
}

// soleClient reports whether one connection at most is open: analyse may
// then use every core.
func (s *Server) soleClient() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admitted <= 1 && len(s.pending) == 0
}
