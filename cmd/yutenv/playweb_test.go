package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/yutenv/yutenv/env"
)

var rePlayURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)

// startPlayWeb runs `yutenv play --web args...` (the command itself, as the
// CLI runs it) until the test ends and returns the URL it printed.
func startPlayWeb(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := playMain(ctx, append([]string{"--web"}, args...), pw, io.Discard)
		pw.CloseWithError(fmt.Errorf("play --web returned: %v", err))
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan(), "play --web printed nothing: %v", lines.Err())
	url := rePlayURL.FindString(lines.Text())
	require.NotEmpty(t, url, "play --web printed no URL: %q", lines.Text())
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "play --web after Ctrl-C")
		case <-time.After(10 * time.Second):
			t.Error("play --web did not stop after its context was cancelled")
		}
	})
	return url
}

// apiCall sends a request to the play --web server and decodes a JSON answer
// into out (if not nil); it returns the status and the raw body.
func apiCall(t *testing.T, method, url, body string, out any) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if method != "GET" && method != "HEAD" {
		req.Header.Set("Content-Type", "application/json") // as the page sends every write
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if out != nil && res.StatusCode < 300 {
		require.NoError(t, json.Unmarshal(b, out), "body %s", b)
	}
	return res.StatusCode, b
}

// webReplay replays a game log the page or the API showed through the
// engine, as a record of the game's rules and seed.
func webReplay(t *testing.T, rules string, seed uint64, start int, steps []env.Step) env.State {
	t.Helper()
	r, err := env.ParseRules(rules)
	require.NoError(t, err)
	rec := env.NewRecord(r, seed, start)
	rec.Steps = steps
	s, err := rec.Replay(nil)
	require.NoError(t, err, "the log replays through the engine")
	return s
}

// logSteps turns the API's game log into record steps.
func logSteps(log []webLogEntry) []env.Step {
	var steps []env.Step
	for _, e := range log {
		st := env.Step{Seat: e.Seat}
		if e.Kind == "throw" {
			st.Throw = e.Throw
		} else {
			st.Action = e.Action
		}
		steps = append(steps, st)
	}
	return steps
}

// reSeatNumber finds a seat named by its number ("seat 1", "Seat 0 (A)"),
// which no text of the play page may say.
var reSeatNumber = regexp.MustCompile(`(?i)\bseat \d`)

// reSVGText finds the text of the elements of an SVG.
var reSVGText = regexp.MustCompile(`>([^<]+)<`)

// assertSeatsNamed checks that no text of the view names a seat by number:
// the line-up, the status, the moves, the log and the board's texts.
func assertSeatsNamed(t *testing.T, v webView) {
	t.Helper()
	texts := []string{v.Lineup, v.Status}
	for _, m := range v.Moves {
		texts = append(texts, m.Text)
	}
	for _, e := range v.Log {
		texts = append(texts, e.Say)
	}
	for _, m := range reSVGText.FindAllStringSubmatch(v.Board, -1) {
		texts = append(texts, m[1])
	}
	for _, s := range texts {
		assert.NotRegexp(t, reSeatNumber, s)
	}
}

