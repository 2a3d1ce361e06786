package bmjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// subKey is a sub-block of the parent grid: flat parent index and corners.
type subKey struct {
	p    int64
	s, e [3]uint8
}

// subLocator is the Locator of a geometry-change file: it matches each row
// to a sub-block of the parent grid (whether the model has it or not) and
// numbers the distinct sub-blocks in file order, so that bmwire reports a
// sub-block given twice as a duplicate.
type subLocator struct {
	g       *blockmodel.Geometry
	n       int64
	ids     map[subKey]int64
	keys    []subKey
	bySidx  bool // a row came in the sidx index form
	outside bool
}

func newSubLocator(g *blockmodel.Geometry, n int64) *subLocator {
	return &subLocator{g: g, n: n, ids: map[subKey]int64{}}
}

// NumRows implements blockmodel.Locator: the bound on distinct sub-blocks.
func (l *subLocator) NumRows() int64 { return l.n }

func (l *subLocator) id(k subKey) (int64, bool) {
	if v, ok := l.ids[k]; ok {
		return v, true
	}
	if int64(len(l.keys)) >= l.n {
		return -1, false
	}
	v := int64(len(l.keys))
	l.ids[k] = v
	l.keys = append(l.keys, k)
	return v, true
}

// Locate implements blockmodel.Locator for the flexible start/end form;
// the sidx form cannot describe a new sub-block's extent and is refused.
func (l *subLocator) Locate(i, j, k uint32, sub blockmodel.SubID) (int64, bool) {
	if !sub.HasCorners {
		l.bySidx = true
		return -1, false
	}
	if !l.g.ContainsParent(i, j, k) {
		return -1, false
	}
	n := l.g.Subblocks()
	for a := range 3 {
		if sub.Start[a] >= sub.End[a] || int(sub.End[a]) > n[a] {
			return -1, false
		}
	}
	return l.id(subKey{p: l.g.ParentIndex(i, j, k), s: sub.Start, e: sub.End})
}

// LocateXYZ implements blockmodel.Locator: any sub-block of the parent grid
// whose centroid and extent match (blockmodel.Geometry.ResolveXYZ).
func (l *subLocator) LocateXYZ(x, y, z, dx, dy, dz float64) (int64, [3]uint32, bool) {
	i, j, k, s, e, ok := l.g.ResolveXYZ(x, y, z, dx, dy, dz)
	if !ok {
		return -1, [3]uint32{}, false
	}
	id, ok := l.id(subKey{p: l.g.ParentIndex(i, j, k), s: s, e: e})
	return id, [3]uint32{i, j, k}, ok
}

// fileRowBound is an upper bound of the data rows of an update file: the
// row count of a Parquet file, the line count of a CSV file.
func fileRowBound(r io.ReaderAt, size int64, format string) (int64, error) {
	if format == bmwire.FormatCSV {
		var n int64 = 1
		buf := make([]byte, 1<<20)
		sr := io.NewSectionReader(r, 0, size)
		for {
			k, err := sr.Read(buf)
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return 0, fmt.Errorf("bmjob: update file: %w", err)
			}
		}
	}
	f, err := bmwire.OpenParquet(r, size)
	if err != nil {
		return 0, &bmwire.FileError{Errors: []bmwire.RowError{{Message: "not a Parquet file: " + err.Error()}}, Total: 1}
	}
	return f.NumRows(), nil
}

// newRow is a row of the new sub-block set and where its values come from.
type newRow struct {
	key  subKey
	file int64 // id of the file row giving it, or -1
	old  int64 // the same sub-block's row in the latest version, or -1
	fill int64 // the latest version's row covering its centroid, or -1
}

