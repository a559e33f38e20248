package env_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/envtest"
)

// The kata's example game (the one-dimensional Yut of the TDD kata, the
// `kata` preset), replayed step by step: its throws, its moves, the board
// after each in the kata's notation, the capture, the wasted GEOL and the
// win. The kata leaves out stretches ("game continuing"); each stretch starts
// again from the position the kata prints next.

// kataBoard normalises the kata's notation, which it writes both with and
// without commas between spaces, and drops the piece numbers: the engine's
// pieces are interchangeable, so only the letters and their counts per space
// are compared (KataBoard numbers pieces by position; see its doc).
func kataBoard(s string) string {
	s = strings.ReplaceAll(s, "],[", "][")
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

const line = env.RouteLine

// kataState builds a kata position: seat 1 (PlayerB) or 0 (PlayerA) to throw.
func kataState(t *testing.T, seat int, fin [env.MaxPlayers]int, stacks ...env.Stack) env.State {
	t.Helper()
	return setup{rules: "kata", seat: seat, fin: fin, stacks: stacks}.state(t)
}

// kataStep is one kata command: a throw, then (unless the throw is wasted) a move of the stack at from (-1: enter).
type kataStep struct {
	who   string // "A" or "B", whose turn the kata announces
	throw env.Throw
	from  int // station moved, -1 to enter, -2 for no legal move (the throw is spent)
	board string
}

func playKata(t *testing.T, s *env.State, steps []kataStep) {
	t.Helper()
	for i, st := range steps {
		seat := int(st.who[0] - 'A')
		require.Equal(t, seat, s.ToMove(), "step %d: %s's turn", i, st.who)
		require.True(t, s.IsChance(), "step %d: a throw is due", i)
		ev, err := s.ApplyThrow(st.throw)
		require.NoError(t, err)
		switch st.from {
		case -2:
			assert.True(t, ev.TurnEnded, "step %d: the %s has no legal use and the turn passes", i, st.throw)
			assert.Equal(t, uint8(1), ev.Discarded, "step %d: the throw is spent", i)
		default:
			a := env.EnterAction(st.throw)
			if st.from >= 0 {
				a = env.NewAction(st.throw, env.Station(st.from))
			}
			require.Equal(t, []env.Action{a}, s.LegalActions(nil), "step %d: the only legal move", i)
			_, err = s.Apply(a)
			require.NoError(t, err)
		}
		assert.Equal(t, kataBoard(st.board), kataBoard(s.KataBoard()), "step %d: board after %s's %s", i, st.who, st.throw)
	}
}

func TestKataExampleGame(t *testing.T) {
	require.Equal(t, env.Kata(), envtest.Rules(t, "kata"))
	t.Run("opening: GEOL enters on space 2, B's GEOL captures A1", func(t *testing.T) {
		s, err := env.New(env.Kata(), 1, 0)
		require.NoError(t, err)
		assert.Equal(t, "[[][][][][][][][][][][][][][][]]", kataBoard(s.KataBoard()))
		ev, err := s.ApplyThrow(env.Geol)
		require.NoError(t, err)
		require.False(t, ev.BonusThrow)
		ev, err = s.Apply(env.EnterAction(env.Geol))
		require.NoError(t, err)
		assert.Equal(t, env.Station(2), ev.To)
		assert.True(t, ev.TurnEnded)
		assert.Equal(t, "[[],[],[A1],[],[],[],[],[],[],[],[],[],[],[],[]]", s.KataBoard())
		_, err = s.ApplyThrow(env.Geol)
		require.NoError(t, err)
		ev, err = s.Apply(env.EnterAction(env.Geol))
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.Captured, "A1 is sent off the board")
		assert.False(t, ev.BonusThrow, "the kata has no capture bonus")
		assert.True(t, ev.TurnEnded)
		assert.Equal(t, "[[],[],[B1],[],[],[],[],[],[],[],[],[],[],[],[]]", s.KataBoard())
		assert.Equal(t, 2, s.Hand(0), "A1 must start again")
		assert.Equal(t, 0, s.ToMove())
	})
	t.Run("YUT finishes B1 exactly and earns a throw; GEOL cannot move B2 and is wasted", func(t *testing.T) {
		s := kataState(t, 1, [4]int{}, stack(0, 3, line, 2), stack(1, 10, line, 1), stack(1, 12, line, 1))
		require.Equal(t, kataBoard("[[][][][A1,A2][][][][][][][B1][][B2][][]]"), kataBoard(s.KataBoard()))
		_, err := s.ApplyThrow(env.Yut)
		require.NoError(t, err)
		assert.Equal(t, []env.Action{act(yut, 10)}, s.LegalActions(nil), "YUT moves B1 to the last space; B2 would pass it")
		ev, err := s.Apply(act(yut, 10))
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.Finished, "B1 is taken off the board")
		assert.True(t, ev.BonusThrow, "B throws again after a YUT")
		assert.Equal(t, "[[],[],[],[A1,A2],[],[],[],[],[],[],[],[],[B2],[],[]]", s.KataBoard())
		playKata(t, &s, []kataStep{{who: "B", throw: env.Geol, from: -2, board: "[[][][][A1,A2][][][][][][][][][B2][][]]"}})
		assert.Equal(t, 0, s.ToMove(), "then it is A's turn")
	})
	t.Run("GE takes B2 to the last space: B wins", func(t *testing.T) {
		s := kataState(t, 1, [4]int{0, 1}, stack(0, 7, line, 1), stack(0, 10, line, 1), stack(1, 12, line, 1))
		require.Equal(t, kataBoard("[[][][][][][][][A2][][][A1][][B2][][]]"), kataBoard(s.KataBoard()))
		_, err := s.ApplyThrow(env.Gae)
		require.NoError(t, err)
		ev, err := s.Apply(act(gae, 12))
		require.NoError(t, err)
		assert.True(t, ev.GameOver)
		assert.Equal(t, int8(1), ev.Winner, "the winner is PlayerB")
		assert.Equal(t, 1, s.Winner())
	})
}

