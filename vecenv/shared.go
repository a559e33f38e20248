package vecenv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/yutenv/yutenv/env"
)

// SharedVersion is the version of the shared-memory layout (SharedLayout).
// It changes whenever a field moves, changes type or changes meaning.
const SharedVersion = 1

// SharedMagic opens every shared region: 8 bytes, then the version as a
// little-endian uint32.
const SharedMagic = "YUTSHM\x00\x00"

// sharedAlign aligns every field of a region (a cache line).
const sharedAlign = 64

// SharedField is one field of a shared region: Count values of type Type
// ("u8", "i8", "u32", "i32", "f32", all little-endian) at byte Offset, read
// as an array of Shape (nil: one value).
type SharedField struct {
	Name   string `msgpack:"name"`
	Offset int    `msgpack:"offset"`
	Type   string `msgpack:"type"`
	Shape  []int  `msgpack:"shape"`
	// Dims names the shape's dimensions for people ("N x D"), Doc says
	// what the field holds and who writes it.
	Dims string `msgpack:"-"`
	Doc  string `msgpack:"-"`
}

// Count is the number of values of the field.
func (f SharedField) Count() int {
	n := 1
	for _, d := range f.Shape {
		n *= d
	}
	return n
}

// Bytes is the field's length in bytes.
func (f SharedField) Bytes() int { return f.Count() * typeSize(f.Type) }

func typeSize(t string) int {
	switch t {
	case "u32", "i32", "f32":
		return 4
	}
	return 1
}

// SharedLayout is where a batch's rows, its actions and the doorbell live
// in a shared region (the share method): the one declaration of the
// layout, from which the server, the Python package (which reads the
// offsets from share's result) and docs/PROTOCOL.md take it.
type SharedLayout struct {
	Version int           `msgpack:"version"`
	Size    int           `msgpack:"size"`
	Fields  []SharedField `msgpack:"fields"`
}

// Field returns the named field, or false.
func (l SharedLayout) Field(name string) (SharedField, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return SharedField{}, false
}

// The doorbell words of a region's header, as offsets (each on its own
// cache line, so that the two sides' writes do not share one).
const (
	// SharedReq is the client's request counter: it writes the actions,
	// then the op, then this word (the next value); the server serves a
	// request when it sees the counter change.
	SharedReq = 64
	// SharedOp is the kind of request under SharedReq (SharedOpStep or
	// SharedOpOpponent).
	SharedOp = 68
	// SharedDone is the last request counter the server completed; the
	// rows are those of that request once it equals SharedReq.
	SharedDone = 128
	// SharedAwake is 1 while the server polls SharedReq, 0 while it waits
	// on the socket (the client then rings over the socket).
	SharedAwake = 192
	// SharedArrays is the header's length: the arrays begin there, the
	// actions first.
	SharedArrays = 256
)

// The request kinds of SharedOp.
const (
	SharedOpStep     = 1 // step
	SharedOpOpponent = 2 // opponent_step
)

