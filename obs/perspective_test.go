package obs

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// rotate relabels every seat i as i+by (mod players), the seat to move too.
func rotate(p env.Position, by int) env.Position {
	n := p.Rules.Players
	q := p
	q.ToMove = (p.ToMove + by) % n
	q.Stacks = nil
	for _, st := range p.Stacks {
		st.Seat = (st.Seat + by) % n
		q.Stacks = append(q.Stacks, st)
	}
	for i := 0; i < n; i++ {
		j := (i + by) % n
		q.Hand[j], q.Finished[j], q.Place[j] = p.Hand[i], p.Finished[i], p.Place[i]
	}
	if len(p.Missed) > 0 {
		q.Missed = make([]int, n)
		for i := range n {
			q.Missed[(i+by)%n] = p.Missed[i]
		}
	}
	return q
}

// Every observer can tell whose turn it is: the same position with another
// seat to move looks different to every seat, in every tier, the seats
// that are not to move included (PettingZoo's observe() of a waiting
// agent, datasets of all seats).
func TestEveryObserverSeesWhoseTurn(t *testing.T) {
	for _, spec := range []string{"standard", "players=3,end=rank", "players=4,pieces=2", skipRules[0]} {
		r := envtest.Rules(t, spec)
		var positions []env.Position
		for _, s := range randomStates(r, fewGames(3), 31) {
			if s.Phase() == env.PhaseThrow && s.Place((s.ToMove()+1)%r.Players) == 0 {
				positions = append(positions, s.Position())
			}
		}
		require.NotEmpty(t, positions)
		for _, tier := range Tiers() {
			t.Run(spec+"/"+tier.String(), func(t *testing.T) {
				e, err := NewEncoder(r, tier)
				require.NoError(t, err)
				a, b := make([]float32, e.Size()), make([]float32, e.Size())
				for _, p := range positions {
					s := mustState(t, p)
					q := p
					q.ToMove = (p.ToMove + 1) % r.Players
					o := mustState(t, q)
					for seat := range r.Players {
						e.Encode(&s, seat, a)
						e.Encode(&o, seat, b)
						if slices.Equal(a, b) { // testify's reflection only to report
							require.NotEqual(t, a, b, "seat %d sees seat %d and seat %d to move alike: %+v", seat, p.ToMove, q.ToMove, p)
						}
					}
				}
			})
		}
	}
}

// Renaming the seats changes nothing any observer sees: every tier is
// written relative to the observing seat.
func TestRotationInvariance(t *testing.T) {
	for _, spec := range []string{"standard", "players=3,end=rank", "players=4,pieces=2"} {
		r := envtest.Rules(t, spec)
		states := randomStates(r, fewGames(4), 23)
		for _, tier := range Tiers() {
			t.Run(spec+"/"+tier.String(), func(t *testing.T) {
				e, err := NewEncoder(r, tier)
				require.NoError(t, err)
				a, b := make([]float32, e.Size()), make([]float32, e.Size())
				for i := range states {
					for seat := range r.Players {
						e.Encode(&states[i], seat, a)
						for by := 1; by < r.Players; by++ {
							rs := mustState(t, rotate(states[i].Position(), by))
							e.Encode(&rs, (seat+by)%r.Players, b)
							requireSameObs(t, a, b, "seat %d rotated by %d: %+v", seat, by, states[i].Position())
						}
					}
				}
			})
		}
	}
}

// The same position seen by each seat is a permutation of the same facts:
// what the compact and planes tiers say about absolute seat a, seen by seat
// k, sits in slot (a-k) mod n and is the same for every k.
func TestSameFactsFromEverySeat(t *testing.T) {
	for _, spec := range []string{"players=2", "players=3,end=rank", "players=4,pieces=3"} {
		t.Run(spec, func(t *testing.T) {
			r := envtest.Rules(t, spec)
			n := r.Players
			seen := 0
			playRandom(r, 3, 29, func(s *env.State) {
				if s.IsOver() {
					return
				}
				base := s.Position()
				base.Phase, base.Pool = env.PhaseThrow, [env.NumThrows]int{}
				// facts[k][a] is what seat k's view says about seat a.
				type facts struct {
					board  [numCells]float32
					hand   float32
					fin    float32
					seat   [2]float32
					height [env.NumStations]float32
					lanes  [numLanes][env.NumStations]float32
				}
				var views [][env.MaxPlayers]facts
				for k := 0; k < n; k++ {
					if base.Place[k] != 0 {
						continue
					}
					p := base
					p.ToMove = k
					v := mustState(t, p)
					c, pl := encode(t, Compact, &v), encode(t, Planes, &v)
					var f [env.MaxPlayers]facts
					for a := 0; a < n; a++ {
						j := (a - k + n) % n
						copy(f[a].board[:], c[offBoard+j*numCells:])
						f[a].hand, f[a].fin = c[offHand+j], c[offFinished+j]
						f[a].seat = [2]float32{c[offSeats+2*j], c[offSeats+2*j+1]}
						copy(f[a].height[:], pl[(chHeight+j)*env.NumStations:])
					}
					for l := 0; l < numLanes; l++ {
						copy(f[0].lanes[l][:], pl[(chLane+l)*env.NumStations:]) // seat-free
					}
					for j := n; j < numSeats; j++ {
						assert.Zero(t, c[offHand+j]+c[offFinished+j]+c[offSeats+2*j], "absent seat slot %d", j)
					}
					views = append(views, f)
				}
				for _, v := range views[1:] {
					if v != views[0] { // testify's reflection only to report: it costs the test's time
						require.Equal(t, views[0], v, "%+v", base)
					}
				}
				seen++
			})
			assert.Greater(t, seen, 100)
		})
	}
}
