package solve

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
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
			r := mustRules(t, tt.rules)
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
			c, err := newCodec(mustRules(t, spec))
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
