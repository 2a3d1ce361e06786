package bmjob

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// The values of sub_block_derivation (A.4.1).
const (
	derivationUser    = "user specified"
	derivationParent  = "derived from parent"
	derivationSomeCol = "some columns derived"
)

// derivation is the sub_block_derivation of a row from its ColFilled and
// version_id values.
func derivation(filled, versionID int64) string {
	switch {
	case filled == 0:
		return derivationUser
	case filled == versionID:
		return derivationParent
	}
	return derivationSomeCol
}

// outCol is one column of a query's output: where its values come from.
type outCol struct {
	header string
	typ    blockmodel.DataType
	system string // system column name, or "" for a user column
	scan   int    // index among the scanned columns (user columns, version_id)
	user   bool
}

// Query writes the result of query q on version v of a model to w (A.8)
// and describes it. The output starts with the geometry columns
// (indices or coordinates), then the resolved columns (titles or col_ids
// as headers per column_headers; version_id and sub_block_derivation when
// named); rows are in canonical order, restricted to the parents of an IJK
// bbox or to the rows whose centroid lies in an XYZ bbox (world
// coordinates, bounds inclusive), without the rows whose queried user
// columns are all null when exclude_null_rows is set. It reads only the
// queried columns' files and only the row range the bbox can select, in
// batches, and generates the system columns batch by batch: the model is
// never held whole in memory (the rows of a sub-blocked version are, about
// 13 bytes a row).
func Query(ctx context.Context, s *bmstore.Store, modelID string, g *blockmodel.Geometry, v *bmstore.Version, q *bmwire.Query, w io.Writer) (QueryResult, error) {
	info := ModelInfo(g, v)
	resolved, err := q.ResolveColumns(info)
	if err != nil {
		return QueryResult{}, err
	}
	blocks, err := Rows(ctx, s, modelID, v, g)
	if err != nil {
		return QueryResult{}, err
	}
	var cols []outCol
	var scan []string
	for _, name := range q.GeometrySet(g.Type()) {
		t, _ := blockmodel.SystemColumnType(name)
		cols = append(cols, outCol{header: name, typ: t, system: name, scan: -1})
	}
	for _, name := range resolved {
		if c, ok := v.Column(name); ok && !c.Internal && !blockmodel.IsSystemColumn(name) {
			h := c.Title
			if q.Output.ColumnHeaders == "id" {
				h = c.ColID
			}
			cols = append(cols, outCol{header: h, typ: c.DataType, scan: len(scan), user: true})
			scan = append(scan, c.ColID)
			continue
		}
		switch name {
		case blockmodel.ColVersionID:
			cols = append(cols, outCol{header: name, typ: blockmodel.Int64, system: name, scan: len(scan)})
			scan = append(scan, bmstore.VersionIDColumn)
		case blockmodel.ColSubBlockDerivation:
			oc := outCol{header: name, typ: blockmodel.Utf8, system: name, scan: -1}
			if c, ok := v.Column(ColFilled); ok && c.Internal {
				// read ColFilled and version_id, then derive
				oc.scan = len(scan)
				scan = append(scan, ColFilled, bmstore.VersionIDColumn)
			}
			cols = append(cols, oc)
		default:
			t, ok := blockmodel.SystemColumnType(name)
			if !ok {
				return QueryResult{}, fmt.Errorf("bmjob: query: unknown column %q", name)
			}
			cols = append(cols, outCol{header: name, typ: t, system: name, scan: -1})
		}
	}
	headers := make([]string, len(cols))
	types := make([]blockmodel.DataType, len(cols))
	for i, c := range cols {
		headers[i], types[i] = c.header, c.typ
	}
	res := QueryResult{Headers: headers, Columns: resolved}
	qw, err := bmstore.NewQueryWriter(w, headers, types, bmstore.QueryOptions{Format: q.Output.Format,
		Delimiter: rune(q.Output.Delimiter)}) // null rows are left out by queryRows
	if err != nil {
		return res, fmt.Errorf("bmjob: query: %w", err)
	}
	from, to := rowRange(blocks, q.BBox)
	if from < to {
		if err := queryRows(ctx, s, modelID, v, blocks, q.BBox, q.Output.ExcludeNullRows, cols, scan, from, to, qw); err != nil {
			return res, err
		}
	}
	if err := qw.Close(); err != nil {
		return res, fmt.Errorf("bmjob: query: %w", err)
	}
	res.Rows = qw.Rows()
	return res, nil
}