// TestPlayWebAPIGame plays whole games through the JSON API (no browser),
// always the last legal move, and replays the log through the engine. No
// text the page shows names a seat by its number.
func TestPlayWebAPIGame(t *testing.T) {
	for _, tc := range []struct{ rules, lineup string }{
		{"standard", "You (B) against greedy (A)"},
		{"kata", "You (B) against greedy (A)"},
		{"players=3", "You (B) against greedy (A) and greedy (C)"},
	} {
		rules := tc.rules
		t.Run(rules, func(t *testing.T) {
			url := startPlayWeb(t, "--agent", "greedy", "--rules", rules, "--seat", "1")
			var v webView
			code, body := apiCall(t, "POST", url+"api/games", `{"seed": 11}`, &v)
			require.Equal(t, http.StatusCreated, code, "%s", body)
			assert.Equal(t, uint64(11), v.Seed)
			assert.Equal(t, tc.lineup, v.Lineup)
			assert.Equal(t, legendFor(v.rulesOf(t)), v.Legend)
			captures := 0
			for n := 0; v.State.Phase != "over"; n++ {
				assertSeatsNamed(t, v)
				require.Less(t, n, 2000, "the game ends")
				require.NotEmpty(t, v.Moves, "the game waits for the player")
				assert.Equal(t, 1, v.State.ToMove)
				m := v.Moves[len(v.Moves)-1]
				var next webView // a fresh value: decoding into v would keep stale pointers
				code, body = apiCall(t, "POST", url+"api/games/"+v.ID+"/moves", fmt.Sprintf(`{"action": %d}`, m.Action), &next)
				require.Equal(t, http.StatusOK, code, "%s", body)
				v = next
			}
			assertSeatsNamed(t, v)
			for _, e := range v.Log {
				if strings.Contains(e.Say, ", captures ") {
					captures++
					assert.Regexp(t, `, captures \d of (yours|greedy \([AC]\))`, e.Say)
				}
			}
			assert.Positive(t, captures, "the game had a capture to name")
			assert.Empty(t, v.Moves)
			s := webReplay(t, v.Rules, v.Seed, v.Start, logSteps(v.Log))
			require.True(t, s.IsOver())
			assert.Equal(t, s.Winner(), v.State.Winner)
			assert.Equal(t, s.JSON(), v.State)
			assert.Regexp(t, `wins? after \d+ decisions`, v.Status)
		})
	}
}

// TestPlayWebAPIErrors sends hostile and mistaken requests: each gets its
// 4xx and a JSON error, and the game is still playable afterwards.
func TestPlayWebAPIErrors(t *testing.T) {
	url := startPlayWeb(t, "--agent", "random", "--max-games", "2")
	var v webView
	code, body := apiCall(t, "POST", url+"api/games", "", &v)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	require.NotEmpty(t, v.Moves)
	illegal := -1
	for a := 0; a < env.NumActions && illegal < 0; a++ {
		if !containsInt(v.State.Legal, a) {
			illegal = a
		}
	}
	game := url + "api/games/" + v.ID
	tests := []struct {
		name, method, url, body string
		code                    int
		err                     string
	}{
		{"bad JSON new game", "POST", url + "api/games", `{"seed":`, 400, "bad request"},
		{"unknown field", "POST", url + "api/games", `{"sed": 1}`, 400, "unknown field"},
		{"wrong type", "POST", url + "api/games", `{"seed": "x"}`, 400, "bad request"},
		{"unknown game", "GET", url + "api/games/nope", "", 404, "no such game"},
		{"move in unknown game", "POST", url + "api/games/nope/moves", `{"action": 1}`, 404, "no such game"},
		{"no body", "POST", game + "/moves", "", 400, "empty body"},
		{"no action", "POST", game + "/moves", `{}`, 400, `field`},
		{"not JSON", "POST", game + "/moves", `action=3`, 400, "bad request"},
		{"trailing data", "POST", game + "/moves", `{"action": 1} {"action": 2}`, 400, "after the JSON"},
		{"action out of range", "POST", game + "/moves", `{"action": 180}`, 422, "out of range"},
		{"negative action", "POST", game + "/moves", `{"action": -1}`, 422, "out of range"},
		{"illegal action", "POST", game + "/moves", fmt.Sprintf(`{"action": %d}`, illegal), 422, "illegal move"},
		{"huge body", "POST", game + "/moves", `{"action": 1, "x": "` + strings.Repeat("a", 1<<20) + `"}`, 413, "too large"},
		{"preview not a number", "GET", game + "/preview/abc", "", 422, "not a number"},
		{"preview illegal", "GET", game + "/preview/" + fmt.Sprint(illegal), "", 422, "not one of your moves"},
		{"wrong method", "DELETE", game, "", 405, ""},
		{"unknown path", "GET", url + "api/nothing", "", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := apiCall(t, tc.method, tc.url, tc.body, nil)
			assert.Equal(t, tc.code, code, "%s", body)
			assert.Contains(t, string(body), tc.err)
		})
	}
	t.Run("still playable", func(t *testing.T) {
		code, body := apiCall(t, "GET", game+"/preview/"+fmt.Sprint(v.Moves[0].Action), "", nil)
		require.Equal(t, http.StatusOK, code, "%s", body)
		assert.Contains(t, string(body), "<svg")
		var after webView
		code, body = apiCall(t, "POST", game+"/moves", fmt.Sprintf(`{"action": %d}`, v.Moves[0].Action), &after)
		require.Equal(t, http.StatusOK, code, "%s", body)
		assert.Greater(t, len(after.Log), len(v.Log))
	})
	t.Run("not a loopback host", func(t *testing.T) {
		req, err := http.NewRequest("GET", game, nil)
		require.NoError(t, err)
		req.Host = "evil.example:80"
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusForbidden, res.StatusCode)
	})
	t.Run("evicts the least recently used game", func(t *testing.T) {
		var b, c webView
		_, _ = apiCall(t, "POST", url+"api/games", "", &b)
		code, _ := apiCall(t, "GET", game, "", nil) // v is now more recent than b
		require.Equal(t, http.StatusOK, code)
		_, _ = apiCall(t, "POST", url+"api/games", "", &c)
		code, body := apiCall(t, "GET", url+"api/games/"+b.ID, "", nil)
		assert.Equal(t, http.StatusNotFound, code, "%s", body)
		assert.Contains(t, string(body), "evicted")
		for _, id := range []string{v.ID, c.ID} {
			code, _ = apiCall(t, "GET", url+"api/games/"+id, "", nil)
			assert.Equal(t, http.StatusOK, code, "game %s kept", id)
		}
	})
}

