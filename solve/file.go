package solve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/userfile"
)

// The table file (docs/FORMATS.md, "Solved tables").
const (
	// Magic opens every table file.
	Magic = "YUTSOLVE"
	// Version is the format version this build writes. Version 2 leaves
	// out the sure wins (surewin.go); this build reads versions 1 and 2.
	Version = 2
	// minVersion is the oldest format version this build reads: version
	// 1 lists every state, sure wins included, which a reader of version
	// 2 answers the same.
	minVersion = 1
	// maxRulesLen bounds the rules string of a header.
	maxRulesLen = 1024
	// headerFixed is the header's size without its rules string: magic,
	// version, rules length.
	headerFixed = len(Magic) + 4 + 4
	// headerTail follows the rules string: pool cap, sweeps, residual, states.
	headerTail = 4 + 4 + 8 + 8
	// trailer is the CRC-32C at the end.
	trailer = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes the table to path (docs/FORMATS.md, "Solved tables"),
// through a temporary file in the same folder renamed into place, so a
// failed save leaves no half-written table under path. An existing path
// that is not a regular file (a device, a FIFO, a folder) is refused with
// an error wrapping userfile.ErrNotRegular, and a symbolic link to a
// regular file is written through (userfile.CreateAtomic).
func (t *Table) Save(path string) error {
	err := userfile.WriteAtomic(path, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := t.Write(w); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("save table: %w", err)
	}
	return nil
}

// Write writes the table in the file format to w.
func (t *Table) Write(w io.Writer) error {
	h := crc32.New(castagnoli)
	mw := io.MultiWriter(w, h)
	rules := t.c.rules.String()
	var buf [64]byte
	b := append(buf[:0], Magic...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rules)))
	if _, err := mw.Write(b); err != nil {
		return err
	}
	if _, err := io.WriteString(mw, rules); err != nil {
		return err
	}
	b = binary.LittleEndian.AppendUint32(buf[:0], uint32(t.PoolCap))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.Iterations))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t.Residual))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(t.keys)))
	if _, err := mw.Write(b); err != nil {
		return err
	}
	chunk := make([]byte, 0, 1<<16)
	for i, k := range t.keys {
		chunk = binary.LittleEndian.AppendUint64(chunk, k)
		chunk = binary.LittleEndian.AppendUint64(chunk, math.Float64bits(t.values[i]))
		if len(chunk) == cap(chunk) {
			if _, err := mw.Write(chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if _, err := mw.Write(chunk); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(buf[:0], h.Sum32()))
	return err
}

// Load reads a table file written by Save. A file that is not a table,
// is damaged (short, a checksum that does not match, keys out of order,
// values outside [0, 1]) or of another version is refused with one line
// naming the file, wrapping ErrCorrupt or ErrVersion; so is a file that is
// not a regular file (a FIFO, a device: also wrapping
// userfile.ErrNotRegular), opened without blocking. Nothing is allocated
// for the states before the header is found to fit the file's size and
// the whole file's checksum to hold (one streaming pass), so a damaged or
// sparse file of any size costs a read, not its size in memory.
func Load(path string) (*Table, error) {
	f, st, err := userfile.Open(path)
	if errors.Is(err, userfile.ErrNotRegular) {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err != nil {
		return nil, fmt.Errorf("solved table: %w", err)
	}
	defer f.Close()
	if err := verify(f, st.Size()); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("solved table: %w", err)
	}
	t, err := Read(bufio.NewReaderSize(f, 1<<20), st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// verify checks what can be checked of a table file of size bytes without
// allocating for its states: its header (magic, version, a state count
// that fits size) and the checksum of everything before its trailer,
// streamed.
func verify(f io.Reader, size int64) error {
	h := crc32.New(castagnoli)
	r := &countReader{r: io.TeeReader(bufio.NewReaderSize(io.LimitReader(f, max(size-trailer, 0)), 1<<16), h)}
	if _, err := readHeader(r, size); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return fmt.Errorf("reading the states: %w", err)
	}
	if r.n != size-trailer {
		return corrupt("truncated (in the states)")
	}
	var crc [trailer]byte
	if err := readFull(f, crc[:], "checksum"); err != nil {
		return err
	}
	if got, sum := binary.LittleEndian.Uint32(crc[:]), h.Sum32(); got != sum {
		return corrupt("checksum %08x does not match the contents (%08x): the file is damaged", got, sum)
	}
	return nil
}

// Read reads a table of size bytes from r (the form Write writes). Its
// errors wrap ErrCorrupt or ErrVersion and say what is wrong; no input
// makes it panic or allocate much more than size bytes.
func Read(r io.Reader, size int64) (*Table, error) {
	h := crc32.New(castagnoli)
	tr := &countReader{r: io.TeeReader(r, h)}
	t, err := readBody(tr, h, size)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// corrupt is an error wrapping ErrCorrupt.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// readFull reads len(b) bytes, calling a short read a truncated file.
func readFull(r io.Reader, b []byte, what string) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return corrupt("truncated (in the %s)", what)
		}
		return fmt.Errorf("reading the %s: %w", what, err)
	}
	return nil
}

