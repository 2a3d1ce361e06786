package bmwire

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// DefaultBatchRows is the number of rows of a batch when FileSpec leaves
// it zero.
const DefaultBatchRows = 65536

// FileSpec describes the update file Read expects.
type FileSpec struct {
	Kind blockmodel.ModelType
	// Input is the update's input_options.
	Input InputOptions
	// Columns are the update's new and update columns (Update.ValueColumns).
	Columns []ValueColumn
	// BatchRows is the number of rows per batch (DefaultBatchRows if 0).
	BatchRows int
}

// Batch is a batch of matched rows: Rows[r] is the model row of the r-th
// row and Values[c][r] its value of spec.Columns[c]. A batch and its
// slices are reused by the next one.
type Batch struct {
	Rows   []int64
	Values []Values
	// IJKMin, IJKMax bound the parent indices of the batch's rows.
	IJKMin, IJKMax [3]uint32
}

// Sink receives the batches of a file. Nothing it received may be
// committed unless Read returns nil.
type Sink interface {
	// Start is called before the first batch with the file's row count
	// (-1 when not known in advance, as for CSV).
	Start(rows int64) error
	// Batch receives one batch (valid until the call returns).
	Batch(b *Batch) error
}

// Summary describes a file Read accepted.
type Summary struct {
	// Rows is the number of data rows written.
	Rows int64
	// IndexForm is true when rows were identified by index columns, false
	// for coordinates.
	IndexForm bool
	// BBox is the parent-index box of the rows (nil for an empty file).
	BBox *blockmodel.IJKBox
}

// chooseIdentity picks the identity form from the file's columns (titles
// after mapping): the index form when complete, else the coordinate form;
// ok false when neither is complete.
func chooseIdentity(kind blockmodel.ModelType, has func(string) bool) (cols []string, index, ok bool) {
	all := func(l []string) bool {
		for _, c := range l {
			if !has(c) {
				return false
			}
		}
		return true
	}
	if l := blockmodel.IndexColumns(kind); all(l) {
		return l, true, true
	}
	if l := blockmodel.CoordinateColumns(kind); all(l) {
		return l, false, true
	}
	return nil, false, false
}

// rawBatch is what a source fills per batch: the identity columns, the
// value columns (declared types) and the rows whose cells were bad
// (already reported).
type rawBatch struct {
	first int64 // data row number (1-based) of row 0
	n     int
	ident []Values
	vals  []Values
	bad   []bool
}

func (b *rawBatch) reset(first int64) {
	b.first, b.n = first, 0
	for i := range b.ident {
		b.ident[i].reset()
	}
	for i := range b.vals {
		b.vals[i].reset()
	}
	b.bad = b.bad[:0]
}

// source is one file format's reader.
type source interface {
	// fill reads up to max rows into b; 0 rows at the end of the file.
	fill(b *rawBatch, max int, c *collector) error
}

// matcher turns raw batches into batches: identity checks, locating,
// duplicates.
type matcher struct {
	spec  FileSpec
	index bool
	loc   blockmodel.Locator
	seen  []uint64 // bitset of matched model rows
	out   Batch
	sum   Summary
	c     *collector
	// whole: the rows are a model's whole parents (regular, or a
	// sub-blocked model's version 1) identified by index, so row = i +
	// nx·(j + ny·k) (processWhole); dims are nx, ny, nz.
	whole bool
	dims  [3]uint64
	// near: the model's rows, to locate index rows from the row after
	// the last one located (LocateNear; files mostly in row order).
	near *blockmodel.Blocks
	last int64
}

func newMatcher(spec FileSpec, index bool, loc blockmodel.Locator, c *collector, nident int) *matcher {
	m := &matcher{spec: spec, index: index, loc: loc, c: c}
	m.seen = make([]uint64, (loc.NumRows()+63)/64)
	if b, ok := loc.(*blockmodel.Blocks); ok && index {
		m.near, m.last = b, -1
		if b.Whole() && (nident == 3 || nident == 4) {
			p := b.Geometry().Parents()
			m.whole, m.dims = true, [3]uint64{uint64(p[0]), uint64(p[1]), uint64(p[2])}
		}
	}
	m.out.Values = make([]Values, len(spec.Columns))
	for i, col := range spec.Columns {
		m.out.Values[i].Type = col.Type
	}
	m.sum.IndexForm = index
	return m
}

