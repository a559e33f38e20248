package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/render"
)

// playRecord plays one game with seeded random choices and returns its record.
func playRecord(t testing.TB, rules env.Rules, seed uint64) *env.Record {
	t.Helper()
	s, err := env.New(rules, seed, env.AnySeat)
	require.NoError(t, err)
	rec := env.NewRecord(rules, seed, env.AnySeat)
	rec.Players = []string{"random", "first"}[:min(2, rules.Players)]
	rng := rand.New(rand.NewPCG(seed, 99))
	for !s.IsOver() {
		var ev env.Event
		if s.IsChance() {
			ev, err = s.SampleThrow()
		} else {
			legal := s.LegalActions(nil)
			ev, err = s.Apply(legal[rng.IntN(len(legal))])
		}
		require.NoError(t, err)
		rec.Add(ev, &s)
	}
	return rec
}

// writeRecords writes games records of standard games into dir and returns the file's path.
func writeRecords(t testing.TB, dir string, games int) (string, []*env.Record) {
	t.Helper()
	var b bytes.Buffer
	var recs []*env.Record
	for i := 0; i < games; i++ {
		rec := playRecord(t, env.Standard(), uint64(11+i))
		_, err := rec.WriteTo(&b)
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	path := filepath.Join(dir, "games.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path, recs
}

// testViewer serves game 1 of a fresh two-game record with httptest.
func testViewer(t *testing.T) (*httptest.Server, *env.Record) {
	t.Helper()
	path, recs := writeRecords(t, t.TempDir(), 2)
	v, err := loadViewer(path, 1)
	require.NoError(t, err)
	h, err := v.handler()
	require.NoError(t, err)
	srv := httptest.NewServer(loopbackOnly(h))
	t.Cleanup(srv.Close)
	return srv, recs[1]
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestViewHandlerAssets(t *testing.T) {
	srv, _ := testViewer(t)
	tests := []struct {
		path, ctype, contains string
	}{
		{"/", "text/html", `<script src="static/app.js"`},
		{"/static/app.js", "javascript", "board/"},
		{"/static/style.css", "text/css", "#board"},
		{"/game.json", "application/json", `"positions"`},
		{"/board/0.svg", "image/svg+xml", `class="yut-board"`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := get(t, srv.URL+tc.path)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Contains(t, resp.Header.Get("Content-Type"), tc.ctype)
			assert.Contains(t, string(body), tc.contains)
			assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
			assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
		})
	}
}

// TestViewPageIsSelfContained checks that nothing the page loads comes from
// another host: no absolute URLs in the page, script or style.
func TestViewPageIsSelfContained(t *testing.T) {
	srv, _ := testViewer(t)
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for _, path := range []string{"/", "/static/app.js", "/static/style.css"} {
		_, body := get(t, srv.URL+path)
		assert.Empty(t, external.FindAllString(string(body), -1), "%s refers to another host", path)
	}
	entries, err := viewerFiles.ReadDir("viewer")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"index.html", "app.js", "style.css"}, names)
}

func TestViewGameJSON(t *testing.T) {
	srv, rec := testViewer(t)
	_, body := get(t, srv.URL+"/game.json")
	var g gameJSON
	require.NoError(t, json.Unmarshal(body, &g))
	assert.Equal(t, 1, g.Game)
	assert.Equal(t, 2, g.Games)
	assert.Equal(t, "games.jsonl", g.File)
	assert.Equal(t, "standard", g.Rules)
	assert.Equal(t, 2, g.Seats)
	assert.Equal(t, rec.Players, g.Players)
	require.NotNil(t, g.Result)
	assert.Equal(t, rec.Result.Winner, g.Result.Winner)
	require.Len(t, g.Positions, len(rec.Steps)+1, "the start and one position per step")
	assert.Len(t, g.Colors, 2)

	// Every position agrees with a fresh replay of the record.
	_, err := rec.Replay(func(step int, ev env.Event, s *env.State) error {
		p := step + 1
		want, err := env.MarshalJSONLine(step, ev, s)
		require.NoError(t, err)
		got, err := json.Marshal(g.Positions[p])
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got), "position %d", p)
		return nil
	})
	require.NoError(t, err)
}

func TestViewBoards(t *testing.T) {
	srv, rec := testViewer(t)
	last := len(rec.Steps)
	var states []env.State
	var events []env.Event
	_, err := rec.Replay(func(step int, ev env.Event, s *env.State) error {
		states = append(states, *s)
		events = append(events, ev)
		return nil
	})
	require.NoError(t, err)
	for _, p := range []int{0, 1, last / 2, last} {
		t.Run(fmt.Sprint("position ", p), func(t *testing.T) {
			resp, body := get(t, fmt.Sprintf("%s/board/%d.svg", srv.URL, p))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			opts := render.Options{Legal: true, Numbers: true}
			if p > 0 {
				opts.LastMove = &events[p]
			}
			assert.Equal(t, string(render.SVG(&states[p], opts)), string(body))
		})
	}
	for _, bad := range []string{"-1.svg", fmt.Sprintf("%d.svg", last+1), "x.svg", "01.svg", "1.png", "1"} {
		t.Run("bad "+bad, func(t *testing.T) {
			resp, body := get(t, srv.URL+"/board/"+bad)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode)
			assert.Contains(t, string(body), "no board")
		})
	}
}

