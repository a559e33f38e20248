package render

import (
	"bytes"
	"encoding/xml"
	"flag"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

var update = flag.Bool("update", false, "rewrite the golden SVGs under testdata/")

// goldenCase is one position rendered to testdata/NAME.svg.
type goldenCase struct {
	name  string
	state env.State
	opts  Options
}

func goldenCases(t *testing.T) []goldenCase {
	opening, err := env.New(env.Standard(), 1, 0)
	require.NoError(t, err)

	legal := midGame(t)

	capture := midGame(t)
	capEv := apply(t, &capture, "yut@13") // 13 -> 17 over C3, captures seat 1's two

	four := fourSeats(t)
	finEv := apply(t, &four, "gae@28") // 28 -> past HOME: finished

	over := lastPiece(t)
	overEv := apply(t, &over, "do@0") // seat 1 finishes its last piece and wins

	kata := kataBoard(t)
	kataEv := apply(t, &kata, "gae@6") // 6 -> 8 on a line, captures seat 1's two

	return []goldenCase{
		{"opening", opening, Options{}},
		{"kata-line", kata, Options{LastMove: &kataEv, Numbers: true, Caption: kataEv.String()}},
		{"legal-moves", legal, Options{Legal: true, Numbers: true}},
		{"capture-arrow", capture, Options{LastMove: &capEv, Caption: capEv.String()}},
		{"four-seats-finish", four, Options{LastMove: &finEv, Legal: true, Caption: finEv.String()}},
		{"game-over", over, Options{LastMove: &overEv, Numbers: true, Caption: overEv.String()}},
	}
}

func TestGoldenSVG(t *testing.T) {
	for _, tc := range goldenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got := SVG(&tc.state, tc.opts)
			path := filepath.Join("testdata", tc.name+".svg")
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./render -run TestGoldenSVG -update to create it")
			assert.Equal(t, string(want), string(got), "SVG of %s changed; if on purpose, rerun with -update and look at the files", tc.name)
		})
	}
}

func TestSVGDeterministic(t *testing.T) {
	for _, tc := range goldenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			first := SVG(&tc.state, tc.opts)
			cp := tc.state // a copy of the value is the same state
			assert.Equal(t, first, SVG(&cp, tc.opts))
			var w bytes.Buffer
			require.NoError(t, WriteSVG(&w, &tc.state, tc.opts))
			assert.Equal(t, first, w.Bytes())
			// Many goroutines at once: same bytes, and no race on the fonts.
			var wg sync.WaitGroup
			outs := make([][]byte, 4)
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i] = SVG(&tc.state, tc.opts)
				}()
			}
			wg.Wait()
			for _, o := range outs {
				assert.Equal(t, first, o)
			}
		})
	}
}

// svgGroup is a <g> element with its class and data-* attributes.
type svgGroup struct {
	class string
	data  map[string]string
	text  []string // the text of <text> elements inside
}

// parseSVG checks that b is well-formed XML with an <svg> root of the right
// size, and returns its classed groups in document order.
func parseSVG(t *testing.T, b []byte) []svgGroup {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var groups []svgGroup
	var open []int // indexes into groups of the open <g> elements (-1 for unclassed)
	inText := false
	root := true
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is not well-formed XML")
		switch v := tok.(type) {
		case xml.StartElement:
			if root {
				require.Equal(t, "svg", v.Name.Local)
				attrs := map[string]string{}
				for _, a := range v.Attr {
					attrs[a.Name.Local] = a.Value
				}
				assert.Equal(t, strconv.Itoa(Width), attrs["width"])
				assert.Equal(t, strconv.Itoa(Height), attrs["height"])
				root = false
			}
			switch v.Name.Local {
			case "g":
				g := svgGroup{data: map[string]string{}}
				for _, a := range v.Attr {
					if a.Name.Local == "class" {
						g.class = a.Value
					} else if k, ok := strings.CutPrefix(a.Name.Local, "data-"); ok {
						g.data[k] = a.Value
					}
				}
				groups = append(groups, g)
				open = append(open, len(groups)-1)
			case "text":
				inText = true
			}
		case xml.EndElement:
			switch v.Name.Local {
			case "g":
				open = open[:len(open)-1]
			case "text":
				inText = false
			}
		case xml.CharData:
			if inText && len(open) > 0 {
				i := open[len(open)-1]
				groups[i].text = append(groups[i].text, string(v))
			}
		}
	}
	return groups
}

