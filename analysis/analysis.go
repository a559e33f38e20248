package analysis

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// ErrCancelled is returned by Analyse when its context ended first.
var ErrCancelled = errors.New("analysis cancelled")

// RowError is the failure of one state (the lowest failing row of a job).
type RowError struct {
	// Row is the state's index.
	Row int
	// Err is what failed: a packed state that does not read (env.ErrCorrupt,
	// env.ErrVersion), the agent's error, or a recovered panic.
	Err error
}

// Error returns "row N: err".
func (e *RowError) Error() string { return fmt.Sprintf("row %d: %v", e.Row, e.Err) }

// Unwrap returns Err.
func (e *RowError) Unwrap() error { return e.Err }

// Out holds a job's answer columns as little-endian bytes, filled row by
// row by the workers (each row by one worker): Actions one int32 a state,
// Policy env.NumActions float32 a state, Value one float32 a state (the
// seat to move's), Values Players float32 a state.
type Out struct {
	Actions, Policy, Value, Values []byte
	// Players is the rule set's number of seats.
	Players int
}

// NewOut returns zeroed columns for n states of a game of players seats.
func NewOut(n, players int) *Out {
	return &Out{
		Actions: make([]byte, 4*n), Policy: make([]byte, 4*n*env.NumActions),
		Value: make([]byte, 4*n), Values: make([]byte, 4*n*players), Players: players,
	}
}

// RowBytes is the size of one state's answer in Out.
func RowBytes(players int) int { return 4 + 4*env.NumActions + 4 + 4*players }

// put writes state i's answer.
func (o *Out) put(i int, a env.Action, st *agent.Stats) {
	binary.LittleEndian.PutUint32(o.Actions[4*i:], uint32(a))
	if st.Policy != nil {
		for k, v := range st.Policy {
			binary.LittleEndian.PutUint32(o.Policy[4*(i*env.NumActions+k):], math.Float32bits(v))
		}
	} else {
		binary.LittleEndian.PutUint32(o.Policy[4*(i*env.NumActions+int(a)):], math.Float32bits(1))
	}
	binary.LittleEndian.PutUint32(o.Value[4*i:], math.Float32bits(float32(st.Value)))
	for s := range o.Players {
		binary.LittleEndian.PutUint32(o.Values[4*(i*o.Players+s):], math.Float32bits(float32(st.Values[s])))
	}
}

// Job is one analysis of n packed states, shared by the workers that take
// turns on it: they claim its states one at a time.
type Job struct {
	proto *env.State
	sp    agent.Spec
	seed  uint64
	in    []byte
	n     int
	out   *Out
	chunk int
	next  atomic.Int64 // the next state to search
	stop  atomic.Bool  // raised by the first error or Stop; the agents poll it

	mu       sync.Mutex
	firstErr error
	firstRow int
}

// NewJob prepares the analysis of the packed states in (a multiple of
// env.PackedSize bytes, read under proto's rules) by agents of spec sp
// into out, chunk states at most per turn (at least 1).
func NewJob(proto *env.State, sp agent.Spec, seed uint64, in []byte, out *Out, chunk int) *Job {
	n := len(in) / env.PackedSize
	return &Job{proto: proto, sp: sp, seed: seed, in: in, n: n, out: out, chunk: max(chunk, 1), firstRow: n}
}

// Chunks is how many turns the job needs at least: the most workers that
// can share it usefully.
func (j *Job) Chunks() int { return (j.n + j.chunk - 1) / j.chunk }

// Stop interrupts the job: its searches end within 16 simulations, and no
// turn starts another state.
func (j *Job) Stop() { j.stop.Store(true) }

// Err returns the lowest failing row's error (a *RowError), nil when no
// row failed. An interrupted search (Stop) is not a failure.
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.firstErr == nil || errors.Is(j.firstErr, agent.ErrInterrupted) {
		return nil
	}
	return &RowError{Row: j.firstRow, Err: j.firstErr}
}

