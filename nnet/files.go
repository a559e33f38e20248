package nnet

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
	"golang.org/x/sync/singleflight"

	"github.com/yutenv/yutenv/internal/confine"
	"github.com/yutenv/yutenv/internal/userfile"
)

// ErrRefused is wrapped by the one error Dirs.Load returns for every name
// it will not open: outside the allowed folders, missing there, unreadable,
// a directory or not a regular file. The message is the same for all of
// them, so a client learns nothing about the files it may not read.
var ErrRefused = errors.New("network refused")

// ErrNoSuchNet is wrapped by the error Dirs.Load returns for a name that
// lies, as written, inside an allowed folder and is not there: what the
// client could learn by loading it anyway, so it is said plainly.
var ErrNoSuchNet = errors.New("no such network file")

// ErrNotRegular is wrapped (with ErrNet) when a network file is a FIFO, a
// device, a directory or anything else that is not a regular file: the
// sentinel of package userfile, which every reader of a file a user names
// shares.
var ErrNotRegular = userfile.ErrNotRegular

const (
	// DefaultMaxNetBytes is the default size cap of a network file a
	// server opens for its clients (server.Config.MaxNetBytes).
	DefaultMaxNetBytes = 8 << 20
	// DefaultCacheBytes bounds the networks kept by the cache LoadCached
	// and Dirs.Load share (SetCacheLimit changes it).
	DefaultCacheBytes = 256 << 20
	// MaxDepth bounds the nesting of arrays and maps in a network file (the
	// format needs 3: the file's map, a trunk's array, a layer's map).
	// Deeper files are refused before anything is decoded.
	MaxDepth = 8
)

// Dirs is a policy for network files named by someone other than the
// operator (a socket client): it opens only regular files inside its
// folders. A relative name is looked up in each folder in turn and may not
// leave it (symbolic links included: os.Root); an absolute name is
// accepted only if, with its symbolic links resolved, it lies inside one
// of the folders. Folders and names are resolved by package confine, the
// path policy the server's writes (--out-dir) share. A Dirs is safe for
// concurrent use.
type Dirs struct {
	dirs     confine.Folders
	maxBytes int64
}

// NewDirs returns the policy allowing the folders dirs (each must exist and
// be a directory) and files of at most maxBytes bytes (0 means
// DefaultMaxNetBytes). No folder at all allows nothing.
func NewDirs(maxBytes int64, dirs ...string) (*Dirs, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxNetBytes
	}
	f, err := confine.NewFolders("network folder", dirs...)
	if err != nil {
		return nil, err
	}
	return &Dirs{dirs: f, maxBytes: maxBytes}, nil
}

// Folders returns the allowed folders, symbolic links resolved.
func (d *Dirs) Folders() []string { return append([]string(nil), d.dirs...) }

// Load opens the network name through the policy and the shared cache. It
// returns the net and its path (absolute, symbolic links resolved: what
// LoadCached opens again to find the same net in the cache). A name the
// policy refuses gives an error wrapping ErrRefused whose text depends on
// name alone; a name inside a folder, as written, that is not there gives
// an error wrapping ErrNoSuchNet; a file that is allowed but is not a valid
// network gives an error wrapping ErrNet.
func (d *Dirs) Load(name string) (*Net, string, error) {
	refused := fmt.Errorf("%w: %q is not a network file this server may open (it opens regular files inside its --net-dir folders)", ErrRefused, clipName(name))
	if name == "" || strings.ContainsRune(name, 0) {
		return nil, "", refused
	}
	missing := false
	for _, dir := range d.dirs {
		path := name
		if !filepath.IsAbs(name) {
			path = filepath.Join(dir, name)
		}
		f, real, err := openIn(dir, path)
		if err != nil {
			if _, inside := confine.Within(dir, filepath.Clean(path)); inside && errors.Is(err, fs.ErrNotExist) {
				missing = true
			}
			continue
		}
		n, err := shared.load(f, d.maxBytes)
		f.Close()
		switch {
		case errors.Is(err, ErrNotRegular):
			return nil, "", refused
		case err != nil:
			return nil, "", fmt.Errorf("%q: %w", clipName(name), err)
		}
		return n, real, nil
	}
	if missing {
		return nil, "", fmt.Errorf("%w: %q is in none of the server's --net-dir folders", ErrNoSuchNet, clipName(name))
	}
	return nil, "", refused
}