func byClass(groups []svgGroup, class string) []svgGroup {
	var out []svgGroup
	for _, g := range groups {
		if g.class == class {
			out = append(out, g)
		}
	}
	return out
}

// TestSVGShowsTheState reads the SVG back and compares it with the state:
// every stack, every seat's hand and finished pieces, the pool, the legal
// actions and the last move.
func TestSVGShowsTheState(t *testing.T) {
	for _, tc := range goldenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			s := &tc.state
			groups := parseSVG(t, SVG(s, tc.opts))

			var want []map[string]string
			for st := env.Station(0); st < env.NumStations; st++ {
				if seat, h, route, ok := s.StackAt(st); ok {
					want = append(want, map[string]string{"seat": strconv.Itoa(seat), "station": strconv.Itoa(int(st)),
						"height": strconv.Itoa(h), "route": route.String()})
				}
			}
			var got []map[string]string
			for _, g := range byClass(groups, "stack") {
				got = append(got, g.data)
			}
			assert.Equal(t, want, got, "stacks")

			seats := byClass(groups, "seat")
			require.Len(t, seats, s.Rules().Players)
			for seat, g := range seats {
				assert.Equal(t, strconv.Itoa(s.Hand(seat)), g.data["hand"], "seat %d hand", seat)
				assert.Equal(t, strconv.Itoa(s.Finished(seat)), g.data["finished"], "seat %d finished", seat)
				assert.Equal(t, strconv.Itoa(s.Place(seat)), g.data["place"], "seat %d place", seat)
				board, _ := strconv.Atoi(g.data["board"])
				assert.Equal(t, s.Rules().Pieces, s.Hand(seat)+s.Finished(seat)+board, "seat %d pieces add up", seat)
			}

			pool := byClass(groups, "pool")
			require.Len(t, pool, 1)
			p := s.Pool()
			var counts []string
			for _, n := range p {
				counts = append(counts, strconv.Itoa(int(n)))
			}
			assert.Equal(t, strings.Join(counts, ","), pool[0].data["pool"])

			legal := byClass(groups, "legal")
			if tc.opts.Legal && s.Phase() == env.PhaseMove {
				require.Len(t, legal, 1)
				var ids []string
				for _, a := range s.LegalActions(nil) {
					ids = append(ids, strconv.Itoa(int(a)))
				}
				assert.Equal(t, strings.Join(ids, ","), legal[0].data["actions"])
			} else {
				assert.Empty(t, legal)
			}

			moves := byClass(groups, "last-move")
			if tc.opts.LastMove == nil {
				assert.Empty(t, moves)
				return
			}
			ev := tc.opts.LastMove
			require.Len(t, moves, 1)
			to := strconv.Itoa(int(ev.To))
			if ev.Finished > 0 {
				to = "finish"
			}
			assert.Equal(t, map[string]string{"seat": strconv.Itoa(int(ev.Seat)), "from": strconv.Itoa(int(ev.From)), "to": to}, moves[0].data)
			caption := byClass(groups, "caption")
			require.Len(t, caption, 1)
			assert.Equal(t, strings.Fields(ev.String()), strings.Fields(strings.Join(caption[0].text, " ")), "the caption holds the event's words")
		})
	}
}

