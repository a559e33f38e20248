package wire

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// decode decodes one reply map, refusing trailing bytes.
func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	require.NoError(t, msgp.CheckMap(b))
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(b, &m))
	return m
}

// mustInt returns v, any msgpack integer, as int64.
func mustInt(t testing.TB, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		require.LessOrEqual(t, x, uint64(math.MaxInt64))
		return int64(x)
	}
	require.Failf(t, "not an int", "%T %v", v, v)
	return 0
}

// mustUint returns v, a non-negative msgpack integer, as uint64.
func mustUint(t testing.TB, v any) uint64 {
	t.Helper()
	if x, ok := v.(uint64); ok {
		return x
	}
	n := mustInt(t, v)
	require.GreaterOrEqual(t, n, int64(0))
	return uint64(n)
}

// f32s decodes a bin of little-endian float32.
func f32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// i8s reads a bin as int8.
func i8s(b []byte) []int8 {
	v := make([]int8, len(b))
	for i, x := range b {
		v[i] = int8(x)
	}
	return v
}

// played returns a batch of cfg reset with seed 7 and stepped steps times
// by its first legal actions, recording info as record says.
func played(t testing.TB, cfg vecenv.Config, steps int, record bool) *vecenv.Batch {
	t.Helper()
	b, err := vecenv.New(cfg)
	require.NoError(t, err)
	b.SeedAll(7)
	require.NoError(t, b.Reset(nil, vecenv.ResetOptions{Start: env.AnySeat, Record: record}))
	for range steps {
		vecenv.FirstLegal(b.Rows().Mask, b.Actions())
		require.NoError(t, b.Step(nil, record))
	}
	return b
}

var configs = []vecenv.Config{
	{Rules: env.Standard(), Tier: obs.Compact, N: 3, Opponent: "random"},
	{Rules: env.Standard(), Tier: obs.Tactical, N: 3, Mode: vecenv.Multi},
	{Rules: env.Standard(), Tier: obs.Compact, N: 3, Opponent: "random", Autoreset: vecenv.SameStep},
	{Rules: env.Standard(), Tier: obs.Planes, N: 2, Mode: vecenv.Multi, Autoreset: vecenv.SameStep},
}

// TestAppendStepIsTheRows decodes a step reply with the msgpack library:
// its keys are step's (final_* only under same-step autoreset, info only
// when recorded) and its values are the batch's rows; the info list has
// one map per env with a place per seat and a learner in mode single.
func TestAppendStepIsTheRows(t *testing.T) {
	for _, cfg := range configs {
		for _, record := range []bool{false, true} {
			t.Run(cfg.Mode.String()+"/"+cfg.Autoreset.String()+"/"+map[bool]string{false: "plain", true: "info"}[record], func(t *testing.T) {
				b := played(t, cfg, 60, record)
				got := decode(t, AppendStep([]byte{0xc0}, b, record, 1<<30)[1:])
				want := []string{"obs", "mask", "to_move", "reward", "terminated", "truncated"}
				if cfg.Autoreset == vecenv.SameStep {
					want = append(want, "final_obs", "final_mask", "final_to_move")
				}
				if record {
					want = append(want, "info")
				}
				keys := make([]string, 0, len(got))
				for k := range got {
					keys = append(keys, k)
				}
				assert.ElementsMatch(t, want, keys)
				r := b.Rows()
				assert.Equal(t, r.Obs, f32s(got["obs"].([]byte)))
				assert.Equal(t, r.Mask, got["mask"].([]byte))
				assert.Equal(t, r.ToMove, i8s(got["to_move"].([]byte)))
				assert.Equal(t, r.Reward, f32s(got["reward"].([]byte)))
				assert.Equal(t, r.Terminated, got["terminated"].([]byte))
				assert.Equal(t, r.Truncated, got["truncated"].([]byte))
				if cfg.Autoreset == vecenv.SameStep {
					assert.Equal(t, r.FinalObs, f32s(got["final_obs"].([]byte)))
					assert.Equal(t, r.FinalMask, got["final_mask"].([]byte))
					assert.Equal(t, r.FinalToMove, i8s(got["final_to_move"].([]byte)))
				}
				if !record {
					return
				}
				info := got["info"].([]any)
				require.Len(t, info, b.N())
				for i, m := range info {
					inf := m.(map[string]any)
					cur, events, final, _ := b.Info(i)
					assert.Equal(t, cur.Episode, mustUint(t, inf["episode"]))
					assert.Equal(t, uint64(cur.Steps), mustUint(t, inf["steps"]))
					assert.Equal(t, cur.Illegal, inf["illegal"])
					fi, hasFinal := inf["final_info"].(map[string]any)
					assert.Equal(t, final != nil, hasFinal, "final_info exactly for the envs that ended and began anew")
					if hasFinal {
						assert.Equal(t, final.Episode, mustUint(t, fi["episode"]))
						assert.Equal(t, uint64(final.Steps), mustUint(t, fi["steps"]))
					}
					assert.Equal(t, cur.Seed, mustUint(t, inf["seed"]))
					assert.Equal(t, int64(cur.Winner), mustInt(t, inf["winner"]))
					assert.Len(t, inf["places"], cfg.Rules.Players)
					assert.Len(t, inf["events"], len(events))
					_, single := inf["learner"]
					assert.Equal(t, cfg.Mode == vecenv.Single, single)
				}
			})
		}
	}
}

