package bmjob

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
)

// WriteColumn writes one task result column as a new version made from the
// model's latest version (A.14.5), through the column writing of an update
// job and under the same per-model lock, so that concurrent tasks each add
// their column and none is lost.
//
//   - OpCreate: a new Float64 column titled w.Title; when a Float64 or
//     Float32 column of that title exists it is updated in place (its
//     col_id, unit and tags kept), another type is ErrColumnType. Every row
//     is written; rows not selected become null (replace).
//   - OpUpdate: the column must exist (ErrColumnNotFound) and be Float64 or
//     Float32 (ErrColumnType). Without a filter (Selected nil) every row is
//     written (replace); with one only the selected rows are (merge), the
//     others keep their latest value.
//
// Float32 columns receive the values rounded to float32. The latest
// version's rows must be w.Rows (else ErrGeometryChanged, nothing written):
// a regular model's always are, a sub-blocked model's unless an update
// changed its sub-blocks since the task read them. The version's bbox is the
// parent-index box of the written rows.
func WriteColumn(ctx context.Context, s *bmstore.Store, w ColumnWrite) (*bmstore.Version, error) {
	if w.Rows == nil {
		return nil, errors.New("bmjob: write column without rows")
	}
	n := w.Rows.NumRows()
	if int64(len(w.Values)) != n || (w.Selected != nil && int64(len(w.Selected)) != n) {
		return nil, fmt.Errorf("bmjob: write column %q: %d values and %d selection flags for %d rows", w.Title, len(w.Values), len(w.Selected), n)
	}
	if w.Operation != OpCreate && w.Operation != OpUpdate {
		return nil, fmt.Errorf("bmjob: write column %q: unknown operation %q", w.Title, w.Operation)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx, err := s.Begin(w.ModelID)
	if err != nil {
		return nil, fmt.Errorf("bmjob: write column %q: %w", w.Title, err)
	}
	defer tx.Abort()
	base := tx.Base()
	latest, err := Rows(ctx, s, w.ModelID, base, w.Rows.Geometry())
	if err != nil {
		return nil, err
	}
	if !latest.SameRows(w.Rows) {
		return nil, fmt.Errorf("%w: version %d of the model has other sub-blocks than the version the task read", ErrGeometryChanged, base.VersionID)
	}
	col, exists := base.Column(w.Title)
	exists = exists && !col.Internal
	if w.Operation == OpUpdate && !exists {
		return nil, fmt.Errorf("%w: %q in version %d", ErrColumnNotFound, w.Title, base.VersionID)
	}
	typ := blockmodel.Float64
	if exists {
		if col.DataType != blockmodel.Float64 && col.DataType != blockmodel.Float32 {
			return nil, fmt.Errorf("%w: %q is %s", ErrColumnType, col.Title, col.DataType)
		}
		typ = col.DataType
	} else if err := blockmodel.ValidateTitle(w.Title); err != nil {
		e := &blockmodel.ValidationError{}
		e.Add("title", "%v", err)
		return nil, e.Err()
	}
	merge := w.Operation == OpUpdate && w.Selected != nil
	batch := w.BatchRows
	if batch <= 0 {
		batch = defaultBatch
	}
	d := newDense(typ, n, merge)
	lo, hi := [3]int64{math.MaxInt64, math.MaxInt64, math.MaxInt64}, [3]int64{-1, -1, -1}
	g := w.Rows.Geometry()
	for r := range n {
		if r%int64(batch) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		sel := w.Selected == nil || w.Selected[r]
		if merge && !sel {
			continue
		}
		v := math.NaN()
		if sel {
			v = w.Values[r]
			if typ == blockmodel.Float32 && !math.IsNaN(v) {
				v = float64(float32(v))
			}
		}
		d.col.Floats[r] = v
		if merge {
			d.given[r] = true
			d.count++
		}
		i, j, k := g.ParentIJK(w.Rows.Parent(r))
		for a, x := range [3]uint32{i, j, k} {
			lo[a], hi[a] = min(lo[a], int64(x)), max(hi[a], int64(x))
		}
	}
	written := n
	if merge {
		written = d.count
	}
	meta := bmstore.Meta{CreatedBy: w.CreatedBy, Comment: w.Comment, BlocksUploaded: &written}
	ut := "replace"
	if merge {
		ut = "merge"
	}
	meta.UpdateType = &ut
	if written > 0 {
		b := blockmodel.NewIJKBox(lo, hi)
		meta.BBox = storeBBox(&b)
	}
	if exists {
		err = writeUpdate(ctx, tx, col, d, !merge, batch)
	} else {
		err = writeNew(ctx, tx, bmstore.ColumnMeta{Title: w.Title, DataType: blockmodel.Float64}, d, batch)
	}
	if err != nil {
		return nil, err
	}
	v, err := tx.Commit(meta)
	if err != nil {
		return nil, fmt.Errorf("bmjob: write column %q: %w", w.Title, err)
	}
	return v, nil
}
