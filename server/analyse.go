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

	"golang.org/x/sync/semaphore"

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
// reseeded to seed+i, into out. Its workers take turns on the server's
// search cores (Server.search, sp.Workers of them a turn, first come first
// served): a turn builds an agent and searches up to Limits.AnalyseChunk
// states, claimed one at a time, then gives the cores back, so concurrent
// requests take turns and the cores past Limits.SearchWorkers stay free
// for everything else. While the client is the server's only one, more
// workers search on those free cores too (Server.spare, never waited for),
// giving them back at the next state once another client connects: there
// is nobody to keep them free for until then. Cancelling ctx (the client
// hung up, or the shutdown's deadline passed) stops the searches within 16
// simulations.
func (s *Server) analyse(ctx context.Context, g *game, sp agent.Spec, seed uint64, in []byte, n int, out *analyseOut) *Error {
	j := &analyseJob{g: g, sp: sp, seed: seed, in: in, n: n, out: out, chunk: s.limits.AnalyseChunk(sp), firstRow: n}
	chunks := (n + j.chunk - 1) / j.chunk
	weight := int64(max(sp.Workers, 1))
	workers := min(chunks, max(1, s.limits.SearchWorkers/int(weight)))
	spares := min(chunks-workers, (s.limits.Cores-s.limits.SearchWorkers)/int(weight))
	defer context.AfterFunc(ctx, func() { j.stop.Store(true) })()
	// work takes turns on the cores of sem while acquire gives them.
	work := func(sem *semaphore.Weighted, acquire, keep func() bool) {
		for acquire() {
			more := j.turn(keep)
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
	switch {
	case j.firstErr != nil && !errors.Is(j.firstErr, agent.ErrInterrupted):
		return errorf(netCode(j.firstErr, CodeInternal), "analyse: row %d: %v", j.firstRow, j.firstErr)
	case s.ctx.Err() != nil:
		return errorf(CodeShuttingDown, "analyse: cancelled: the server is shutting down")
	case ctx.Err() != nil:
		return errorf(CodeShuttingDown, "analyse: cancelled: the client hung up")
	}
	return nil
}

// analyseJob is one analyse request's work, shared by its workers: they
// claim its states one at a time.
type analyseJob struct {
	g     *game
	sp    agent.Spec
	seed  uint64
	in    []byte
	n     int
	out   *analyseOut
	chunk int          // states a turn on the cores searches at most
	next  atomic.Int64 // the next state to search
	stop  atomic.Bool  // raised by the first error or the cancellation; the agents poll it

	mu       sync.Mutex
	firstErr error
	firstRow int
}

// fail records row i's error (the lowest row wins) and stops the job.
func (j *analyseJob) fail(i int, err error) {
	j.mu.Lock()
	if i < j.firstRow {
		j.firstErr, j.firstRow = err, i
	}
	j.mu.Unlock()
	j.stop.Store(true)
}

// turn is one turn on the cores: a new agent searches up to chunk states,
// claimed one by one, for as long as keep allows. It returns false when no
// state is left or the job stopped.
func (j *analyseJob) turn(keep func() bool) bool {
	if j.stop.Load() || int(j.next.Load()) >= j.n {
		return false
	}
	ag, err := agent.NewFromSpec(j.sp, j.seed)
	if err != nil {
		j.fail(0, err)
		return false
	}
	if it, ok := ag.(agent.Interruptible); ok {
		it.SetInterrupt(&j.stop)
	}
	rs, _ := ag.(agent.Reseeder)
	for k := range j.chunk {
		if j.stop.Load() {
			return false
		}
		if k > 0 && !keep() {
			return true
		}
		i := int(j.next.Add(1) - 1)
		if i >= j.n {
			return false
		}
		if rs != nil {
			rs.Reseed(j.seed + uint64(i))
		}
		st := j.g.proto
		err := st.Unpack(j.in[i*env.PackedSize : (i+1)*env.PackedSize])
		var a env.Action
		var stats agent.Stats
		if err == nil {
			a, stats, err = safeAct(ag, &st)
		}
		if err != nil {
			j.fail(i, err)
			return false
		}
		j.out.put(i, a, &stats)
	}
	return true
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