// applyGeometryChange applies an update with geometry_change true
// (A.7.3): the file's sub-blocks replace those of the parents it touches;
// with replace the other parents become whole, with merge they keep their
// sub-blocks. The new set must be valid for the kind (A.2.4); a
// fully-sub-blocked model with fill_subblocks completes a split parent's
// missing sub-blocks. Every column is rewritten: file columns take the
// file's values; the other values of a sub-block that existed before are
// kept; a new sub-block takes, with fill_subblocks, the values of the old
// block covering its centroid, else null.
func applyGeometryChange(ctx context.Context, s *bmstore.Store, tx *bmstore.Tx, in UpdateInput, info bmwire.ModelInfo, meta *bmstore.Meta, batch int) error {
	u, g, base := in.Update, in.Geometry, tx.Base()
	if !u.NeedsFile() {
		e := &blockmodel.ValidationError{}
		e.Add("geometry_change", "a geometry change needs a file: give columns.new or columns.update")
		return e.Err()
	}
	r, size, closeFile, err := openFile(in)
	if err != nil {
		return err
	}
	defer closeFile()
	bound := in.FileRows
	if bound <= 0 {
		if bound, err = fileRowBound(r, size, u.Input.Format); err != nil {
			return err
		}
	}
	bound = clampRows(bound) // a footer may claim any count
	cols := u.ValueColumns(info)
	// Memory is bounded before anything is loaded: the latest rows, the
	// file's rows (indexed, their values held) and the new rows, counted
	// as the old and the file's (at most MaxRows: the rows the new set
	// really has are checked once the file is read).
	fits := func(out int64) error { return checkGeometrySize(base.Rows, bound, out, len(cols), in.MaxMemory) }
	if err := fits(min(base.Rows+bound, MaxRows)); err != nil {
		return err
	}
	old, err := Rows(ctx, s, in.ModelID, base, g)
	if err != nil {
		return err
	}
	loc := newSubLocator(g, bound)
	sink := newScatter(ctx, cols, bound)
	sum, err := bmwire.Read(r, size, bmwire.FileSpec{Kind: g.Type(), Input: u.Input, Columns: cols, BatchRows: batch}, loc, sink)
	if err != nil {
		var fe *bmwire.FileError
		if errors.As(err, &fe) && loc.bySidx {
			return &bmwire.FileError{Total: 1, Errors: []bmwire.RowError{{
				Message: "a geometry change needs rows given by coordinates (x, y, z, dx, dy, dz); the sidx form cannot describe new sub-blocks"}}}
		}
		return err
	}
	replace := u.UpdateType == bmwire.Replace
	fill := g.Type() == blockmodel.FullySubBlocked && !replace
	if u.FillSubblocks != nil {
		fill = fill && *u.FillSubblocks
	} else {
		fill = fill && in.ModelFillSubblocks
	}
	rows, err := newRows(ctx, g, old, loc.keys, replace, fill, fits)
	if err != nil {
		return err
	}
	// The new row identity.
	n := int64(len(rows))
	parent := make([]uint32, n)
	start, end := make([]uint8, 3*n), make([]uint8, 3*n)
	for i, nr := range rows {
		parent[i] = uint32(nr.key.p)
		copy(start[3*i:], nr.key.s[:])
		copy(end[3*i:], nr.key.e[:])
	}
	if _, err := blockmodel.NewBlocks(g, parent, start, end); err != nil {
		var ib *blockmodel.InvalidBlocksError
		if errors.As(err, &ib) {
			i, j, k := g.ParentIJK(int64(parent[ib.Row]))
			return &bmwire.FileError{Total: 1, Errors: []bmwire.RowError{{IJK: &[3]uint32{i, j, k},
				Message: "the sub-blocks of parent (" + fmt.Sprint(i, ",", j, ",", k) + ") after the update are not valid: " + ib.Reason}}}
		}
		return err
	}
	// Rewrite every column.
	for _, title := range u.Columns.Delete {
		col, _ := base.Column(title)
		if err := tx.DeleteColumn(col.ColID); err != nil {
			return fmt.Errorf("bmjob: delete column %q: %w", title, err)
		}
	}
	if err := tx.SetRows(n); err != nil {
		return fmt.Errorf("bmjob: geometry change: %w", err)
	}
	if err := writeIdentity(ctx, tx, base, parent, start, end, batch); err != nil {
		return err
	}
	fileCol := map[string]int{}
	for i, c := range cols {
		fileCol[blockmodel.TitleKey(c.Title)] = i
	}
	for i, nc := range u.Columns.New {
		d := newDense(nc.DataType, n, false)
		src := sink.cols[i]
		for r, nr := range rows {
			if nr.file >= 0 {
				copyValue(&d.col, int64(r), &src.col, nr.file)
			}
		}
		spec := bmstore.ColumnMeta{Title: nc.Title, DataType: nc.DataType, UnitID: nc.UnitID, Tags: nc.Tags}
		if err := writeNew(ctx, tx, spec, d, batch); err != nil {
			return err
		}
		sink.cols[i] = nil
	}
	deleted := map[string]bool{}
	for _, t := range u.Columns.Delete {
		deleted[blockmodel.TitleKey(t)] = true
	}
	for _, col := range base.UserColumns() {
		if deleted[blockmodel.TitleKey(col.Title)] {
			continue
		}
		prev, err := loadDense(ctx, s, in.ModelID, base, col)
		if err != nil {
			return err
		}
		fi, inFile := fileCol[blockmodel.TitleKey(col.Title)]
		d := newDense(col.DataType, n, false)
		for r, nr := range rows {
			switch {
			case inFile && nr.file >= 0:
				copyValue(&d.col, int64(r), &sink.cols[fi].col, nr.file)
			case inFile && replace:
			case nr.old >= 0:
				copyValue(&d.col, int64(r), &prev.col, nr.old)
			case fill && nr.fill >= 0:
				copyValue(&d.col, int64(r), &prev.col, nr.fill)
			}
		}
		if err := writeUpdate(ctx, tx, col, d, true, batch); err != nil {
			return err
		}
	}
	others := 0 // user columns the file does not give
	for _, col := range base.UserColumns() {
		_, inFile := fileCol[blockmodel.TitleKey(col.Title)]
		if !inFile && !deleted[blockmodel.TitleKey(col.Title)] {
			others++
		}
	}
	if err := writeFilled(ctx, s, tx, in.ModelID, base, rows, fill, others > 0, batch); err != nil {
		return err
	}
	meta.BBox = storeBBox(sum.BBox)
	uploaded := sum.Rows
	meta.BlocksUploaded = &uploaded
	ut := u.UpdateType
	meta.UpdateType = &ut
	return nil
}

