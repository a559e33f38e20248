//go:build unix

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/browsertest"
	"github.com/yutenv/yutenv/internal/israce"
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
	bin := browsertest.Chromium(t)
	tests := []struct {
		rules, agent string
		obstacles    bool
	}{
		{rules: "standard", agent: "greedy"},
		{rules: "kata,obstacles=4:skip+9:back2", agent: "mc:4", obstacles: true},
	}
	if israce.Enabled {
		tests = tests[1:] // the page server's goroutines are the same in both games; the kata's is the shorter
	}
	for _, tc := range tests {
		t.Run(tc.rules, func(t *testing.T) {
			url := startPlayWeb(t, "--agent", tc.agent, "--rules", tc.rules, "--seed", "21")
			ctx := browsertest.Browser(t, bin)
			do := pageDo(t, ctx)
			body := pageBody(t, ctx)

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
			assertPageNamesSeats(t, ctx)
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

// pageTextsJS collects every text the play page shows a person: the header,
// the status, the throw, the move buttons, the log, the legend and the
// board's texts.
const pageTextsJS = `[...document.querySelectorAll('#meta, #status, #throw-text, #moves button, #log li, #legend p, #board text')].map(e => e.textContent)`

// assertPageNamesSeats checks that no text of the page names a seat by its
// number: the player is "You", the others their agent and letter.
func assertPageNamesSeats(t *testing.T, ctx context.Context) {
	t.Helper()
	texts := cdpRun(t, ctx, "the page's texts", chromedp.Evaluate[[]string](pageTextsJS))
	require.NotEmpty(t, texts)
	for _, s := range texts {
		assert.NotRegexp(t, reSeatNumber, s)
	}
}

// TestPlayWebReloadInBrowser: the page keeps its game's id in the URL, so a
// reload mid-game shows the same game (its log and decisions), New game
// changes the URL, an address naming another game shows it, and an id the
// server no longer has starts a new game and says so. Every seat is named
// as in the log, never by number, and the legend is shown.
func TestPlayWebReloadInBrowser(t *testing.T) {
	if israce.Enabled {
		t.Skip("the page's URL and reload logic in Chromium; the play server's goroutines run under -race in the other browser and page tests")
	}
	bin := browsertest.Chromium(t)
	url := startPlayWeb(t, "--agent", "greedy", "--seed", "21")
	ctx := browsertest.Browser(t, bin)
	do := pageDo(t, ctx)
	body := pageBody(t, ctx)
	hash := func() string { return cdpRun(t, ctx, "the URL", chromedp.Evaluate[string](`location.hash`)) }
	logTexts := func() []string {
		return cdpRun(t, ctx, "the log", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#log li')].map(li => li.textContent)`))
	}
	moveTexts := func() []string {
		return cdpRun(t, ctx, "the moves", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#moves button')].map(b => b.textContent)`))
	}
	ready := chromedp.WaitVisible(chromedp.CSS(`body[data-phase="you"] #moves button`))

	do("load the page", chromedp.Navigate(url), ready)
	id := body()["game"]
	require.NotEmpty(t, id)
	assert.Equal(t, "#game="+id, hash(), "the URL names the game")
	assert.Contains(t, cdpRun(t, ctx, "the header", chromedp.Text(chromedp.CSS(`#meta`))), "You (A) against greedy (B)")
	legend := cdpRun(t, ctx, "the legend", chromedp.Text(chromedp.CSS(`#legend`)))
	for _, want := range []string{"flat side up", "marked stick", "back-do", "counter-clockwise", "HOME (bottom right)"} {
		assert.Contains(t, legend, want)
	}
	assert.Equal(t, 3, cdpRun(t, ctx, "the legend's sticks", chromedp.Evaluate[int](`document.querySelectorAll('#legend .stick').length`)))
	assert.Equal(t, 1, cdpRun(t, ctx, "the way round", chromedp.Evaluate[int](`document.querySelectorAll('#board g.direction').length`)), "the board marks where pieces start and which way they go")

	// A few moves, then reload: the same game, log, decisions and moves.
	for i := 0; i < 3; i++ {
		b := body()
		do("click a move", chromedp.Click(chromedp.CSS(`#moves li:nth-child(1) button`)),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.dataset.phase !== 'busy' && document.body.dataset.decisions !== %q`, b["decisions"])),
			chromedp.Poll[chromedp.Void](`document.body.dataset.phase === 'over' || document.body.dataset.phase === 'you'`))
	}
	require.Equal(t, "you", body()["phase"], "the game is still on after 3 moves")
	assertPageNamesSeats(t, ctx)
	before, log, moves := body(), logTexts(), moveTexts()
	do("reload", chromedp.Reload(), ready)
	after := body()
	assert.Equal(t, id, after["game"], "the same game after a reload")
	assert.Equal(t, before["decisions"], after["decisions"])
	assert.Equal(t, log, logTexts(), "the same log")
	assert.Equal(t, moves, moveTexts(), "the same moves")
	assert.Equal(t, "#game="+id, hash())
	assert.Equal(t, "", cdpRun(t, ctx, "the error line", chromedp.Text(chromedp.CSS(`#error`))))

	// New game changes the URL; an address naming the first game shows it.
	do("start a new game", chromedp.Click(chromedp.CSS(`#new-game`)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.dataset.game !== %q && document.body.dataset.phase === 'you'`, id)))
	second := body()["game"]
	assert.Equal(t, "#game="+second, hash(), "New game updates the URL")
	do("name the first game in the address", chromedp.Evaluate[chromedp.Void](`location.hash = '#game=`+id+`'`),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.dataset.game === %q && document.body.dataset.phase === 'you'`, id)))
	assert.Equal(t, log, logTexts(), "the first game again")

	// An id the server does not have (evicted, or the server restarted).
	const stale = "0123456789abcdef01234567"
	do("leave the page", chromedp.Navigate("about:blank"))
	do("open a game the server does not have", chromedp.Navigate(url+"#game="+stale), ready,
		chromedp.Poll[chromedp.Void](`document.body.dataset.replaced !== undefined`))
	b := body()
	assert.NotEqual(t, stale, b["game"])
	assert.NotContains(t, []string{id, second}, b["game"], "a new game")
	assert.Equal(t, stale, b["replaced"])
	assert.Equal(t, "#game="+b["game"], hash(), "the URL names the new game")
	assert.Contains(t, cdpRun(t, ctx, "the status", chromedp.Text(chromedp.CSS(`#status`))), "no longer on the server")
	assert.Equal(t, "", cdpRun(t, ctx, "the error line", chromedp.Text(chromedp.CSS(`#error`))))
	assertPageNamesSeats(t, ctx)
}

// cdpRun runs one browser action and returns its value, failing the test on an error.
func cdpRun[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err, what)
	return v
}

// pageDo returns a function that runs actions in the browser tab ctx and
// fails the test, naming what, if they fail.
func pageDo(t *testing.T, ctx context.Context) func(what string, actions ...chromedp.Action[chromedp.Void]) {
	return func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, actions...), what)
	}
}

// pageBody returns a function that reads the page's body data attributes
// (what play.js sets: phase, game, decisions...).
func pageBody(t *testing.T, ctx context.Context) func() map[string]string {
	return func() map[string]string {
		t.Helper()
		return cdpRun(t, ctx, "read the body", chromedp.Evaluate[map[string]string](`Object.assign({}, document.body.dataset)`))
	}
}

// hostilePage is a page of another site, as an attacker would write it: it
// makes the browser that opens it send game requests to the play server
// (%[1]s, its base URL) without asking anybody. It needs no answer: its
// requests would do their harm by arriving. Each kind of request a page may
// send without a CORS preflight is here, and one that needs a preflight.
const hostilePage = `<!doctype html>
<html><body>
<iframe name="f1"></iframe><iframe name="f2"></iframe><iframe name="f3"></iframe>
<form id="empty" method="POST" action="%[1]sapi/games" enctype="text/plain" target="f1"></form>
<form id="urlencoded" method="POST" action="%[1]sapi/games" target="f2"><input name="seed" value="8"></form>
<script>
(async () => {
  const said = [];
  // More new games than the server keeps: the player's game would be evicted.
  for (let i = 0; i < %[2]d; i++) {
    try {
      await fetch('%[1]sapi/games', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: '{}'});
      said.push('no-cors sent');
    } catch (e) { said.push('no-cors: ' + e); }
  }
  try {
    await fetch('%[1]sapi/games', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'});
    said.push('cors: answered');
  } catch (e) { said.push('cors: refused'); }
  document.getElementById('empty').submit();
  document.getElementById('urlencoded').submit();
  // A form in a sandboxed frame is sent with Origin: null.
  const f = document.createElement('iframe');
  f.sandbox = 'allow-forms allow-scripts';
  f.srcdoc = '<form method="POST" action="%[1]sapi/games" enctype="text/plain"></form><script>document.forms[0].submit()<\/script>';
  document.body.appendChild(f);
  document.body.dataset.done = said.join('; ');
})();
</script>
</body></html>`

// TestPlayWebRefusesOtherPagesInBrowser opens the play page in headless
// Chromium, then, in the same browser, a hostile page served from another
// port of this machine: its fetches and forms reach the play server (the
// test reads them off the wire) and every one is refused, so no game is made
// and the player's game stays. The page itself still plays.
func TestPlayWebRefusesOtherPagesInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	const maxGames, fetches = 4, 6
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, seed: 5, maxGames: maxGames})
	h, err := w.handler()
	require.NoError(t, err)
	var tap wireTap
	addr := startPage(t, newPageServer(h), tap.wrap)
	play := "http://" + addr + "/"
	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, hostilePage, play, fetches)
	}))
	defer evil.Close()
	require.NotEqual(t, evil.URL+"/", play)

	ctx := browsertest.Browser(t, bin)
	do := pageDo(t, ctx)
	do("load the play page", chromedp.Navigate(play), chromedp.WaitVisible(chromedp.CSS(`body[data-phase="you"] #moves button`)))
	id := cdpRun(t, ctx, "the game", chromedp.Evaluate[string](`document.body.dataset.game`))
	require.Equal(t, 1, w.numGames(), "the page made its game")

	do("open the hostile page", chromedp.Navigate(evil.URL), chromedp.Poll[chromedp.Void](`document.body.dataset.done !== undefined`))
	said := cdpRun(t, ctx, "what the hostile page saw", chromedp.Evaluate[string](`document.body.dataset.done`))
	t.Logf("the hostile page: %s", said)
	assert.Contains(t, said, "cors: refused", "the browser sent no request that needs a preflight")

	// fetches no-cors POSTs, three form POSTs (one with Origin null) and a
	// CORS preflight: wait until the server has answered them all.
	var hostile []exchange
	for deadline := time.Now().Add(30 * time.Second); ; {
		hostile = hostile[:0]
		posts, preflights := 0, 0
		for _, e := range tap.exchanges() {
			site, origin := e.header.Get("Sec-Fetch-Site"), e.header.Get("Origin")
			if e.status == 0 || (site == "same-origin" || site == "none") && (origin == "" || origin == "http://"+addr) {
				continue // unanswered yet, or the play page's own
			}
			hostile = append(hostile, e)
			switch e.method {
			case "POST":
				posts++
			case "OPTIONS":
				preflights++
			}
		}
		if posts >= fetches+3 && preflights >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hostile requests did not all reach the server in 30 s; it answered: %v", tap.exchanges())
		}
		time.Sleep(50 * time.Millisecond)
	}
	origins := map[string]bool{}
	for _, e := range hostile {
		t.Logf("hostile: %s", e)
		origins[e.header.Get("Origin")] = true
		assert.Equal(t, http.StatusForbidden, e.status, "%s", e)
		assert.False(t, e.method == "POST" && strings.HasPrefix(e.header.Get("Content-Type"), "application/json"), "a JSON POST after a refused preflight: %s", e)
	}
	assert.True(t, origins["null"], "a request with Origin: null was sent")
	assert.True(t, origins[evil.URL], "requests with the hostile page's origin were sent")
	assert.Equal(t, 1, w.numGames(), "no game was made by the hostile page")

	// The player's game is still there, and the page itself still plays.
	code, body := apiCall(t, "GET", play+"api/games/"+id, "", nil)
	assert.Equal(t, http.StatusOK, code, "the player's game: %s", body)
	do("load the play page again", chromedp.Navigate(play), chromedp.WaitVisible(chromedp.CSS(`body[data-phase="you"] #moves button`)))
	before := cdpRun(t, ctx, "decisions", chromedp.Evaluate[string](`document.body.dataset.decisions`))
	do("play a move", chromedp.Click(chromedp.CSS(`#moves li:nth-child(1) button`)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.dataset.phase !== 'busy' && document.body.dataset.decisions !== %q`, before)))
	assert.Equal(t, "", cdpRun(t, ctx, "the error line", chromedp.Text(chromedp.CSS(`#error`))))
	assert.Equal(t, 2, w.numGames(), "the page's own new game")
	for _, e := range tap.exchanges() {
		if e.header.Get("Origin") == "http://"+addr && e.method == "POST" {
			assert.Contains(t, []int{http.StatusOK, http.StatusCreated}, e.status, "the page's own request: %s", e)
		}
	}
}
