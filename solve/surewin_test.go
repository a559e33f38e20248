package solve

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/internal/israce"
)

// The sure-win test is sound: on variants solved with the sure wins listed
// like any state, every state it calls a sure win has the value 1, and the
// table solved without them answers every state of the full one with the
// same value (a sure win it does not hold as 1).
func TestSureWinsAreWins(t *testing.T) {
	if israce.Enabled {
		t.Skip("solves each variant twice in one goroutine, tenfold slower under -race; the run without it checks them")
	}
	tests := []struct {
		name, rules string
		poolCap     int
		pruned      bool // the variant has sure wins to leave out
	}{
		{"kata", "kata", 0, true},
		{"line pool on", "board=line,spaces=5,pieces=2", 6, true},
		{"line finish exact", "board=line,spaces=5,pieces=2,finish=exact", 6, true},
		{"line pool capped", "board=line,spaces=5,pieces=2", 2, true},
		{"cross one piece", "pieces=1", 6, true},
		{"cross one piece capture bonus", "pieces=1,capture_bonus_yut_mo=on", 4, true},
		{"obstacles: no test", "kata,obstacles=3:back2", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := envtest.Rules(t, tt.rules)
			full, err := Solve(r, Options{PoolCap: tt.poolCap, listSureWins: true})
			require.NoError(t, err)
			lean := mustSolve(t, tt.rules, tt.poolCap)
			sure, beyond := 0, 0
			for i := range full.Len() {
				s, err := full.State(i)
				require.NoError(t, err)
				if full.c.sureWin(&s) {
					sure++
					if full.ValueAt(i) != 1 {
						require.Equal(t, 1.0, full.ValueAt(i), "state %v is called a sure win", s.Position())
					}
					if s.Phase() == env.PhaseMove {
						_, v, err := lean.Best(&s)
						require.NoError(t, err)
						require.Equal(t, 1.0, v, "a sure win's best move keeps it: %v", s.Position())
						// Every move is valued exactly, those that give the sure win up too
						// (what grade charges them).
						var want, got [env.NumActions]float64
						require.NoError(t, full.ActionValues(&s, want[:]))
						require.NoError(t, lean.ActionValues(&s, got[:]))
						for a := range want {
							if math.Abs(want[a]-got[a]) > 1e-12 {
								require.InDelta(t, want[a], got[a], 1e-12, "action %d of %v", a, s.Position())
							}
						}
					}
				}
				if _, held := lean.lookup(&s); !held {
					beyond++ // reached only by a move that gives up a sure win: valued by a search below it
				}
				// require is called only on a failure: its bookkeeping would take most of the time.
				if v, err := lean.Value(&s); err != nil || math.Abs(full.ValueAt(i)-v) > 1e-12 {
					require.NoError(t, err, "state %v", s.Position())
					require.InDelta(t, full.ValueAt(i), v, 1e-12, "state %v", s.Position())
				}
			}
			assert.Equal(t, full.Len(), lean.Len()+sure+beyond, "the lean table holds every state but the sure wins and what only they reach")
			if tt.pruned {
				assert.Positive(t, sure, "sure wins found")
			} else {
				assert.Zero(t, sure)
			}
			assert.InDelta(t, full.Start(), lean.Start(), 1e-12)
		})
	}
}

// The search's lower bound on the steps to finish is a true bound: no
// forward throw takes a stack to a place with fewer steps left than its
// own bound minus the throw.
func TestSureWinDistanceIsABound(t *testing.T) {
	for _, spec := range []string{"standard", "kata", "board=line,spaces=9,finish=exact"} {
		t.Run(spec, func(t *testing.T) {
			c, err := newCodec(envtest.Rules(t, spec))
			require.NoError(t, err)
			w := &c.win
			require.True(t, w.on)
			for i := range w.next {
				assert.Positive(t, w.dist[i])
				for tr := env.Do; tr < env.NumThrows; tr++ {
					switch n := w.next[i][tr]; n {
					case winInvalid:
					case winFinish:
						assert.LessOrEqual(t, w.dist[i], tr.Steps())
					default:
						assert.LessOrEqual(t, w.dist[i], tr.Steps()+w.dist[n])
					}
				}
			}
			assert.Equal(t, w.distHand, minEntry(w))
		})
	}
}