// writeFilled writes ColFilled for the new rows of a geometry change (when
// the base version has it or a row was filled): rows filled from their
// parent's previous block are stamped with the new version; a row kept from
// before carries its state (still wholly derived: stamped again); a file
// row whose other columns come from a derived row, or from a filled one, is
// partly derived (−1); every other row is given (0).
func writeFilled(ctx context.Context, s *bmstore.Store, tx *bmstore.Tx, modelID string, base *bmstore.Version, rows []newRow, fill, others bool, batch int) error {
	cur := int64(base.VersionID + 1)
	var oldFilled, oldVID *dense
	prev, had := base.Column(ColFilled)
	had = had && prev.Internal
	if had {
		var err error
		if oldFilled, err = loadDense(ctx, s, modelID, base, prev); err != nil {
			return err
		}
		if oldVID, err = loadDense(ctx, s, modelID, base, bmstore.ColumnMeta{ColID: bmstore.VersionIDColumn, DataType: blockmodel.Int64}); err != nil {
			return err
		}
	}
	// derived: the state of an old row: 0 given, 1 wholly derived, 2 partly.
	derived := func(o int64) int {
		if oldFilled == nil {
			return 0
		}
		switch f := oldFilled.col.Ints[o]; {
		case f == 0:
			return 0
		case f == oldVID.col.Ints[o]:
			return 1
		}
		return 2
	}
	d := newDense(blockmodel.Int64, int64(len(rows)), false)
	d.col.Null = nil
	some := false
	for r, nr := range rows {
		var v int64
		switch {
		case nr.file >= 0 && nr.old >= 0:
			if others && derived(nr.old) > 0 {
				v = -1
			}
		case nr.file >= 0:
			if others && fill && nr.fill >= 0 {
				v = -1
			}
		case nr.old >= 0:
			switch derived(nr.old) {
			case 1:
				v = cur
			case 2:
				v = -1
			}
		case fill && nr.fill >= 0:
			v = cur
		}
		d.col.Ints[r] = v
		some = some || v != 0
	}
	switch {
	case had:
		return writeUpdate(ctx, tx, prev, d, true, batch)
	case some:
		return writeNew(ctx, tx, bmstore.ColumnMeta{Title: ColFilled, DataType: blockmodel.Int64, Internal: true}, d, batch)
	}
	return nil
}

