package server

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
)

// memChildEnv makes the test binary run the memory load as a child process,
// so that its peak resident memory (VmHWM) is the load's, not the suite's.
const memChildEnv = "YUTENV_MEMORY_CHILD"

// TestMemoryBound proves docs/PROTOCOL.md's memory bound with the default
// limits: in a fresh process set up as yutenv serve sets itself up (soft
// memory limit = Config.MemoryBound), max_conns - 2 clients make the
// largest batches the server allows and then all at once send maximal
// frames and reset and step their batches (replies of about max_frame),
// while one more client runs the largest self-play run the server allows
// and the last the largest analyse (hanging up after a few seconds). The
// process's peak resident memory, clients included, must stay under the
// bound plus the clients' own frame (one shared max_frame buffer).
func TestMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("sends max_conns x max_frame bytes")
	}
	if israce.Enabled {
		t.Skip("the race detector's shadow memory is not the server's")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryBoundChild$", "-test.v", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), memChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
	var hwm, bound int64
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 5 && f[0] == "MEMORY" {
			hwm, _ = strconv.ParseInt(f[2], 10, 64)
			bound, _ = strconv.ParseInt(f[4], 10, 64)
		}
	}
	require.NotZero(t, hwm, "child printed no MEMORY line: %s", out)
	t.Logf("peak resident memory %.1f MB, documented bound %.1f MB (+ %.1f MB of client frame)", float64(hwm)/1e6, float64(bound)/1e6, float64(DefaultMaxFrame)/1e6)
	assert.Less(t, bound-DefaultMaxSelfplayBytes, int64(300e6), "the default limits' bound, self-play budget aside, must be well under 300 MB")
	assert.LessOrEqual(t, hwm, bound+DefaultMaxFrame, "peak resident memory above the documented bound")
}

// TestMemoryBoundChild is TestMemoryBound's load; it runs only as its child.
func TestMemoryBoundChild(t *testing.T) {
	if os.Getenv(memChildEnv) == "" {
		t.Skip("runs as TestMemoryBound's child process")
	}
	cfg := DefaultConfig()
	cfg.IdleTimeout = time.Minute // bounds the waits for the in-flight budget
	cfg.OutDirs = tempOut
	bound := cfg.MemoryBound()
	debug.SetMemoryLimit(bound) // as yutenv serve does
	ts := startServer(t, "unix", cfg)

	// One maximal frame, shared by every client: a ping whose params hold a
	// bin filling max_frame (answered bad_request after it was read whole).
	frame := msgp.AppendMapHeader(nil, 3)
	frame = msgp.AppendStr(msgp.AppendStr(frame, "id"), "x")
	frame = msgp.AppendStr(msgp.AppendStr(frame, "method"), "ping")
	frame = msgp.AppendMapHeader(msgp.AppendStr(frame, "params"), 1)
	frame = msgp.AppendStr(frame, "pad")
	pad := cfg.MaxFrame - len(frame) - 5
	frame = msgp.AppendBinHeader(frame, pad)
	frame = append(frame, make([]byte, pad)...)
	require.Len(t, frame, cfg.MaxFrame)
	head := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
	frame = append(head, frame...)

	// discard reads one reply without keeping it and returns its size.
	discard := func(r *bufio.Reader) (int, error) {
		var h [4]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return 0, err
		}
		n := int64(binary.BigEndian.Uint32(h[:]))
		_, err := io.CopyN(io.Discard, r, n)
		return int(n), err
	}
	search := startSearchLoad(t, ts, cfg)
	clients := make([]*client.Client, cfg.MaxConns-2)
	handles := make([]uint64, len(clients))
	made := 0
	for i := range clients {
		clients[i] = ts.client(t)
		// The largest batch whose step reply fits max_frame; the env
		// budget lets only a few connections have one.
		res, err := clients[i].Call("make", map[string]any{"n": 15000, "illegal": "penalty"})
		if err == nil {
			h, _ := client.Int(res["handle"])
			handles[i] = uint64(h)
			made++
		} else {
			require.ErrorContains(t, err, "limit_exceeded")
		}
	}
	require.Positive(t, made)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, len(clients))
	var replies [2]int64
	var mu sync.Mutex
	for i, c := range clients {
		wg.Go(func() {
			<-start
			w, r := c.Conn(), bufio.NewReader(c.Conn())
			for range 2 {
				if _, err := w.Write(frame); err != nil {
					errs <- err
					return
				}
				if _, err := discard(r); err != nil {
					errs <- err
					return
				}
				if handles[i] == 0 {
					continue
				}
				reset := msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "reset"}, {"params", msgp.Obj{{"handle", handles[i]}, {"seed", i}}}})
				step := msgp.AppendValue(nil, msgp.Obj{{"id", 2}, {"method", "step"}, {"params", msgp.Obj{{"handle", handles[i]}, {"actions", make([]byte, 4*15000)}}}})
				for _, req := range [][]byte{reset, step, step} {
					if _, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(req))), req...)); err != nil {
						errs <- err
						return
					}
					n, err := discard(r)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					replies[0]++
					replies[1] = max(replies[1], int64(n))
					mu.Unlock()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Greater(t, replies[1], int64(cfg.MaxFrame/2), "the batches' replies were not large")
	search()
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	var hwm int64
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			hwm = kb << 10
		}
	}
	require.NotZero(t, hwm)
	fmt.Printf("MEMORY hwm %d bound %d\n", hwm, bound)
	t.Logf("%d batches, %d large replies of up to %d bytes", made, replies[0], replies[1])
}

