package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// analyseOut holds an analyse request's answer columns, filled row by row
// by the workers (each row by one worker).
type analyseOut struct {
	actions, policy, value, values []byte
	players                        int
}

// put writes state i's answer.
func (o *analyseOut) put(i int, a env.Action, st *agent.Stats) {
	binary.LittleEndian.PutUint32(o.actions[4*i:], uint32(a))
	if st.Policy != nil {
		for k, v := range st.Policy {
			binary.LittleEndian.PutUint32(o.policy[4*(i*env.NumActions+k):], math.Float32bits(v))
		}
	} else {
		binary.LittleEndian.PutUint32(o.policy[4*(i*env.NumActions+int(a)):], math.Float32bits(1))
	}
	binary.LittleEndian.PutUint32(o.value[4*i:], math.Float32bits(float32(st.Value)))
	for s := range o.players {
		binary.LittleEndian.PutUint32(o.values[4*(i*o.players+s):], math.Float32bits(float32(st.Values[s])))
	}
}

// analyse searches the n packed states of in with agent sp, state i
// reseeded to seed+i, into out. The states are cut into chunks
// (Limits.AnalyseChunk); a worker takes a chunk only once it holds
// sp.Workers of the server's search cores (Server.search, first come first
// served), builds its agent, searches the chunk and gives the cores back,
// so concurrent requests take turns and the cores past
// Limits.SearchWorkers stay free for everything else. Cancelling ctx (the
// client hung up, or the shutdown's deadline passed) stops the searches
// within 16 simulations.
func (s *Server) analyse(ctx context.Context, g *game, sp agent.Spec, seed uint64, in []byte, n int, out *analyseOut) *Error {
	chunk := s.limits.AnalyseChunk(sp)
	chunks := (n + chunk - 1) / chunk
	weight := max(sp.Workers, 1)
	workers := min(chunks, max(1, s.limits.SearchWorkers/weight))
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	firstRow := n
	fail := func(i int, err error) {
		mu.Lock()
		if i < firstRow {
			firstErr, firstRow = err, i
		}
		mu.Unlock()
		stop.Store(true)
	}
	for range workers {
		wg.Go(func() {
			for {
				if err := s.search.Acquire(ctx, int64(weight)); err != nil {
					return // cancelled
				}
				k := int(next.Add(1) - 1)
				if k >= chunks || stop.Load() {
					s.search.Release(int64(weight))
					return
				}
				err := s.analyseChunk(g, sp, seed, in, k*chunk, min(n, (k+1)*chunk), out, &stop, fail)
				s.search.Release(int64(weight))
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	switch {
	case firstErr != nil && !errors.Is(firstErr, agent.ErrInterrupted):
		return errorf(CodeInternal, "analyse: row %d: %v", firstRow, firstErr)
	case s.ctx.Err() != nil:
		return errorf(CodeShuttingDown, "analyse: cancelled: the server is shutting down")
	case ctx.Err() != nil:
		return errorf(CodeShuttingDown, "analyse: cancelled: the client hung up")
	}
	return nil
}

// analyseChunk searches states [lo, hi) with a new agent; it returns the
// first error (also passed to fail), or agent.ErrInterrupted once stop
// is raised.
func (s *Server) analyseChunk(g *game, sp agent.Spec, seed uint64, in []byte, lo, hi int, out *analyseOut, stop *atomic.Bool, fail func(int, error)) error {
	ag, err := agent.NewFromSpec(sp, seed)
	if err != nil {
		fail(lo, err)
		return err
	}
	if it, ok := ag.(agent.Interruptible); ok {
		it.SetInterrupt(stop)
	}
	rs, _ := ag.(agent.Reseeder)
	for i := lo; i < hi; i++ {
		if stop.Load() {
			return agent.ErrInterrupted
		}
		if rs != nil {
			rs.Reseed(seed + uint64(i))
		}
		st := g.proto
		err := st.Unpack(in[i*env.PackedSize : (i+1)*env.PackedSize])
		var a env.Action
		var stats agent.Stats
		if err == nil {
			a, stats, err = safeAct(ag, &st)
		}
		if err != nil {
			fail(i, err)
			return err
		}
		out.put(i, a, &stats)
	}
	return nil
}

// watch returns a context for the request being served that is cancelled
// when its client hangs up (the socket reads end of file or fails) or when
// the server's own context ends (Close, or a Shutdown past its deadline).
// A goroutine reads ahead into the connection's buffer while the request
// runs (what it reads stays there for the next frames); stop ends it and
// must be called before the connection reads again. A client that half
// closes its socket (shutdown(SHUT_WR)) counts as gone.
func (c *conn) watch() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(c.srv.ctx)
	if !c.stopped.Load() {
		c.nc.SetReadDeadline(time.Time{}) // the request's time is the server's, not the client's silence
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, err := c.r.Peek(c.r.Buffered() + 1)
			switch {
			case err == nil:
				continue // more frames arrived: still there
			case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, bufio.ErrBufferFull):
				return // stopped, or too much read ahead to watch further
			}
			c.log.Info("client hung up during a request; cancelling it", "err", err)
			cancel()
			return
		}
	}()
	return ctx, func() {
		c.nc.SetReadDeadline(time.Now())
		<-done
		cancel()
	}
}