// rowRange is the range of rows a bbox can select: the rows of the
// parents from the box's first to its last corner, for an IJK box, or for
// an XYZ box the parents its world corners reach in the model frame (a
// conservative range; rows are then selected by centroid); else every row.
func rowRange(b *blockmodel.Blocks, box bmwire.BBox) (int64, int64) {
	n := b.NumRows()
	g := b.Geometry()
	var lo, hi [3]int64
	switch {
	case box.IJK != nil:
		for a, m := range box.IJK.Axes() {
			lo[a], hi[a] = m.Min, m.Max
		}
	case box.XYZ != nil:
		var ok bool
		if lo, hi, ok = parentsOfBox(g, box.XYZ); !ok {
			return 0, 0
		}
	default:
		return 0, n
	}
	plo := g.ParentIndex(uint32(lo[0]), uint32(lo[1]), uint32(lo[2]))
	phi := g.ParentIndex(uint32(hi[0]), uint32(hi[1]), uint32(hi[2]))
	first := sort.Search(int(n), func(r int) bool { return b.Parent(int64(r)) >= plo })
	last := sort.Search(int(n), func(r int) bool { return b.Parent(int64(r)) > phi })
	return int64(first), int64(last)
}

// parentsOfBox returns the parent-index box holding every parent whose
// centroid may lie in a world box (one parent of margin), false when none
// can.
func parentsOfBox(g *blockmodel.Geometry, box *blockmodel.BBox) (lo, hi [3]int64, ok bool) {
	size, np := g.ParentSize(), g.Parents()
	f := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	t := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for c := range 8 {
		x, y, z := box.XMinMax.Min, box.YMinMax.Min, box.ZMinMax.Min
		if c&1 != 0 {
			x = box.XMinMax.Max
		}
		if c&2 != 0 {
			y = box.YMinMax.Max
		}
		if c&4 != 0 {
			z = box.ZMinMax.Max
		}
		l := g.WorldToLocal(x, y, z)
		for a := range 3 {
			u := l[a] / size[a]
			f[a], t[a] = min(f[a], u), max(t[a], u)
		}
	}
	for a := range 3 {
		if math.IsNaN(f[a]) || math.IsNaN(t[a]) {
			return lo, hi, false
		}
		l, h := math.Floor(f[a])-1, math.Floor(t[a])+1
		if h < 0 || l > float64(np[a]-1) {
			return lo, hi, false
		}
		lo[a], hi[a] = int64(max(l, 0)), int64(min(h, float64(np[a]-1)))
	}
	return lo, hi, true
}

// qslot is one row group of a query's output being filled, then lent to
// the writer (bmstore.QueryWriter.WriteGroup) until it is encoded.
type qslot struct {
	out []bmstore.Column
}

// querySlots is the most output row groups a query fills or lends at once
// (one filled, the others encoded): each is fresh memory for a query
// (about 3.3 MB for i, j, k and a Float64 column). A machine of two cores
// keeps two (one filled, one encoded, as fast as three there and 3.3 MB
// less), and so does a query whose groups would take more than
// querySlotBudget in all.
const (
	querySlots      = 3
	querySlotBudget = 64 << 20
)

// slotsFor is the number of output row groups in flight for cols.
func slotsFor(cols []outCol) int {
	row := 0
	for _, c := range cols {
		if c.typ == blockmodel.Utf8 {
			row += 33 // a string's header and some of its bytes, and a null flag
		} else {
			row += 9
		}
	}
	if runtime.GOMAXPROCS(0) <= 2 || querySlots*row*bmstore.QueryRowGroup > querySlotBudget {
		return 2
	}
	return querySlots
}

// scanBatch is the rows a query reads at a time: a quarter of an output
// row group, as the Scanner holds two batches and a batch's memory is
// fresh for each query (a page fault costs 12 µs a 4 KiB page on the
// 2-core machine: 3 ms a MiB).
const scanBatch = bmstore.QueryRowGroup / 4

