//go:build unix

package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// pageLogEntry is one entry of the page's game log, as its DOM says.
type pageLogEntry struct {
	Kind   string `json:"kind"`
	Seat   string `json:"seat"`
	Throw  string `json:"throw"`
	Action string `json:"action"`
}

// pageStack is one stack of the board SVG in the page.
type pageStack struct {
	Seat    string `json:"seat"`
	Station string `json:"station"`
	Height  string `json:"height"`
}

// TestPlayWebInBrowser plays whole games in headless Chromium by clicking
// the page's move buttons (real mouse events through the DevTools
// protocol), then replays the page's own game log through the engine and
// checks the final position and winner the page shows against it. Standard
// rules and the kata with obstacles; the new-game button starts a fresh game.
func TestPlayWebInBrowser(t *testing.T) {
	bin := chromium(t)
	tests := []struct {
		rules, agent string
		obstacles    bool
	}{
		{rules: "standard", agent: "greedy"},
		{rules: "kata,obstacles=4:skip+9:back2", agent: "mc:4", obstacles: true},
	}
	for _, tc := range tests {
		t.Run(tc.rules, func(t *testing.T) {
			url := startPlayWeb(t, "--agent", tc.agent, "--rules", tc.rules, "--seed", "21")
			opts := append(chromedp.DefaultExecAllocatorOptions[:],
				chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
				chromedp.WindowSize(1280, 860), chromedp.Flag("disable-quic", true),
				chromedp.Flag("no-proxy-server", true), chromedp.Flag("mute-audio", true))
			actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
			defer cancelAlloc()
			bctx, cancelBrowser := chromedp.NewContext(actx)
			defer cancelBrowser()
			ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
			defer cancel()
			do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				require.NoError(t, chromedp.Do(ctx, actions...), what)
			}
			body := func() map[string]string {
				return cdpRun(t, ctx, "read the body", chromedp.Evaluate[map[string]string](`Object.assign({}, document.body.dataset)`))
			}

			do("load the page", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-phase="you"] #moves button`)))
			assert.True(t, cdpRun(t, ctx, "undo", chromedp.Evaluate[bool](`document.getElementById('undo').disabled`)), "undo is disabled")
			assert.Equal(t, 4, cdpRun(t, ctx, "sticks", chromedp.Evaluate[int](`document.querySelectorAll('#sticks .stick').length`)), "the throw is shown as four sticks")
			assert.Regexp(t, `^You throw (back-do|do|gae|geol|yut|mo) `, cdpRun(t, ctx, "throw", chromedp.Text(chromedp.CSS(`#throw-text`))), "the player's throw is announced")
			if tc.obstacles {
				assert.Equal(t, 1, cdpRun(t, ctx, "obstacles", chromedp.Evaluate[int](`document.querySelectorAll('#board g.obstacles').length`)), "the board shows the obstacles")
			}

			// Hovering over a move previews it on the board as an arrow.
			first := cdpRun(t, ctx, "first move", chromedp.Evaluate[string](`document.querySelector('#moves button').dataset.action`))
			at := cdpRun(t, ctx, "where the first move is", chromedp.Evaluate[[]float64](
				`(r => [r.x + r.width / 2, r.y + r.height / 2])(document.querySelector('#moves button').getBoundingClientRect())`))
			require.Len(t, at, 2)
			do("preview a move", chromedp.MouseEvent(chromedp.MouseMoved, at[0], at[1]),
				chromedp.Poll[chromedp.Void](`document.body.dataset.preview === `+strconv.Quote(first)+` && document.querySelector('#board g.legal') !== null`))
			assert.Equal(t, 1, cdpRun(t, ctx, "arrow", chromedp.Evaluate[int](`document.querySelectorAll('#board g.last-move').length`)), "the previewed move is drawn")

			// A preview whose reply comes back after its move was played is
			// stale and must not cover the new board, nor one that comes back
			// after the pointer left. Previews are held back 400 ms from here
			// on; hover a move, play it at once and move the pointer away.
			do("hold previews back", chromedp.Evaluate[chromedp.Void](`(() => { const f = window.fetch; window.fetch = (u, o) => String(u).includes('/preview/') ? new Promise((r) => setTimeout(r, 400)).then(() => f(u, o)) : f(u, o); })()`))
			do("hover away", chromedp.MouseEvent(chromedp.MouseMoved, 1, 1), chromedp.Poll[chromedp.Void](`document.body.dataset.preview === undefined`))
			before := body()["decisions"]
			do("hover a move and play it before its preview comes back",
				chromedp.MouseEvent(chromedp.MouseMoved, at[0], at[1]),
				chromedp.Click(chromedp.CSS(`#moves li:nth-child(1) button`)),
				chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.dataset.phase !== 'busy' && document.body.dataset.decisions !== %q`, before)),
				chromedp.MouseEvent(chromedp.MouseMoved, 1, 1), chromedp.Sleep(800*time.Millisecond))
			assert.Equal(t, "", cdpRun(t, ctx, "the preview mark", chromedp.Evaluate[string](`document.body.dataset.preview || ''`)), "a stale preview is dropped")
			clicks := 1

			for {
				do("wait for a decision or the end",
					chromedp.Poll[chromedp.Void](`document.body.dataset.phase === 'over' || document.body.dataset.phase === 'you'`))
				b := body()
				if b["phase"] == "over" {
					break
				}
				require.Less(t, clicks, 500, "the game ends")
				n := cdpRun(t, ctx, "count the moves", chromedp.Evaluate[int](`document.querySelectorAll('#moves button').length`))
				require.Positive(t, n)
				// A different choice each time, so the games are not all first moves.
				sel := fmt.Sprintf(`#moves li:nth-child(%d) button`, clicks%n+1)
				do("click a move", chromedp.Click(chromedp.CSS(sel)),
					chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.dataset.phase !== 'busy' && document.body.dataset.decisions !== %q`, b["decisions"])))
				clicks++
			}

			t.Logf("%d clicks played the game to its end", clicks)
			// The page's log, its game header, winner and final board.
			log := cdpRun(t, ctx, "the log", chromedp.Evaluate[[]pageLogEntry](`[...document.querySelectorAll('#log li')].map(li => ({kind: li.dataset.kind, seat: li.dataset.seat, throw: li.dataset.throw, action: li.dataset.action || ''}))`))
			stacks := cdpRun(t, ctx, "the stacks", chromedp.Evaluate[[]pageStack](`[...document.querySelectorAll('#board g.stack')].map(g => ({seat: g.dataset.seat, station: g.dataset.station, height: g.dataset.height}))`))
			status := cdpRun(t, ctx, "the status", chromedp.Text(chromedp.CSS(`#status`)))
			b := body()
			rules, seed, start, winner := b["rules"], b["seed"], b["start"], b["winner"]

			var steps []env.Step
			mine := 0
			for i, e := range log {
				seat, err := strconv.Atoi(e.Seat)
				require.NoError(t, err, "log entry %d", i)
				st := env.Step{Seat: seat}
				if e.Kind == "throw" {
					st.Throw = e.Throw
				} else {
					a, err := strconv.Atoi(e.Action)
					require.NoError(t, err, "log entry %d", i)
					st.Action = &a
					if seat == 0 {
						mine++
					}
				}
				steps = append(steps, st)
			}
			assert.Equal(t, clicks, mine, "every click made one move of the player's, and only clicks did")
			sd, err := strconv.ParseUint(seed, 10, 64)
			require.NoError(t, err)
			assert.Equal(t, uint64(21), sd)
			st, err := strconv.Atoi(start)
			require.NoError(t, err)
			s := webReplay(t, rules, sd, st, steps)
			require.True(t, s.IsOver(), "the page's log is a whole game")
			assert.Equal(t, strconv.Itoa(s.Winner()), winner, "the winner the page shows")
			if s.Winner() == 0 {
				assert.Contains(t, status, "You win")
			} else {
				assert.Contains(t, status, "wins after")
			}
			var want []pageStack
			for stn := env.Station(0); stn < env.NumStations; stn++ {
				if seat, h, _, ok := s.StackAt(stn); ok {
					want = append(want, pageStack{strconv.Itoa(seat), strconv.Itoa(int(stn)), strconv.Itoa(h)})
				}
			}
			assert.Equal(t, want, stacks, "the final board on the page")

			// New game: a fresh game with its own id and log.
			oldID := b["game"]
			do("start a new game", chromedp.Click(chromedp.CSS(`#new-game`)),
				chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.dataset.game !== %q && document.body.dataset.phase === 'you'`, oldID)))
			newID := body()["game"]
			logLen := cdpRun(t, ctx, "the new log", chromedp.Evaluate[int](`document.querySelectorAll('#log li').length`))
			assert.NotEqual(t, oldID, newID)
			assert.Less(t, logLen, len(log), "the log starts again")
		})
	}
}

// cdpRun runs one browser action and returns its value, failing the test on an error.
func cdpRun[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err, what)
	return v
}
