package vecenv

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// minChunk is the fewest envs worth handing to another goroutine: 64 envs
// take about 20 µs to step (BenchmarkBatchStep/n=64), far more than the
// hand-off through a channel to a running worker.
const minChunk = 64

// minSplit is the smallest batch split at all. Waking a parked worker (its
// thread, and on a VM its virtual CPU) costs about what stepping a hundred
// envs does: on the 2-vCPU VM a 256-env batch steps no faster on two
// workers than on one, a 512-env batch 1.3x faster (BenchmarkBatchStep).
// Whole, a batch also leaves the other cores to a client on the machine.
const minSplit = 512

// ranger is work over the index range [lo, hi); disjoint ranges may run at once.
type ranger interface {
	runRange(lo, hi int)
	fail(lo int, err error)
}

// task is one range of one operation, handed to a worker.
type task struct {
	r      ranger
	lo, hi int
	wg     *sync.WaitGroup
}

// Pool is a fixed set of worker goroutines shared by every batch (the
// server has one for all its connections): a batch of minSplit envs or more
// is split into ranges of at least minChunk, at most one per worker, the
// workers shared equally among the batches splitting at once; the caller
// runs the first range itself, and no goroutine is started per step. A nil
// *Pool runs everything in the caller's goroutine.
type Pool struct {
	workers int
	tasks   chan task
	done    sync.WaitGroup
	// splitting counts the operations large enough to split that are
	// running now: each takes an equal share of the workers.
	splitting atomic.Int32
}

// NewPool starts workers goroutines (at least one). Close stops them.
func NewPool(workers int) *Pool {
	if workers < 1 {
		workers = 1
	}
	p := &Pool{workers: workers, tasks: make(chan task, 4*workers)}
	p.done.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

func (p *Pool) work() {
	defer p.done.Done()
	debug.SetPanicOnFault(true) // a fault in a batch's rows fails the batch (safeRun), not the process
	for t := range p.tasks {
		safeRun(t.r, t.lo, t.hi)
		t.wg.Done()
	}
}

// ErrFault is wrapped by the error of a range that touched memory it could
// not (a shared region the other process shrank): the batch's rows are not
// to be trusted again (Batch.Faulted).
var ErrFault = errors.New("vecenv: memory fault in the batch's rows (was its shared region shrunk?)")

// IsFault reports whether a recovered panic value is a memory fault at an
// address, which a goroutine raises as a panic instead of crashing the
// process under debug.SetPanicOnFault(true) (a nil dereference is not one).
func IsFault(v any) bool {
	err, ok := v.(runtime.Error)
	if !ok {
		return false
	}
	_, ok = err.(interface{ Addr() uintptr })
	return ok
}

// safeRun runs one range and turns a panic into an env failure, a memory
// fault into one that wraps ErrFault.
func safeRun(r ranger, lo, hi int) {
	defer func() {
		if v := recover(); v != nil {
			if IsFault(v) {
				r.fail(lo, fmt.Errorf("%w: %v", ErrFault, v))
				return
			}
			r.fail(lo, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
		}
	}()
	r.runRange(lo, hi)
}

// run calls r.runRange over [0, n), split across the workers when n is large
// enough, and returns when every range is done. wg must not be in use.
func (p *Pool) run(r ranger, n int, wg *sync.WaitGroup) {
	if p == nil {
		safeRun(r, 0, n)
		return
	}
	if n < minSplit {
		safeRun(r, 0, n)
		return
	}
	// Batches stepped at once (one per connection, each in its own
	// goroutine) share the workers: two batches on two workers run one
	// each, whole, instead of queueing halves behind each other.
	busy := int(p.splitting.Add(1))
	defer p.splitting.Add(-1)
	chunks := min(p.workers/busy, n/minChunk)
	if chunks <= 1 {
		safeRun(r, 0, n)
		return
	}
	size := (n + chunks - 1) / chunks
	wg.Add(chunks - 1)
	for c := 1; c < chunks; c++ {
		p.tasks <- task{r: r, lo: c * size, hi: min(n, (c+1)*size), wg: wg}
	}
	safeRun(r, 0, size)
	wg.Wait()
}

// Close ends the workers after the queued tasks. The pool must not be used
// afterwards.
func (p *Pool) Close() {
	close(p.tasks)
	p.done.Wait()
}

// Range calls fn over the index range [0, n), split across the workers as a
// batch's operations are, and returns when every range is done. A panic in
// fn is recovered and passed to fail with the start of its range. It serves
// work that is not a batch (the server's stateless state methods).
func (p *Pool) Range(n int, fn func(lo, hi int), fail func(lo int, err error)) {
	var wg sync.WaitGroup
	p.run(funcRanger{fn, fail}, n, &wg)
}

// funcRanger adapts two functions to ranger.
type funcRanger struct {
	fn func(lo, hi int)
	f  func(lo int, err error)
}

func (r funcRanger) runRange(lo, hi int)    { r.fn(lo, hi) }
func (r funcRanger) fail(lo int, err error) { r.f(lo, err) }
