package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// replayOnBatch resets a batch of cfg (one env per record) with seed base
// and drives every env's first episode with the moves of its record: the
// learner's in single mode, every seat's in multi mode. It returns what
// each env played (every throw and move, with the result) as a record.
func replayOnBatch(t *testing.T, cfg vecenv.Config, base uint64, recs []*env.Record) []*env.Record {
	t.Helper()
	cfg.N, cfg.Tier = len(recs), obs.Compact
	b, err := vecenv.New(cfg)
	require.NoError(t, err)
	b.SeedAll(base)
	require.NoError(t, b.Reset(nil, vecenv.ResetOptions{Start: env.AnySeat, Record: true}))
	got := make([]*env.Record, len(recs))
	next := make([]int, len(recs))  // index of each record's next step
	done := make([]bool, len(recs)) // the env's first episode ended (the next step resets it)
	for i := range got {
		got[i] = env.NewRecord(cfg.Rules, b.Seeds()[i], env.AnySeat)
	}
	for step := 0; ; step++ {
		require.Less(t, step, 2000)
		over := true
		vecenv.FirstLegal(b.Rows().Mask, b.Actions()) // envs whose first episode ended play on
		for i := range recs {
			if done[i] {
				continue
			}
			_, events, _, _ := b.Info(i)
			for _, ev := range events {
				got[i].Add(ev, b.State(i))
			}
			s := b.State(i)
			if done[i] = s.IsOver(); done[i] {
				continue
			}
			over = false
			for next[i] < len(recs[i].Steps) && (recs[i].Steps[next[i]].Action == nil || recs[i].Steps[next[i]].Seat != s.ToMove()) {
				next[i]++
			}
			if next[i] >= len(recs[i].Steps) {
				require.Equal(t, recs[i], got[i], "env %d wants a move the record does not have", i)
			}
			st := recs[i].Steps[next[i]]
			b.Actions()[i] = int32(*st.Action)
			next[i]++
		}
		if over {
			return got
		}
		require.NoError(t, b.CheckActions())
		require.NoError(t, b.Step(nil, true))
	}
}

// Game g of "yutenv selfplay --seed S" is the game env g of a batch reset
// with seed S plays: its throws (multi mode, replaying the record's
// moves), and, in single mode with either agent as the batch's opponent
// and the other seat's recorded moves as the learner's, the opponent's
// moves. The base seed wraps at 2^64 from game 2 on.
func TestSelfplayIsTheServersGames(t *testing.T) {
	const base = 1<<64 - 2
	code, out, errs := runCmd(t, "selfplay", "--agents", "greedy;mc:20", "--seed", strconv.FormatUint(base, 10),
		"--games", "4", "--quiet", "--workers", "2")
	require.Equal(t, 0, code, errs)
	recs, err := env.ReadRecords(strings.NewReader(out))
	require.NoError(t, err)
	require.Len(t, recs, 4)
	for g, r := range recs {
		require.Equal(t, vecenv.GameSeed(base, g), r.Seed, "game %d", g)
		r.Players = nil
	}
	for _, tc := range []struct {
		name string
		cfg  vecenv.Config
	}{
		{"multi", vecenv.Config{Mode: vecenv.Multi}},
		{"single, opponent mc:20", vecenv.Config{Mode: vecenv.Single, Seat: 0, Opponent: "mc:20"}},
		{"single, opponent greedy", vecenv.Config{Mode: vecenv.Single, Seat: 1, Opponent: "greedy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Rules = env.Standard()
			got := replayOnBatch(t, tc.cfg, base, recs)
			for g := range recs {
				assert.Equal(t, recs[g], got[g], "game %d", g)
			}
		})
	}
}

// Every pair of an evaluation plays the same game seeds (common random
// numbers) and its agents are reseeded by the game, not by the pair: the
// pairs "greedy vs random" and "greedy vs random" of a round robin
// (agents 0 and 1 are the same) play the very same games.
func TestEvalCommonGameSeeds(t *testing.T) {
	code, out, errs := runCmd(t, "eval", "--agents", "greedy;greedy;random", "--games", "40", "--seed", "5", "--json", "--quiet", "--workers", "2", "--luck", "off")
	require.Equal(t, 0, code, errs)
	var rep evalReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Matches, 3) // (0,1), (0,2), (1,2)
	a, b := rep.Matches[1], rep.Matches[2]
	for _, m := range []*evalMatch{&a, &b} {
		m.MsPerDecisionA, m.MsPerDecisionB = 0, 0
	}
	assert.Equal(t, a, b)
	assert.Equal(t, 40, a.Games)
}
