package bmjob

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// defaultBatch is the row batch of reading and writing.
const defaultBatch = 65536

// dense is one column's values for every row of a model, in row order, with
// the rows an update supplies flagged: what an update file or a task
// result becomes before it is streamed to the store. Floats use NaN for
// null; the other types a null flag.
type dense struct {
	col   bmstore.Column // full length; Given nil when every row is given
	given []bool
	count int64 // rows given
}

// newDense allocates a column of n rows of type t: with track, no row
// given (the values of rows not given are never read); without, every row
// null.
func newDense(t blockmodel.DataType, n int64, track bool) *dense {
	d := &dense{col: bmstore.Column{Type: t}}
	switch familyOf(t) {
	case famFloat:
		d.col.Floats = make([]float64, n)
		if !track { // a tracked column's rows not given are never read
			for i := range d.col.Floats {
				d.col.Floats[i] = math.NaN()
			}
		}
	case famInt:
		d.col.Ints = make([]int64, n)
		d.col.Null = make([]bool, n)
	case famUint:
		d.col.Uints = make([]uint64, n)
		d.col.Null = make([]bool, n)
	case famBool:
		d.col.Bools = make([]bool, n)
		d.col.Null = make([]bool, n)
	default:
		d.col.Strings = make([]string, n)
		d.col.Null = make([]bool, n)
	}
	if !track {
		for i := range d.col.Null {
			d.col.Null[i] = true
		}
	}
	if track {
		d.given = make([]bool, n)
	}
	return d
}

// family of a data type as bmstore.Column holds it.
type family int

const (
	famFloat family = iota
	famInt
	famUint
	famBool
	famStr
)

func familyOf(t blockmodel.DataType) family {
	switch t {
	case blockmodel.Float16, blockmodel.Float32, blockmodel.Float64:
		return famFloat
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32, blockmodel.UInt64:
		return famUint
	case blockmodel.Boolean:
		return famBool
	case blockmodel.Utf8:
		return famStr
	}
	return famInt
}

// set stores value r of v (the file's values of this column) at row.
func (d *dense) set(row int64, v *bmwire.Values, r int) {
	valid := v.IsValid(r)
	if d.given != nil && !d.given[row] {
		d.given[row] = true
	}
	d.count++
	c := &d.col
	switch familyOf(c.Type) {
	case famFloat:
		if valid {
			c.Floats[row] = v.Float[r]
		} else {
			c.Floats[row] = math.NaN()
		}
		return
	case famInt:
		if valid {
			c.Ints[row] = v.Int[r]
		}
	case famUint:
		if valid {
			if c.Type == blockmodel.UInt64 {
				c.Uints[row] = v.Uint[r]
			} else {
				c.Uints[row] = uint64(v.Int[r])
			}
		}
	case famBool:
		if valid {
			c.Bools[row] = v.Bool[r]
		}
	default:
		if valid {
			c.Strings[row] = v.Str[r]
		}
	}
	c.Null[row] = !valid
}

// setRun stores values r…r+n-1 of v at rows at…at+n-1: what set does for
// each, one type switch and bulk copies for the run.
func (d *dense) setRun(at int64, v *bmwire.Values, r, n int) {
	if d.given != nil {
		g := d.given[at : at+int64(n)]
		for x := range g {
			g[x] = true
		}
	}
	d.count += int64(n)
	c := &d.col
	var valid []bool
	if v.Valid != nil {
		valid = v.Valid[r : r+n]
	}
	switch familyOf(c.Type) {
	case famFloat:
		dst := c.Floats[at : at+int64(n)]
		copy(dst, v.Float[r:r+n])
		for x, ok := range valid {
			if !ok {
				dst[x] = math.NaN()
			}
		}
		return
	case famInt:
		copy(c.Ints[at:at+int64(n)], v.Int[r:r+n])
	case famUint:
		dst := c.Uints[at : at+int64(n)]
		if c.Type == blockmodel.UInt64 {
			copy(dst, v.Uint[r:r+n])
		} else {
			for x, y := range v.Int[r : r+n] {
				dst[x] = uint64(y)
			}
		}
	case famBool:
		copy(c.Bools[at:at+int64(n)], v.Bool[r:r+n])
	default:
		copy(c.Strings[at:at+int64(n)], v.Str[r:r+n])
	}
	null := c.Null[at : at+int64(n)]
	if valid == nil {
		clear(null)
		return
	}
	for x, ok := range valid {
		null[x] = !ok
	}
}

