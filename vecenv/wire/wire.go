package wire

import (
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/vecenv"
)

// ResultBytes is the largest step result of a batch of cfg with info off,
// in bytes, for observations of obsSize floats: its rows
// (vecenv.Config.RowBytes) and room for the keys.
func ResultBytes(cfg vecenv.Config, obsSize int) int {
	return 320 + cfg.N*cfg.RowBytes(obsSize)
}

// ReplyBytes is what a step or reset reply of b may need: its size with
// info off, or with info on the most a reply may grow to (AppendInfo stops
// past maxFrame, and the caller then refuses the reply).
func ReplyBytes(b *vecenv.Batch, record bool, maxFrame int) int {
	if record {
		return 2 * maxFrame
	}
	return ResultBytes(b.Config(), b.ObsSize())
}

// AppendRows appends the keys and values obs, mask and to_move of rows
// and, for a batch with an opponent mixture, opponent and pending: RowKeys
// of them.
func AppendRows(out []byte, rows *vecenv.Rows) []byte {
	out = AppendRow(out, rows.Obs, rows.Mask, rows.ToMove)
	if rows.Opponent != nil {
		out = AppendMixed(out, rows.Opponent, rows.Pending)
	}
	return out
}

// RowKeys returns the number of keys AppendRows writes for rows.
func RowKeys(rows *vecenv.Rows) int {
	if rows.Opponent != nil {
		return 5
	}
	return 3
}

// AppendMixed appends the keys and values opponent and pending of one or
// more rows of a batch with an opponent mixture.
func AppendMixed(out []byte, opponent, pending []uint8) []byte {
	out = msgp.AppendStr(out, "opponent")
	out = msgp.AppendBin(out, opponent)
	out = msgp.AppendStr(out, "pending")
	return msgp.AppendBin(out, pending)
}

// AppendRow appends the keys and values obs, mask and to_move of one or
// more rows.
func AppendRow(out []byte, o []float32, m []uint8, toMove []int8) []byte {
	out = msgp.AppendStr(out, "obs")
	out = msgp.AppendF32Bin(out, o)
	out = msgp.AppendStr(out, "mask")
	out = msgp.AppendBin(out, m)
	out = msgp.AppendStr(out, "to_move")
	return msgp.AppendI8Bin(out, toMove)
}

// AppendReset appends reset's result map for b after a Reset: its rows,
// its seeds and, when record, the info list (see AppendInfo).
func AppendReset(out []byte, b *vecenv.Batch, record bool, maxFrame int) []byte {
	keys := RowKeys(b.Rows()) + 1
	if record {
		keys++
	}
	out = msgp.AppendMapHeader(out, keys)
	out = AppendRows(out, b.Rows())
	out = appendSeeds(out, b)
	if record {
		out = AppendInfo(out, b, maxFrame)
	}
	return out
}