// header is a table file's header.
type header struct {
	rules   []byte
	poolCap uint32
	iters   uint32
	res     float64
	states  uint64
}

// readHeader reads the header of a table file of size bytes, checking its
// magic, its version and that its state count fits size.
func readHeader(r *countReader, size int64) (header, error) {
	var fixed [headerFixed]byte
	if err := readFull(r, fixed[:], "header"); err != nil {
		if errors.Is(err, ErrCorrupt) && (r.n == 0 || !bytes.HasPrefix([]byte(Magic), fixed[:min(len(Magic), int(r.n))])) {
			return header{}, corrupt("not a solved table (no %s header)", Magic)
		}
		return header{}, err
	}
	if string(fixed[:len(Magic)]) != Magic {
		return header{}, corrupt("not a solved table (no %s header)", Magic)
	}
	if v := binary.LittleEndian.Uint32(fixed[len(Magic):]); v < minVersion || v > Version {
		return header{}, fmt.Errorf("%w: format version %d, this build reads %d to %d", ErrVersion, v, minVersion, Version)
	}
	n := binary.LittleEndian.Uint32(fixed[len(Magic)+4:])
	if n > maxRulesLen {
		return header{}, corrupt("rules string of %d bytes (at most %d)", n, maxRulesLen)
	}
	rb := make([]byte, n)
	if err := readFull(r, rb, "rules"); err != nil {
		return header{}, err
	}
	var tail [headerTail]byte
	if err := readFull(r, tail[:], "header"); err != nil {
		return header{}, err
	}
	hd := header{
		rules:   rb,
		poolCap: binary.LittleEndian.Uint32(tail[0:]),
		iters:   binary.LittleEndian.Uint32(tail[4:]),
		res:     math.Float64frombits(binary.LittleEndian.Uint64(tail[8:])),
		states:  binary.LittleEndian.Uint64(tail[16:]),
	}
	head := int64(headerFixed) + int64(n) + headerTail
	if want := uint64(size - head - trailer); size < head+trailer || hd.states != want/16 || want%16 != 0 {
		return header{}, corrupt("%d states do not fit a file of %d bytes (truncated or padded)", hd.states, size)
	}
	return hd, nil
}

func readBody(r *countReader, h hash.Hash32, size int64) (*Table, error) {
	hd, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	rb, poolCap, iters, res, states := hd.rules, hd.poolCap, hd.iters, hd.res, hd.states
	keys := make([]uint64, states)
	values := make([]float64, states)
	buf := make([]byte, 1<<16)
	for i := uint64(0); i < states; {
		m := min(states-i, uint64(len(buf)/16))
		b := buf[:m*16]
		if err := readFull(r, b, "states"); err != nil {
			return nil, err
		}
		for j := range m {
			keys[i+j] = binary.LittleEndian.Uint64(b[16*j:])
			values[i+j] = math.Float64frombits(binary.LittleEndian.Uint64(b[16*j+8:]))
		}
		i += m
	}
	sum := h.Sum32()
	var crc [trailer]byte
	if err := readFull(r.r, crc[:], "checksum"); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(crc[:]); got != sum {
		return nil, corrupt("checksum %08x does not match the contents (%08x): the file is damaged", got, sum)
	}
	if extra, _ := r.r.Read(crc[:1]); extra > 0 {
		return nil, corrupt("bytes after the checksum")
	}
	rules, err := env.ParseRules(string(rb))
	if err != nil {
		return nil, corrupt("rules %q: %v", rb, err)
	}
	if err := Check(rules); err != nil {
		return nil, corrupt("rules %s: %v", rules, err)
	}
	if poolCap < 1 || poolCap > MaxPoolCap {
		return nil, corrupt("pool cap %d out of range 1..%d", poolCap, MaxPoolCap)
	}
	if math.IsNaN(res) || res < 0 || res > 1 {
		return nil, corrupt("residual %g out of range", res)
	}
	c, err := newCodec(rules)
	if err != nil {
		return nil, corrupt("rules %s: %v", rules, err)
	}
	for i := range keys {
		if i > 0 && keys[i] <= keys[i-1] {
			return nil, corrupt("keys out of order at state %d", i)
		}
		if v := values[i]; !(v >= 0 && v <= 1) {
			return nil, corrupt("value %g of state %d is not a probability", v, i)
		}
	}
	t := &Table{c: c, keys: keys, values: values, PoolCap: int(poolCap), Iterations: int(iters), Residual: res}
	if len(keys) > 0 {
		var stacks [env.NumStations]env.Stack
		if _, err := c.position(keys[len(keys)-1], stacks[:0]); err != nil {
			return nil, err
		}
	}
	return t, nil
}
