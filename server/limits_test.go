package server

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
)

// TestLimitsPolicy: every budget the policy computes, refused with
// limit_exceeded and a message naming the flag or limit.
func TestLimitsPolicy(t *testing.T) {
	cfg, err := Config{Workers: 4, MaxAnalyseSims: 10_000, MaxSelfplayBytes: 128 << 20}.withDefaults()
	require.NoError(t, err)
	l := cfg.limits()
	require.Equal(t, 3, l.SearchWorkers, "analyse leaves one of the workers free")
	spec := func(s string) agent.Spec {
		sp, err := agent.ParseSpec(s)
		require.NoError(t, err)
		return sp
	}
	opp, an, none := l.Budget(protocol.DrawOpponent), l.Budget(protocol.DrawSearch|protocol.DrawRows), l.Budget(0)
	sp := func(inFlight, sims int) az.Config {
		return az.Config{Tier: obs.Compact, Sims: sims, InFlight: inFlight, MaxBatch: min(inFlight, 64)}
	}
	cases := []struct {
		name string
		e    func() *Error
		want string // "" = allowed
	}{
		{"opponent within", func() *Error { return opp.Search("opponent", "mcts:2000", spec("mcts:2000"), 0) }, ""},
		{"opponent above", func() *Error {
			return opp.Search("opponent", "mcts:1001,workers=2", spec("mcts:1001,workers=2"), 0)
		}, "--max-opponent-sims 2000"},
		{"analyse within", func() *Error { return an.Search("agent", "mcts:100", spec("mcts:100"), 100) }, ""},
		{"analyse total", func() *Error { return an.Search("agent", "mcts:100", spec("mcts:100"), 101) }, "--max-analyse-sims 10000"},
		{"analyse per state", func() *Error { return an.Search("agent", "mcts:2001", spec("mcts:2001"), 1) }, "--max-opponent-sims"},
		{"analyse workers", func() *Error { return an.Search("agent", "mcts:8,workers=4", spec("mcts:8,workers=4"), 1) }, "--analyse-workers 3"},
		{"analyse greedy counts one a state", func() *Error { return an.Search("agent", "greedy", spec("greedy"), 10_000) }, ""},
		{"opponent budget searches no states", func() *Error { return opp.Search("opponent", "greedy", spec("greedy"), 2) }, "internal:does not declare"},
		{"no search budget", func() *Error { return none.Search("agent", "greedy", spec("greedy"), 0) }, "internal:does not declare"},
		{"selfplay within", func() *Error { _, e := l.Selfplay(sp(128, 64), 0); return e }, ""},
		{"selfplay runs", func() *Error { _, e := l.Selfplay(sp(1, 1), maxRunsPerConn); return e }, "self-play runs"},
		{"selfplay nodes", func() *Error { _, e := l.Selfplay(sp(4096, 1025), 0); return e }, "games_in_flight × sims"},
		{"selfplay bytes", func() *Error { _, e := l.Selfplay(sp(4096, 1024), 0); return e }, "--max-selfplay-bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e()
			if tc.want == "" {
				assert.Nil(t, e)
				return
			}
			require.NotNil(t, e)
			code := protocol.CodeLimitExceeded
			if msg, ok := strings.CutPrefix(tc.want, "internal:"); ok {
				code, tc.want = protocol.CodeInternal, msg
			}
			assert.Equal(t, code, e.Code)
			assert.Contains(t, e.Message, tc.want)
		})
	}
}

// TestBudgetsFollowTheDraws: a request's budget holds exactly what its
// method declares it draws on (protocol.Desc.Draws); every other is zero.
func TestBudgetsFollowTheDraws(t *testing.T) {
	cfg, err := Config{}.withDefaults()
	require.NoError(t, err)
	l := cfg.limits()
	for _, m := range protocol.Methods() {
		t.Run(m.Name, func(t *testing.T) {
			b := l.Budget(m.Draws)
			assert.Equal(t, m.Draws&protocol.DrawRows != 0, b.Rows > 0, "rows")
			assert.Equal(t, m.Draws&protocol.DrawReply != 0, b.Reply > 0, "reply")
			assert.Equal(t, m.Draws&(protocol.DrawOpponent|protocol.DrawSearch) != 0, b.DecisionSims > 0, "decision sims")
			assert.Equal(t, m.Draws&protocol.DrawSearch != 0, b.RequestSims > 0 && b.Workers > 0, "request sims")
			assert.Equal(t, m.Draws&protocol.DrawRuns != 0, b.RunBytes > 0, "runs")
		})
	}
}