// AppendSharedReset appends reset's result map for a shared batch (its
// rows are in the region): its seeds and, when record, the info list.
func AppendSharedReset(out []byte, b *vecenv.Batch, record bool, maxFrame int) []byte {
	out = msgp.AppendMapHeader(out, 1+b2i(record))
	out = appendSeeds(out, b)
	if record {
		out = AppendInfo(out, b, maxFrame)
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func appendSeeds(out []byte, b *vecenv.Batch) []byte {
	out = msgp.AppendStr(out, "seeds")
	out = msgp.AppendArrayHeader(out, len(b.Seeds()))
	for _, s := range b.Seeds() {
		out = msgp.AppendUint(out, s)
	}
	return out
}

// AppendStep appends step's result map for b after a Step: its rows,
// rewards and flags, the final_* rows under same-step autoreset and, when
// record, the info list (see AppendInfo).
func AppendStep(out []byte, b *vecenv.Batch, record bool, maxFrame int) []byte {
	sameStep := b.Config().Autoreset == vecenv.SameStep
	keys := RowKeys(b.Rows()) + 3
	if sameStep {
		keys += 3
	}
	if record {
		keys++
	}
	rows := b.Rows()
	out = msgp.AppendMapHeader(out, keys)
	out = AppendRows(out, rows)
	out = msgp.AppendStr(out, "reward")
	out = msgp.AppendF32Bin(out, rows.Reward)
	out = msgp.AppendStr(out, "terminated")
	out = msgp.AppendBin(out, rows.Terminated)
	out = msgp.AppendStr(out, "truncated")
	out = msgp.AppendBin(out, rows.Truncated)
	if sameStep {
		out = msgp.AppendStr(out, "final_obs")
		out = msgp.AppendF32Bin(out, rows.FinalObs)
		out = msgp.AppendStr(out, "final_mask")
		out = msgp.AppendBin(out, rows.FinalMask)
		out = msgp.AppendStr(out, "final_to_move")
		out = msgp.AppendI8Bin(out, rows.FinalToMove)
	}
	if record {
		out = AppendInfo(out, b, maxFrame)
	}
	return out
}

// AppendInfo appends the key info and its list: one map per env (see
// AppendInfoMap), with a final_info map for an env that autoreset in the
// same step. It stops adding maps once out is longer than maxFrame: the
// reply is then too large, and the caller refuses it.
func AppendInfo(out []byte, b *vecenv.Batch, maxFrame int) []byte {
	out = msgp.AppendStr(out, "info")
	out = msgp.AppendArrayHeader(out, b.N())
	for i := range b.N() {
		if len(out) > maxFrame {
			break // refused by the caller: stop before the buffer outgrows its reservation
		}
		cur, events, final, finalEvents := b.Info(i)
		out = AppendInfoMap(out, b, cur, events, final != nil)
		if final != nil {
			out = msgp.AppendStr(out, "final_info")
			out = AppendInfoMap(out, b, *final, finalEvents, false)
		}
	}
	return out
}

// AppendInfoMap appends one env's info map: its episode counters, places,
// learner (mode single), opponent (a mixture), luck (Config.Luck), illegal
// flag and events; withFinal leaves room for
// a final_info key the caller appends.
func AppendInfoMap(out []byte, b *vecenv.Batch, f vecenv.EpisodeInfo, events []env.Event, withFinal bool) []byte {
	single := b.Config().Mode == vecenv.Single
	mixed := b.Config().Mixed()
	keys := 9
	if single {
		keys++
	}
	if mixed {
		keys++
	}
	if withFinal {
		keys++
	}
	lucky := b.Config().Luck != nil
	if lucky {
		keys++
	}
	out = msgp.AppendMapHeader(out, keys)
	out = msgp.AppendStr(out, "episode")
	out = msgp.AppendUint(out, f.Episode)
	out = msgp.AppendStr(out, "seed")
	out = msgp.AppendUint(out, f.Seed)
	out = msgp.AppendStr(out, "steps")
	out = msgp.AppendUint(out, uint64(f.Steps))
	out = msgp.AppendStr(out, "decisions")
	out = msgp.AppendInt(out, int64(f.Decisions))
	out = msgp.AppendStr(out, "throws")
	out = msgp.AppendInt(out, int64(f.Throws))
	out = msgp.AppendStr(out, "winner")
	out = msgp.AppendInt(out, int64(f.Winner))
	out = msgp.AppendStr(out, "places")
	p := b.Config().Rules.Players
	out = msgp.AppendArrayHeader(out, p)
	for s := range p {
		out = msgp.AppendInt(out, int64(f.Places[s]))
	}
	if single {
		out = msgp.AppendStr(out, "learner")
		out = msgp.AppendInt(out, int64(f.Learner))
	}
	if mixed {
		out = msgp.AppendStr(out, "opponent")
		out = msgp.AppendInt(out, int64(f.Opponent))
	}
	if lucky {
		out = msgp.AppendStr(out, "luck")
		out = msgp.AppendArrayHeader(out, p)
		for s := range p {
			out = msgp.AppendFloat64(out, f.Luck[s])
		}
	}
	out = msgp.AppendStr(out, "illegal")
	out = msgp.AppendBool(out, f.Illegal)
	out = msgp.AppendStr(out, "events")
	out = msgp.AppendArrayHeader(out, len(events))
	for _, ev := range events {
		out = AppendEvent(out, ev)
	}
	return out
}

// AppendEvent appends one engine event as a map with the keys of
// env.EventJSON, always present (0 or false when the JSON omits them), and
// for a move its push's origin and captures (pushed_from, push_captured,
// push_captured_seat) when it was pushed back.
func AppendEvent(out []byte, ev env.Event) []byte {
	v := msgp.Obj{
		{"kind", ev.Kind.String()},
		{"seat", int(ev.Seat)},
		{"throw", ev.Throw.String()},
	}
	if ev.Kind == env.EventMove {
		v = append(v, msgp.KV{"action", int(ev.Action)})
		if !ev.Entered {
			v = append(v, msgp.KV{"from", int(ev.From)})
		}
		// captured counts every capture of the move, a push's included (as
		// EventJSON does); captured_seat is the first victim's seat.
		capSeat := int(ev.CapturedSeat)
		if ev.Captured == 0 {
			capSeat = -1
			if ev.PushCaptured > 0 {
				capSeat = int(ev.PushCapturedSeat)
			}
		}
		v = append(v, msgp.Obj{
			{"to", int(ev.To)}, {"entered", ev.Entered}, {"moved", int(ev.Moved)}, {"shortcut", ev.Shortcut},
			{"joined", ev.Joined}, {"captured", int(ev.Captured) + int(ev.PushCaptured)}, {"captured_seat", capSeat},
			{"finished", int(ev.Finished)}, {"loses_turn", ev.LosesTurn}, {"pushed", int(ev.Pushed)},
		}...)
		if ev.Pushed > 0 {
			pushSeat := -1
			if ev.PushCaptured > 0 {
				pushSeat = int(ev.PushCapturedSeat)
			}
			v = append(v, msgp.Obj{{"pushed_from", int(ev.PushedFrom)}, {"push_captured", int(ev.PushCaptured)}, {"push_captured_seat", pushSeat}}...)
		}
	}
	v = append(v, msgp.Obj{
		{"bonus_throw", ev.BonusThrow}, {"discarded", int(ev.Discarded)}, {"turn_ended", ev.TurnEnded},
		{"turns_missed", int(ev.TurnsMissed)}, {"game_over", ev.GameOver}, {"text", ev.String()},
	}...)
	return msgp.AppendValue(out, v)
}
