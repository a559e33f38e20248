package positions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/obs"
)

// TestLayout: the reply holds the columns asked for, each of its size,
// and Query fills them in place, behind whatever dst held.
func TestLayout(t *testing.T) {
	g := newGame(t, "standard")
	enc, err := g.Encoder(obs.Compact)
	require.NoError(t, err)
	in := make([]byte, 3*env.PackedSize)
	require.NoError(t, g.Initial(1, env.AnySeat, in))
	cases := []struct {
		name          string
		enc           *obs.Encoder
		mask, returns bool
		keys          []string
	}{
		{"phase and to_move", nil, false, false, []string{"phase", "to_move"}},
		{"everything", enc, true, true, []string{"phase", "to_move", "mask", "returns", "obs"}},
		{"mask only", nil, true, false, []string{"phase", "to_move", "mask"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := Query{Encoder: tc.enc, Seat: -1}
			prefix := []byte{0xc0}
			out := q.Layout(prefix, 3, 2, tc.mask, tc.returns)
			require.NoError(t, g.Query(newPool(t), in, &q))
			assert.Equal(t, prefix, out[:1], "dst's bytes stay")
			var m map[string][]byte
			require.NoError(t, msgpack.Unmarshal(out[1:], &m))
			assert.Len(t, m, len(tc.keys))
			want := map[string]int{"phase": 3, "to_move": 3, "mask": 3 * env.NumActions, "returns": 4 * 3 * 2}
			if tc.enc != nil {
				want["obs"] = 4 * 3 * enc.Size()
			}
			for _, k := range tc.keys {
				assert.Len(t, m[k], want[k], k)
			}
			// The same query into columns of its own: Layout's were filled in place.
			own := Query{Encoder: tc.enc, Seat: -1, Phase: make([]byte, 3), ToMove: make([]byte, 3)}
			if tc.mask {
				own.Mask = make([]byte, 3*env.NumActions)
			}
			if tc.returns {
				own.Returns = make([]byte, 4*3*2)
			}
			if tc.enc != nil {
				own.Obs = make([]byte, 4*3*enc.Size())
			}
			require.NoError(t, g.Query(newPool(t), in, &own))
			for k, v := range map[string][]byte{"phase": own.Phase, "to_move": own.ToMove, "mask": own.Mask, "returns": own.Returns, "obs": own.Obs} {
				if v != nil {
					assert.Equal(t, v, m[k], k)
				}
			}
			per := 2 + map[bool]int{true: env.NumActions}[tc.mask] + map[bool]int{true: 8}[tc.returns]
			if tc.enc != nil {
				per += 4 * enc.Size()
			}
			assert.Equal(t, per, q.RowBytes(2, tc.mask, tc.returns))
		})
	}
}