// TestAppendResetHasTheSeeds decodes a reset reply: the rows and the seeds
// the batch played.
func TestAppendResetHasTheSeeds(t *testing.T) {
	b := played(t, configs[1], 0, true)
	got := decode(t, AppendReset(nil, b, true, 1<<30))
	assert.Len(t, got, 5)
	seeds := got["seeds"].([]any)
	require.Len(t, seeds, b.N())
	for i, s := range seeds {
		assert.Equal(t, b.Seeds()[i], mustUint(t, s))
	}
	assert.Equal(t, b.Rows().Obs, f32s(got["obs"].([]byte)))
	assert.Len(t, got["info"], b.N())
	assert.Len(t, decode(t, AppendReset(nil, b, false, 1<<30)), 4)
}

// TestResultBytesBoundsTheReply: a reply without info never outgrows
// ReplyBytes (the server reserves that much before it steps), in the
// largest configuration of each mode.
func TestResultBytesBoundsTheReply(t *testing.T) {
	rules, err := env.ParseRules("players=4")
	require.NoError(t, err)
	for _, cfg := range []vecenv.Config{
		{Rules: rules, Tier: obs.Planes, N: 5, Opponent: "random", Autoreset: vecenv.SameStep},
		{Rules: rules, Tier: obs.Planes, N: 5, Mode: vecenv.Multi, Autoreset: vecenv.SameStep},
		{Rules: rules, Tier: obs.Compact, N: 1, Mode: vecenv.Multi},
	} {
		b := played(t, cfg, 3, false)
		assert.LessOrEqual(t, len(AppendStep(nil, b, false, 0)), ReplyBytes(b, false, 1<<20))
		assert.LessOrEqual(t, len(AppendReset(nil, b, false, 0)), ReplyBytes(b, false, 1<<20))
		assert.Equal(t, 2<<20, ReplyBytes(b, true, 1<<20), "with info: twice the frame")
	}
}

// TestAppendInfoStopsPastMaxFrame: the info list stops growing once the
// reply is past maxFrame (the caller then refuses it), so a reply never
// outgrows the twice maxFrame it reserved.
func TestAppendInfoStopsPastMaxFrame(t *testing.T) {
	cfg := vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 64, Mode: vecenv.Multi}
	b := played(t, cfg, 30, true)
	full := AppendInfo(nil, b, 1<<30)
	const maxFrame = 200
	cut := AppendInfo(nil, b, maxFrame)
	assert.Less(t, len(cut), len(full))
	assert.Less(t, len(cut), 2*maxFrame+len(full)/b.N()*2, "at most one env's maps past maxFrame")
	assert.True(t, slices.Equal(full[:len(cut)], cut), "a prefix of the full list")
}

// TestAppendIsAllocationFree: step's and reset's replies without info
// allocate nothing once their buffer is large enough (the server's hot path).
func TestAppendIsAllocationFree(t *testing.T) {
	b := played(t, configs[2], 10, false)
	buf := make([]byte, 0, ReplyBytes(b, false, 0))
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = AppendStep(buf[:0], b, false, 0) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = AppendReset(buf[:0], b, false, 0) }))
}

// TestAppendEventKeys: every event has the keys of env.EventJSON; a move
// names its action and destination, and its from only when it did not enter.
func TestAppendEventKeys(t *testing.T) {
	b := played(t, vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 4, Mode: vecenv.Multi}, 40, true)
	moves := 0
	for i := range b.N() {
		_, events, _, _ := b.Info(i)
		for _, ev := range events {
			var got map[string]any
			require.NoError(t, msgpack.Unmarshal(AppendEvent(nil, ev), &got))
			for _, k := range []string{"kind", "seat", "throw", "bonus_throw", "discarded", "turn_ended", "turns_missed", "game_over", "text"} {
				assert.Contains(t, got, k)
			}
			assert.Equal(t, ev.String(), got["text"])
			if ev.Kind != env.EventMove {
				assert.NotContains(t, got, "action")
				continue
			}
			moves++
			assert.Equal(t, int64(ev.Action), mustInt(t, got["action"]))
			assert.Equal(t, int64(ev.To), mustInt(t, got["to"]))
			_, hasFrom := got["from"]
			assert.Equal(t, !ev.Entered, hasFrom)
		}
	}
	assert.Positive(t, moves, "the games had moves")
}

// BenchmarkAppendStep measures encoding one step reply of 256 envs
// (compact tier, same-step autoreset, info off): the server's hot path
// after the batch has stepped.
func BenchmarkAppendStep(b *testing.B) {
	cfg := vecenv.Config{Rules: env.Standard(), Tier: obs.Compact, N: 256, Opponent: "random", Autoreset: vecenv.SameStep}
	bt := played(b, cfg, 5, false)
	buf := make([]byte, 0, ReplyBytes(bt, false, 0))
	b.ReportAllocs()
	b.SetBytes(int64(len(AppendStep(nil, bt, false, 0))))
	for b.Loop() {
		buf = AppendStep(buf[:0], bt, false, 0)
	}
}
