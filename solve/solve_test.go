package solve

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

// tiny are variants small enough for the brute force of the tests: a line
// with captures and no pool, a line with the standard pool, back-do and
// the capture throw (capped low), and a short kata with stacks.
var tiny = []struct {
	name, rules string
	poolCap     int
}{
	{"line pool off", "kata,spaces=6,pieces=1", 0},
	{"line pool on", "board=line,spaces=5,pieces=1", 3},
	{"line two pieces", "kata,spaces=4", 0},
}

// solved holds the tables the tests have solved, by rules and pool cap: a
// table is read-only once solved, and the kata's takes seconds (tenfold
// under -race), so the tests that read the same one share it.
var solved struct {
	sync.Mutex
	tables map[string]*Table
}

func mustSolve(t testing.TB, spec string, poolCap int) *Table {
	t.Helper()
	key := fmt.Sprint(spec, "/", poolCap)
	solved.Lock()
	defer solved.Unlock()
	if tb, ok := solved.tables[key]; ok {
		return tb
	}
	tb, err := Solve(envtest.Rules(t, spec), Options{PoolCap: poolCap})
	require.NoError(t, err)
	if solved.tables == nil {
		solved.tables = map[string]*Table{}
	}
	solved.tables[key] = tb
	return tb
}

// bounds is a depth-limited expectimax written for the test alone, over the
// engine's public State API: the value of s for its mover after depth more
// steps (throws or moves), with the unknown rest of the game counted as a
// loss (lo) or a win (hi). The true value lies between them, and they meet
// as depth grows. Chance nodes at the pool cap draw only throws that end
// the chain, scaled, as the solver's game does.
type bounds struct {
	poolCap int
	memo    map[string][2]float64
}

func (b *bounds) key(s *env.State, depth int) string {
	p := s.Position()
	return fmt.Sprint(depth, p.ToMove, p.Phase, p.Pool, p.Hand, p.Finished, p.Stacks)
}

func (b *bounds) value(s *env.State, depth int) (lo, hi float64) {
	if s.IsOver() {
		panic("value of a finished game")
	}
	if depth == 0 {
		return 0, 1
	}
	k := b.key(s, depth)
	if v, ok := b.memo[k]; ok {
		return v[0], v[1]
	}
	child := func(c *env.State) (float64, float64) {
		if c.IsOver() {
			if c.Winner() == s.ToMove() {
				return 1, 1
			}
			return 0, 0
		}
		l, h := b.value(c, depth-1)
		if c.ToMove() != s.ToMove() {
			l, h = 1-h, 1-l
		}
		return l, h
	}
	if s.IsChance() {
		outs := s.ChanceOutcomes(nil)
		capped := s.Rules().Pool == env.SwitchOn && s.PoolSize() >= b.poolCap
		total := 0.0
		for _, o := range outs {
			if !capped || !o.Throw.Bonus() {
				total += o.Prob
			}
		}
		for _, o := range outs {
			if capped && o.Throw.Bonus() {
				continue
			}
			c := *s
			_, err := c.ApplyThrow(o.Throw)
			if err != nil {
				panic(err)
			}
			l, h := child(&c)
			lo += o.Prob / total * l
			hi += o.Prob / total * h
		}
	} else {
		for _, a := range s.LegalActions(nil) {
			c := *s
			if _, err := c.Apply(a); err != nil {
				panic(err)
			}
			l, h := child(&c)
			lo, hi = max(lo, l), max(hi, h)
		}
	}
	b.memo[k] = [2]float64{lo, hi}
	return lo, hi
}

// Every solved value equals an independent brute-force expectimax of the
// same game to 1e-9, on variants small enough to brute-force.
func TestSolveMatchesBruteForce(t *testing.T) {
	if israce.Enabled {
		t.Skip("a brute force at scale in one goroutine, tenfold slower under -race; the run without it checks every variant")
	}
	for _, tt := range tiny {
		t.Run(tt.name, func(t *testing.T) {
			tb := mustSolve(t, tt.rules, tt.poolCap)
			require.Greater(t, tb.Len(), 10)
			b := &bounds{poolCap: tb.PoolCap, memo: map[string][2]float64{}}
			depth := 0
			s0, err := env.New(tb.Rules(), 0, 0)
			require.NoError(t, err)
			for lo, hi := 0.0, 1.0; hi-lo > 1e-11; depth += 40 {
				require.Less(t, depth, 4000, "the brute force does not converge")
				clear(b.memo)
				lo, hi = b.value(&s0, depth+40)
			}
			checked := 0
			for i := range tb.Len() {
				s, err := tb.State(i)
				require.NoError(t, err)
				lo, hi := b.value(&s, depth+40)
				if hi-lo > 1e-10 {
					continue // a state the start reaches only late: its bounds need more depth
				}
				checked++
				v := tb.ValueAt(i)
				require.InDelta(t, (lo+hi)/2, v, 1e-9, "state %d (%v): brute force [%g, %g], solved %g", i, s.Position(), lo, hi, v)
			}
			assert.Greater(t, checked, tb.Len()*9/10, "most states are checked")
			got, err := tb.Value(&s0)
			require.NoError(t, err)
			assert.InDelta(t, tb.Start(), got, 0)
		})
	}
}