// queryRows streams rows [from, to) to qw: input batches are read and
// their selected rows appended to output row groups of exactly
// bmstore.QueryRowGroup rows (the last shorter), each lent to qw as it
// fills while the next is filled. A second goroutine hands the groups to
// qw, whose own goroutines encode them. Rows outside box, and with
// excludeNull rows whose user columns are all null, are left out.
func queryRows(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, blocks *blockmodel.Blocks,
	box bmwire.BBox, excludeNull bool, cols []outCol, scan []string, from, to int64, qw *bmstore.QueryWriter) error {
	const batch = bmstore.QueryRowGroup
	var sc *bmstore.Scanner
	if len(scan) > 0 {
		var err error
		if sc, err = s.Scan(modelID, v.VersionID, scan, from, to, scanBatch); err != nil {
			return fmt.Errorf("bmjob: query: %w", err)
		}
		defer sc.Close()
	}
	// Centroids and extents cost most of the system columns: computed only
	// when an output column or an XYZ box needs them.
	needCoords := box.XYZ != nil
	for _, c := range cols {
		switch c.system {
		case blockmodel.ColX, blockmodel.ColY, blockmodel.ColZ, blockmodel.ColDX, blockmodel.ColDY, blockmodel.ColDZ:
			needCoords = true
		}
	}
	// A model of whole parents with no sub-block columns and no box: the
	// output's i, j and k follow from the row (parent) number, generated
	// straight into the output (see ijkInto), no index columns a batch.
	g := blocks.Geometry()
	direct := !needCoords && box.IJK == nil && box.XYZ == nil && blocks.Whole() &&
		g.Type() != blockmodel.FullySubBlocked && g.Type() != blockmodel.VariableOctree && g.Type() != blockmodel.Flexible
	for _, c := range cols {
		switch c.system {
		case blockmodel.ColI, blockmodel.ColJ, blockmodel.ColK:
		case blockmodel.ColSubBlockDerivation:
			direct = false
		default:
			direct = direct && c.scan >= 0 // a scanned column, copied as it is
		}
	}
	slots := slotsFor(cols)
	free := make(chan *qslot, slots)
	for range slots {
		sl := &qslot{out: make([]bmstore.Column, len(cols))}
		for i, c := range cols {
			switch c.system {
			case blockmodel.ColI, blockmodel.ColJ, blockmodel.ColK, blockmodel.ColSidx: // 4 bytes a row, not 8
				sl.out[i] = bmstore.EmptyUint32Column(c.typ, bmstore.QueryRowGroup)
			default:
				sl.out[i] = bmstore.EmptyColumn(c.typ, bmstore.QueryRowGroup) // null flags come with a scanned column that has some
			}
		}
		free <- sl
	}
	work := make(chan *qslot)
	werr := make(chan error, 1)
	go func() {
		var err error
		for sl := range work {
			if err != nil {
				free <- sl
				continue
			}
			var once sync.Once
			release := func() { once.Do(func() { free <- sl }) }
			if err = geostat.Catch(func() error { return qw.WriteGroup(sl.out, release) }); err != nil {
				err = fmt.Errorf("bmjob: query: %w", err)
				release() // given back already unless WriteGroup panicked
			}
		}
		werr <- err
	}()
	var sys blockmodel.SystemBatch
	var sel []bool
	var runs [][2]int // the selected runs of a part of a batch (selectionOf)
	var cur *qslot
	fill := 0 // rows in cur
	err := func() error {
		for lo := from; lo < to; lo += scanBatch {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(to, lo+scanBatch)
			n := int(hi - lo)
			var scanned []bmstore.Column
			if sc != nil {
				var err error
				if scanned, err = sc.Next(); err != nil {
					if errors.Is(err, io.EOF) {
						err = io.ErrUnexpectedEOF
					}
					return fmt.Errorf("bmjob: query: %w", err)
				}
			}
			switch {
			case needCoords:
				if err := blocks.FillSystem(lo, hi, &sys); err != nil {
					return fmt.Errorf("bmjob: query: %w", err)
				}
			case !direct:
				fillIndices(blocks, lo, hi, &sys)
			}
			sel = selectRows(sel[:0], &sys, box, n)
			if excludeNull {
				excludeNullRows(sel, cols, scanned)
			}
			// The batch's selected rows, split where the row group fills.
			for r0 := 0; r0 < n; {
				if cur == nil {
					cur, fill = <-free, 0
					for i := range cur.out {
						cur.out[i].Reset()
					}
				}
				r1, k := r0, 0
				for room := batch - fill; r1 < n && k < room; r1++ {
					k += b2i(sel[r1])
				}
				if k == batch-fill {
					for r1 < n && !sel[r1] { // unselected rows after the last one taken
						r1++
					}
				}
				if direct {
					appendDirect(cur, cols, scanned, g, lo, sel, r0, r1, &runs)
				} else {
					appendRows(cur, cols, scanned, &sys, sel, r0, r1, &runs)
				}
				fill += k
				r0 = r1
				if fill == batch {
					work <- cur
					cur = nil
				}
			}
		}
		if cur != nil && fill > 0 {
			work <- cur
			cur = nil
		}
		return nil
	}()
	if cur != nil {
		free <- cur
	}
	close(work)
	if e := <-werr; err == nil {
		err = e
	}
	// every lent group comes back before the caller closes qw
	for range slots {
		<-free
	}
	return err
}

