package dataset

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/yutenv/yutenv/internal/userfile"
)

// hashWriter counts and hashes what passes through it.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

// writeHashed writes path atomically with fill and returns its size and SHA-256.
func writeHashed(path string, fill func(io.Writer) error) (int64, string, error) {
	f, err := userfile.CreateAtomic(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Abort()
	hw := &hashWriter{w: f, h: sha256.New()}
	bw := bufio.NewWriterSize(hw, 1<<20)
	if err := fill(bw); err != nil {
		return 0, "", err
	}
	if err := bw.Flush(); err != nil {
		return 0, "", err
	}
	if err := f.Commit(); err != nil {
		return 0, "", err
	}
	return hw.n, hex.EncodeToString(hw.h.Sum(nil)), nil
}

// NPYArray is one array of an .npz: name, numpy dtype, shape and data (a
// slice of uint8, int8, int32, int64 or float32, written little-endian,
// or an io.Reader of those bytes).
type NPYArray struct {
	Name  string
	Dtype string
	Shape []int
	Data  any
}

// WriteNPZ writes arrays as an .npz archive (a zip of .npy files, deflated,
// each with its CRC-32), which numpy.load reads. The bytes depend only on
// the arrays: no timestamps.
func WriteNPZ(w io.Writer, arrays []NPYArray) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	for _, a := range arrays {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Deflate})
		if err != nil {
			return err
		}
		if _, err := fw.Write(NPYHeader(a.Dtype, a.Shape)); err != nil {
			return err
		}
		if err := writeLE(fw, a.Data); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
	}
	return zw.Close()
}

// writeLE writes a numeric slice little-endian, in chunks to bound the
// temporary buffer.
func writeLE(w io.Writer, data any) error {
	const chunk = 1 << 16
	switch d := data.(type) {
	case []uint8:
		_, err := w.Write(d)
		return err
	case []int8:
		return writeChunks(w, d, chunk)
	case []int32:
		return writeChunks(w, d, chunk)
	case []int64:
		return writeChunks(w, d, chunk)
	case []float32:
		return writeChunks(w, d, chunk)
	case io.Reader:
		_, err := io.Copy(w, d)
		return err
	}
	return fmt.Errorf("cannot write %T", data)
}

func writeChunks[T int8 | int32 | int64 | float32](w io.Writer, d []T, chunk int) error {
	for len(d) > 0 {
		n := min(chunk, len(d))
		if err := binary.Write(w, binary.LittleEndian, d[:n]); err != nil {
			return err
		}
		d = d[n:]
	}
	return nil
}

// NPYHeader returns the header of a version 1.0 .npy file: the magic, the
// version, the header length and a Python dict literal padded with spaces
// and a newline to a multiple of 64 bytes.
func NPYHeader(dtype string, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = fmt.Sprint(n)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", dtype, sh)
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(&b, binary.LittleEndian, uint16(len(dict)+pad+1))
	b.WriteString(dict)
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteByte('\n')
	return b.Bytes()
}