// process matches the rows of b and hands the good ones to sink.
func (m *matcher) process(b *rawBatch, sink Sink) error {
	out := &m.out
	out.Rows = out.Rows[:0]
	lo := [3]int64{math.MaxInt64, math.MaxInt64, math.MaxInt64}
	hi := [3]int64{-1, -1, -1}
	if !m.whole || !m.processWhole(b, &lo, &hi) {
		m.processRows(b, &lo, &hi)
	}
	if m.c.e.Total > 0 || len(out.Rows) == 0 {
		// Once the file is known bad nothing more reaches the sink, so a
		// batch that does reach it has every row matched: its values are
		// the source's, uncompacted.
		return nil
	}
	copy(out.Values, b.vals)
	for a := range 3 {
		out.IJKMin[a], out.IJKMax[a] = uint32(lo[a]), uint32(hi[a])
	}
	if m.sum.BBox == nil {
		b := blockmodel.NewIJKBox(lo, hi)
		m.sum.BBox = &b
	} else {
		for a, v := range m.sum.BBox.Axes() {
			v.Min, v.Max = min(v.Min, lo[a]), max(v.Max, hi[a])
		}
	}
	m.sum.Rows += int64(len(out.Rows))
	return sink.Batch(out)
}

// processWhole matches a batch of rows of whole parents given by index
// (m.whole) in one tight loop: row = i + nx·(j + ny·k), the bounds and
// the duplicate bitset checked per row, sidx (when given) 0. It handles
// only a batch without a problem: a bad cell, an empty identity cell, a
// row out of the model or a duplicate makes it undo what it marked and
// return false, and the batch goes through processRows, which reports
// each problem as it always did.
func (m *matcher) processWhole(b *rawBatch, lo, hi *[3]int64) bool {
	n := b.n
	id := b.ident
	narrow := true
	for a := range id {
		if id[a].Valid != nil || id[a].Len() != n {
			return false
		}
		narrow = narrow && len(id[a].u32) == n
	}
	for _, bad := range b.bad[:n] {
		if bad {
			return false
		}
	}
	if !narrow {
		for a := range id {
			id[a].widen()
		}
	}
	rows := grow(m.out.Rows[:0], n)
	var ok bool
	if narrow {
		var sidx []uint32
		if len(id) == 4 {
			sidx = id[3].u32[:n]
		}
		ok = matchWhole(m, rows, id[0].u32[:n], id[1].u32[:n], id[2].u32[:n], sidx, lo, hi)
	} else {
		var sidx []int64
		if len(id) == 4 {
			sidx = id[3].Int[:n]
		}
		ok = matchWhole(m, rows, id[0].Int[:n], id[1].Int[:n], id[2].Int[:n], sidx, lo, hi)
	}
	if ok {
		m.out.Rows = rows
	}
	return ok
}

// matchWhole is the loop of processWhole over the indices is, js, ks
// (and sidx, nil for a regular model), which are all UINT32 values as
// read or all widened to int64: it fills rows, or undoes what it marked
// and returns false at the first row with a problem. A batch of
// consecutive rows (a file in model order) is checked as a range of the
// duplicate bitset and its bounds taken from its first and last rows;
// any other goes row by row (matchScattered).
func matchWhole[T uint32 | int64](m *matcher, rows []int64, is, js, ks, sidx []T, lo, hi *[3]int64) bool {
	if len(rows) > 0 && consecutive(m, rows, is, js, ks, sidx) == len(rows) {
		return m.markRun(rows, lo, hi)
	}
	return matchScattered(m, rows, is, js, ks, sidx, lo, hi)
}

// consecutive fills rows with the rows of the leading indices that are in
// the model and consecutive rows; it returns how many.
func consecutive[T uint32 | int64](m *matcher, rows []int64, is, js, ks, sidx []T) int {
	nx, ny, nz := m.dims[0], m.dims[1], m.dims[2]
	is, js, ks = is[:len(rows)], js[:len(rows)], ks[:len(rows)]
	next := int64(-1)
	for r := range rows {
		i, j, k := int64(is[r]), int64(js[r]), int64(ks[r])
		if uint64(i) >= nx || uint64(j) >= ny || uint64(k) >= nz || (sidx != nil && sidx[r] != 0) {
			return r
		}
		row := i + int64(nx)*(j+int64(ny)*k)
		if r > 0 && row != next {
			return r
		}
		rows[r] = row
		next = row + 1
	}
	return len(rows)
}

