package bmjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// derivationUser is the sub_block_derivation of every row the engine emits
// (A.4.1).
const derivationUser = "user specified"

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
			cols = append(cols, outCol{header: name, typ: blockmodel.Utf8, system: name, scan: -1})
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
	userFlags := make([]bool, len(cols))
	for i, c := range cols {
		headers[i], types[i], userFlags[i] = c.header, c.typ, c.user
	}
	res := QueryResult{Headers: headers, Columns: resolved}
	qw, err := bmstore.NewQueryWriter(w, headers, types, bmstore.QueryOptions{Format: q.Output.Format,
		Delimiter: rune(q.Output.Delimiter), ExcludeNullRows: q.Output.ExcludeNullRows, UserColumns: userFlags})
	if err != nil {
		return res, fmt.Errorf("bmjob: query: %w", err)
	}
	from, to := rowRange(blocks, q.BBox)
	if from < to {
		if err := queryRows(ctx, s, modelID, v, blocks, q.BBox, cols, scan, from, to, qw); err != nil {
			return res, err
		}
	}
	if err := qw.Close(); err != nil {
		return res, fmt.Errorf("bmjob: query: %w", err)
	}
	res.Rows = qw.Rows()
	return res, nil
}

// rowRange is the range of rows a bbox can select: for an IJK box, the rows
// of the parents from its first to its last corner; else every row.
func rowRange(b *blockmodel.Blocks, box bmwire.BBox) (int64, int64) {
	n := b.NumRows()
	if box.IJK == nil {
		return 0, n
	}
	g := b.Geometry()
	lo := g.ParentIndex(uint32(box.IJK.IMinMax.Min), uint32(box.IJK.JMinMax.Min), uint32(box.IJK.KMinMax.Min))
	hi := g.ParentIndex(uint32(box.IJK.IMinMax.Max), uint32(box.IJK.JMinMax.Max), uint32(box.IJK.KMinMax.Max))
	first := sort.Search(int(n), func(r int) bool { return b.Parent(int64(r)) >= lo })
	last := sort.Search(int(n), func(r int) bool { return b.Parent(int64(r)) > hi })
	return int64(first), int64(last)
}

