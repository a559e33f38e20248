package dataset

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/yutenv/yutenv/env"
)

// ShardWriter writes the next shard of a dataset game by game: Add appends
// a game's rows and record to temporary files in the dataset directory
// (one per array, named shard-NNNNNN.ARRAY.spill.tmp, which Open tidies
// away after a crash), so that a shard costs no memory however many games
// it holds; Finish writes the shard's files, the same bytes AddShard
// writes, and the manifest. Games must be added in game order.
type ShardWriter struct {
	m          *Manifest
	dir        string
	first      int
	obsSize    int
	withVisits bool
	// withTargets: the dataset has the array policy_target (its manifest lists it).
	withTargets bool
	files       []*os.File // the arrays in the order of Columns.data, then the records
	bufs        []*bufio.Writer
	rows        int
	games       int
}

// NewShardWriter starts the shard that holds games from first on, for
// columns of obsSize values (with visit counts when withVisits).
func (m *Manifest) NewShardWriter(dir string, first, obsSize int, withVisits bool) (*ShardWriter, error) {
	w := &ShardWriter{m: m, dir: dir, first: first, obsSize: obsSize, withVisits: withVisits, withTargets: m.hasArray(PolicyTargetArray.Name)}
	name := fmt.Sprintf("shard-%06d", m.FirstGame/m.ShardGames+len(m.Shards))
	for _, part := range []string{"obs", "mask", "action", "policy", "value", "search_value", "seat", "game", "decision", "potential", "searched", "visits", "policy_target", "final_obs", "records"} {
		f, err := os.Create(filepath.Join(dir, name+"."+part+".spill"+TmpSuffix))
		if err != nil {
			w.Abort()
			return nil, err
		}
		w.files = append(w.files, f)
		w.bufs = append(w.bufs, bufio.NewWriterSize(f, 64<<10))
	}
	return w, nil
}

// Games is the number of games added so far.
func (w *ShardWriter) Games() int { return w.games }

// Add appends one game: its rows (c) and its record.
func (w *ShardWriter) Add(c *Columns, rec *env.Record) error {
	if c.obsSize != w.obsSize || c.withVisits != w.withVisits || c.withTargets != w.withTargets {
		return fmt.Errorf("%w: columns of %d values (visits %v, policy targets %v) for a shard of %d (visits %v, policy targets %v)",
			ErrDataset, c.obsSize, c.withVisits, c.withTargets, w.obsSize, w.withVisits, w.withTargets)
	}
	if c.games != 1 {
		return fmt.Errorf("%w: Add takes one game ended by EndGame, got %d", ErrDataset, c.games)
	}
	for i, d := range c.data() {
		if err := writeLE(w.bufs[i], d); err != nil {
			return err
		}
	}
	if _, err := rec.WriteTo(w.bufs[len(w.bufs)-1]); err != nil {
		return err
	}
	w.rows += c.rows
	w.games++
	return nil
}

// Finish writes the shard and the manifest that lists it, then removes the
// temporary files. The writer is done either way.
func (w *ShardWriter) Finish() error {
	defer w.Abort()
	readers := make([]any, len(w.files))
	for i, f := range w.files {
		if err := w.bufs[i].Flush(); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		readers[i] = bufio.NewReaderSize(f, 64<<10)
	}
	recs := readers[len(readers)-1].(io.Reader)
	return w.m.writeShard(w.dir, w.first, w.games, func(out io.Writer) error {
		_, err := io.Copy(out, recs)
		return err
	}, w.m.shardArrays(w.rows, w.games, w.obsSize, w.withVisits, w.withTargets, readers[:len(readers)-1]))
}

// Abort removes the temporary files; it is meant to be deferred.
func (w *ShardWriter) Abort() {
	for _, f := range w.files {
		f.Close()
		os.Remove(f.Name())
	}
	w.files, w.bufs = nil, nil
}