// markRun marks the consecutive rows rows[0]…rows[len-1] in the duplicate
// bitset and widens lo, hi to their parent indices; false, marking
// nothing, when one of them is marked already.
func (m *matcher) markRun(rows []int64, lo, hi *[3]int64) bool {
	a, b := uint64(rows[0]), uint64(rows[len(rows)-1])
	wa, wb := a>>6, b>>6
	if wb >= uint64(len(m.seen)) {
		return false
	}
	first, last := ^uint64(0)<<(a&63), ^uint64(0)>>(63-b&63)
	if wa == wb {
		first &= last
	}
	seen := m.seen[wa : wb+1]
	if seen[0]&first != 0 || (wa != wb && seen[len(seen)-1]&last != 0) {
		return false
	}
	if len(seen) > 2 {
		for _, w := range seen[1 : len(seen)-1] {
			if w != 0 {
				return false
			}
		}
	}
	seen[0] |= first
	if wa != wb {
		seen[len(seen)-1] |= last
		full := seen[1 : len(seen)-1]
		for x := range full {
			full[x] = ^uint64(0)
		}
	}
	// Rows a to b cover i from i(a) to i(b) on one line of j, every i
	// across lines; likewise j within one level of k.
	nx, ny := int64(m.dims[0]), int64(m.dims[1])
	ia, ja, ka := int64(a)%nx, int64(a)/nx%ny, int64(a)/(nx*ny)
	ib, jb, kb := int64(b)%nx, int64(b)/nx%ny, int64(b)/(nx*ny)
	l, h := [3]int64{0, 0, ka}, [3]int64{nx - 1, ny - 1, kb}
	if ka == kb {
		l[1], h[1] = ja, jb
		if ja == jb {
			l[0], h[0] = ia, ib
		}
	}
	for x := range 3 {
		lo[x], hi[x] = min(lo[x], l[x]), max(hi[x], h[x])
	}
	return true
}

// matchScattered is matchWhole row by row. The duplicate bits of rows in
// one word of the bitset are gathered in a register and checked against
// the bitset together, so that no row waits for the store of the row
// before it.
func matchScattered[T uint32 | int64](m *matcher, rows []int64, is, js, ks, sidx []T, lo, hi *[3]int64) bool {
	nx, ny, nz := m.dims[0], m.dims[1], m.dims[2]
	seen := m.seen
	li, lj, lk, hi0, hj, hk := lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
	// The bits of rows[from:r] are in acc, for word cw, not yet in seen.
	var acc uint64
	cw, from := uint64(0), 0
	for r := range rows {
		i, j, k := int64(is[r]), int64(js[r]), int64(ks[r])
		if uint64(i) >= nx || uint64(j) >= ny || uint64(k) >= nz || (sidx != nil && sidx[r] != 0) {
			m.unsee(rows[:from])
			return false
		}
		row := i + int64(nx)*(j+int64(ny)*k)
		w, bit := uint64(row)>>6, uint64(1)<<(uint64(row)&63)
		if w != cw {
			if acc != 0 {
				if cw >= uint64(len(seen)) || seen[cw]&acc != 0 {
					m.unsee(rows[:from])
					return false
				}
				seen[cw] |= acc
			}
			cw, acc, from = w, 0, r
		}
		if acc&bit != 0 {
			m.unsee(rows[:from])
			return false
		}
		acc |= bit
		rows[r] = row
		li, hi0 = min(li, i), max(hi0, i)
		lj, hj = min(lj, j), max(hj, j)
		lk, hk = min(lk, k), max(hk, k)
	}
	if acc != 0 {
		if cw >= uint64(len(seen)) || seen[cw]&acc != 0 {
			m.unsee(rows[:from])
			return false
		}
		seen[cw] |= acc
	}
	*lo, *hi = [3]int64{li, lj, lk}, [3]int64{hi0, hj, hk}
	return true
}

// unsee clears the duplicate bits of rows (what processWhole marked
// before it gave up on a batch).
func (m *matcher) unsee(rows []int64) {
	for _, row := range rows {
		m.seen[row>>6] &^= 1 << (row & 63)
	}
}

// processRows matches the rows of b one by one through the Locator,
// reporting each problem, and appends the matched ones to m.out.Rows.
func (m *matcher) processRows(b *rawBatch, lo, hi *[3]int64) {
	out := &m.out
	for a := range b.ident {
		b.ident[a].widen()
	}
	for r := 0; r < b.n; r++ {
		ok := !b.bad[r]
		var ijk [3]uint32
		var ijkKnown bool
		row := int64(-1)
		if ok {
			for a := range b.ident {
				if !b.ident[a].IsValid(r) {
					m.c.add(b.first+int64(r), nil, "%s is empty", m.identName(a))
					ok = false
				}
			}
		}
		if ok {
			if m.index {
				id := b.ident
				ijk = [3]uint32{uint32(id[0].Int[r]), uint32(id[1].Int[r]), uint32(id[2].Int[r])}
				ijkKnown = true
				var sub blockmodel.SubID
				switch len(id) {
				case 4:
					sub = blockmodel.SidxID(uint32(id[3].Int[r]))
				case 9:
					var s, e [3]uint8
					for a := range 3 {
						s[a], e[a] = uint8(id[3+a].Int[r]), uint8(id[6+a].Int[r])
					}
					sub = blockmodel.CornersID(s, e)
				}
				if m.near != nil {
					row, ok = m.near.LocateNear(m.last+1, ijk[0], ijk[1], ijk[2], sub)
					if ok {
						m.last = row
					}
				} else {
					row, ok = m.loc.Locate(ijk[0], ijk[1], ijk[2], sub)
				}
			} else {
				id := b.ident
				var d [3]float64
				if len(id) == 6 {
					d = [3]float64{id[3].Float[r], id[4].Float[r], id[5].Float[r]}
				}
				row, ijk, ok = m.loc.LocateXYZ(id[0].Float[r], id[1].Float[r], id[2].Float[r], d[0], d[1], d[2])
				ijkKnown = ok
			}
			// The error paths take copies of ijk: its address would move
			// it to the heap on every row.
			if !ok {
				var at *[3]uint32
				if ijkKnown {
					c := ijk
					at = &c
				}
				m.c.add(b.first+int64(r), at, "matches no block of the model")
			} else if m.seen[row>>6]&(1<<(row&63)) != 0 {
				c := ijk
				m.c.add(b.first+int64(r), &c, "matches a block another row of the file matched (duplicate)")
				ok = false
			} else {
				m.seen[row>>6] |= 1 << (row & 63)
			}
		}
		if ok {
			out.Rows = append(out.Rows, row)
			for a := range 3 {
				lo[a] = min(lo[a], int64(ijk[a]))
				hi[a] = max(hi[a], int64(ijk[a]))
			}
		}
	}
}