func TestSVGOptionsChangeOutput(t *testing.T) {
	s := midGame(t)
	base := SVG(&s, Options{})
	tests := []struct {
		name string
		opts Options
		mark string
	}{
		{"legal", Options{Legal: true}, `class="legal"`},
		{"numbers", Options{Numbers: true}, `>28</text>`},
		{"caption", Options{Caption: "hello board"}, `>hello board</text>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.NotContains(t, string(base), tc.mark)
			assert.Contains(t, string(SVG(&s, tc.opts)), tc.mark)
		})
	}
}

func TestSVGEscapesText(t *testing.T) {
	s := midGame(t)
	caption := "a <b>&\"c\" 'd'\x00\x07 \xff end"
	b := SVG(&s, Options{Caption: caption})
	groups := parseSVG(t, b) // must stay well-formed
	cap := byClass(groups, "caption")
	require.Len(t, cap, 1)
	got := strings.Join(cap[0].text, " ")
	assert.Contains(t, got, `a <b>&"c" 'd'`)
	assert.Contains(t, got, "\uFFFD end", "invalid UTF-8 is replaced")
	assert.NotContains(t, string(b), "\x00")
	assert.NotContains(t, string(b), "<b>")
}

func TestSVGOfNothing(t *testing.T) {
	tests := []struct {
		name  string
		state *env.State
	}{
		{"nil state", nil},
		{"zero state", &env.State{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			groups := parseSVG(t, SVG(tc.state, Options{Legal: true, LastMove: &env.Event{Kind: env.EventMove, From: 99}}))
			assert.Empty(t, byClass(groups, "stack"))
			assert.Empty(t, byClass(groups, "seat"))
			assert.Empty(t, byClass(groups, "last-move"), "a move off the board draws no arrow")
			assert.Len(t, byClass(groups, "station"), env.NumStations)
			status := byClass(groups, "status")
			require.Len(t, status, 1)
			assert.Contains(t, status[0].text, "No game")
		})
	}
}

func TestSVGStatus(t *testing.T) {
	opening, err := env.New(env.Standard(), 1, 1)
	require.NoError(t, err)
	mid := midGame(t)
	over := lastPiece(t)
	apply(t, &over, "do@0")
	tests := []struct {
		name  string
		state env.State
		want  string
	}{
		{"throw", opening, "Seat 1 (B) to throw"},
		{"move", mid, "Seat 0 (A) to move"},
		{"over", over, "Seat 1 (B) wins"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := byClass(parseSVG(t, SVG(&tc.state, Options{})), "status")
			require.Len(t, status, 1)
			assert.Equal(t, tc.want, status[0].text[0])
			assert.Equal(t, tc.state.Phase().String(), status[0].data["phase"])
		})
	}
}

// The cross says beside HOME that the pieces start and finish there, with
// an arrow up the right side: the way they go. A line has START and END.
func TestSVGHomeMarker(t *testing.T) {
	cross, err := env.New(env.Standard(), 1, 1)
	require.NoError(t, err)
	dir := byClass(parseSVG(t, SVG(&cross, Options{})), "direction")
	require.Len(t, dir, 1)
	assert.Equal(t, []string{"start & finish at"}, dir[0].text)
	line := kataBoard(t)
	assert.Empty(t, byClass(parseSVG(t, SVG(&line, Options{})), "direction"))
}

// Names names the seats in the panel, in place of "Seat N"; seats it has no
// name for keep "Seat N", and a long name is cut to fit.
func TestSVGNames(t *testing.T) {
	opening, err := env.New(env.Standard(), 1, 1)
	require.NoError(t, err)
	mid := midGame(t)
	over := lastPiece(t)
	apply(t, &over, "do@0")
	long := "net:" + strings.Repeat("very-long-network-name/", 4) + "final.onnx (B)"
	tests := []struct {
		name   string
		state  env.State
		names  []string
		status string
		seats  []string
	}{
		{"throw", opening, []string{"You", "greedy (B)"}, "To throw: greedy (B)", []string{"You", "greedy (B)"}},
		{"move", mid, []string{"You", "greedy (B)"}, "To move: You", []string{"You", "greedy (B)"}},
		{"over", over, []string{"You", "greedy (B)"}, "Winner: greedy (B)", []string{"You", "greedy (B)"}},
		{"nil", mid, nil, "Seat 0 (A) to move", []string{"Seat 0", "Seat 1"}},
		{"one name short", mid, []string{"", "greedy (B)"}, "Seat 0 (A) to move", []string{"Seat 0", "greedy (B)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := parseSVG(t, SVG(&tc.state, Options{Names: tc.names}))
			status := byClass(g, "status")
			require.Len(t, status, 1)
			assert.Equal(t, tc.status, status[0].text[0])
			seats := byClass(g, "seat")
			require.Len(t, seats, len(tc.seats))
			for i, want := range tc.seats {
				require.GreaterOrEqual(t, len(seats[i].text), 2)
				assert.Equal(t, want, seats[i].text[1], "seat %d: its letter, then its name", i)
			}
		})
	}
	t.Run("long name", func(t *testing.T) {
		g := parseSVG(t, SVG(&opening, Options{Names: []string{"You", long}}))
		status := byClass(g, "status")[0].text[0]
		assert.True(t, strings.HasPrefix(status, "To throw: net:very-long"), status)
		assert.True(t, strings.HasSuffix(status, "..."), status)
		f := newFaces()
		defer f.close()
		assert.LessOrEqual(t, f.measure(status, 17, true), float64(panelW-8))
		seat := byClass(g, "seat")[1].text
		assert.True(t, strings.HasPrefix(seat[1], "net:") && strings.HasSuffix(seat[1], "..."), seat)
		assert.LessOrEqual(t, f.measure(seat[1], 14, true), float64(panelW-42))
	})
}

func TestSVGLongPool(t *testing.T) {
	s := position(t, env.Position{Rules: env.Standard(), Phase: env.PhaseMove,
		Pool: [env.NumThrows]int{env.Yut: 9, env.Mo: 3, env.Gae: 1}, Hand: [env.MaxPlayers]int{4, 4}})
	pool := byClass(parseSVG(t, SVG(&s, Options{})), "pool")
	require.Len(t, pool, 1)
	assert.Len(t, pool[0].text, 1+maxPoolBoxes, "the label and ten boxes")
	assert.Equal(t, "+4", pool[0].text[len(pool[0].text)-1], "13 results: nine shown, the rest summed")
	assert.Equal(t, "0,0,1,0,9,3", pool[0].data["pool"])
}

func BenchmarkSVG(b *testing.B) {
	s, ev := playedGame(b, 3, 30)
	b.ReportAllocs()
	for b.Loop() {
		_ = SVG(&s, Options{LastMove: &ev, Legal: true})
	}
}

// FuzzOptions renders a position with arbitrary last-move events and
// captions: no panic, and the SVG stays well-formed.
func FuzzOptions(f *testing.F) {
	f.Add(uint8(1), uint8(2), uint8(3), uint8(5), uint8(0), uint8(0), uint8(0), int8(0), int8(-1), false, "seat 0: gae")
	f.Add(uint8(1), uint8(5), uint8(0), uint8(0), uint8(0), uint8(1), uint8(0), int8(1), int8(-1), false, "")
	f.Add(uint8(1), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), int8(0), int8(0), true, "")
	f.Add(uint8(9), uint8(200), uint8(255), uint8(99), uint8(7), uint8(3), uint8(9), int8(-5), int8(7), true, "\xff<&>")
	base := midGame(f)
	f.Fuzz(func(t *testing.T, kind, thr, from, to, route, fin, capt uint8, seat, cseat int8, entered bool, caption string) {
		ev := env.Event{Kind: env.EventKind(kind % 3), Throw: env.Throw(thr), From: env.Station(from), To: env.Station(to),
			FromRoute: env.Route(route), Finished: fin, Captured: capt, Seat: seat, CapturedSeat: cseat, Entered: entered}
		s := base
		opts := Options{LastMove: &ev, Legal: true, Numbers: true, Caption: caption}
		parseSVG(t, SVG(&s, opts))
		require.Len(t, RGB(&s, opts, nil), RGBSize)
	})
}

// A line board is drawn as a line: one station per space, START and END,
// its obstacles marked, and stacks where the engine has them.
func TestLineBoard(t *testing.T) {
	s := kataBoard(t)
	svg := string(SVG(&s, Options{Numbers: true, Legal: true}))
	assert.Equal(t, 15, strings.Count(svg, `class="station"`), "15 spaces")
	for _, want := range []string{">START<", ">END<", ">skip<", ">-3<", `data-station="8"`} {
		assert.Contains(t, svg, want)
	}
	assert.NotContains(t, svg, ">HOME<")
	// Neighbouring spaces are neighbours in the picture, and the raster agrees with the layout.
	g := geomOf(s.Rules())
	for i := 1; i < g.n; i++ {
		a, b := g.pts[i-1], g.pts[i]
		assert.True(t, (a.Y == b.Y && abs(a.X-b.X) == boardSide/4) || (a.X == b.X && b.Y > a.Y), "spaces %d and %d: one step along a row, or down to the next", i-1, i)
	}
	img := Image(&s, Options{})
	p := g.pts[3]
	assert.Equal(t, color.RGBAModel.Convert(colStation), img.At(int(p.X), int(p.Y)), "an empty space")
	p = g.pts[8]
	c, _ := SeatColor(1)
	assert.Equal(t, color.RGBAModel.Convert(c), img.At(int(p.X)-6, int(p.Y)+6), "seat 1's stack on space 8")
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
