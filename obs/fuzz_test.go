package obs

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
)

// fuzzRules maps any number to a valid rule set, covering every option.
func fuzzRules(cfg uint32) env.Rules {
	r := env.Standard()
	r.Players = env.MinPlayers + int(cfg%3)
	cfg /= 3
	r.Pieces = env.MinPieces + int(cfg%5)
	cfg /= 5
	r.FlatProb = []float64{0.5, 0.55, 0.6, 0.65}[cfg%4]
	cfg /= 4
	r.BackDo = cfg&1 == 0
	r.CaptureBonusYutMo = cfg&2 != 0
	if cfg&4 != 0 {
		r.Finish = env.FinishStop
	}
	r.BackDoEnters = r.BackDo && cfg&8 != 0
	if cfg&16 != 0 {
		r.End = env.EndRank
	}
	// The kata's options and the line board, on top.
	cfg /= 32
	r.Finish = []env.FinishMode{r.Finish, env.FinishExact, env.FinishWrap, r.Finish}[cfg%4]
	cfg /= 4
	if cfg&1 != 0 {
		r.Board, r.Spaces, r.BackDoEnters = env.BoardLine, env.MinSpaces+int(cfg/2%29), false
	}
	if cfg&64 != 0 && !r.CaptureBonusYutMo {
		r.Pool = env.SwitchOff
	}
	if cfg&128 != 0 && !r.CaptureBonusYutMo {
		r.CaptureBonus = env.SwitchOff
	}
	if cfg&256 != 0 {
		r.Obstacles[1] = env.ObstacleSkip
	}
	if cfg&512 != 0 && (r.Board == env.BoardCross || r.Spaces > 4) {
		r.Obstacles[3] = 2
	}
	return r
}

// checkObservation fails unless o has the tier's size, is finite, lies
// within every part's bounds and has exactly one phase set.
func checkObservation(t *testing.T, tier Tier, o []float32) {
	sp := spaces[tier]
	require.Len(t, o, sp.Size)
	for _, p := range sp.Parts {
		for i, v := range o[p.Offset : p.Offset+p.Len()] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < p.Low || v > p.High {
				t.Fatalf("%s = %v, outside [%v, %v]", sp.Label(p.Offset+i), v, p.Low, p.High)
			}
		}
	}
	var phases float32
	switch tier {
	case Compact, Tactical:
		phases = o[offPhase] + o[offPhase+1] + o[offPhase+2]
	case Planes:
		phases = o[offGlobals+gPhase] + o[offGlobals+gPhase+1] + o[offGlobals+gPhase+2]
	}
	require.Equal(t, float32(1), phases, "phase one-hot")
}

// FuzzEncode plays a random game under random rules and checks every tier at
// every state: no panic, the right size, finite values inside the space's
// bounds, one phase, and agreement with the engine's legal actions.
func FuzzEncode(f *testing.F) {
	f.Add(uint64(1), uint32(0), uint16(200))
	f.Add(uint64(2), uint32(2+3*4+15*8), uint16(600))
	f.Add(uint64(3), uint32(1+3*2+15*17), uint16(1000))
	f.Add(uint64(4), uint32(2+3*0+15*31), uint16(3000))
	f.Add(uint64(5), uint32(1+3*1+15*(1+32*(1+4*(1+2*13+64+128+256+512)))), uint16(3000)) // the kata's options, 15 spaces, obstacles
	f.Add(uint64(6), uint32(2+3*4+15*(32*(2+4*(1+2*27)))), uint16(3000))                  // 29 spaces, wrap
	var encs [numTiers]*Encoder
	for _, tier := range Tiers() {
		e, err := NewEncoder(env.Standard(), tier)
		require.NoError(f, err)
		encs[tier] = e
	}
	f.Fuzz(func(t *testing.T, seed uint64, cfg uint32, steps uint16) {
		r := fuzzRules(cfg)
		require.NoError(t, r.Validate())
		s, err := env.New(r, seed, env.AnySeat)
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(seed, uint64(cfg)))
		bufs := [numTiers][]float32{make([]float32, sizeCompact), make([]float32, sizeTactical), make([]float32, sizePlanes)}
		mask := make([]uint8, env.NumActions)
		var legal [env.NumActions]env.Action
		for i := 0; i <= int(steps%4000); i++ {
			for _, tier := range Tiers() {
				encs[tier].Encode(&s, s.ToMove(), bufs[tier])
				checkObservation(t, tier, bufs[tier])
			}
			s.Mask(mask)
			for a, m := range mask {
				require.Equal(t, float32(m), bufs[Tactical][offActions+a*numActionFeatures+featLegal])
			}
			switch s.Phase() {
			case env.PhaseThrow:
				_, err := s.SampleThrow()
				require.NoError(t, err)
			case env.PhaseMove:
				acts := s.LegalActions(legal[:0])
				a := acts[rng.IntN(len(acts))]
				require.NotContains(t, Describe(&s, a), "illegal")
				_, err := s.Apply(a)
				require.NoError(t, err)
			default:
				return
			}
		}
	})
}
