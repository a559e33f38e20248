package obs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// gameParts returns the index ranges of tier t that hold the game's pool and
// phase: the same for every observer.
func gameParts(t Tier) [][2]int {
	switch t {
	case Planes:
		return [][2]int{{offGlobals + gPool, offGlobals + gPhase + 3}}
	default:
		return [][2]int{{offPool, offPool + env.NumThrows}, {offPhase, offPhase + 3}}
	}
}

// toMoveOffset returns where tier t's to_move part (one value per seat slot) starts.
func toMoveOffset(t Tier) int {
	if t == Planes {
		return offGlobals + gToMove
	}
	return offToMove
}

// A seat that is not to move sees the position from its own chair: its
// observation is the one it would get if it were about to throw in the same
// position (seat-relative slots, the threat of its own opponents, no legal
// actions), except for the pool and phase, which are the game's, and the
// seat to move, which is the real one (in the observer's slots).
func TestEncodeEverySeat(t *testing.T) {
	for _, spec := range []string{"standard", "players=3,end=rank", "players=4,pieces=2"} {
		r := envtest.Rules(t, spec)
		states := randomStates(r, fewGames(3), 41)
		for _, tier := range Tiers() {
			t.Run(spec+"/"+tier.String(), func(t *testing.T) {
				e, err := NewEncoder(r, tier)
				require.NoError(t, err)
				got, want := make([]float32, e.Size()), make([]float32, e.Size())
				mover := make([]float32, e.Size())
				others := 0
				for i := range states {
					s := &states[i]
					e.Encode(s, s.ToMove(), mover)
					for k := 0; k < r.Players; k++ {
						e.Encode(s, k, got)
						if k == s.ToMove() {
							requireSameObs(t, mover, got)
							continue
						}
						p := s.Position()
						if p.Place[k] != 0 && !s.IsOver() {
							continue // a finished seat is never to move: no position to compare with
						}
						p.ToMove = k
						if !s.IsOver() {
							p.Phase, p.Pool = env.PhaseThrow, [env.NumThrows]int{}
						}
						v := mustState(t, p)
						e.Encode(&v, k, want)
						for _, part := range gameParts(tier) {
							copy(want[part[0]:part[1]], mover[part[0]:part[1]])
						}
						tm := want[toMoveOffset(tier) : toMoveOffset(tier)+numSeats]
						clear(tm)
						tm[(s.ToMove()-k+r.Players)%r.Players] = 1
						requireSameObs(t, want, got, "seat %d of %+v", k, s.Position())
						others++
					}
				}
				assert.Greater(t, others, 100)
			})
		}
	}
}

// A seat outside the game is a programming error.
func TestEncodeBadSeatPanics(t *testing.T) {
	e, err := NewEncoder(env.Standard(), Compact)
	require.NoError(t, err)
	s, err := env.New(env.Standard(), 1, env.AnySeat)
	require.NoError(t, err)
	buf := make([]float32, e.Size())
	for _, seat := range []int{-1, 2, env.MaxPlayers} {
		assert.Panics(t, func() { e.Encode(&s, seat, buf) }, "seat %d", seat)
	}
}
