// Package userfile reads and writes the files a user names (a flag, a
// manifest, an agent spec) safely. A file that is read is opened without
// blocking (a FIFO opens at once), must be a regular file (checked with
// fstat on the opened descriptor, so what is checked is what is read) and
// is read with a size bound. A file that is written is written under a
// temporary name in the same folder and renamed into place, and an
// existing target that is not a regular file (a device, a FIFO, a socket,
// a directory) is refused before anything is written, so that a command
// run as root never replaces /dev/null. A symbolic link to a regular file
// is written through: the file it names is replaced and the link kept.
//
// The Python package has the same helpers in yutenv._files.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// ErrNotRegular is wrapped by the error for a file that is not a regular
// file: a FIFO, a device, a socket or a directory (or, for a write, a
// symbolic link to one, or to nothing).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a file larger than its reader's
// bound.
var ErrTooLarge = errors.New("too large")

// TmpSuffix ends the name of every temporary file CreateAtomic makes (a
// dataset's tidy-up removes stray ones).
const TmpSuffix = ".tmp"

// Kind names a file mode's type for an error: "a FIFO", "a device", ...
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// notRegular is the error for path, of mode m, which op refuses.
func notRegular(op, path string, m fs.FileMode) error {
	return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(m))}
}

// Open opens path for reading. It opens it without blocking (a FIFO with
// no writer opens at once) and refuses, with an error wrapping
// ErrNotRegular, anything but a regular file. It returns the file and its
// information, taken from the opened descriptor.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() { // a socket cannot be opened (ENXIO)
			return nil, nil, notRegular("open", path, st.Mode())
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular("open", path, st.Mode())
	}
	return f, st, nil
}

// Append opens path for appending, creating it (0666 less the umask) if
// it is missing. Like Open it does not block (a FIFO with no reader is
// refused at once, not waited on) and refuses anything but a regular
// file, with an error wrapping ErrNotRegular.
func Append(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NONBLOCK, 0o666)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() { // a FIFO without a reader, a socket (ENXIO)
			return nil, notRegular("open", path, st.Mode())
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular("open", path, st.Mode())
	}
	return f, nil
}

// ReadFile reads path, which must be a regular file of at most limit
// bytes: a larger one is refused before a byte is read, with an error
// wrapping ErrTooLarge, and so is one that grows past limit while it is
// read.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := CheckSize(path, st.Size(), limit); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: it grew past the limit of %d bytes while it was read", ErrTooLarge, limit)}
	}
	return b, nil
}

// CheckSize refuses a file of size bytes above limit, with an error
// wrapping ErrTooLarge that names path.
func CheckSize(path string, size, limit int64) error {
	if size > limit {
		return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, size, limit)}
	}
	return nil
}

// Target returns the file a write to path replaces: path itself, or, for
// a symbolic link, the file it leads to (the link is written through).
// An existing target that is not a regular file is refused with an error
// wrapping ErrNotRegular, and so is a link that leads nowhere; a missing
// path is fine (it will be created).
func Target(path string) (string, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil
	case err != nil:
		return "", err
	case st.Mode().IsRegular():
		return path, nil
	case st.Mode()&fs.ModeSymlink == 0:
		return "", writeRefused(path, st.Mode())
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("%w (a symbolic link that leads to nothing)", ErrNotRegular)}
	}
	if st, err = os.Stat(real); err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", writeRefused(path, st.Mode())
	}
	return real, nil
}

// writeRefused is the error for a write to path, of mode m.
func writeRefused(path string, m fs.FileMode) error {
	return &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("%w (%s; only a regular file is replaced)", ErrNotRegular, Kind(m))}
}

// Atomic is a file written under a temporary name in its target's folder
// and renamed over the target by Commit, so readers see the old file or
// the new one, never half of one.
type Atomic struct {
	*os.File
	path   string // as the caller named it, for errors
	target string // what Commit replaces (Target of path)
	done   bool
}

// CreateAtomic checks path with Target (refusing a target that is not a
// regular file before anything is written) and creates a temporary file
// beside the file it will replace, ".NAME.RANDOM.tmp", with the mode a
// new file gets (0666 less the umask).
func CreateAtomic(path string) (*Atomic, error) {
	target, err := Target(path)
	if err != nil {
		return nil, err
	}
	dir, base := filepath.Split(target)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64()%1e12, 36)+TmpSuffix)
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Atomic{File: f, path: path, target: target}, nil
	}
	return nil, &fs.PathError{Op: "write", Path: path, Err: errors.New("no free temporary name beside it")}
}

// Commit flushes the file to disk and renames it over its target (checked
// again with Target first: nothing but a regular file is replaced), then
// syncs the folder so the rename lasts.
func (a *Atomic) Commit() error {
	if err := a.Sync(); err != nil {
		return err
	}
	if err := a.Close(); err != nil {
		return err
	}
	target, err := Target(a.path)
	if err != nil {
		return err
	}
	if err := os.Rename(a.Name(), target); err != nil {
		return err
	}
	a.done = true
	return syncDir(filepath.Dir(target))
}

// Abort removes the temporary file unless Commit succeeded; it is meant
// to be deferred.
func (a *Atomic) Abort() {
	if !a.done {
		a.Close()
		os.Remove(a.Name())
	}
}

// WriteAtomic writes path through write, atomically (CreateAtomic, then
// Commit; the temporary file is removed if write fails).
func WriteAtomic(path string, write func(io.Writer) error) error {
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