// newRows builds the new sub-block set in canonical order from the latest
// rows and the file's sub-blocks; check refuses a bound on its size before
// anything is made.
func newRows(ctx context.Context, g *blockmodel.Geometry, old *blockmodel.Blocks, keys []subKey, replace, fill bool, check func(rows int64) error) ([]newRow, error) {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sidx := func(k subKey) uint32 { return g.Sidx(k.s) }
	sort.Slice(order, func(a, b int) bool {
		ka, kb := keys[order[a]], keys[order[b]]
		if ka.p != kb.p {
			return ka.p < kb.p
		}
		return sidx(ka) < sidx(kb)
	})
	ws, we := g.WholeCorners()
	cells := g.SubCells()
	sub := g.Subblocks()
	oldN := old.NumRows()
	// At most: the old rows, the file's, and, with fill, the sub-cells a
	// parent given in part lacks. Bounded before anything is made.
	bound := oldN + int64(len(keys))
	for lo := 0; fill && lo < len(order); {
		hi := lo + 1
		for hi < len(order) && keys[order[hi]].p == keys[order[lo]].p {
			hi++
		}
		bound += int64(max(cells-(hi-lo), 0))
		lo = hi
	}
	if err := check(bound); err != nil {
		return nil, err
	}
	out := make([]newRow, 0, oldN+int64(len(keys)))
	// cellRow indexes the old rows of the parent being matched by sub-cell
	// (x fastest), for a parent of more than indexFrom rows: a parent split
	// into many sub-blocks is matched in time linear in its cells, not in
	// the product of its old and new rows.
	const indexFrom = 16
	var cellRow []int64
	indexed := int64(-1) // the first old row of the parent cellRow holds
	cellOf := func(c [3]int) int { return c[0] + sub[0]*(c[1]+sub[1]*c[2]) }
	// covering finds, among old rows [lo, hi) of one parent, the row whose
	// corners hold the centre of sub-block k, and the row equal to k (the
	// old rows tile the parent without overlap: one row holds the centre).
	covering := func(lo, hi int64, k subKey) (same, cover int64) {
		same, cover = -1, -1
		if hi-lo > indexFrom {
			if indexed != lo {
				if cellRow == nil {
					cellRow = make([]int64, cells)
				}
				for r := lo; r < hi; r++ {
					s, e := old.Corners(r)
					for z := int(s[2]); z < int(e[2]); z++ {
						for y := int(s[1]); y < int(e[1]); y++ {
							for x := int(s[0]); x < int(e[0]); x++ {
								cellRow[cellOf([3]int{x, y, z})] = r
							}
						}
					}
				}
				indexed = lo
			}
			var c [3]int
			for a := range 3 {
				c[a] = (int(k.s[a]) + int(k.e[a])) / 2 // the cell holding the centre
			}
			cover = cellRow[cellOf(c)]
			if s, e := old.Corners(cover); s == k.s && e == k.e {
				same = cover
			}
			return same, cover
		}
		for r := lo; r < hi; r++ {
			s, e := old.Corners(r)
			if s == k.s && e == k.e {
				same = r
			}
			in := true
			for a := range 3 {
				c2 := int(k.s[a]) + int(k.e[a]) // twice the centre
				in = in && 2*int(s[a]) <= c2 && c2 < 2*int(e[a])
			}
			if in && cover < 0 {
				cover = r
			}
		}
		return same, cover
	}
	ei := 0
	for oi := int64(0); oi < oldN; {
		if oi%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		p := old.Parent(oi)
		oj := oi + 1
		for oj < oldN && old.Parent(oj) == p {
			oj++
		}
		switch {
		case ei < len(order) && keys[order[ei]].p == p:
			ek := ei
			for ek < len(order) && keys[order[ek]].p == p {
				ek++
			}
			var own []newRow
			for _, id := range order[ei:ek] {
				own = append(own, newRow{key: keys[id], file: int64(id)})
			}
			if fill && len(own) < cells {
				// A fully-sub-blocked parent given partly as unit
				// sub-blocks: the missing ones are created (and filled).
				have := map[[3]uint8]bool{}
				unit := true
				for _, nr := range own {
					have[nr.key.s] = true
					for a := range 3 {
						unit = unit && int(nr.key.e[a]-nr.key.s[a]) == 1
					}
				}
				if unit {
					for c := range cells {
						s := g.SidxCell(uint32(c))
						if !have[s] {
							own = append(own, newRow{key: subKey{p: p, s: s, e: [3]uint8{s[0] + 1, s[1] + 1, s[2] + 1}}, file: -1})
						}
					}
					sort.Slice(own, func(a, b int) bool { return sidx(own[a].key) < sidx(own[b].key) })
				}
			}
			for i := range own {
				own[i].old, own[i].fill = covering(oi, oj, own[i].key)
			}
			out = append(out, own...)
			ei = ek
		case !replace || oj-oi == 1 && isWhole(old, oi, ws, we):
			for r := oi; r < oj; r++ {
				s, e := old.Corners(r)
				out = append(out, newRow{key: subKey{p: p, s: s, e: e}, file: -1, old: r, fill: r})
			}
		default:
			k := subKey{p: p, s: ws, e: we}
			nr := newRow{key: k, file: -1}
			nr.old, nr.fill = covering(oi, oj, k)
			out = append(out, nr)
		}
		oi = oj
	}
	return out, nil
}