// fail records row i's error (the lowest row wins) and stops the job.
func (j *Job) fail(i int, err error) {
	j.mu.Lock()
	if i < j.firstRow {
		j.firstErr, j.firstRow = err, i
	}
	j.mu.Unlock()
	j.stop.Store(true)
}

// Turn is one turn on the cores: a new agent searches up to the job's
// chunk of states, claimed one by one, for as long as keep allows (asked
// before every state but the first). It returns false when no state is
// left or the job stopped: the worker is done.
func (j *Job) Turn(keep func() bool) bool {
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
		st := *j.proto
		err := st.Unpack(j.in[i*env.PackedSize : (i+1)*env.PackedSize])
		var a env.Action
		var stats agent.Stats
		if err == nil {
			a, stats, err = Act(ag, &st)
		}
		if err != nil {
			j.fail(i, err)
			return false
		}
		j.out.put(i, a, &stats)
	}
	return true
}

// Act runs an agent's ActStats and turns a panic into an error.
func Act(ag agent.Agent, s *env.State) (a env.Action, st agent.Stats, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return ag.ActStats(s)
}

// Analyse searches the packed states in (read under proto's rules) with
// agents of spec sp on workers goroutines, state i reseeded to seed+i,
// into out (NewOut(len(in)/env.PackedSize, players)). It returns the
// lowest failing row's *RowError, or ErrCancelled when ctx ended first.
func Analyse(ctx context.Context, proto *env.State, in []byte, sp agent.Spec, seed uint64, workers int, out *Out) error {
	if len(in)%env.PackedSize != 0 {
		return fmt.Errorf("%w: %d bytes is not a multiple of the state size %d", env.ErrCorrupt, len(in), env.PackedSize)
	}
	n, workers := len(in)/env.PackedSize, max(workers, 1)
	// One chunk a worker: each builds one agent, reseeded state by state.
	j := NewJob(proto, sp, seed, in, out, (n+workers-1)/workers)
	defer context.AfterFunc(ctx, j.Stop)()
	always := func() bool { return true }
	var wg sync.WaitGroup
	for range j.Chunks() {
		wg.Go(func() {
			for j.Turn(always) {
			}
		})
	}
	wg.Wait()
	return j.outcome(ctx)
}

// Cores are the cores a server shares among the analyses of all its
// clients (Job.Run). An agent with workers=W takes W of them a turn.
type Cores struct {
	// Search holds the cores set aside for analyses, Workers of them,
	// taken in turns, first come first served.
	Search  *semaphore.Weighted
	Workers int
	// Spare holds the other cores, Spares of them: an analysis searches
	// on them too while Sole reports that its client is the only one,
	// never waiting for them, and gives them back at its next state once
	// Sole turns false (there was nobody to keep them free for).
	Spare  *semaphore.Weighted
	Spares int
	Sole   func() bool
}

// Run searches the job on c's cores: its workers take turns (Turn) on
// Search, a chunk of states a turn, then give the cores back, so that
// concurrent jobs take turns and the cores past Search stay free for
// other work; spare workers search on Spare while c.Sole holds.
// Cancelling ctx stops the searches within 16 simulations. It returns the
// lowest failing row's *RowError, or ErrCancelled when ctx ended first.
func (j *Job) Run(ctx context.Context, c Cores) error {
	weight := int64(max(j.sp.Workers, 1))
	workers := min(j.Chunks(), max(1, c.Workers/int(weight)))
	spares := min(j.Chunks()-workers, c.Spares/int(weight))
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
		wg.Go(func() { work(c.Search, func() bool { return c.Search.Acquire(ctx, weight) == nil }, always) })
	}
	for range spares {
		wg.Go(func() { work(c.Spare, func() bool { return c.Sole() && c.Spare.TryAcquire(weight) }, c.Sole) })
	}
	wg.Wait()
	return j.outcome(ctx)
}

// outcome is a finished job's error: its first failure, else ErrCancelled
// (with the cause) when ctx ended, else nil.
func (j *Job) outcome(ctx context.Context) error {
	if err := j.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrCancelled, context.Cause(ctx))
	}
	return nil
}