// openIn opens path if, with its symbolic links resolved, it lies inside
// dir; without blocking (a FIFO opens at once and is refused by load). It
// opens it through os.Root, so a link swapped in meanwhile cannot lead
// outside dir either. It returns the file and its real path.
func openIn(dir, path string) (*os.File, string, error) {
	real, err := confine.Resolve(path)
	if err != nil {
		return nil, "", err
	}
	rel, ok := confine.Within(dir, real)
	if !ok {
		return nil, "", ErrRefused
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", err
	}
	return f, real, nil
}

// clipName shortens a name for an error message.
func clipName(s string) string {
	if len(s) > 256 {
		return s[:256] + "..."
	}
	return s
}

// openFile opens path for reading without blocking on a FIFO or a device,
// refusing anything but a regular file (userfile.Open).
func openFile(path string) (*os.File, error) {
	f, _, err := userfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNet, err)
	}
	return f, nil
}

// readRegular reads all of f, which must be a regular file of at most maxBytes bytes.
func readRegular(f *os.File, maxBytes int64) ([]byte, os.FileInfo, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrNet, err)
	}
	if err := checkRegular(st, maxBytes); err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrNet, err)
	}
	if int64(len(b)) > maxBytes {
		return nil, nil, fmt.Errorf("%w: the file grew past the limit of %d bytes while read", ErrNet, maxBytes)
	}
	return b, st, nil
}

// checkRegular refuses a file that is not regular or larger than maxBytes.
func checkRegular(st os.FileInfo, maxBytes int64) error {
	switch {
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: %w (%s)", ErrNet, ErrNotRegular, userfile.Kind(st.Mode()))
	case st.Size() > maxBytes:
		return fmt.Errorf("%w: the file has %d bytes, above the limit of %d", ErrNet, st.Size(), maxBytes)
	}
	return nil
}

// checkDepth refuses a msgpack value nested deeper than MaxDepth before
// anything is decoded: the library's decoder recurses once per level, so a
// file of millions of nested arrays would overflow the stack (a fatal
// error, not a panic) or take gigabytes. It walks the value with an
// explicit stack; every item read consumes at least one byte, so it ends.
func checkDepth(b []byte) error {
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	var open []int // the items left in each enclosing array or map
	left := 1
	for left > 0 || len(open) > 0 {
		if left == 0 {
			left, open = open[len(open)-1], open[:len(open)-1]
			continue
		}
		left--
		c, err := dec.PeekCode()
		if err != nil {
			return err
		}
		var n int
		switch {
		case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
			n, err = dec.DecodeArrayLen()
		case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
			n, err = dec.DecodeMapLen()
			n *= 2
		default:
			if err := dec.Skip(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if len(open) == MaxDepth {
			return fmt.Errorf("nested deeper than %d levels", MaxDepth)
		}
		open = append(open, left)
		left = n
	}
	return nil
}

// fileID is a file's identity: two paths with the same fileID are the
// same file, unchanged.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

// Cache keeps loaded networks by file identity (device, inode, size,
// modification time) and by content (sha256), so any number of spellings
// of one file, or copies of it, share one Net. It holds at most its
// limit in bytes of weights, evicting the least recently used. Loads run
// outside its lock, one at a time per file (singleflight): a slow file
// never holds up the loads of others.
type Cache struct {
	mu    sync.Mutex
	limit int64
	bytes int64
	lru   list.List // of *cacheEntry, most recently used first
	byID  map[fileID]*list.Element
	bySum map[[sha256.Size]byte]*list.Element
	group singleflight.Group
}

type cacheEntry struct {
	sum  [sha256.Size]byte
	ids  []fileID
	net  *Net
	size int64
}

// NewCache returns an empty cache holding at most limit bytes.
func NewCache(limit int64) *Cache {
	return &Cache{limit: limit, byID: map[fileID]*list.Element{}, bySum: map[[sha256.Size]byte]*list.Element{}}
}

// shared is the cache of LoadCached, Dirs.Load and so of agent net.
var shared = NewCache(DefaultCacheBytes)

// SetCacheLimit sets the byte bound of the process's network cache
// (DefaultCacheBytes until called), evicting what no longer fits.
func SetCacheLimit(limit int64) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.limit = limit
	shared.evict(nil)
}

// CacheStats returns the number of networks in the process's cache and their bytes.
func CacheStats() (nets int, bytes int64) { return shared.Stats() }

// Stats returns the number of networks held and their bytes.
func (c *Cache) Stats() (nets int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}

// Bytes returns the memory of the net's weights and biases, counting the
// transposed copy of the trunks' and policy's weights that Forward builds.
func (n *Net) Bytes() int64 {
	var s int64
	for _, t := range n.trunks() {
		for _, l := range t {
			s += 4 * int64(2*len(l.W)+len(l.B))
		}
	}
	return s + 4*int64(2*len(n.Policy.W)+len(n.Policy.B)+len(n.Value.W)+len(n.Value.B))
}

// lookup returns the net of identity id and marks it used.
func (c *Cache) lookup(id fileID) *Net {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).net
	}
	return nil
}