// Value iteration converges: the Bellman residual of the solved values is
// below 1e-9 on every supported kind of variant.
func TestSolveResidual(t *testing.T) {
	variants := []struct{ name, rules string }{
		{"kata", "kata"},
		{"line pool on", "board=line,spaces=6,pieces=2"},
		{"line finish wrap", "kata,finish=wrap,spaces=7"},
		{"cross one piece", "pieces=1"},
	}
	for _, tt := range variants {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && tt.rules == "pieces=1" {
				t.Skip("seconds")
			}
			if israce.Enabled {
				t.Skip("value iteration in one goroutine, tenfold slower under -race; the run without it solves every variant")
			}
			tb := mustSolve(t, tt.rules, 0)
			assert.Less(t, tb.Residual, 1e-9)
			assert.Greater(t, tb.Iterations, 1)
			v := tb.Start()
			assert.True(t, v > 0.3 && v < 0.7, "the first seat's value %g is a probability near even", v)
		})
	}
}

// The figures docs/BASELINES.md publishes for the kata.
func TestSolveKataFigures(t *testing.T) {
	if israce.Enabled {
		t.Skip("solves the kata in one goroutine, tenfold slower under -race; the run without it checks the figures")
	}
	tb := mustSolve(t, "kata", 0)
	assert.Equal(t, 83716, tb.Len())
	assert.InDelta(t, 0.508236225142, tb.Start(), 1e-11)
}

func TestSolveRefuses(t *testing.T) {
	tests := []struct {
		name, rules string
		opt         Options
		err         error
		msg         string
	}{
		{"three seats", "players=3", Options{}, ErrUnsupported, "players=3"},
		{"ranked", "end=rank", Options{}, ErrUnsupported, "end=rank"},
		{"skip obstacles", "kata,obstacles=3:skip", Options{}, ErrUnsupported, "skip obstacles"},
		{"standard", "standard", Options{}, ErrUnsupported, "pieces=4"},
		{"two pieces on the cross, default bound", "pieces=2", Options{}, ErrTooBig, "need about 5."},
		{"three pieces on the cross", "pieces=3", Options{MaxBytes: 16 << 30}, ErrTooBig, "over the bound of 16.0 GiB"},
		{"memory bound", "kata", Options{MaxBytes: 1 << 20}, ErrTooBig, "over the bound of 1.0 MiB"},
		{"above the machine's memory", "pieces=3", Options{MaxBytes: 1 << 50, MachineBytes: 23 << 30}, ErrTooBig,
			"need about 2.3 TiB (an estimate from the ways to place the pieces), more than this machine's 23.0 GiB of memory"},
		{"pool cap", "pieces=1", Options{PoolCap: MaxPoolCap + 1}, ErrUnsupported, "pool cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Solve(envtest.Rules(t, tt.rules), tt.opt)
			require.ErrorIs(t, err, tt.err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// An estimate above the machine's memory is refused whatever the bound;
// the check reads the machine's memory when not told it, and is skipped
// when told to.
func TestFitsMachine(t *testing.T) {
	r := envtest.Rules(t, "kata")
	tests := []struct {
		name         string
		est, machine int64
		refused      bool
	}{
		{"fits", 1 << 30, 2 << 30, false},
		{"exactly the machine", 2 << 30, 2 << 30, false},
		{"above", 3 << 30, 2 << 30, true},
		{"skipped", 1 << 60, -1, false},
		{"the machine's own memory, above", 1 << 61, 0, runtime.GOOS == "linux" || runtime.GOOS == "darwin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fitsMachine(r, tt.est, tt.machine)
			if !tt.refused {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrTooBig)
			assert.Contains(t, err.Error(), "more than this machine's")
		})
	}
}

// MachineBytes reads the physical memory where the build can.
func TestMachineBytes(t *testing.T) {
	b, ok := MachineBytes()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		assert.False(t, ok)
		return
	}
	require.True(t, ok)
	assert.Greater(t, b, int64(64<<20), "more than 64 MiB")
	assert.Less(t, b, int64(1<<50), "less than a PiB")
}

// The bound holds while the states are listed too: a variant whose
// estimate passes but whose real tables do not fit is stopped early.
func TestSolveBoundWhileListing(t *testing.T) {
	r := envtest.Rules(t, "kata")
	c, err := newCodec(r)
	require.NoError(t, err)
	g := &graph{c: c, cap: 1, budget: 256 << 10}
	g.outcomes()
	err = g.enumerate(nil)
	require.ErrorIs(t, err, ErrTooBig)
	assert.Contains(t, err.Error(), "states listed")
	assert.Less(t, g.bytes(), int64(2<<20), "stopped soon after the bound")
}

// Keys round-trip through positions for every state of a table.
func TestCodecRoundTrip(t *testing.T) {
	tb := mustSolve(t, "kata,spaces=7", 0)
	for i := range tb.Len() {
		s, err := tb.State(i)
		require.NoError(t, err)
		k, ok := tb.c.encode(&s)
		require.True(t, ok)
		require.Equal(t, tb.keys[i], k)
	}
}

func TestDefaultPoolCap(t *testing.T) {
	r := env.Standard()
	c := DefaultPoolCap(r)
	assert.Equal(t, MaxPoolCap, c)
	assert.Less(t, Truncation(r, c), 1e-11)
	assert.Zero(t, Truncation(env.Kata(), 1))
	assert.False(t, math.IsNaN(Truncation(r, 1)))
}