// TestMemoryBoundCountsSearchAndSelfplay: the bound grows with the
// self-play budget and the analyse cores.
func TestMemoryBoundCountsSearchAndSelfplay(t *testing.T) {
	base := Config{Workers: 2}
	more := base
	more.MaxSelfplayBytes = 2 * DefaultMaxSelfplayBytes
	assert.Equal(t, int64(DefaultMaxSelfplayBytes), more.MemoryBound()-base.MemoryBound())
	wide := base
	wide.AnalyseWorkers = 3 // one more than the cores
	assert.Equal(t, agent.SearchBytes(agent.Spec{Name: "mcts", N: DefaultMaxOpponentSims}), wide.MemoryBound()-base.MemoryBound())
}

// decisionStates returns n packed states at decisions (phase move).
func decisionStates(t testing.TB, n int) []byte {
	var packed []byte
	for seed := uint64(0); n > 0; seed++ {
		if s := midGameState(t, seed); s.Phase() == env.PhaseMove {
			packed = s.AppendPacked(packed)
			n--
		}
	}
	return packed
}

// callWithin sends a request and waits at most d for its reply.
func callWithin(t *testing.T, c *client.Client, d time.Duration, method string, params map[string]any) (map[string]any, error) {
	t.Helper()
	require.NoError(t, c.Conn().SetDeadline(time.Now().Add(d)))
	defer c.Conn().SetDeadline(time.Time{})
	return c.Call(method, params)
}