func minEntry(w *winRules) int {
	best := 1 << 30
	for tr := env.Do; tr < env.NumThrows; tr++ {
		switch n := w.enter[tr]; n {
		case winInvalid:
		case winFinish:
			best = min(best, tr.Steps())
		default:
			best = min(best, tr.Steps()+w.dist[n])
		}
	}
	return best
}

// fuzzRules are the variants FuzzSureWin draws positions of: the cross and
// a line, one to three pieces, stacks, back-do, the finish modes. Captures
// earn no throw, so that the exhaustive check below is a search over
// decisions alone (TestSureWinsAreWins covers the capture throw).
var fuzzRules = []string{
	"pieces=2,capture_bonus=off",
	"pieces=1,capture_bonus=off",
	"pieces=3,capture_bonus=off",
	"pieces=2,capture_bonus=off,finish=exact",
	"pieces=2,capture_bonus=off,finish=stop,back_do_enters=on",
	"kata,pool=on",
	"board=line,spaces=9,pieces=3,capture_bonus=off,finish=wrap",
}

// canFinish is the exhaustive check for FuzzSureWin: whether the mover of
// the decision s can finish all its pieces before its turn ends, whatever
// moves it takes to (every legal action, back-do included), through the
// engine's own moves. memo holds the decisions found not to.
func canFinish(t *testing.T, c *codec, s *env.State, me int, memo map[uint64]bool) bool {
	if s.IsOver() {
		return s.Winner() == me
	}
	if s.ToMove() != me || s.IsChance() {
		return false
	}
	key, ok := c.encode(s)
	require.True(t, ok)
	if v, seen := memo[key]; seen {
		return v
	}
	var legal [env.NumActions]env.Action
	var ev env.Event
	win := false
	for _, a := range s.LegalActions(legal[:0]) {
		n := *s
		require.NoError(t, n.ApplyTo(a, &ev))
		if win = canFinish(t, c, &n, me, memo); win {
			break
		}
	}
	memo[key] = win
	return win
}

// fuzzKey makes the key of a decision of codec c from fuzz input: 0-3 of
// each throw in the pool, and each piece of both seats in hand, finished
// or on a place (a byte each, taken modulo). Keys of no position (two
// seats' stacks on one station) are refused later, by the engine.
func fuzzKey(c *codec, pool uint16, pieces []byte) uint64 {
	key := uint64(1)
	for t := range env.NumThrows {
		key |= uint64(pool>>(2*t)&3) << (poolShift + poolBits*t)
	}
	shift := pieceBase
	for seat := range 2 {
		vals := make([]int, c.pieces)
		for i := range vals {
			if j := seat*c.pieces + i; j < len(pieces) {
				vals[i] = int(pieces[j]) % (len(c.places) + 2)
			}
		}
		slices.Sort(vals)
		for _, v := range vals {
			key |= uint64(v) << shift
			shift += pieceBits
		}
	}
	return key
}

// A state the sure-win test calls a sure win is one: on positions made
// from fuzz input (pools of at most 8 throws), the mover can finish all
// its pieces with its pool, by an exhaustive search over the engine's
// moves. A chance node with the same pool is a sure win alike.
func FuzzSureWin(f *testing.F) {
	codecs := make([]*codec, len(fuzzRules))
	for i, spec := range fuzzRules {
		c, err := newCodec(envtest.Rules(f, spec))
		require.NoError(f, err)
		codecs[i] = c
	}
	for i := range fuzzRules {
		f.Add(uint8(i), uint16(0b11_11_00_00_00_00), []byte{2, 3, 0, 0, 0, 0})   // two yut, two mo
		f.Add(uint8(i), uint16(0b10_01_01_00_01_00), []byte{20, 20, 1, 9, 5, 0}) // a stack far on
		f.Add(uint8(i), uint16(0b01_00_11_00_00_01), []byte{0, 0, 0, 30, 31, 2})
	}
	f.Fuzz(func(t *testing.T, which uint8, pool uint16, pieces []byte) {
		c := codecs[int(which)%len(codecs)]
		var stacks [env.NumStations]env.Stack
		s, err := c.state(fuzzKey(c, pool, pieces), stacks[:0])
		if err != nil || s.PoolSize() > 8 || s.IsOver() {
			return // not a position of these rules, or a pool too long to search through
		}
		if !c.sureWin(&s) {
			return
		}
		assert.True(t, canFinish(t, c, &s, s.ToMove(), map[uint64]bool{}), "called a sure win: %v", s.Position())
	})
}