// queryRows streams rows [from, to) to qw.
func queryRows(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, blocks *blockmodel.Blocks,
	box bmwire.BBox, cols []outCol, scan []string, from, to int64, qw *bmstore.QueryWriter) error {
	const batch = bmstore.QueryRowGroup
	var sc *bmstore.Scanner
	if len(scan) > 0 {
		var err error
		if sc, err = s.Scan(modelID, v.VersionID, scan, from, to, batch); err != nil {
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
	var sys blockmodel.SystemBatch
	sel := make([]bool, 0, batch)
	out := make([]bmstore.Column, len(cols))
	bufs := make([]bmstore.Column, len(cols))
	var deriv []string
	for lo := from; lo < to; lo += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(to, lo+batch)
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
		if needCoords {
			if err := blocks.FillSystem(lo, hi, &sys); err != nil {
				return fmt.Errorf("bmjob: query: %w", err)
			}
		} else {
			fillIndices(blocks, lo, hi, &sys)
		}
		sel = selectRows(sel[:0], &sys, box, n)
		all := true
		for _, ok := range sel {
			all = all && ok
		}
		for i, c := range cols {
			var src bmstore.Column
			switch {
			case c.scan >= 0:
				src = scanned[c.scan]
			case c.system == blockmodel.ColSubBlockDerivation:
				for len(deriv) < n {
					deriv = append(deriv, derivationUser)
				}
				src = bmstore.Column{Type: blockmodel.Utf8, Strings: deriv[:n]}
			default:
				src = systemColumn(&sys, c.system, &bufs[i])
			}
			if all {
				out[i] = src
			} else {
				out[i] = compact(src, sel, c.system != "" && c.scan < 0 && familyOf(c.typ) == famUint)
			}
		}
		if err := qw.Write(out); err != nil {
			return fmt.Errorf("bmjob: query: %w", err)
		}
	}
	return nil
}

// selectRows flags the rows of a batch a bbox selects: an IJK box by the
// parent's indices, an XYZ box by the centroid (bounds inclusive).
func selectRows(sel []bool, sys *blockmodel.SystemBatch, box bmwire.BBox, n int) []bool {
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

// systemColumn returns a geometry column of a batch as a store column
// (unsigned integers widened into buf).
func systemColumn(sys *blockmodel.SystemBatch, name string, buf *bmstore.Column) bmstore.Column {
	widen32 := func(v []uint32) bmstore.Column {
		buf.Type, buf.Uints = blockmodel.UInt32, buf.Uints[:0]
		for _, x := range v {
			buf.Uints = append(buf.Uints, uint64(x))
		}
		return bmstore.Column{Type: blockmodel.UInt32, Uints: buf.Uints}
	}
	widen8 := func(v []uint8) bmstore.Column {
		buf.Type, buf.Uints = blockmodel.UInt8, buf.Uints[:0]
		for _, x := range v {
			buf.Uints = append(buf.Uints, uint64(x))
		}
		return bmstore.Column{Type: blockmodel.UInt8, Uints: buf.Uints}
	}
	f := func(v []float64) bmstore.Column { return bmstore.Column{Type: blockmodel.Float64, Floats: v} }
	switch name {
	case blockmodel.ColI:
		return widen32(sys.I)
	case blockmodel.ColJ:
		return widen32(sys.J)
	case blockmodel.ColK:
		return widen32(sys.K)
	case blockmodel.ColSidx:
		return widen32(sys.Sidx)
	case blockmodel.ColStartSI:
		return widen8(sys.StartSI)
	case blockmodel.ColStartSJ:
		return widen8(sys.StartSJ)
	case blockmodel.ColStartSK:
		return widen8(sys.StartSK)
	case blockmodel.ColEndSI:
		return widen8(sys.EndSI)
	case blockmodel.ColEndSJ:
		return widen8(sys.EndSJ)
	case blockmodel.ColEndSK:
		return widen8(sys.EndSK)
	case blockmodel.ColX:
		return f(sys.X)
	case blockmodel.ColY:
		return f(sys.Y)
	case blockmodel.ColZ:
		return f(sys.Z)
	case blockmodel.ColDX:
		return f(sys.DX)
	case blockmodel.ColDY:
		return f(sys.DY)
	}
	return f(sys.DZ)
}

// compact returns the selected rows of src. When inPlace, src is a widened
// system column of this batch only and is compacted where it is.
func compact(src bmstore.Column, sel []bool, inPlace bool) bmstore.Column {
	out := bmstore.Column{Type: src.Type}
	var null []bool
	if src.Null != nil {
		null = make([]bool, 0, len(sel))
	}
	keep := func(r int) bool {
		if sel[r] && null != nil {
			null = append(null, src.Null[r])
		}
		return sel[r]
	}
	switch familyOf(src.Type) {
	case famFloat:
		out.Floats = pick(src.Floats, keep, nil)
	case famInt:
		out.Ints = pick(src.Ints, keep, nil)
	case famUint:
		var dst []uint64
		if inPlace {
			dst = src.Uints[:0]
		}
		out.Uints = pick(src.Uints, keep, dst)
	case famBool:
		out.Bools = pick(src.Bools, keep, nil)
	default:
		out.Strings = pick(src.Strings, keep, nil)
	}
	out.Null = null
	return out
}

// pick appends the kept elements of s to dst (which may alias s: writes
// never overtake reads).
func pick[T any](s []T, keep func(int) bool, dst []T) []T {
	if dst == nil {
		dst = make([]T, 0, len(s))
	}
	for r, x := range s {
		if keep(r) {
			dst = append(dst, x)
		}
	}
	return dst
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
	for r := range n {
		row := from + int64(r)
		dst.I[r], dst.J[r], dst.K[r] = g.ParentIJK(b.Parent(row))
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
