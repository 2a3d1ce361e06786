package bmstore

import (
	"fmt"
	"io"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// Scanner streams the requested columns of one version in row batches; only
// the requested columns' files are read. While the caller works on a batch,
// a goroutine reads the next one into a second set of buffers.
type Scanner struct {
	readers []*colReader
	consts  []int64 // version_id constant, for a column without file
	types   []DataType
	pos     int64
	end     int64
	batch   int
	// bufs are the two batches' buffers: one handed out, one being read
	// (next is its index) while pending is not nil.
	bufs    [2][]Column
	next    int
	pending chan scanResult
}

// scanResult is a batch read ahead, or the error reading it.
type scanResult struct {
	cols []Column
	err  error
}

// Scan opens a stream of rows [from, to) of the given columns (col_id,
// title, internal column title or VersionIDColumn) of version n, in batches
// of batch rows (≤ 0: 100,000).
func (s *Store) Scan(id string, n int, cols []string, from, to int64, batch int) (*Scanner, error) {
	v, err := s.Version(id, n)
	if err != nil {
		return nil, err
	}
	if from < 0 || to > v.Rows || from > to {
		return nil, fmt.Errorf("bmstore: scan rows [%d, %d) of %d", from, to, v.Rows)
	}
	if batch <= 0 {
		batch = batchRows
	}
	sc := &Scanner{pos: from, end: to, batch: batch}
	for _, name := range cols {
		var file string
		var typ DataType
		if name == VersionIDColumn {
			typ, file = blockmodel.Int64, v.VersionIDFile
		} else {
			c, ok := v.Column(name)
			if !ok {
				sc.Close()
				return nil, fmt.Errorf("bmstore: model %s version %d: column %q: %w", id, n, name, ErrNotFound)
			}
			typ, file = c.DataType, c.File
		}
		var r *colReader
		if file != "" {
			if r, err = openColReader(s.colPath(id, file), typ); err != nil {
				sc.Close()
				return nil, err
			}
		}
		sc.readers = append(sc.readers, r)
		sc.consts = append(sc.consts, v.VersionIDConst)
		sc.types = append(sc.types, typ)
		for b := range sc.bufs {
			sc.bufs[b] = append(sc.bufs[b], newColumn(typ, batch))
		}
	}
	// Skip to from.
	for _, r := range sc.readers {
		if r == nil {
			continue
		}
		if err := r.skip(from); err != nil {
			sc.Close()
			return nil, err
		}
	}
	return sc, nil
}

// Next returns the next batch, one Column per requested column (valid until
// the next call), or io.EOF after the last row.
func (sc *Scanner) Next() ([]Column, error) {
	if sc.pending == nil {
		if sc.pos >= sc.end {
			return nil, io.EOF
		}
		sc.readAhead()
	}
	res := <-sc.pending
	sc.pending = nil
	if res.err != nil {
		return nil, res.err
	}
	sc.next = 1 - sc.next
	if sc.pos < sc.end {
		sc.readAhead() // into the buffers handed out last time
	}
	return res.cols, nil
}

// readAhead starts reading the next batch into bufs[next].
func (sc *Scanner) readAhead() {
	done := make(chan scanResult, 1)
	sc.pending = done
	out := sc.bufs[sc.next]
	go func() {
		var cols []Column
		err := geostat.Catch(func() (err error) {
			cols, err = sc.read(out)
			return err
		})
		done <- scanResult{cols: cols, err: err}
	}()
}

// read reads the next batch into out (only one read runs at a time).
func (sc *Scanner) read(out []Column) ([]Column, error) {
	n := int(min(int64(sc.batch), sc.end-sc.pos))
	for i, r := range sc.readers {
		c := &out[i]
		c.Reset()
		if r == nil {
			for range n {
				c.Ints = append(c.Ints, sc.consts[i])
				c.Null = append(c.Null, false)
			}
			continue
		}
		k, err := r.read(c, n)
		if err != nil {
			return nil, err
		}
		if k != n {
			return nil, fmt.Errorf("bmstore: column file ended at %d rows", sc.pos+int64(k))
		}
	}
	sc.pos += int64(n)
	return slices.Clone(out), nil
}

// Close waits for a read in flight and releases the column files.
func (sc *Scanner) Close() error {
	if sc.pending != nil {
		<-sc.pending
		sc.pending = nil
	}
	for _, r := range sc.readers {
		if r != nil {
			r.close()
		}
	}
	sc.readers = nil
	return nil
}

// Deltas answers the delta check of A.5: among versions after `from` up to
// `to` (0: latest), the versions that added any column, and those that
// updated or deleted one of cols (nil or ["*"]: all) with an update box
// intersecting bbox (nil: any). Renames do not count.
func (s *Store) Deltas(id string, from, to int, cols []string, bbox *BBox) (newV, updated, deleted []*Version, err error) {
	if to == 0 {
		if to, err = s.Latest(id); err != nil {
			return nil, nil, nil, err
		}
	}
	all := cols == nil || slices.Contains(cols, "*")
	hit := func(ids []string) bool {
		if all {
			return len(ids) > 0
		}
		for _, c := range ids {
			if slices.Contains(cols, c) {
				return true
			}
		}
		return false
	}
	for n := from + 1; n <= to; n++ {
		v, err := s.Version(id, n)
		if err != nil {
			return nil, nil, nil, err
		}
		inBox := bbox == nil || v.BBox == nil || v.BBox.Intersects(*bbox)
		if len(v.Changes.NewIDs) > 0 {
			newV = append(newV, v)
		}
		if hit(v.Changes.UpdatedIDs) && inBox {
			updated = append(updated, v)
		}
		if hit(v.Changes.DeletedIDs) {
			deleted = append(deleted, v)
		}
	}
	return newV, updated, deleted, nil
}