func (m *matcher) identName(a int) string {
	if m.index {
		return blockmodel.IndexColumns(m.spec.Kind)[a]
	}
	return blockmodel.CoordinateColumns(m.spec.Kind)[a]
}

// run drives a source to its end.
func run(src source, spec FileSpec, index bool, loc blockmodel.Locator, sink Sink, c *collector, ident []string) (Summary, error) {
	m := newMatcher(spec, index, loc, c, len(ident))
	b := &rawBatch{ident: make([]Values, len(ident)), vals: make([]Values, len(spec.Columns))}
	for i, n := range ident {
		b.ident[i].Type = systemType(n)
	}
	for i, col := range spec.Columns {
		b.vals[i].Type = col.Type
	}
	batch := spec.BatchRows
	if batch <= 0 {
		batch = DefaultBatchRows
	}
	var next int64 = 1
	for {
		b.reset(next)
		if err := src.fill(b, batch, c); err != nil {
			if errors.Is(err, errStop) {
				break
			}
			return Summary{}, err
		}
		if b.n == 0 {
			break
		}
		next += int64(b.n)
		if err := m.process(b, sink); err != nil {
			return Summary{}, err
		}
		if c.full() {
			c.e.Stopped = true
			break
		}
	}
	if err := c.err(); err != nil {
		return Summary{}, err
	}
	return m.sum, nil
}

// errStop is returned by a source that found a file-level error (already
// collected).
var errStop = errors.New("bmwire: file unusable")

// fileColumns resolves titles to the file's column names through
// column_name_mapping (present reports whether the file has a column of
// that name) and picks the identity form; a file with neither form
// complete is reported. name returns the file column of a title, ok false
// when the file has none.
func fileColumns(spec FileSpec, present func(string) bool, c *collector) (name func(title string) (string, bool), ident []string, index bool) {
	mapped := fileNames(spec.Input)
	name = func(title string) (string, bool) {
		n := title
		if f, ok := mapped[title]; ok {
			n = f
		}
		return n, present(n)
	}
	ident, index, ok := chooseIdentity(spec.Kind, func(t string) bool { _, ok := name(t); return ok })
	if !ok {
		c.add(0, nil, "missing identity columns: the file needs %s or %s",
			strings.Join(blockmodel.IndexColumns(spec.Kind), ", "), strings.Join(blockmodel.CoordinateColumns(spec.Kind), ", "))
	}
	return name, ident, index
}

// fileNames returns the file column name of each title (identity names and
// value titles) given the column name mapping.
func fileNames(in InputOptions) map[string]string {
	m := map[string]string{}
	for _, x := range in.Mapping {
		m[x.Title] = x.FileColumn
	}
	return m
}

// Read reads an update file (Parquet or CSV per spec.Input.Format) of size
// bytes, matches its rows through loc and hands batches to sink. A file
// with any problem gives a *FileError (the first MaxFileErrors problems);
// other errors are faults of reading.
func Read(r io.ReaderAt, size int64, spec FileSpec, loc blockmodel.Locator, sink Sink) (Summary, error) {
	switch spec.Input.Format {
	case FormatCSV:
		return ReadCSV(io.NewSectionReader(r, 0, size), spec, loc, sink)
	case FormatParquet, "":
		return ReadParquet(r, size, spec, loc, sink)
	}
	return Summary{}, fmt.Errorf("bmwire: unsupported file format %q", spec.Input.Format)
}
