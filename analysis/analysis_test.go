package analysis

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/semaphore"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// decisions returns n packed standard states at decisions (phase move).
func decisions(t testing.TB, n int) ([]env.State, []byte) {
	t.Helper()
	var states []env.State
	var packed []byte
	var buf [env.NumActions]env.Action
	for seed := uint64(0); len(states) < n; seed++ {
		s, err := env.New(env.Standard(), seed, env.AnySeat)
		require.NoError(t, err)
		for k := 0; k < int(seed%23)+3 && !s.IsOver(); k++ {
			s.Advance()
			if legal := s.LegalActions(buf[:0]); len(legal) > 0 {
				_, err := s.Apply(legal[int(seed)%len(legal)])
				require.NoError(t, err)
			}
		}
		s.Advance()
		if s.Phase() == env.PhaseMove {
			states = append(states, s)
			packed = s.AppendPacked(packed)
		}
	}
	return states, packed
}

func proto(t testing.TB) *env.State {
	t.Helper()
	s, err := env.New(env.Standard(), 0, 0)
	require.NoError(t, err)
	return &s
}

func f32(b []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }

// TestMatchesTheAgent checks every state's answer against a new agent
// reseeded to seed+i, whatever the number of workers.
func TestMatchesTheAgent(t *testing.T) {
	states, packed := decisions(t, 9)
	for _, spec := range []string{"greedy", "mcts:50", "mc:5"} {
		for _, workers := range []int{1, 2, 5, 20} {
			t.Run(spec, func(t *testing.T) {
				sp, err := agent.ParseSpec(spec)
				require.NoError(t, err)
				out := NewOut(len(states), 2)
				require.NoError(t, Analyse(context.Background(), proto(t), packed, sp, 3, workers, out))
				for i := range states {
					ag, err := agent.NewFromSpec(sp, 3)
					require.NoError(t, err)
					ag.(agent.Reseeder).Reseed(3 + uint64(i))
					a, st, err := ag.ActStats(&states[i])
					require.NoError(t, err)
					assert.Equal(t, uint32(a), binary.LittleEndian.Uint32(out.Actions[4*i:]), "state %d", i)
					for k, v := range st.Policy {
						assert.Equal(t, v, f32(out.Policy, i*env.NumActions+k))
					}
					if st.Policy == nil {
						assert.Equal(t, float32(1), f32(out.Policy, i*env.NumActions+int(a)))
					}
					assert.Equal(t, float32(st.Value), f32(out.Value, i))
					for s := range 2 {
						assert.Equal(t, float32(st.Values[s]), f32(out.Values, 2*i+s))
					}
				}
			})
		}
	}
}

// panicky is an agent that panics.
type panicky struct{}

func (panicky) Name() string                         { return "panicky" }
func (panicky) Act(s *env.State) (env.Action, error) { panic("boom") }
func (panicky) ActStats(s *env.State) (env.Action, agent.Stats, error) {
	panic("boom")
}

func TestActRecoversAPanic(t *testing.T) {
	_, packed := decisions(t, 1)
	s := *proto(t)
	require.NoError(t, s.Unpack(packed))
	_, _, err := Act(panicky{}, &s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "panic: boom")
}

// TestLowestFailingRow corrupts rows 7 and 3 (and 12): the error names row 3.
func TestLowestFailingRow(t *testing.T) {
	_, packed := decisions(t, 16)
	for _, i := range []int{12, 7, 3} {
		packed[i*env.PackedSize] = 0xee
	}
	for _, workers := range []int{1, 4} {
		t.Run("", func(t *testing.T) {
			err := Analyse(context.Background(), proto(t), packed, agent.Spec{Name: "greedy"}, 1, workers, NewOut(16, 2))
			var re *RowError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 3, re.Row)
			assert.ErrorIs(t, err, env.ErrVersion)
		})
	}
}

// TestCancellation interrupts a long search when the context ends.
func TestCancellation(t *testing.T) {
	states, _ := decisions(t, 40)
	var packed []byte // states with a choice: an agent searches only those
	var buf [env.NumActions]env.Action
	for i := range states {
		if len(states[i].LegalActions(buf[:0])) > 1 && len(packed) < 4*env.PackedSize {
			packed = states[i].AppendPacked(packed)
		}
	}
	require.Len(t, packed, 4*env.PackedSize)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	sp, err := agent.ParseSpec("mcts:100000")
	require.NoError(t, err)
	go func() {
		done <- Analyse(ctx, proto(t), packed, sp, 1, 2, NewOut(4, 2))
	}()
	time.AfterFunc(20*time.Millisecond, cancel) // mid-search: agent.MaxN simulations take far longer
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, ErrCancelled), "%v", err)
	case <-time.After(time.Minute):
		t.Fatal("the search did not stop")
	}
}

func TestRefusesRaggedStates(t *testing.T) {
	err := Analyse(context.Background(), proto(t), make([]byte, 7), agent.Spec{Name: "greedy"}, 1, 1, NewOut(0, 2))
	assert.ErrorIs(t, err, env.ErrCorrupt)
}

// TestRunOnCores: a job run on shared cores gives the same answer as
// Analyse however the cores are split, takes spare cores only while its
// client is alone, gives every core back, and stops when cancelled.
func TestRunOnCores(t *testing.T) {
	states, packed := decisions(t, 12)
	sp, err := agent.ParseSpec("mcts:20")
	require.NoError(t, err)
	want := NewOut(len(states), 2)
	require.NoError(t, Analyse(context.Background(), proto(t), packed, sp, 5, 1, want))
	cases := []struct {
		name            string
		workers, spares int
		sole            bool
	}{
		{"one core", 1, 0, false},
		{"two cores and spares, alone", 2, 2, true},
		{"spares while not alone", 1, 3, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Cores{Search: semaphore.NewWeighted(int64(tc.workers)), Workers: tc.workers,
				Spare: semaphore.NewWeighted(int64(tc.spares)), Spares: tc.spares, Sole: func() bool { return tc.sole }}
			out := NewOut(len(states), 2)
			require.NoError(t, NewJob(proto(t), sp, 5, packed, out, 2).Run(context.Background(), c))
			assert.Equal(t, want, out)
			assert.True(t, c.Search.TryAcquire(int64(tc.workers)), "the search cores were given back")
			assert.True(t, c.Spare.TryAcquire(int64(tc.spares)), "the spare cores were given back")
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := Cores{Search: semaphore.NewWeighted(1), Workers: 1, Spare: semaphore.NewWeighted(0), Sole: func() bool { return false }}
		err := NewJob(proto(t), sp, 5, packed, NewOut(len(states), 2), 2).Run(ctx, c)
		assert.ErrorIs(t, err, ErrCancelled)
	})
}
