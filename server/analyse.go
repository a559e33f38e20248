package server

import (
	"bufio"
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/yutenv/yutenv/analysis"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/positions"
	"github.com/yutenv/yutenv/protocol"
)

// analyse searches the packed states of in with agent sp, state i
// reseeded to seed+i, into out (package analysis). Its workers take turns
// (analysis.Job.Turn) on the server's search cores (Server.search,
// sp.Workers of them a turn, first come first served): a turn searches up
// to Limits.AnalyseChunk states, then gives the cores back, so concurrent
// requests take turns and the cores past Limits.SearchWorkers stay free
// for everything else. While the client is the server's only one, more
// workers search on those free cores too (Server.spare, never waited for),
// giving them back at the next state once another client connects: there
// is nobody to keep them free for until then. Cancelling ctx (the client
// hung up, or the shutdown's deadline passed) stops the searches within 16
// simulations.
func (s *Server) analyse(ctx context.Context, g *positions.Game, sp agent.Spec, seed uint64, in []byte, out *analysis.Out) *Error {
	j := analysis.NewJob(g.Proto(), sp, seed, in, out, s.limits.AnalyseChunk(sp))
	weight := int64(max(sp.Workers, 1))
	workers := min(j.Chunks(), max(1, s.limits.SearchWorkers/int(weight)))
	spares := min(j.Chunks()-workers, (s.limits.Cores-s.limits.SearchWorkers)/int(weight))
	defer context.AfterFunc(ctx, j.Stop)()
	// work takes turns on the cores of sem while acquire gives them.
	work := func(sem *semaphore.Weighted, acquire, keep func() bool) {
		for acquire() {
			more := j.Turn(keep)
			sem.Release(weight)
			if !more {
				return
			}
		}
	}
	always := func() bool { return true }
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { work(s.search, func() bool { return s.search.Acquire(ctx, weight) == nil }, always) })
	}
	for range spares {
		wg.Go(func() {
			work(s.spare, func() bool { return s.soleClient() && s.spare.TryAcquire(weight) }, s.soleClient)
		})
	}
	wg.Wait()
	var re *analysis.RowError
	switch err := j.Err(); {
	case errors.As(err, &re):
		return errorf(netCode(re.Err, protocol.CodeInternal), "analyse: %v", err)
	case s.ctx.Err() != nil:
		return errorf(protocol.CodeShuttingDown, "analyse: cancelled: the server is shutting down")
	case ctx.Err() != nil:
		return errorf(protocol.CodeShuttingDown, "analyse: cancelled: the client hung up")
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
