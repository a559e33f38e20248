package vecenv

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
)

// throwIndex values throw t at t+1 for seat 0 and -(t+1) for seat 1, so an
// episode's luck is the sum of its throws' indices plus one.
type throwIndex struct{ calls *int }

func (f throwIndex) ThrowLuck(s *env.State, luck *[env.NumThrows][env.MaxPlayers]float64) error {
	if !s.IsChance() {
		return errors.New("not a chance node")
	}
	*f.calls++
	for t := range luck {
		luck[t] = [env.MaxPlayers]float64{float64(t + 1), -float64(t + 1)}
	}
	return nil
}

// TestLuck: with Config.Luck every throw of an episode is valued once, at
// the throw drawn, whoever threw it (the learner or the batch's opponent),
// and the sum restarts with each episode; EpisodeInfo.Luck reports it.
func TestLuck(t *testing.T) {
	for _, mode := range []Mode{Single, Multi} {
		t.Run(mode.String(), func(t *testing.T) {
			calls, made := 0, 0
			cfg := Config{Rules: env.Standard(), Tier: obs.Compact, N: 1, Mode: mode, Opponent: "random", Info: true,
				LuckName: "index", Luck: func() (ThrowLuck, error) { made++; return throwIndex{&calls}, nil }}
			b, err := New(cfg)
			require.NoError(t, err)
			b.SeedAll(0)
			require.NoError(t, b.Reset(nil, ResetOptions{Start: env.AnySeat, Record: true}))
			// The running sum of the throws' indices + 1, from the recorded events.
			sum, episodes, throws := 0.0, 0, 0
			add := func() {
				cur, events, _, _ := b.Info(0)
				for _, ev := range events {
					if ev.Kind == env.EventThrow {
						sum += float64(ev.Throw + 1)
						throws++
					}
				}
				assert.Equal(t, [env.MaxPlayers]float64{sum, -sum}, cur.Luck, "episode %d", episodes)
			}
			add()
			for episodes < 3 {
				FirstLegal(b.Rows().Mask, b.Actions())
				if b.slots[0].ended { // this step opens the next episode
					sum = 0
				}
				require.NoError(t, b.Step(nil, true))
				add()
				if b.Rows().Terminated[0] == 1 {
					episodes++
				}
			}
			assert.Equal(t, throws, calls, "one valuation a throw")
			if !israce.Enabled { // the race detector's sync.Pool drops workers at random
				assert.Equal(t, 1, made, "one ThrowLuck per worker")
			}
		})
	}
}

// TestLuckErrors: a value function that cannot be made, or fails at a
// throw, fails the operation with an error naming it.
func TestLuckErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		make func() (ThrowLuck, error)
	}{
		{"cannot be made", func() (ThrowLuck, error) { return nil, boom }},
		{"fails at a throw", func() (ThrowLuck, error) { return failing{boom}, nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(Config{Rules: env.Standard(), Tier: obs.Compact, N: 2, Opponent: "random", LuckName: "bad", Luck: tt.make})
			require.NoError(t, err)
			b.SeedAll(0)
			err = b.Reset(nil, ResetOptions{Start: env.AnySeat})
			require.ErrorIs(t, err, boom)
			assert.ErrorContains(t, err, "luck bad")
		})
	}
}

type failing struct{ err error }

func (f failing) ThrowLuck(*env.State, *[env.NumThrows][env.MaxPlayers]float64) error { return f.err }
