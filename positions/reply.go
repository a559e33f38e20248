package positions

import (
	"slices"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
)

// AppendBin appends a msgpack bin of n zero bytes to dst and returns the
// result and a view of the n bytes, for workers to fill in place. Appending
// may move dst, which makes the views of earlier calls stale: reserve the
// room first (slices.Grow) when several are kept at once, as Layout does.
func AppendBin(dst []byte, n int) (out, bin []byte) {
	dst = msgp.AppendBinHeader(dst, n)
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	return dst, dst[start : start+n]
}

// RowBytes is one state's share of the reply Layout makes: phase and
// to_move, and the mask, the returns of players seats and q.Encoder's
// observation when asked for.
func (q *Query) RowBytes(players int, mask, returns bool) int {
	per := 2
	if mask {
		per += env.NumActions
	}
	if returns {
		per += 4 * players
	}
	if q.Encoder != nil {
		per += 4 * q.Encoder.Size()
	}
	return per
}

// Layout appends to dst the socket protocol's query result for n states of
// a game of players seats (protocol.QueryResult): a map of phase, to_move
// and, when asked for, mask, returns and obs (when q.Encoder is set), each
// a bin of zeros, and points q's columns at those bins for Game.Query to
// fill in place. It grows dst once, first, so that the views stay valid.
func (q *Query) Layout(dst []byte, n, players int, mask, returns bool) []byte {
	keys := 2
	for _, on := range []bool{mask, returns, q.Encoder != nil} {
		if on {
			keys++
		}
	}
	// per covers every payload; 256 the keys and headers.
	dst = msgp.AppendMapHeader(slices.Grow(dst, 256+n*q.RowBytes(players, mask, returns)), keys)
	dst, q.Phase = AppendBin(msgp.AppendStr(dst, "phase"), n)
	dst, q.ToMove = AppendBin(msgp.AppendStr(dst, "to_move"), n)
	if mask {
		dst, q.Mask = AppendBin(msgp.AppendStr(dst, "mask"), n*env.NumActions)
	}
	if returns {
		dst, q.Returns = AppendBin(msgp.AppendStr(dst, "returns"), 4*n*players)
	}
	if q.Encoder != nil {
		dst, q.Obs = AppendBin(msgp.AppendStr(dst, "obs"), 4*n*q.Encoder.Size())
	}
	return dst
}