// appendRows appends the selected rows of [r0, r1) of a batch to the
// output columns of sl.
func appendRows(sl *qslot, cols []outCol, scanned []bmstore.Column, sys *blockmodel.SystemBatch, sel []bool, r0, r1 int, runs *[][2]int) {
	part := selectionOf(sel[r0:r1], runs)
	for i, c := range cols {
		dst := &sl.out[i]
		switch {
		case c.system == blockmodel.ColSubBlockDerivation:
			for r := r0; r < r1; r++ {
				if !sel[r] {
					continue
				}
				d := derivationUser
				if c.scan >= 0 {
					d = derivation(scanned[c.scan].Ints[r], scanned[c.scan+1].Ints[r])
				}
				dst.Strings = append(dst.Strings, d)
			}
		case c.scan >= 0:
			selectInto(dst, &scanned[c.scan], part, r0, r1)
		default:
			systemInto(dst, sys, c.system, part, r0, r1)
		}
	}
}

// appendDirect is appendRows for a model of whole parents without
// sub-block columns: the batch starts at row (parent) lo, and its i, j
// and k are generated from the row numbers.
func appendDirect(sl *qslot, cols []outCol, scanned []bmstore.Column, g *blockmodel.Geometry, lo int64, sel []bool, r0, r1 int, runs *[][2]int) {
	part := selectionOf(sel[r0:r1], runs)
	var ijk [3]*[]uint32
	for i, c := range cols {
		dst := &sl.out[i]
		switch c.system {
		case blockmodel.ColI:
			ijk[0] = &dst.U32
		case blockmodel.ColJ:
			ijk[1] = &dst.U32
		case blockmodel.ColK:
			ijk[2] = &dst.U32
		default: // a scanned column (see direct in queryRows)
			selectInto(dst, &scanned[c.scan], part, r0, r1)
		}
	}
	ijkInto(ijk, g, lo+int64(r0), part)
}

// ijkInto appends to *dst[0], *dst[1] and *dst[2] (nil when not asked)
// the i, j and k of the selected rows of the rows from row0 of a model
// whose rows are its parents in canonical order (i fastest): one pass over
// the selection, a run of selected rows at a time as segments along a row
// of the grid (consecutive i, one j and k). The indices are stepped from
// run to run, with carries, not divided out of each run's first row.
func ijkInto(dst [3]*[]uint32, g *blockmodel.Geometry, row0 int64, sel selection) {
	k := 0
	for _, run := range sel.runs {
		k += run[1] - run[0]
	}
	if sel.runs == nil {
		for _, s := range sel.sel {
			k += b2i(s)
		}
	}
	var out [3][]uint32
	for a, d := range dst {
		if d != nil {
			*d, out[a] = extend(*d, k)
		}
	}
	np := g.Parents()
	nx, ny := uint32(np[0]), uint32(np[1])
	i, j, kk := g.ParentIJK(row0)
	at := int64(0) // the row of i, j, kk (from row0)
	// carry moves j and kk to the next row of the grid once i passed nx
	carry := func() {
		if j++; j == ny {
			j, kk = 0, kk+1
		}
	}
	w := 0               // values written
	if sel.runs == nil { // short runs: rows one at a time
		for _, s := range sel.sel {
			if s {
				if out[0] != nil {
					out[0][w] = i
				}
				if out[1] != nil {
					out[1][w] = j
				}
				if out[2] != nil {
					out[2][w] = kk
				}
				w++
			}
			if i++; i == nx {
				i = 0
				carry()
			}
		}
		return
	}
	for _, run := range sel.runs {
		// step to the run's first row: within the row of the grid, past
		// its end once, or (a longer gap) from the row number
		switch gap := int64(run[0]) - at; {
		case gap < int64(nx-i):
			i += uint32(gap)
		case gap < int64(nx-i)+int64(nx):
			i += uint32(gap - int64(nx))
			carry()
		default:
			i, j, kk = g.ParentIJK(row0 + int64(run[0]))
		}
		for left := run[1] - run[0]; left > 0; {
			seg := min(left, int(nx-i))
			if o := out[0]; o != nil {
				o = o[w : w+seg]
				for d := range o {
					o[d] = i + uint32(d)
				}
			}
			if o := out[1]; o != nil {
				o = o[w : w+seg]
				for d := range o {
					o[d] = j
				}
			}
			if o := out[2]; o != nil {
				o = o[w : w+seg]
				for d := range o {
					o[d] = kk
				}
			}
			w, left = w+seg, left-seg
			if i += uint32(seg); i == nx {
				i = 0
				carry()
			}
		}
		at = int64(run[1])
	}
}

