//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/browsertest"
	"github.com/yutenv/yutenv/internal/israce"
	"github.com/yutenv/yutenv/render"
)

// Where style.css puts the board on the page, in CSS pixels.
const pageBoardX, pageBoardY = 16, 72

// runChromium runs headless Chromium on url with extra flags (--dump-dom or
// --screenshot=...) in its own process group with a fresh profile, waits for
// it, kills whatever it left behind, and returns its standard output.
func runChromium(t *testing.T, bin, url string, extra ...string) []byte {
	t.Helper()
	profile := t.TempDir()
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--no-proxy-server", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir=" + profile, "--window-size=1280,860", "--force-device-scale-factor=1",
		"--force-color-profile=srgb", "--virtual-time-budget=15000",
	}
	args = append(append(args, extra...), url)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+browsertest.TempDir(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Start()
	require.NoError(t, err)
	pgid := cmd.Process.Pid
	err = cmd.Wait()
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // helpers of ours still alive, if any
	tail := stderr.String()
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	require.NoError(t, err, "chromium failed; its stderr ends:\n%s", tail)
	return stdout.Bytes()
}

// replayed is a record played back: states[p] and events[p] for every position p.
type replayed struct {
	states []env.State
	events []env.Event
}

func replayAll(t *testing.T, rec *env.Record) replayed {
	t.Helper()
	var r replayed
	_, err := rec.Replay(func(step int, ev env.Event, s *env.State) error {
		r.states = append(r.states, *s)
		r.events = append(r.events, ev)
		return nil
	})
	require.NoError(t, err)
	return r
}

// nextMove mirrors app.js: the next position in direction dir reached by a move.
func (r replayed) nextMove(from, dir int) int {
	for q := from + dir; q >= 0 && q < len(r.events); q += dir {
		if q > 0 && r.events[q].Kind == env.EventMove {
			return q
		}
	}
	if dir > 0 {
		return len(r.events) - 1
	}
	return 0
}

// capturedBy returns how many pieces each seat captured up to position p.
func (r replayed) capturedBy(p int) [env.MaxPlayers]int {
	var c [env.MaxPlayers]int
	for q := 1; q <= p; q++ {
		c[r.events[q].Seat] += int(r.events[q].Captured)
	}
	return c
}

var (
	reLi       = regexp.MustCompile(`<li [^>]*data-pos="(\d+)"[^>]*>([^<]*)</li>`)
	reCurrent  = regexp.MustCompile(`<li [^>]*class="[^"]*\bcurrent\b[^"]*"[^>]*>|<li [^>]*data-pos="\d+"[^>]*class="[^"]*\bcurrent\b`)
	reSeatRow  = regexp.MustCompile(`<tr [^>]*class="seat-row[^"]*"[^>]*>`)
	reStack    = regexp.MustCompile(`<g class="stack"[^>]*>`)
	reData     = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)
	reBody     = regexp.MustCompile(`<body[^>]*>`)
	reEventTxt = regexp.MustCompile(`<p id="event">([^<]*)</p>`)
)

func dataAttrs(tag string) map[string]string {
	m := map[string]string{}
	for _, kv := range reData.FindAllStringSubmatch(tag, -1) {
		m[kv[1]] = kv[2]
	}
	return m
}

// TestViewInBrowser loads the viewer in headless Chromium, walks through the
// game with the keyboard (the page presses the keys named in its URL
// fragment), and compares the page's DOM with the record: the move list in
// words, the current position, the event, each seat's counts and the stacks
// on the board.
func TestViewInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	srv, rec := testViewer(t)
	r := replayAll(t, rec)
	last := len(r.events) - 1
	require.Greater(t, last, 40, "the test game is long enough to walk through")

	start := last / 3
	keys := []string{"ArrowRight", "ArrowRight", "ArrowDown", "ArrowDown", "ArrowLeft", "PageDown", "ArrowUp"}
	want := start
	for _, k := range keys {
		switch k {
		case "ArrowRight":
			want++
		case "ArrowLeft":
			want--
		case "ArrowDown":
			want = r.nextMove(want, 1)
		case "ArrowUp":
			want = r.nextMove(want, -1)
		case "PageDown":
			want += 10
		}
	}
	require.True(t, want > 0 && want < last)

	dom := string(runChromium(t, bin, fmt.Sprintf("%s/#%d&keys=%s", srv.URL, start, strings.Join(keys, ",")), "--dump-dom"))
	require.Contains(t, dom, `id="moves"`, "chromium dumped the viewer's page")

	body := dataAttrs(reBody.FindString(dom))
	require.Equal(t, strconv.Itoa(want), body["pos"], "the keys moved the viewer from %d to position %d", start, want)
	require.Equal(t, "1", body["ready"], "the board of the position was loaded")

	// The move list: the start, then every step of the record in words.
	items := reLi.FindAllStringSubmatch(dom, -1)
	require.Len(t, items, last+1)
	for p, m := range items {
		require.Equal(t, strconv.Itoa(p), m[1])
		if p > 0 {
			assert.Equal(t, r.events[p].String(), html.UnescapeString(m[2]), "move list entry %d", p)
		}
	}
	cur := reCurrent.FindAllString(dom, -1)
	require.Len(t, cur, 1, "exactly one move is marked current")
	assert.Equal(t, strconv.Itoa(want), dataAttrs(cur[0])["pos"])
	ev := reEventTxt.FindStringSubmatch(dom)
	require.NotNil(t, ev)
	assert.Equal(t, fmt.Sprintf("step %d: %s", want-1, r.events[want]), html.UnescapeString(ev[1]))

	// The counts table.
	s := &r.states[want]
	captured := r.capturedBy(want)
	rows := reSeatRow.FindAllString(dom, -1)
	require.Len(t, rows, s.Rules().Players)
	for seat, row := range rows {
		d := dataAttrs(row)
		board := s.Rules().Pieces - s.Hand(seat) - s.Finished(seat)
		assert.Equal(t, map[string]string{
			"seat": strconv.Itoa(seat), "hand": strconv.Itoa(s.Hand(seat)), "board": strconv.Itoa(board),
			"finished": strconv.Itoa(s.Finished(seat)), "captured": strconv.Itoa(captured[seat]),
			"place": strconv.Itoa(s.Place(seat)),
		}, d, "seat %d's row", seat)
	}

	// The board SVG inside the page.
	var got, wantStacks []string
	for _, g := range reStack.FindAllString(dom, -1) {
		d := dataAttrs(g)
		got = append(got, d["seat"]+"@"+d["station"]+"x"+d["height"])
	}
	for st := env.Station(0); st < env.NumStations; st++ {
		if seat, h, _, ok := s.StackAt(st); ok {
			wantStacks = append(wantStacks, fmt.Sprintf("%d@%dx%d", seat, st, h))
		}
	}
	assert.Equal(t, wantStacks, got, "stacks on the board at position %d", want)
}