// slice returns rows [lo, hi) as a batch (sharing storage), Given set when
// only some rows are given.
func (d *dense) slice(lo, hi int64, allGiven bool) bmstore.Column {
	c := d.col
	out := bmstore.Column{Type: c.Type}
	switch familyOf(c.Type) {
	case famFloat:
		out.Floats = c.Floats[lo:hi]
	case famInt:
		out.Ints = c.Ints[lo:hi]
	case famUint:
		out.Uints = c.Uints[lo:hi]
	case famBool:
		out.Bools = c.Bools[lo:hi]
	default:
		out.Strings = c.Strings[lo:hi]
	}
	if c.Null != nil {
		out.Null = c.Null[lo:hi]
	}
	if d.given != nil && !allGiven {
		out.Given = d.given[lo:hi]
	}
	return out
}

// write streams d to a column writer in batches and closes it.
func (d *dense) write(ctx context.Context, w *bmstore.ColumnWriter, n int64, batch int) error {
	all := d.given == nil || d.count == n
	for lo := int64(0); lo < n; lo += int64(batch) {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(n, lo+int64(batch))
		if err := w.Write(d.slice(lo, hi, all)); err != nil {
			return err
		}
	}
	return w.Close()
}

// writeNew adds d as a new column of tx.
func writeNew(ctx context.Context, tx *bmstore.Tx, spec bmstore.ColumnMeta, d *dense, batch int) error {
	w, err := tx.AddColumn(spec)
	if err != nil {
		return fmt.Errorf("bmjob: add column %q: %w", spec.Title, err)
	}
	if err := d.write(ctx, w, tx.Rows(), batch); err != nil {
		return fmt.Errorf("bmjob: write column %q: %w", spec.Title, err)
	}
	return nil
}

// writeUpdate writes d over an existing column of tx: the given rows, the
// others kept (merge) or null (replace).
func writeUpdate(ctx context.Context, tx *bmstore.Tx, col bmstore.ColumnMeta, d *dense, replace bool, batch int) error {
	// Every row given: merge and replace are the same, and replace spares
	// the store reading the old values.
	replace = replace || d.given == nil || d.count == tx.Rows()
	w, err := tx.UpdateColumn(col.ColID, replace)
	if err != nil {
		return fmt.Errorf("bmjob: update column %q: %w", col.Title, err)
	}
	if err := d.write(ctx, w, tx.Rows(), batch); err != nil {
		return fmt.Errorf("bmjob: write column %q: %w", col.Title, err)
	}
	return nil
}

// scatter is the bmwire.Sink of an update: it places each file row's values
// at its model row.
type scatter struct {
	ctx  context.Context
	cols []*dense
	rows int64
}

func newScatter(ctx context.Context, cols []bmwire.ValueColumn, rows int64) *scatter {
	s := &scatter{ctx: ctx, rows: rows}
	for _, c := range cols {
		s.cols = append(s.cols, newDense(c.Type, rows, true))
	}
	return s
}

// Start implements bmwire.Sink.
func (s *scatter) Start(int64) error { return nil }

// Batch implements bmwire.Sink.
func (s *scatter) Batch(b *bmwire.Batch) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	for c, d := range s.cols {
		d.setBatch(b.Rows, &b.Values[c])
	}
	return nil
}

// setBatch stores the values v of the model rows rows (one type switch a
// batch; the common case, a float column, in a tight loop).
func (d *dense) setBatch(rows []int64, v *bmwire.Values) {
	if familyOf(d.col.Type) == famFloat && v.Valid == nil {
		f := d.col.Floats
		for r, row := range rows {
			f[row] = v.Float[r]
		}
		if d.given != nil {
			for _, row := range rows {
				d.given[row] = true
			}
		}
		d.count += int64(len(rows))
		return
	}
	for r, row := range rows {
		d.set(row, v, r)
	}
}