// extend lengthens s by k elements, returned as seg to be set.
func extend[T any](s []T, k int) (_, seg []T) {
	at := len(s)
	s = slices.Grow(s, k)[:at+k]
	return s, s[at:]
}

// selectRows flags the rows of a batch a bbox selects: an IJK box by the
// parent's indices, an XYZ box by the centroid (bounds inclusive).
func selectRows(sel []bool, sys *blockmodel.SystemBatch, box bmwire.BBox, n int) []bool {
	if box.IJK == nil && box.XYZ == nil { // every row
		var all []bool
		sel, all = extend(sel, n)
		setFlags(all)
		return sel
	}
	for r := range n {
		ok := true
		switch {
		case box.IJK != nil:
			b := box.IJK
			in := func(v uint32, m blockmodel.IndexMinMax) bool { return int64(v) >= m.Min && int64(v) <= m.Max }
			ok = in(sys.I[r], b.IMinMax) && in(sys.J[r], b.JMinMax) && in(sys.K[r], b.KMinMax)
		case box.XYZ != nil:
			b := box.XYZ
			in := func(v float64, m blockmodel.MinMax) bool { return v >= m.Min && v <= m.Max }
			ok = in(sys.X[r], b.XMinMax) && in(sys.Y[r], b.YMinMax) && in(sys.Z[r], b.ZMinMax)
		}
		sel = append(sel, ok)
	}
	return sel
}

// excludeNullRows deselects the rows whose user columns are all null
// (A.8's exclude_null_rows); with no user column no row is left out.
func excludeNullRows(sel []bool, cols []outCol, scanned []bmstore.Column) {
	var user []*bmstore.Column
	for _, c := range cols {
		if c.user {
			user = append(user, &scanned[c.scan])
		}
	}
	if len(user) == 0 {
		return
	}
	if u := user[0]; len(user) == 1 && u.Floats != nil && u.Null != nil {
		// one float column (the common query): the null flags 8 at a
		// time, then NaN values (a null too, rarely there)
		s, nb := boolBytes(sel), boolBytes(u.Null[:len(sel)])
		r := 0
		for ; r+8 <= len(s); r += 8 {
			binary.LittleEndian.PutUint64(s[r:], binary.LittleEndian.Uint64(s[r:])&^binary.LittleEndian.Uint64(nb[r:]))
		}
		for ; r < len(s); r++ {
			s[r] &^= nb[r]
		}
		for r, f := range u.Floats[:len(sel)] {
			if f != f {
				sel[r] = false
			}
		}
		return
	}
	for r, ok := range sel {
		if !ok {
			continue
		}
		keep := false
		for _, u := range user {
			if !u.IsNull(r) {
				keep = true
				break
			}
		}
		sel[r] = keep
	}
}

