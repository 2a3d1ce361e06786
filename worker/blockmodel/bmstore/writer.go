package bmstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
)

// ColumnWriter streams one column's N rows, in row order, to a file of an
// open change. Close it before the next column operation of the change.
type ColumnWriter struct {
	t       *Tx
	meta    ColumnMeta
	isNew   bool
	replace bool
	old     *colReader
	oldBuf  Column
	out     Column
	f       *os.File
	tw      *tableWriter
	name    string
	rows    int64
	given   int64
}

func (t *Tx) newFileWriter(name string, typ DataType) (*ColumnWriter, error) {
	dir := t.s.modelDir(t.id)
	for _, d := range []string{filepath.Join(dir, "tmp"), filepath.Join(dir, "c")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("bmstore: %w", err)
		}
	}
	f, err := os.CreateTemp(filepath.Join(dir, "tmp"), "col-*")
	if err != nil {
		return nil, fmt.Errorf("bmstore: %w", err)
	}
	// No buffering: the table writer writes whole pages. The file's
	// writeback starts as it is written, so that the commit's fsync waits
	// only for the tail.
	tw, err := newTableWriter(&atomicfile.Writeback{F: f}, []string{"v"}, []DataType{typ}, storeRowGroup)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	tw.rowsHint = t.rows
	return &ColumnWriter{t: t, f: f, tw: tw, name: name}, nil
}

func (t *Tx) newWriter(meta ColumnMeta, old *colReader, replace, isNew bool) (*ColumnWriter, error) {
	meta.File = fmt.Sprintf("%d-%s.parquet", t.next(), meta.ColID)
	cw, err := t.newFileWriter(meta.File, meta.DataType)
	if err != nil {
		if old != nil {
			old.close()
		}
		return nil, err
	}
	cw.meta, cw.isNew, cw.replace, cw.old = meta, isNew, replace, old
	cw.oldBuf = newColumn(meta.DataType, 8192)
	cw.out = newColumn(meta.DataType, 8192)
	if t.written == nil {
		t.written = make([]uint64, (t.rows+63)/64)
	}
	t.open = cw
	return cw, nil
}

// Write appends a batch of rows (in row order, of the column's type). Rows
// whose Given flag is false are not supplied (merge keeps the old value,
// replace and new columns write null). The batch is copied: the caller may
// reuse it when Write returns. Row groups are encoded in the background, so
// a failure to write the file may be returned by a later Write or by Close.
func (w *ColumnWriter) Write(b Column) error {
	if w.tw == nil {
		return errors.New("bmstore: column writer closed")
	}
	if err := b.check(); err != nil {
		return err
	}
	if b.Type != w.meta.DataType {
		return fmt.Errorf("bmstore: column %q is %s, batch is %s", w.meta.Title, w.meta.DataType, b.Type)
	}
	n := b.Len()
	if w.rows+int64(n) > w.t.rows {
		return fmt.Errorf("bmstore: column %q: more than %d rows written", w.meta.Title, w.t.rows)
	}
	src := &b
	if b.Given == nil || !slices.Contains(b.Given, false) {
		// Every row supplied: the batch is the column's rows; old values,
		// if any, are passed over.
		if w.old != nil {
			if err := w.old.skip(int64(n)); err != nil {
				return fmt.Errorf("bmstore: column %q: read old values: %w", w.meta.Title, err)
			}
		}
		setBits(w.t.written, w.rows, w.rows+int64(n))
		w.given += int64(n)
	} else {
		if w.old != nil {
			w.oldBuf.Reset()
			if k, err := w.old.read(&w.oldBuf, n); err != nil || k != n {
				return fmt.Errorf("bmstore: column %q: read old values: %v", w.meta.Title, err)
			}
		}
		// Runs of supplied rows come from the batch, the others from the
		// old file or null.
		w.out.Reset()
		for r := 0; r < n; {
			given := b.Given[r]
			e := r + 1
			for e < n && b.Given[e] == given {
				e++
			}
			switch {
			case given:
				w.out.appendRange(&b, r, e)
				setBits(w.t.written, w.rows+int64(r), w.rows+int64(e))
				w.given += int64(e - r)
			case w.old != nil:
				w.out.appendRange(&w.oldBuf, r, e)
			default:
				for range e - r {
					w.out.appendNull()
				}
			}
			r = e
		}
		src = &w.out
	}
	if err := w.tw.write([]*Column{src}); err != nil {
		return fmt.Errorf("bmstore: column %q: %w", w.meta.Title, err)
	}
	w.rows += int64(n)
	return nil
}