func TestViewHandlerRefuses(t *testing.T) {
	srv, _ := testViewer(t)
	t.Run("unknown path", func(t *testing.T) {
		resp, _ := get(t, srv.URL+"/etc/passwd")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
	t.Run("static outside the embedded files", func(t *testing.T) {
		resp, _ := get(t, srv.URL+"/static/../view.go")
		assert.NotEqual(t, http.StatusOK, resp.StatusCode)
		resp, _ = get(t, srv.URL+"/static/nothing.js")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
	t.Run("POST", func(t *testing.T) {
		resp, err := http.Post(srv.URL+"/game.json", "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
	t.Run("foreign Host header", func(t *testing.T) {
		for host, want := range map[string]int{
			"evil.example:80": http.StatusForbidden, "10.0.0.1": http.StatusForbidden,
			"localhost:1234": http.StatusOK, "[::1]:99": http.StatusOK, "127.0.0.2": http.StatusOK,
		} {
			req, err := http.NewRequest("GET", srv.URL+"/game.json", nil)
			require.NoError(t, err)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, want, resp.StatusCode, "Host %s", host)
		}
	})
}

func TestLoopbackAddr(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "127.0.0.1:0", want: "127.0.0.1:0"},
		{in: "127.1.2.3:8080", want: "127.1.2.3:8080"},
		{in: "localhost:9000", want: "127.0.0.1:9000"},
		{in: "[::1]:0", want: "[::1]:0"},
		{in: "0.0.0.0:8080", err: "not a loopback address"},
		{in: ":8080", err: "every interface"},
		{in: "192.168.1.5:80", err: "not a loopback address"},
		{in: "example.com:80", err: "not a loopback address"},
		{in: "[::]:80", err: "not a loopback address"},
		{in: "127.0.0.1", err: "want host:port"},
		{in: "127.0.0.1:http", err: "port must be a number"},
		{in: "127.0.0.1:70000", err: "port must be a number"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := loopbackAddr("--listen", tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestViewCommandErrors(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeRecords(t, dir, 1)
	garbage := filepath.Join(dir, "garbage.jsonl")
	require.NoError(t, os.WriteFile(garbage, []byte("{not json\n"), 0o644))
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	// A record whose second step is an action nobody could play.
	bad := playRecord(t, env.Standard(), 5)
	a := 179
	bad.Steps[1] = env.Step{Seat: bad.Steps[1].Seat, Action: &a}
	bad.Result = nil
	var b bytes.Buffer
	_, err := bad.WriteTo(&b)
	require.NoError(t, err)
	illegal := filepath.Join(dir, "illegal.jsonl")
	require.NoError(t, os.WriteFile(illegal, b.Bytes(), 0o644))

	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"no record", nil, "usage"},
		{"two records", []string{path, path}, "usage"},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, "no such file"},
		{"garbage", []string{garbage}, "line 1"},
		{"empty", []string{empty}, "no records"},
		{"game out of range", []string{path, "--game", "3"}, "--game 3 out of range"},
		{"negative game", []string{path, "--game", "-1"}, "out of range"},
		{"public address", []string{path, "--listen", "0.0.0.0:0"}, "not a loopback address"},
		{"bad flag", []string{path, "--frobnicate"}, "usage"},
		{"illegal step", []string{illegal}, "record step"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := viewMain(context.Background(), tc.args, &out, &errb)
			require.Error(t, err)
			assert.Contains(t, err.Error()+errb.String(), tc.err)
			assert.NotContains(t, out.String(), "http://", "no server was started")
		})
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var urlLine = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)

// startView runs viewMain on a record in the background and returns the URL
// it prints and a function that stops it (as SIGINT does) and returns its error.
func startView(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- viewMain(ctx, args, out, io.Discard) }()
	var url string
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
		}
		url = urlLine.FindString(out.String())
		return url != ""
	}, 10*time.Second, 10*time.Millisecond)
	require.NotEmpty(t, url, "viewMain printed no URL: %q", out.String())
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the viewer did not stop")
		}
	}
	t.Cleanup(func() { _ = stop() })
	return url, stop
}

func TestViewCommandServesAndStops(t *testing.T) {
	path, recs := writeRecords(t, t.TempDir(), 1)
	url, stop := startView(t, path, "--listen", "127.0.0.1:0")
	resp, body := get(t, url+"game.json")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var g gameJSON
	require.NoError(t, json.Unmarshal(body, &g))
	assert.Len(t, g.Positions, len(recs[0].Steps)+1)

	require.NoError(t, stop(), "cancelling the context (SIGINT) stops the viewer cleanly")
	_, err := http.Get(url)
	assert.Error(t, err, "nothing listens after the stop")
}

// The viewer shows a kata game on its line board, with the game's own rules.
func TestViewKata(t *testing.T) {
	rec := playRecord(t, env.Kata(), 5)
	var b bytes.Buffer
	_, err := rec.WriteTo(&b)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "kata.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	v, err := loadViewer(path, 0)
	require.NoError(t, err)
	h, err := v.handler()
	require.NoError(t, err)
	srv := httptest.NewServer(loopbackOnly(h))
	t.Cleanup(srv.Close)
	for _, p := range []int{0, len(rec.Steps)} {
		resp, body := get(t, fmt.Sprintf("%s/board/%d.svg", srv.URL, p))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, 15, strings.Count(string(body), `class="station"`), "position %d: the kata's 15 spaces", p)
		assert.Contains(t, string(body), ">END<")
	}
	_, body := get(t, srv.URL+"/game.json")
	assert.True(t, strings.Contains(string(body), `"rules":"kata"`), "game.json names the kata's rules")
}