// systemInto writes the selected rows of a system column of a batch into
// dst (reusing its storage), unsigned integers widened.
func systemInto(dst *bmstore.Column, sys *blockmodel.SystemBatch, name string, sel selection, r0, r1 int) {
	var u32 []uint32
	var u8 []uint8
	var f []float64
	switch name {
	case blockmodel.ColI:
		u32 = sys.I
	case blockmodel.ColJ:
		u32 = sys.J
	case blockmodel.ColK:
		u32 = sys.K
	case blockmodel.ColSidx:
		u32 = sys.Sidx
	case blockmodel.ColStartSI:
		u8 = sys.StartSI
	case blockmodel.ColStartSJ:
		u8 = sys.StartSJ
	case blockmodel.ColStartSK:
		u8 = sys.StartSK
	case blockmodel.ColEndSI:
		u8 = sys.EndSI
	case blockmodel.ColEndSJ:
		u8 = sys.EndSJ
	case blockmodel.ColEndSK:
		u8 = sys.EndSK
	case blockmodel.ColX:
		f = sys.X
	case blockmodel.ColY:
		f = sys.Y
	case blockmodel.ColZ:
		f = sys.Z
	case blockmodel.ColDX:
		f = sys.DX
	case blockmodel.ColDY:
		f = sys.DY
	default:
		f = sys.DZ
	}
	switch {
	case u32 != nil && dst.U32 != nil:
		dst.U32 = pickSel(dst.U32, u32[r0:r1], sel)
	case u32 != nil:
		dst.Uints = widen(dst.Uints, u32[r0:r1], sel.sel)
	case u8 != nil:
		dst.Uints = widen(dst.Uints, u8[r0:r1], sel.sel)
	default:
		dst.Floats = pickSel(dst.Floats, f[r0:r1], sel)
	}
}

// widen appends the selected elements of src (sel[r]) to dst, widened
// to uint64: branch-free (every element written, the end advanced by its
// flag) when dst has room for all of src, else selected ones appended.
func widen[T uint8 | uint32](dst []uint64, src []T, sel []bool) []uint64 {
	at := len(dst)
	if at+len(src) > cap(dst) {
		for r, x := range src {
			if sel[r] {
				dst = append(dst, uint64(x))
			}
		}
		return dst
	}
	dst = dst[:at+len(src)]
	w := at
	for r, x := range src {
		dst[w] = uint64(x)
		w += b2i(sel[r])
	}
	return dst[:w]
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	return int(*(*uint8)(unsafe.Pointer(&b)))
}

// selectInto appends the selected rows of [r0, r1) of a scanned column
// (sel is the selection of those rows) to dst.
func selectInto(dst *bmstore.Column, src *bmstore.Column, sel selection, r0, r1 int) {
	if src.Null != nil || dst.Null != nil {
		if dst.Null == nil { // rows before had no flags: none null
			dst.Null = make([]bool, dst.Len(), bmstore.QueryRowGroup)
		}
		if src.Null != nil {
			dst.Null = pickSel(dst.Null, src.Null[r0:r1], sel)
		} else {
			k := 0
			for _, x := range sel.sel {
				k += b2i(x)
			}
			dst.Null = append(dst.Null, make([]bool, k)...)
		}
	}
	switch familyOf(src.Type) {
	case famFloat:
		at := len(dst.Floats)
		dst.Floats = pickSel(dst.Floats, src.Floats[r0:r1], sel)
		dst.PickCodes(src, at, r0, sel.runs, sel.sel) // the writer's hint
	case famInt:
		dst.Ints = pickSel(dst.Ints, src.Ints[r0:r1], sel)
	case famUint:
		dst.Uints = pickSel(dst.Uints, src.Uints[r0:r1], sel)
	case famBool:
		dst.Bools = pickSel(dst.Bools, src.Bools[r0:r1], sel)
	default:
		dst.Strings = pickSel(dst.Strings, src.Strings[r0:r1], sel)
	}
}

// pick appends the selected elements of s (sel[r]) to dst, as widen does.
func pick[T any](dst, s []T, sel []bool) []T {
	at := len(dst)
	if at+len(s) > cap(dst) {
		for r, x := range s {
			if sel[r] {
				dst = append(dst, x)
			}
		}
		return dst
	}
	dst = dst[:at+len(s)]
	w := at
	for r, x := range s {
		dst[w] = x
		w += b2i(sel[r])
	}
	return dst[:w]
}

// selection is the selected rows of a part of a batch: a flag a row, and
// the runs [a, b) of consecutive selected rows when they are few (long
// runs: a query without a box, with few null rows), nil runs otherwise.
type selection struct {
	sel  []bool
	runs [][2]int
}

// selectionOf makes the selection of sel, its runs in buf's storage.
func selectionOf(sel []bool, buf *[][2]int) selection {
	runs := (*buf)[:0]
	limit := len(sel) / 16 // runs of 16 rows on average, else by flags
	for r := 0; ; {
		a, b := nextRun(sel, r)
		if a == b {
			break
		}
		if len(runs) == limit {
			runs = nil
			break
		}
		runs = append(runs, [2]int{a, b})
		r = b
	}
	if runs != nil {
		*buf = runs
	}
	return selection{sel: sel, runs: runs}
}

