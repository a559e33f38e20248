package env_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

func TestRender(t *testing.T) {
	s := setup{rules: "players=3", seat: 1, pool: []env.Throw{backDo, yut, gae}, fin: [4]int{1, 0, 2},
		stacks: []env.Stack{stack(0, 22, cc1, 2), stack(1, 0, outer, 1), stack(1, 5, c1, 1),
			stack(2, 13, outer, 1), stack(0, 26, c2, 1), stack(2, 19, c1, 1)}}.state(t)
	// The board of RULES.md: B waits on HOME and stands on C1, A2 on the
	// centre and A on 26, C on 13 and 19; empty corners and the centre are o.
	want := `stations                            board
10    9     8     7     6     5     o     .     .     .     .     B
11   25                  20   4     .    .                   .    .
12        26        21        3     .         A         .         .
               22                                  A2
13        23        27        2     C         .         .         .
14   24                  28   1     .    .                   .    .
15    16    17    18    19    0     o     .     .     .     C     B

  seat 0 (A): hand 0, finished 1, board [2x22(CENTRE/C1) 1x26(C2)]
> seat 1 (B): hand 2, finished 0, board [1x0(OUTER) 1x5(C1)]
  seat 2 (C): hand 0, finished 2, board [1x13(OUTER) 1x19(C1)]
seat 1 (B) to move; pool [back-do gae yut]
`
	assert.Equal(t, want, s.Render())
	assert.Equal(t, want, s.String())
	assert.Equal(t, want[:strings.Index(want, "\n\n")+1], s.RenderBoard(), "RenderBoard is the drawing alone")

	over := setup{rules: "pieces=1", pool: []env.Throw{gae}, stacks: []env.Stack{stack(0, 19, outer, 1)}}.state(t)
	_, err := over.Apply(act(gae, 19))
	assert.NoError(t, err)
	assert.Contains(t, over.Render(), "\n  seat 0 (A): hand 0, finished 1, board [], place 1\n")
	assert.Contains(t, over.Render(), "game over: seat 0 (A) wins after 1 decisions\n")
}

// RenderBoard is what Render draws above the seats, on every board.
func TestRenderBoard(t *testing.T) {
	tests := []struct {
		name, rules string
		want        string
	}{
		{"cross", "standard", "stations"},
		{"cross with obstacles", "obstacles=4:skip+9:back2", "obstacles: 4:skip+9:back2\n"},
		{"line", "kata", "[[],[],[],"},
		{"line with obstacles", "kata,obstacles=4:skip", "obstacles: 4:skip\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := env.ParseRules(tc.rules)
			require.NoError(t, err)
			s, err := env.New(r, 1, env.AnySeat)
			require.NoError(t, err)
			board := s.RenderBoard()
			assert.Contains(t, board, tc.want)
			assert.NotContains(t, board, "seat ")
			assert.True(t, strings.HasPrefix(s.Render(), board+"\n"), "Render begins with RenderBoard and a blank line")
		})
	}
}