// TestPlayWebAfterTheEnd: a move in a finished game is a conflict.
func TestPlayWebAfterTheEnd(t *testing.T) {
	w := newWebGames(webConfig{rules: env.Standard(), spec: "greedy", seat: 0, seed: 3, maxGames: 4})
	g, err := w.create(nil)
	require.NoError(t, err)
	var buf [env.NumActions]env.Action
	for !g.state.IsOver() {
		require.NoError(t, g.move(g.state.LegalActions(buf[:0])[0]))
	}
	h, err := w.handler()
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/games/"+g.id+"/moves", strings.NewReader(`{"action": 0}`)))
	assert.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
}

func TestPlayWebFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"--web", "--addr", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--web", "--agent", "nosuch"}, "nosuch"},
		{[]string{"--web", "--max-games", "0"}, "--max-games"},
		{[]string{"--web", "--record", "x.jsonl"}, "--record is for the terminal"},
		{[]string{"--agent", "random", "--opponent", "greedy"}, "same flag"},
		{[]string{"--open"}, "--open is for --web"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := playMain(context.Background(), tc.args, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

// rulesOf parses the view's rules.
func (v webView) rulesOf(t *testing.T) env.Rules {
	t.Helper()
	r, err := env.ParseRules(v.Rules)
	require.NoError(t, err)
	return r
}

// The legend says how the sticks make each throw and how the pieces go,
// for the game's rules.
func TestPlayWebLegend(t *testing.T) {
	tests := []struct {
		rules     string
		want, not []string
	}{
		{"standard", []string{"none mo (5)", "back-do: 1 step back", "from HOME (bottom right)", "counter-clockwise",
			"up the right side to 5", "short way home", "finishes by moving past HOME"}, []string{"Obstacles", "END"}},
		{"back_do=off,finish=stop", []string{"counts like the others", "reaches or passes HOME"}, []string{"back-do"}},
		{"finish=wrap,obstacles=4:skip+9:back2", []string{"stopping exactly on HOME; a move past it goes round the ring again", "skip makes", "-N pushes"}, nil},
		{"kata", []string{"space 0 (START)", "to space 14 (END)", "stopping exactly on END", "on its own it is a do"}, []string{"HOME", "counter-clockwise", "back-do"}},
	}
	for _, tc := range tests {
		t.Run(tc.rules, func(t *testing.T) {
			r, err := env.ParseRules(tc.rules)
			require.NoError(t, err)
			l := legendFor(r)
			all := l.Sticks + "\n" + l.Board
			for _, w := range tc.want {
				assert.Contains(t, all, w)
			}
			for _, w := range tc.not {
				assert.NotContains(t, all, w)
			}
		})
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// FuzzPlayWebRequest sends any body to the move and new-game endpoints: the
// answer is a success or a 4xx, never a panic or a 5xx.
func FuzzPlayWebRequest(f *testing.F) {
	for _, s := range []string{`{"action": 3}`, `{"action": 119}`, `{}`, ``, `{"seed": 7}`, `{"action": -5}`, `[1]`, `{"action": 1e400}`, "{\"action\":\x00}"} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, seed: 3, maxGames: 4})
	g, err := w.create(nil)
	require.NoError(f, err)
	h, err := w.handler()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, newGame bool, body []byte) {
		path := "/api/games/" + g.id + "/moves"
		if newGame {
			path = "/api/games"
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, bytes.NewReader(body)))
		if rec.Code >= 300 {
			assert.Less(t, rec.Code, 500, "body %q: %s", body, rec.Body.String())
			assert.Contains(t, rec.Body.String(), `"error"`)
		}
	})
}