// MaxRows bounds the rows of a version (sub-blocks included) that a
// geometry change may make (A.12). It is checked against an upper bound
// before any row is made: a split filled by fill_subblocks turns one row of
// the file into as many rows as a parent has sub-cells.
const MaxRows = blockmodel.MaxBlocks

// tooManyRows is the refusal of a geometry change that would make n rows.
func tooManyRows(n int64) error {
	e := &blockmodel.ValidationError{}
	e.Add("geometry_change", "the update could make a version of up to %d rows (sub-blocks included), more than %d", n, MaxRows)
	return e.Err()
}

func isWhole(b *blockmodel.Blocks, r int64, ws, we [3]uint8) bool {
	s, e := b.Corners(r)
	return s == ws && e == we
}

// writeIdentity writes the internal columns of the new rows.
func writeIdentity(ctx context.Context, tx *bmstore.Tx, base *bmstore.Version, parent []uint32, start, end []uint8, batch int) error {
	n := int64(len(parent))
	for c, title := range InternalColumns() {
		typ := blockmodel.UInt8
		if c == 0 {
			typ = blockmodel.UInt32
		}
		d := newDense(typ, n, false)
		d.col.Null = nil // every row has a value
		for r := range n {
			switch {
			case c == 0:
				d.col.Uints[r] = uint64(parent[r])
			case c <= 3:
				d.col.Uints[r] = uint64(start[3*r+int64(c-1)])
			default:
				d.col.Uints[r] = uint64(end[3*r+int64(c-4)])
			}
		}
		var err error
		if col, ok := base.Column(title); ok && col.Internal {
			err = writeUpdate(ctx, tx, col, d, true, batch)
		} else {
			err = writeNew(ctx, tx, bmstore.ColumnMeta{Title: title, DataType: typ, Internal: true}, d, batch)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// loadDense reads a whole column of a version into memory.
func loadDense(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, col bmstore.ColumnMeta) (*dense, error) {
	d := newDense(col.DataType, v.Rows, false)
	err := scanColumn(ctx, s, modelID, v, col.ColID, func(from int64, b *bmstore.Column) {
		for r := range b.Len() {
			copyValue(&d.col, from+int64(r), b, int64(r))
		}
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// copyValue sets row dr of dst (a full-length column) to row sr of src, of
// the same type.
func copyValue(dst *bmstore.Column, dr int64, src *bmstore.Column, sr int64) {
	null := src.IsNull(int(sr))
	switch familyOf(dst.Type) {
	case famFloat:
		if !null {
			dst.Floats[dr] = src.Floats[sr]
		}
		return
	case famInt:
		if !null {
			dst.Ints[dr] = src.Ints[sr]
		}
	case famUint:
		if !null {
			dst.Uints[dr] = src.Uints[sr]
		}
	case famBool:
		if !null {
			dst.Bools[dr] = src.Bools[sr]
		}
	default:
		if !null {
			dst.Strings[dr] = src.Strings[sr]
		}
	}
	dst.Null[dr] = null
}
