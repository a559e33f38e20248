// Package confine is the path policy of what a socket client may name on
// the server's machine: the network files it may read (--net-dir,
// nnet.Dirs) and the folders it may make the server write (--out-dir,
// Writes). Both resolve a name the same way: folders and names are taken
// with their symbolic links resolved, and a name is allowed only if where
// it really leads lies inside one of the folders. A refusal is one
// message that depends on the name alone, never on what exists.
package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrRefused is wrapped by every refusal of a name by Writes.
var ErrRefused = errors.New("refused")

// Folders are allowed folders: absolute, symbolic links resolved.
type Folders []string

// NewFolders resolves dirs (each must exist and be a directory); flag
// names them in errors ("--out-dir").
func NewFolders(flag string, dirs ...string) (Folders, error) {
	var out Folders
	for _, dir := range dirs {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			real, err = filepath.Abs(real)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, dir, err)
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, dir, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s %q is not a directory", flag, dir)
		}
		out = append(out, real)
	}
	return out, nil
}

// Within returns path relative to dir if it lies inside it or is dir
// itself (both absolute and clean).
func Within(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// Holds returns the folder path lies in and path relative to it.
func (f Folders) Holds(path string) (dir, rel string, ok bool) {
	for _, d := range f {
		if rel, ok := Within(d, path); ok {
			return d, rel, true
		}
	}
	return "", "", false
}

// Resolve returns where the absolute path really leads: its symbolic links
// (and "." and ".." after them) resolved as the kernel would, as far as it
// exists. The part that does not exist yet is appended as written; it may
// hold no "." or ".." element, whose meaning the kernel would not give it
// (an error). A part that exists only as a dangling symbolic link is an
// error too.
func Resolve(path string) (string, error) {
	var missing []string
	p := path
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, missing...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(p); lerr == nil {
			return "", fmt.Errorf("%s: a dangling symbolic link", p)
		}
		parent, base := filepath.Dir(p), filepath.Base(p)
		if base == "." || base == ".." || parent == p {
			return "", fmt.Errorf("%s: %w", path, fs.ErrNotExist)
		}
		missing = append([]string{base}, missing...)
		p = parent
	}
}

// Writes is the policy of the folders a client may make the server write
// (--out-dir): a Writes with no folder refuses every name.
type Writes struct {
	folders Folders
	flag    string
}

// NewWrites returns the policy allowing writes inside dirs; flag names the
// option that sets them, in its refusals.
func NewWrites(flag string, dirs ...string) (*Writes, error) {
	f, err := NewFolders(flag, dirs...)
	if err != nil {
		return nil, err
	}
	return &Writes{folders: f, flag: flag}, nil
}

// Folders returns the allowed folders.
func (w *Writes) Folders() Folders { return append(Folders(nil), w.folders...) }

// Path returns where the server may write for the client's name: the path
// with its symbolic links resolved, inside one of the folders (or one of
// them itself). A relative name is taken inside the first folder. Names
// that are empty, hold a NUL or a ".." element, or lead outside every
// folder (through symbolic links too) get one error, wrapping ErrRefused,
// whose text depends on name alone: a client learns nothing about what
// exists.
func (w *Writes) Path(name string) (string, error) {
	refused := fmt.Errorf("%w: %q is not a path this server may write (it writes only inside its %s folders)", ErrRefused, clip(name), w.flag)
	if name == "" || strings.ContainsRune(name, 0) || len(w.folders) == 0 || hasDotDot(name) {
		return "", refused
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(w.folders[0], path)
	}
	real, err := Resolve(filepath.Clean(path)) // Clean drops "." and "//" only: ".." was refused
	if err != nil {
		return "", refused
	}
	if _, _, ok := w.folders.Holds(real); !ok {
		return "", refused
	}
	return real, nil
}

// hasDotDot reports whether name has a ".." element.
func hasDotDot(name string) bool {
	for _, e := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if e == ".." {
			return true
		}
	}
	return false
}

// clip shortens a name for an error message.
func clip(s string) string {
	if len(s) > 256 {
		return s[:256] + "..."
	}
	return s
}
