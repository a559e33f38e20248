package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/render"
)

func svgNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestReplaySVG(t *testing.T) {
	path, recs := writeRecords(t, t.TempDir(), 2)
	tests := []struct {
		name  string
		args  []string
		games []int
	}{
		{"one game, text output too", []string{"--game", "1"}, []int{1}},
		{"every game, checked", []string{"--game", "-1", "--check"}, []int{0, 1}},
		{"json output too, every game by default", []string{"--format", "json"}, []int{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "boards")
			var out, errb bytes.Buffer
			code := run(append([]string{"replay", path, "--svg", dir}, tc.args...), &out, &errb)
			require.Equal(t, 0, code, "stderr: %s", errb.String())
			assert.NotEmpty(t, out.String(), "the usual output is still printed")

			names := svgNames(t, dir)
			want := 0
			for _, g := range tc.games {
				want += len(recs[g].Steps) + 1
			}
			require.Len(t, names, want, "one file per event plus the start, per game")
			assert.True(t, sort.StringsAreSorted(names))

			for _, g := range tc.games {
				var states []env.State
				var events []env.Event
				_, err := recs[g].Replay(func(step int, ev env.Event, s *env.State) error {
					states = append(states, *s)
					events = append(events, ev)
					return nil
				})
				require.NoError(t, err)
				for _, p := range []int{0, 1, len(states) - 1} {
					name := filepath.Join(dir, fmt.Sprintf("game%d-%04d.svg", g, p))
					got, err := os.ReadFile(name)
					require.NoError(t, err)
					opts := render.Options{Legal: true, Numbers: true, Caption: fmt.Sprintf("start: seat %d begins", states[0].StartSeat())}
					if p > 0 {
						opts.LastMove = &events[p]
						opts.Caption = fmt.Sprintf("%d: %v", p-1, events[p])
					}
					assert.Equal(t, string(render.SVG(&states[p], opts)), string(got), "%s", name)
				}
			}
		})
	}
}

func TestReplaySVGErrors(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeRecords(t, dir, 1)
	file := filepath.Join(dir, "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"replay", path, "--svg", file}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "--svg")
	assert.True(t, strings.Contains(errb.String(), "not a directory") || strings.Contains(errb.String(), "exists"), errb.String())
}