// load returns the net of the open file f (at most maxBytes bytes, regular).
func (c *Cache) load(f *os.File, maxBytes int64) (*Net, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNet, err)
	}
	if err := checkRegular(st, maxBytes); err != nil {
		return nil, err
	}
	id, ok := identity(st)
	if ok {
		if n := c.lookup(id); n != nil {
			return n, nil
		}
	}
	read := func() (any, error) {
		if ok {
			if n := c.lookup(id); n != nil { // loaded while we waited our turn
				return n, nil
			}
		}
		b, _, err := readRegular(f, maxBytes)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		c.mu.Lock()
		if e, found := c.bySum[sum]; found {
			ce := e.Value.(*cacheEntry)
			if ok {
				ce.ids = append(ce.ids, id)
				c.byID[id] = e
			}
			c.lru.MoveToFront(e)
			c.mu.Unlock()
			return ce.net, nil
		}
		c.mu.Unlock()
		n, err := Parse(b)
		if err != nil {
			return nil, err
		}
		c.insert(&cacheEntry{sum: sum, net: n, size: n.Bytes()}, id, ok)
		return n, nil
	}
	var v any
	if ok {
		v, err, _ = c.group.Do(fmt.Sprint(id), read)
	} else {
		v, err = read()
	}
	if err != nil {
		return nil, err
	}
	return v.(*Net), nil
}

// insert adds a newly parsed net (unless it alone exceeds the limit) and evicts what no longer fits.
func (c *Cache) insert(ce *cacheEntry, id fileID, withID bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ce.size > c.limit {
		return
	}
	if e, found := c.bySum[ce.sum]; found { // another identity of the same content won the race
		c.lru.MoveToFront(e)
		return
	}
	e := c.lru.PushFront(ce)
	c.bySum[ce.sum] = e
	if withID {
		ce.ids = append(ce.ids, id)
		c.byID[id] = e
	}
	c.bytes += ce.size
	c.evict(e)
}

// evict drops the least recently used nets until the cache fits its limit,
// never keep. The caller holds c.mu.
func (c *Cache) evict(keep *list.Element) {
	for c.bytes > c.limit {
		e := c.lru.Back()
		if e == nil || e == keep {
			return
		}
		ce := c.lru.Remove(e).(*cacheEntry)
		delete(c.bySum, ce.sum)
		for _, id := range ce.ids {
			delete(c.byID, id)
		}
		c.bytes -= ce.size
	}
}