// TestAnalyseRequestBudget: the simulation budget is per request, over all
// its states, and checked before any search: a frame of 20,000 states of
// mcts:2000 (each within --max-opponent-sims) is refused at once.
func TestAnalyseRequestBudget(t *testing.T) {
	ts := startServer(t, "unix", DefaultConfig())
	c := ts.client(t)
	g := declareGame(t, c, "standard")
	one := decisionStates(t, 1)
	big := make([]byte, 0, 20_000*env.PackedSize)
	for range 20_000 {
		big = append(big, one...)
	}
	start := time.Now()
	_, err := callWithin(t, c, 5*time.Second, "analyse", map[string]any{"game": g, "states": big, "agent": "mcts:2000"})
	require.Error(t, err, "an analyse of 4e7 simulations must be refused")
	assert.Equal(t, protocol.CodeLimitExceeded, errCode(err))
	assert.ErrorContains(t, err, "--max-analyse-sims")
	assert.Less(t, time.Since(start), 2*time.Second, "refused up front, not after searching")

	small := startServer(t, "unix", Config{MaxAnalyseSims: 1000})
	c = small.client(t)
	g = declareGame(t, c, "standard")
	states := decisionStates(t, 11)
	_, err = c.Call("analyse", map[string]any{"game": g, "states": states, "agent": "mcts:100"})
	assert.Equal(t, protocol.CodeLimitExceeded, errCode(err))
	assert.ErrorContains(t, err, "11 states × 100 simulations = 1100, above this server's --max-analyse-sims 1000")
	res, err := c.Call("analyse", map[string]any{"game": g, "states": states[:10*env.PackedSize], "agent": "mcts:100"})
	require.NoError(t, err, "10 states of mcts:100 are within the budget")
	assert.Len(t, res["actions"], 40)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bigAnalyse is an analyse of many seconds of search (2,000 states of
// mcts:2000, within the default budget).
func bigAnalyse(t testing.TB, g int) []byte {
	return msgp.AppendValue(nil, msgp.Obj{{"id", 7}, {"method", "analyse"}, {"params", msgp.Obj{
		{"game", g}, {"states", decisionStates(t, 2000)}, {"agent", "mcts:2000"}}}})
}

// TestAnalyseStopsWhenClientHangsUp: a client that sends a long analyse and
// hangs up leaves no search running: the process goes idle.
func TestAnalyseStopsWhenClientHangsUp(t *testing.T) {
	if israce.Enabled {
		t.Skip("measures the process's CPU time")
	}
	ts := startServer(t, "unix", DefaultConfig())
	c := ts.client(t)
	g := declareGame(t, c, "standard")
	require.NoError(t, c.WriteFrame(bigAnalyse(t, g)))
	time.Sleep(300 * time.Millisecond) // searching
	busy := cpuTime(t)
	time.Sleep(300 * time.Millisecond)
	require.Greater(t, cpuTime(t)-busy, 30*time.Millisecond, "the analyse was searching")
	require.NoError(t, c.Close())
	time.Sleep(300 * time.Millisecond) // the hang-up is seen within a few simulations
	idle := cpuTime(t)
	time.Sleep(time.Second)
	assert.Less(t, cpuTime(t)-idle, 150*time.Millisecond, "the search went on after its client hung up")
}

// TestShutdownCancelsAnalyse: at the shutdown's deadline the analyse in
// flight is cancelled, so Shutdown returns in time (the client's answer:
// TestShutdownAnswersCancelledAnalyse).
func TestShutdownCancelsAnalyse(t *testing.T) {
	srv, addr, done := serveOn(t, Config{})
	c := dialHello(t, addr)
	g := declareGame(t, c, "standard")
	require.NoError(t, c.WriteFrame(bigAnalyse(t, g)))
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := srv.Shutdown(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, ErrAbandoned, "the analyse stopped: nothing was abandoned")
	assert.Less(t, time.Since(start), time.Second, "Shutdown waited for the analyse")
	assert.ErrorIs(t, <-done, ErrServerClosed)
}

// TestShutdownAbandonsStuckHandler: a handler that nothing can cancel does
// not hold Shutdown (nor Close) past its deadline and shutdownAbandon.
func TestShutdownAbandonsStuckHandler(t *testing.T) {
	old := shutdownAbandon
	shutdownAbandon = 100 * time.Millisecond
	t.Cleanup(func() { shutdownAbandon = old })
	for _, how := range []string{"shutdown", "close"} {
		t.Run(how, func(t *testing.T) {
			srv, addr, done := serveOn(t, Config{})
			c := dialHello(t, addr)
			inFlight, release := holdNextFrame(t)
			t.Cleanup(func() { close(release) })
			require.NoError(t, c.WriteFrame(msgp.AppendValue(nil, msgp.Obj{{"id", 1}, {"method", "ping"}})))
			<-inFlight
			testHookFrame = nil
			ret := make(chan error, 1)
			go func() {
				if how == "close" {
					ret <- srv.Close()
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				ret <- srv.Shutdown(ctx)
			}()
			select {
			case err := <-ret:
				assert.True(t, errors.Is(err, ErrAbandoned), "got %v", err)
			case <-time.After(3 * time.Second):
				t.Fatal("the stuck handler held the shutdown")
			}
			assert.ErrorIs(t, <-done, ErrServerClosed)
		})
	}
}

// TestSelfplayMemoryBudget: a run's trees and games count against the
// server-wide --max-selfplay-bytes: the tree (4,096 games in flight
// × 1,024 sims, 1.7 GB) is refused with the defaults, and runs of several
// connections share the budget until one is closed.
func TestSelfplayMemoryBudget(t *testing.T) {
	params := func(out string, inFlight, sims int) map[string]any {
		p := selfplayParams(out)
		p["games_in_flight"], p["sims"], p["max_batch"], p["games"] = inFlight, sims, 64, 1000
		return p
	}
	cfg := DefaultConfig()
	cfg.OutDirs = tempOut
	ts := startServer(t, "unix", cfg)
	c := ts.client(t)
	_, err := c.Call("selfplay_new", params(filepath.Join(t.TempDir(), "sp"), 4096, 1024))
	assert.Equal(t, protocol.CodeLimitExceeded, errCode(err))
	assert.ErrorContains(t, err, "--max-selfplay-bytes")

	space, err := obs.SpaceOf(obs.Compact)
	require.NoError(t, err)
	one := az.Config{Tier: obs.Compact, Sims: 64, InFlight: 32, MaxBatch: 64}.MemoryBytes(space.Size)
	small := startServer(t, "unix", Config{MaxSelfplayBytes: one + one/2, OutDirs: tempOut})
	a, b := small.client(t), small.client(t)
	res, err := a.Call("selfplay_new", params(filepath.Join(t.TempDir(), "a"), 32, 64))
	require.NoError(t, err, "one run fits")
	_, err = b.Call("selfplay_new", params(filepath.Join(t.TempDir(), "b"), 32, 64))
	assert.Equal(t, protocol.CodeLimitExceeded, errCode(err), "a second one, on another connection, does not")
	assert.ErrorContains(t, err, "already held")
	_, err = a.Call("selfplay_close", map[string]any{"id": res["id"]})
	require.NoError(t, err)
	_, err = b.Call("selfplay_new", params(filepath.Join(t.TempDir(), "b"), 32, 64))
	assert.NoError(t, err, "closing the first gave its memory back")
}

// eventually polls cond every 10 ms for up to d.
func eventually(cond func() bool, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// TestAnalyseSpareCores: an analyse whose client is the server's only one
// also searches on the cores past --analyse-workers, and gives them back
// once another client connects (at its next state).
func TestAnalyseSpareCores(t *testing.T) {
	ts := startServer(t, "unix", Config{Workers: 2})
	require.Equal(t, 1, ts.srv.limits.SearchWorkers)
	c := ts.client(t)
	g := declareGame(t, c, "standard")
	require.NoError(t, c.WriteFrame(bigAnalyse(t, g)))
	spareBusy := func() bool {
		if ts.srv.cores.Spare.TryAcquire(1) {
			ts.srv.cores.Spare.Release(1)
			return false
		}
		return true
	}
	require.True(t, eventually(spareBusy, 5*time.Second), "alone, the analyse took the spare core")
	other := ts.client(t)
	assert.True(t, eventually(func() bool { return !spareBusy() }, 5*time.Second), "another client connected: the spare core was given back")
	_, err := other.Call("ping", nil)
	require.NoError(t, err)
	assert.False(t, spareBusy(), "and it stays free while the other client is connected")
}