// largestRun returns the games in flight of the largest self-play run of
// compact observations, 64 sims and batches of 64 that cfg allows.
func largestRun(t *testing.T, cfg Config) int {
	t.Helper()
	space, err := obs.SpaceOf(obs.Compact)
	require.NoError(t, err)
	n := 1
	for (az.Config{Tier: obs.Compact, Sims: 64, InFlight: 2 * n, MaxBatch: 64}).MemoryBytes(space.Size) <= cfg.limits().SelfplayBytes {
		n *= 2
	}
	for (az.Config{Tier: obs.Compact, Sims: 64, InFlight: n + 1, MaxBatch: 64}).MemoryBytes(space.Size) <= cfg.limits().SelfplayBytes {
		n++
	}
	return n
}

// startSearchLoad starts, on two more connections, the largest self-play
// run and the largest analyse cfg allows; the returned function runs them
// for a few seconds more, then hangs up and returns.
func startSearchLoad(t *testing.T, ts *testServer, cfg Config) func() {
	sp, an := ts.client(t), ts.client(t)
	for _, c := range []*client.Client{sp, an} {
		// They run to the end of the child, whose -test.timeout bounds them: the
		// dial's 60 s deadline ran out on a loaded machine (make test's installs
		// beside the Go tests) and failed the run with an i/o timeout.
		require.NoError(t, c.Conn().SetDeadline(time.Time{}))
	}
	inFlight := largestRun(t, cfg)
	p := selfplayParams(t.TempDir())
	p["games_in_flight"], p["sims"], p["max_batch"], p["games"], p["shard_games"] = inFlight, 64, 64, 1_000_000, 1_000_000
	res, err := sp.Call("selfplay_new", p)
	require.NoError(t, err, "the largest run, %d games in flight", inFlight)
	p = selfplayParams(t.TempDir())
	p["games_in_flight"] = inFlight + 1
	_, err = sp.Call("selfplay_new", p)
	require.ErrorContains(t, err, "--max-selfplay-bytes", "no larger run is allowed")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var batches int
	wg.Go(func() {
		next := map[string]any{"id": res["id"]}
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := sp.Call("selfplay_next", next)
			if err != nil {
				t.Errorf("selfplay_next: %v", err)
				return
			}
			n, _ := client.Int(r["n"])
			next = uniformAnswer(int(n))
			next["id"] = res["id"]
			batches++
		}
	})
	g := declareGame(t, an, "standard")
	states := int(cfg.limits().AnalyseSims / DecisionSims(agent.Spec{Name: "mcts", N: cfg.MaxOpponentSims}))
	require.NoError(t, an.WriteFrame(msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "analyse"}, {"params", msgp.Obj{
		{"game", g}, {"states", decisionStates(t, states)}, {"agent", fmt.Sprintf("mcts:%d", cfg.MaxOpponentSims)}}}})))
	return func() {
		time.Sleep(5 * time.Second)
		close(stop)
		wg.Wait()
		an.Close()
		t.Logf("self-play: %d games in flight, %d batches; analyse: %d states of mcts:%d", inFlight, batches, states, cfg.MaxOpponentSims)
	}
}