// pickSel appends the selected elements of s to dst: a run at a time, or
// by flags (pick).
func pickSel[T any](dst, s []T, sel selection) []T {
	if sel.runs == nil {
		return pick(dst, s, sel.sel)
	}
	for _, run := range sel.runs {
		dst = append(dst, s[run[0]:run[1]]...)
	}
	return dst
}

// nextRun returns the next run [a, b) of selected rows at or after from
// (a == b == len(sel) when there is none), reading the flags 8 at a time.
func nextRun(sel []bool, from int) (a, b int) {
	const none, all = 0, 0x0101010101010101 // 8 flags false, 8 true
	flags := boolBytes(sel)
	n := len(flags)
	a = from
	for a+8 <= n && binary.LittleEndian.Uint64(flags[a:]) == none {
		a += 8
	}
	for a < n && flags[a] == 0 {
		a++
	}
	b = a
	for b+8 <= n && binary.LittleEndian.Uint64(flags[b:]) == all {
		b += 8
	}
	for b < n && flags[b] != 0 {
		b++
	}
	return a, b
}

// setFlags sets every flag of sel, 8 at a time.
func setFlags(sel []bool) {
	const all = 0x0101010101010101
	s := boolBytes(sel)
	r := 0
	for ; r+8 <= len(s); r += 8 {
		binary.LittleEndian.PutUint64(s[r:], all)
	}
	for ; r < len(s); r++ {
		s[r] = 1
	}
}

// boolBytes is the memory of flags: a byte 0 or 1 a flag.
func boolBytes(flags []bool) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(flags))), len(flags))
}

// fillIndices writes the index system columns of rows [from, to) into dst
// (i, j, k and the kind's sub-block columns), not the centroids and extents.
func fillIndices(b *blockmodel.Blocks, from, to int64, dst *blockmodel.SystemBatch) {
	n := int(to - from)
	g := b.Geometry()
	kind := g.Type()
	dst.I, dst.J, dst.K = resize(dst.I, n), resize(dst.J, n), resize(dst.K, n)
	sidx := kind == blockmodel.FullySubBlocked || kind == blockmodel.VariableOctree
	corners := kind == blockmodel.Flexible
	if sidx {
		dst.Sidx = resize(dst.Sidx, n)
	}
	if corners {
		for _, p := range []*[]uint8{&dst.StartSI, &dst.StartSJ, &dst.StartSK, &dst.EndSI, &dst.EndSJ, &dst.EndSK} {
			*p = resize(*p, n)
		}
	}
	// Parents come in canonical order (i fastest): the next parent's
	// indices are the previous ones plus one with carries, sparing the
	// three divisions of ParentIJK a row.
	np := g.Parents()
	nx, ny := uint32(np[0]), uint32(np[1])
	if b.Whole() && !sidx && !corners {
		// a row a parent: runs of i along a row of the grid
		i, j, k := g.ParentIJK(from)
		for r := 0; r < n; {
			run := min(n-r, int(nx-i))
			for x := range run {
				dst.I[r+x], dst.J[r+x], dst.K[r+x] = i+uint32(x), j, k
			}
			r += run
			if i, j = 0, j+1; j == ny {
				j, k = 0, k+1
			}
		}
		return
	}
	prev := int64(-2)
	var i, j, k uint32
	for r := range n {
		row := from + int64(r)
		switch p := b.Parent(row); p {
		case prev:
		case prev + 1:
			if i++; i == nx {
				if i, j = 0, j+1; j == ny {
					j, k = 0, k+1
				}
			}
			prev = p
		default:
			i, j, k = g.ParentIJK(p)
			prev = p
		}
		dst.I[r], dst.J[r], dst.K[r] = i, j, k
		if !sidx && !corners {
			continue
		}
		s, e := b.Corners(row)
		if sidx {
			dst.Sidx[r] = g.Sidx(s)
			continue
		}
		dst.StartSI[r], dst.StartSJ[r], dst.StartSK[r] = s[0], s[1], s[2]
		dst.EndSI[r], dst.EndSJ[r], dst.EndSK[r] = e[0], e[1], e[2]
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