// near reports whether two colours differ by at most tol in every channel.
func near(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) <= tol && d(a.G, b.G) <= tol && d(a.B, b.B) <= tol
}

// TestViewScreenshot takes a screenshot of the viewer after a key press and
// checks the board's pixels against the record: every stack of the position
// in its owner's colour at its station, no piece colour where the record has
// none, and as many stacks per seat as the record says.
func TestViewScreenshot(t *testing.T) {
	if israce.Enabled {
		t.Skip("checks the viewer's pixels; the viewer's server runs under -race in TestViewInBrowser")
	}
	bin := browsertest.Chromium(t)
	srv, rec := testViewer(t)
	r := replayAll(t, rec)

	// A position after a bonus throw: no arrow and no legal-move marks on
	// the board, so every station shows only what stands on it. The most
	// crowded such position makes the strongest check.
	want, best := -1, -1
	for p := 1; p < len(r.events); p++ {
		s := &r.states[p]
		if r.events[p].Kind != env.EventThrow || s.Phase() != env.PhaseThrow {
			continue
		}
		n := s.NumStacks(0) + s.NumStacks(1)
		if n > best && s.NumStacks(0) > 0 && s.NumStacks(1) > 0 {
			want, best = p, n
		}
	}
	require.Positive(t, want, "the test game has a bonus throw with both seats on the board")

	shot := filepath.Join(t.TempDir(), "view.png")
	if dir := os.Getenv("YUTENV_SCREENSHOT_DIR"); dir != "" {
		shot = filepath.Join(dir, "view.png")
	}
	runChromium(t, bin, fmt.Sprintf("%s/#%d&keys=ArrowRight", srv.URL, want-1), "--screenshot="+shot)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, img.Bounds().Dx(), pageBoardX+render.Width)
	require.GreaterOrEqual(t, img.Bounds().Dy(), pageBoardY+render.Height)
	pixel := func(x, y float64) color.NRGBA {
		return color.NRGBAModel.Convert(img.At(pageBoardX+int(x), pageBoardY+int(y))).(color.NRGBA)
	}
	require.True(t, near(pixel(100, 200), render.BackgroundColor(), 6),
		"the board is not at (%d,%d) in the screenshot %s (pixel %v): did style.css move it?", pageBoardX, pageBoardY, shot, pixel(100, 200))

	s := &r.states[want]
	var seen [env.MaxPlayers]int
	for st := env.Station(0); st < env.NumStations; st++ {
		x, y, _ := render.StationPoint(st)
		c := pixel(x-8, y+6) // inside a stack's disc, clear of its letter
		seat, _, _, ok := s.StackAt(st)
		if ok {
			col, _ := render.SeatColor(seat)
			assert.True(t, near(c, col, 16), "station %d: seat %d's colour %v expected, screenshot has %v", st, seat, col, c)
		}
		for k := 0; k < s.Rules().Players; k++ {
			col, _ := render.SeatColor(k)
			if near(c, col, 16) {
				seen[k]++
				assert.True(t, ok && seat == k, "station %d shows seat %d's colour, the record has no stack of it there", st, k)
			}
		}
	}
	for seat := 0; seat < s.Rules().Players; seat++ {
		assert.Equal(t, s.NumStacks(seat), seen[seat], "stacks of seat %d in the screenshot at position %d", seat, want)
	}
	if t.Failed() {
		t.Logf("screenshot: %s (set YUTENV_SCREENSHOT_DIR to keep it)", shot)
	}
}