// SharedLayoutOf returns the layout of a region for a batch of cfg with
// observations of obsSize floats: the header, the actions the client
// writes, and every row of Rows the batch writes.
func SharedLayoutOf(cfg Config, obsSize int) SharedLayout {
	n, a := cfg.N, env.NumActions
	l := SharedLayout{Version: SharedVersion}
	off := 0
	add := func(name, typ, dims, doc string, shape ...int) {
		f := SharedField{Name: name, Offset: off, Type: typ, Shape: shape, Dims: dims, Doc: doc}
		l.Fields = append(l.Fields, f)
		off += f.Bytes()
		off = (off + sharedAlign - 1) / sharedAlign * sharedAlign
	}
	at := func(o int, name, typ, doc string) {
		l.Fields = append(l.Fields, SharedField{Name: name, Offset: o, Type: typ, Dims: "1", Doc: doc})
	}
	at(0, "magic", "u8", "the 8 bytes \"YUTSHM\\0\\0\"")
	l.Fields[0].Shape, l.Fields[0].Dims = []int{8}, "8"
	at(8, "version", "u32", "the layout version")
	at(SharedReq, "req", "u32", "client: the request counter, written after the actions and op")
	at(SharedOp, "op", "u32", "client: 1 step, 2 opponent_step")
	at(SharedDone, "done", "u32", "server: the last request counter served")
	at(SharedAwake, "awake", "u32", "server: 1 while it polls req, 0 while it waits for a socket doorbell")
	off = SharedArrays
	add("actions", "i32", "N", "client: one action per env (little-endian int32)", n)
	add("obs", "f32", "N x D", "server: each row's observation", n, obsSize)
	add("mask", "u8", "N x A", "server: each row's legal actions (0/1)", n, a)
	add("reward", "f32", "N x R", "server: each env's reward", n, cfg.RewardWidth())
	add("terminated", "u8", "N", "server: 1 if the episode ended by the rules", n)
	add("truncated", "u8", "N", "server: 1 if the episode hit max_decisions", n)
	add("to_move", "i8", "N", "server: the seat each row is for", n)
	if cfg.Autoreset == SameStep {
		add("final_obs", "f32", "N x D", "server, same_step only: the terminal rows of episodes that ended", n, obsSize)
		add("final_mask", "u8", "N x A", "server, same_step only: their masks", n, a)
		add("final_to_move", "i8", "N", "server, same_step only: their seats, -1 where none ended", n)
	}
	if cfg.Mixed() {
		add("opponent", "u8", "N", "server, mixtures only: each env's opponent entry", n)
		add("pending", "u8", "N", "server, mixtures only: 1 where a client-played opponent is to move", n)
	}
	l.Size = off
	return l
}

// ErrSharedSize is wrapped when a region is smaller than its layout.
var ErrSharedSize = errors.New("shared region too small")

// Share moves the batch's rows into mem, a region of at least
// SharedLayoutOf(b.Config(), b.ObsSize()).Size bytes aligned to 8, and
// writes its header: from then on every Reset, Step and OpponentStep
// writes its rows there (Rows returns views of mem). The rows so far are
// copied over. The actions stay the batch's own: the server copies them
// from the region, so that a client writing them concurrently cannot
// change them between their check and their use. The caller keeps mem
// mapped for as long as the batch lives. Only little-endian hosts share.
func (b *Batch) Share(mem []byte) (SharedLayout, error) {
	l := SharedLayoutOf(b.cfg, b.d)
	if len(mem) < l.Size {
		return l, fmt.Errorf("%w: %d bytes for a layout of %d", ErrSharedSize, len(mem), l.Size)
	}
	if !littleEndian() {
		return l, errors.New("shared regions need a little-endian host")
	}
	copy(mem, SharedMagic)
	binary.LittleEndian.PutUint32(mem[8:], SharedVersion)
	r := &b.rows
	f32 := func(name string, old []float32) []float32 {
		f, _ := l.Field(name)
		s := unsafe.Slice((*float32)(unsafe.Pointer(&mem[f.Offset])), f.Count())
		copy(s, old)
		return s
	}
	u8 := func(name string, old []uint8) []uint8 {
		f, _ := l.Field(name)
		s := mem[f.Offset : f.Offset+f.Count() : f.Offset+f.Count()]
		copy(s, old)
		return s
	}
	i8 := func(name string, old []int8) []int8 {
		f, _ := l.Field(name)
		s := unsafe.Slice((*int8)(unsafe.Pointer(&mem[f.Offset])), f.Count())
		copy(s, old)
		return s
	}
	r.Obs, r.Mask, r.Reward = f32("obs", r.Obs), u8("mask", r.Mask), f32("reward", r.Reward)
	r.Terminated, r.Truncated, r.ToMove = u8("terminated", r.Terminated), u8("truncated", r.Truncated), i8("to_move", r.ToMove)
	if r.FinalObs != nil {
		r.FinalObs, r.FinalMask, r.FinalToMove = f32("final_obs", r.FinalObs), u8("final_mask", r.FinalMask), i8("final_to_move", r.FinalToMove)
	}
	if r.Opponent != nil {
		r.Opponent, r.Pending = u8("opponent", r.Opponent), u8("pending", r.Pending)
	}
	return l, nil
}

// SharedActions copies the actions the client wrote into mem (a region
// this batch was shared into) into Actions, for CheckActions.
func (b *Batch) SharedActions(mem []byte) {
	off := SharedArrays
	for i := range b.actions {
		b.actions[i] = int32(binary.LittleEndian.Uint32(mem[off+4*i:]))
	}
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
