package wire

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv"
)

// Obstacle effects reach info["events"] of a step's reply as data: a lost turn, a
// push (from, steps), turns missed, and a push that captures reports its
// count and victim in captured/captured_seat. Each event's
// keys are checked against its text, which the engine writes from the same
// Event, over random games with many obstacles.
func TestEventsCarryObstacleEffects(t *testing.T) {
	const rules = "players=3,obstacles=2:back1+4:skip+6:back2+8:back3+11:skip+13:back2+17:back1+21:skip+24:back2"
	r, err := env.ParseRules(rules)
	require.NoError(t, err)
	const n = 16
	b, err := vecenv.New(vecenv.Config{Rules: r, Tier: obs.Compact, N: n, Mode: vecenv.Multi, Info: true})
	require.NoError(t, err)
	b.SeedAll(1)
	require.NoError(t, b.Reset(nil, vecenv.ResetOptions{Start: env.AnySeat, Record: true}))
	seen := map[string]int{}
	for range israce.Scale(600, 200) { // in one goroutine: a third under -race, where every effect is still seen
		mask, acts := b.Rows().Mask, b.Actions()
		for i := range n {
			for a := range env.NumActions {
				if mask[i*env.NumActions+a] == 1 {
					acts[i] = int32(a)
					if (i+a)%3 != 0 { // vary the choice a little
						break
					}
				}
			}
		}
		require.NoError(t, b.Step(nil, true))
		res := decode(t, AppendStep(nil, b, true, 1<<30))
		for _, inf := range res["info"].([]any) {
			for _, e := range inf.(map[string]any)["events"].([]any) {
				checkObstacleEvent(t, e.(map[string]any), seen)
			}
		}
	}
	t.Logf("events seen: %v", seen)
	for _, k := range []string{"loses_turn", "pushed", "turns_missed", "push_captured"} {
		assert.Positive(t, seen[k], "no event with %s in the games played: the test would not check it", k)
	}
}

// checkObstacleEvent checks one wire event's obstacle keys against its text
// and counts the effects it shows in seen.
func checkObstacleEvent(t *testing.T, e map[string]any, seen map[string]int) {
	t.Helper()
	text := e["text"].(string)
	require.Contains(t, e, "turns_missed", "%s", text)
	if missed := mustInt(t, e["turns_missed"]); strings.Contains(text, "turn(s) missed") {
		assert.Positive(t, missed, "%s", text)
		seen["turns_missed"]++
	} else {
		assert.Zero(t, missed, "%s", text)
	}
	if e["kind"] != "move" {
		return
	}
	require.Contains(t, e, "loses_turn", "%s", text)
	require.Contains(t, e, "pushed", "%s", text)
	assert.Equal(t, strings.Contains(text, "misses its next turn"), e["loses_turn"], "%s", text)
	if e["loses_turn"] == true {
		seen["loses_turn"]++
	}
	if !strings.Contains(text, "pushed back") {
		assert.Zero(t, mustInt(t, e["pushed"]), "%s", text)
		assert.NotContains(t, e, "pushed_from", "%s", text)
		return
	}
	seen["pushed"]++
	assert.Positive(t, mustInt(t, e["pushed"]), "%s", text)
	require.Contains(t, e, "pushed_from", "%s", text)
	assert.Greater(t, mustInt(t, e["pushed_from"]), mustInt(t, e["to"]), "%s: a push goes back", text)
	if strings.Contains(text, "where pushed") {
		seen["push_captured"]++
		assert.Positive(t, mustInt(t, e["push_captured"]), "%s", text)
		assert.GreaterOrEqual(t, mustInt(t, e["captured"]), mustInt(t, e["push_captured"]), "%s", text)
		assert.GreaterOrEqual(t, mustInt(t, e["captured_seat"]), int64(0), "%s: a push that captures names its victim", text)
		assert.GreaterOrEqual(t, mustInt(t, e["push_captured_seat"]), int64(0), "%s", text)
	} else {
		assert.Zero(t, mustInt(t, e["push_captured"]), "%s", text)
		assert.EqualValues(t, -1, mustInt(t, e["push_captured_seat"]), "%s", text)
	}
}