func TestKataRules(t *testing.T) {
	t.Run("the kata preset", func(t *testing.T) {
		r := env.Kata()
		require.NoError(t, r.Validate())
		assert.Equal(t, "kata", r.String())
		back, err := env.ParseRules("kata,players=3,pieces=4")
		require.NoError(t, err)
		assert.Equal(t, "kata,players=3,pieces=4", back.String())
		pr := r.Probabilities()
		assert.Zero(t, pr[env.BackDo], "no back-do: the marked stick counts as do")
		for _, spec := range []string{"board=line", "board=line,spaces=15"} {
			l := envtest.Rules(t, spec)
			assert.Equal(t, 15, l.Spaces, spec)
		}
		assert.Equal(t, 0, envtest.Rules(t, "kata,board=cross").Spaces, "back to the cross drops the length")
	})
	t.Run("exact finish: only the exact throw leaves; entering past the end is not legal", func(t *testing.T) {
		s := setup{rules: "kata,spaces=3", stacks: []env.Stack{stack(0, 1, line, 1)}}.state(t)
		ev, err := s.ApplyThrow(env.Mo)
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.Discarded, "mo passes the end of a 3-space line from space 1, and cannot enter: it is spent")
		assert.True(t, ev.BonusThrow, "but it still earns the next throw")
		assert.Equal(t, 0, s.ToMove())
		s = setup{rules: "kata,spaces=3", pool: []env.Throw{env.Do}, stacks: []env.Stack{stack(0, 1, line, 1)}}.state(t)
		ev, err = s.Apply(act(do, 1))
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.Finished)
	})
	t.Run("wrap: past the last space the piece goes on from space 0", func(t *testing.T) {
		s := setup{rules: "kata,finish=wrap", pool: []env.Throw{env.Geol}, stacks: []env.Stack{stack(0, 13, line, 1)}}.state(t)
		ev, err := s.Apply(act(geol, 13))
		require.NoError(t, err)
		assert.Equal(t, env.Station(1), ev.To, "13 -> 14 (last) -> 0 -> 1")
		assert.Zero(t, ev.Finished)
	})
	t.Run("wrap on the cross: past HOME the stack goes on along OUTER", func(t *testing.T) {
		s := setup{rules: "finish=wrap", pool: []env.Throw{env.Mo}, stacks: []env.Stack{stack(0, 19, outer, 1)}}.state(t)
		ev, err := s.Apply(act(mo, 19))
		require.NoError(t, err)
		assert.Equal(t, env.Station(4), ev.To)
		assert.Equal(t, env.RouteOuter, ev.ToRoute)
		s = setup{rules: "finish=wrap", pool: []env.Throw{env.Mo}, stacks: []env.Stack{stack(0, 28, cc1, 1)}}.state(t)
		ev, err = s.Apply(act(mo, 28))
		require.NoError(t, err)
		assert.Equal(t, env.Station(4), ev.To, "28 -> HOME -> 1 -> 2 -> 3 -> 4")
		assert.Equal(t, env.RouteOuter, ev.ToRoute)
		s = setup{rules: "finish=wrap", pool: []env.Throw{env.Mo}, stacks: []env.Stack{stack(0, 0, outer, 1)}}.state(t)
		ev, err = s.Apply(act(mo, 0))
		require.NoError(t, err)
		assert.Equal(t, env.CornerC1, ev.To, "a stack backed onto HOME goes round again: HOME -> 1..5, and C1's shortcut is taken")
		assert.Equal(t, env.RouteC1, ev.ToRoute)
	})
	t.Run("exact on the cross: a move past HOME is not legal", func(t *testing.T) {
		s := setup{rules: "finish=exact", pool: []env.Throw{env.Mo, env.Do}, stacks: []env.Stack{stack(0, 28, cc1, 1)}}.state(t)
		assert.Equal(t, []env.Action{act(do, 28), act(do, 29), act(mo, 29)}, s.LegalActions(nil))
	})
	t.Run("no pool: yut is played before the next throw", func(t *testing.T) {
		s, err := env.New(envtest.Rules(t, "pool=off"), 1, 0)
		require.NoError(t, err)
		ev, err := s.ApplyThrow(env.Yut)
		require.NoError(t, err)
		assert.False(t, ev.BonusThrow)
		assert.Equal(t, env.PhaseMove, s.Phase())
		ev, err = s.Apply(env.EnterAction(env.Yut))
		require.NoError(t, err)
		assert.True(t, ev.BonusThrow)
		assert.Equal(t, 0, s.ToMove())
		assert.True(t, s.IsChance())
	})
	t.Run("no capture bonus on the cross", func(t *testing.T) {
		s := setup{rules: "capture_bonus=off", pool: []env.Throw{env.Do}, stacks: []env.Stack{stack(0, 3, outer, 1), stack(1, 4, outer, 1)}}.state(t)
		ev, err := s.Apply(act(do, 3))
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.Captured)
		assert.False(t, ev.BonusThrow)
		assert.True(t, ev.TurnEnded)
	})
	t.Run("skip obstacle: the mover misses its next turn", func(t *testing.T) {
		s := setup{rules: "kata,obstacles=4:skip", pool: []env.Throw{env.Gae}, stacks: []env.Stack{stack(0, 2, line, 1)}}.state(t)
		ev, err := s.Apply(act(gae, 2))
		require.NoError(t, err)
		assert.True(t, ev.LosesTurn)
		assert.Equal(t, 1, s.MissedTurns(0))
		assert.Equal(t, 1, s.ToMove())
		_, err = s.ApplyThrow(env.Do)
		require.NoError(t, err)
		ev, err = s.Apply(env.EnterAction(env.Do))
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.TurnsMissed, "seat 0's turn is skipped")
		assert.Equal(t, 1, s.ToMove())
		assert.Zero(t, s.MissedTurns(0))
		b, err := s.MarshalBinary()
		require.NoError(t, err)
		back, err := env.UnmarshalState(b)
		require.NoError(t, err)
		assert.Equal(t, s, back)
	})
	t.Run("push obstacle: back k spaces, capturing what is there; never behind space 0", func(t *testing.T) {
		s := setup{rules: "kata,obstacles=6:back3+1:back5", pool: []env.Throw{env.Gae},
			stacks: []env.Stack{stack(0, 4, line, 1), stack(1, 3, line, 1)}}.state(t)
		ev, err := s.Apply(act(gae, 4))
		require.NoError(t, err)
		assert.Equal(t, uint8(3), ev.Pushed)
		assert.Equal(t, env.Station(6), ev.PushedFrom)
		assert.Equal(t, env.Station(3), ev.To)
		assert.Equal(t, uint8(1), ev.PushCaptured)
		assert.Equal(t, int8(1), ev.PushCapturedSeat)
		assert.Equal(t, 2, s.Hand(1))
		s = setup{rules: "kata,obstacles=1:back5", pool: []env.Throw{env.Gae}}.state(t)
		ev, err = s.Apply(env.EnterAction(env.Gae))
		require.NoError(t, err)
		assert.Equal(t, uint8(1), ev.Pushed, "from space 1 only one step back is left")
		assert.Equal(t, env.Station(0), ev.To)
	})
	t.Run("push obstacle on the cross stops at station 1", func(t *testing.T) {
		s := setup{rules: "obstacles=3:back5", pool: []env.Throw{env.Geol}}.state(t)
		ev, err := s.Apply(env.EnterAction(env.Geol))
		require.NoError(t, err)
		assert.Equal(t, env.Station(1), ev.To)
		assert.Equal(t, uint8(2), ev.Pushed)
	})
	t.Run("old saved rules without the new fields load as standard", func(t *testing.T) {
		for _, spec := range []string{"standard", "kata", "kata,finish=wrap,obstacles=3:skip+7:back2,players=4"} {
			s, err := env.New(envtest.Rules(t, spec), 3, 0)
			require.NoError(t, err)
			b, err := s.MarshalBinary()
			require.NoError(t, err)
			back, err := env.UnmarshalState(b)
			require.NoError(t, err, spec)
			assert.Equal(t, s, back, spec)
		}
		std, err := env.New(env.Standard(), 3, 0)
		require.NoError(t, err)
		b, err := std.MarshalBinary()
		require.NoError(t, err)
		var blob struct {
			Position map[string]any `msgpack:"position"`
		}
		require.NoError(t, msgpack.Unmarshal(b, &blob))
		assert.NotContains(t, blob.Position, "missed")
		rules, ok := blob.Position["rules"].(map[string]any)
		require.True(t, ok)
		assert.Len(t, rules, 9, "standard rules are written with the nine fields they always had")
	})
}