// WriteLent is Write of a batch the writer may keep, instead of copying
// it, until it calls release: a batch with every row given that is a
// whole row group (StoreRowGroup rows, or the column's last rows) at a
// row group's start is lent to the goroutine that encodes it, which calls
// release once it is written or has failed. Any other batch is copied as
// Write does, and release is called before WriteLent returns. release is
// called exactly once, whatever the outcome; the caller must not change
// the batch's values or flags before.
func (w *ColumnWriter) WriteLent(b Column, release func()) error {
	n := b.Len()
	if w.tw == nil || n == 0 || b.Type != w.meta.DataType || slices.Contains(b.Given, false) ||
		w.rows%int64(w.tw.group) != 0 || (n != w.tw.group && w.rows+int64(n) != w.t.rows) || w.rows+int64(n) > w.t.rows {
		err := w.Write(b)
		release()
		return err
	}
	if err := b.check(); err != nil {
		release()
		return err
	}
	if w.old != nil {
		if err := w.old.skip(int64(n)); err != nil {
			release()
			return fmt.Errorf("bmstore: column %q: read old values: %w", w.meta.Title, err)
		}
	}
	b.Given = nil // every row given
	if err := w.tw.writeGroup([]Column{b}, release); err != nil {
		return fmt.Errorf("bmstore: column %q: %w", w.meta.Title, err)
	}
	setBits(w.t.written, w.rows, w.rows+int64(n))
	w.given += int64(n)
	w.rows += int64(n)
	return nil
}

// setBits sets bits [from, to) of a bitset, a word at a time.
func setBits(bits []uint64, from, to int64) {
	for from < to {
		w, o := from>>6, from&63
		k := min(to-from, 64-o)
		mask := ^uint64(0)
		if k < 64 {
			mask = (1<<uint(k) - 1) << uint(o)
		}
		bits[w] |= mask
		from += k
	}
}

// Close finishes the column; it is an error unless exactly N rows were
// written.
func (w *ColumnWriter) Close() error {
	if w.tw == nil {
		return errors.New("bmstore: column writer closed")
	}
	if w.rows != w.t.rows {
		w.abort()
		return fmt.Errorf("bmstore: column %q: %d rows written, model has %d", w.meta.Title, w.rows, w.t.rows)
	}
	if err := w.finish(); err != nil {
		return err
	}
	t := w.t
	if w.given > 0 {
		t.anyRow = true
	}
	if w.isNew {
		t.cols = append(t.cols, w.meta)
		if !w.meta.Internal {
			t.changes.New = append(t.changes.New, w.meta.Title)
			t.changes.NewIDs = append(t.changes.NewIDs, w.meta.ColID)
		}
	} else {
		i := t.find(w.meta.ColID)
		t.cols[i].File = w.meta.File
		if w.meta.Internal {
			return nil
		}
		t.changes.Updated = append(t.changes.Updated, w.meta.Title)
		t.changes.UpdatedIDs = append(t.changes.UpdatedIDs, w.meta.ColID)
	}
	return nil
}

// finish closes the Parquet stream and fsyncs the temporary file.
func (w *ColumnWriter) finish() error {
	err := w.tw.close()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.tw = nil
	if w.old != nil {
		w.old.close()
	}
	if w.t.open == w {
		w.t.open = nil
	}
	if err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("bmstore: write column: %w", err)
	}
	if prev, ok := w.t.files[w.name]; ok {
		os.Remove(prev)
	}
	w.t.files[w.name] = w.f.Name()
	return nil
}

func (w *ColumnWriter) abort() {
	if w.tw == nil {
		return
	}
	w.tw.discard()
	w.tw = nil
	w.f.Close()
	os.Remove(w.f.Name())
	if w.old != nil {
		w.old.close()
	}
	if w.t.open == w {
		w.t.open = nil
	}
}