// TestPlayWebAssetsAreOffline: the page loads nothing from another origin.
func TestPlayWebAssetsAreOffline(t *testing.T) {
	entries, err := fs.ReadDir(playFiles, "playweb")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			b, err := fs.ReadFile(playFiles, "playweb/"+e.Name())
			require.NoError(t, err)
			assert.NotRegexp(t, `(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`, string(b), "a URL of another origin")
			assert.NotContains(t, string(b), "@import")
		})
	}
}

// TestPlayWebConcurrentGames plays several games at once through one server
// holding fewer games than are played: each request is answered (a game
// evicted under a player is a 404, nothing else fails), and -race checks the
// locking.
func TestPlayWebConcurrentGames(t *testing.T) {
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, maxGames: 3})
	h, err := w.handler()
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	var g errgroup.Group
	for i := range 6 {
		g.Go(func() error {
			res, err := http.Post(srv.URL+"/api/games", "application/json", strings.NewReader(fmt.Sprintf(`{"seed": %d}`, i+1)))
			if err != nil {
				return err
			}
			var v webView
			err = json.NewDecoder(res.Body).Decode(&v)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusCreated {
				return fmt.Errorf("new game: %d %v", res.StatusCode, err)
			}
			for len(v.Moves) > 0 {
				body := fmt.Sprintf(`{"action": %d}`, v.Moves[len(v.Moves)/2].Action)
				res, err := http.Post(srv.URL+"/api/games/"+v.ID+"/moves", "application/json", strings.NewReader(body))
				if err != nil {
					return err
				}
				var next webView
				err = json.NewDecoder(res.Body).Decode(&next)
				res.Body.Close()
				switch {
				case res.StatusCode == http.StatusNotFound:
					return nil // evicted by the other players' games
				case err != nil || res.StatusCode != http.StatusOK:
					return fmt.Errorf("move: %d %v", res.StatusCode, err)
				}
				v = next
			}
			if v.State.Phase != "over" {
				return fmt.Errorf("game %s: no moves but the game is %s", v.ID, v.State.Phase)
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.LessOrEqual(t, len(w.games), 3, "at most --max-games games are kept")
}
