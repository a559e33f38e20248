package dataset

import (
	"errors"
	"os"
	"path/filepath"
)

// AtomicFile is a file written under a temporary name and renamed into
// place by commit, so readers see the whole file or nothing.
type AtomicFile struct {
	*os.File
	path string
	done bool
}

// TmpSuffix marks files being written; Open removes stale ones it finds.
const TmpSuffix = ".tmp"

// CreateAtomic creates path+TmpSuffix, to be renamed to path by Commit.
func CreateAtomic(path string) (*AtomicFile, error) {
	f, err := os.Create(path + TmpSuffix)
	if err != nil {
		return nil, err
	}
	return &AtomicFile{File: f, path: path}, nil
}

// Commit flushes the file to disk and renames it into place.
func (a *AtomicFile) Commit() error {
	if err := a.Sync(); err != nil {
		return err
	}
	if err := a.Close(); err != nil {
		return err
	}
	if err := os.Rename(a.Name(), a.path); err != nil {
		return err
	}
	a.done = true
	return syncDir(filepath.Dir(a.path))
}

// Abort removes the temporary file unless Commit succeeded; it is meant to
// be deferred.
func (a *AtomicFile) Abort() {
	if !a.done {
		a.Close()
		os.Remove(a.Name())
	}
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
