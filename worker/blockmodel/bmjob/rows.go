package bmjob

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
)

// Rows returns the rows of version v of a model as Blocks: for a regular
// model, and a sub-blocked version without internal columns, every parent
// whole (no read); otherwise the sub-block identity read from the version's
// internal columns (about 13 bytes a row). The row count must agree with
// the version's.
func Rows(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, g *blockmodel.Geometry) (*blockmodel.Blocks, error) {
	if _, ok := v.Column(ColParent); !ok || !g.Type().SubBlocked() {
		if v.Rows != g.NumParents() {
			return nil, fmt.Errorf("bmjob: model %s version %d has %d rows, its geometry %d parents and no sub-blocks",
				modelID, v.VersionID, v.Rows, g.NumParents())
		}
		return g.WholeBlocks(), nil
	}
	n := v.Rows
	parent := make([]uint32, 0, n)
	start := make([]uint8, 0, 3*n)
	end := make([]uint8, 0, 3*n)
	sc, err := s.Scan(modelID, v.VersionID, InternalColumns(), 0, n, 0)
	if err != nil {
		return nil, fmt.Errorf("bmjob: rows of model %s version %d: %w", modelID, v.VersionID, err)
	}
	defer sc.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cols, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bmjob: rows of model %s version %d: %w", modelID, v.VersionID, err)
		}
		for r := range cols[0].Uints {
			parent = append(parent, uint32(cols[0].Uints[r]))
			start = append(start, uint8(cols[1].Uints[r]), uint8(cols[2].Uints[r]), uint8(cols[3].Uints[r]))
			end = append(end, uint8(cols[4].Uints[r]), uint8(cols[5].Uints[r]), uint8(cols[6].Uints[r]))
		}
	}
	b, err := blockmodel.NewBlocks(g, parent, start, end)
	if err != nil {
		return nil, fmt.Errorf("bmjob: rows of model %s version %d: %w", modelID, v.VersionID, err)
	}
	return b, nil
}

// CreateModel stores version 1 of a new model whose rows are rows: no
// user column, and for a sub-blocked model whose parents are not all whole
// the sub-block identity as internal columns (a created model has every
// parent whole, A.2.4: pass Geometry.WholeBlocks; other row sets serve
// tests and imports).
func CreateModel(ctx context.Context, s *bmstore.Store, m bmstore.Model, rows *blockmodel.Blocks, meta bmstore.Meta) (*bmstore.Version, error) {
	tx, err := s.Create(m, rows.NumRows())
	if err != nil {
		return nil, fmt.Errorf("bmjob: create model %s: %w", m.ID, err)
	}
	defer tx.Abort()
	if !rows.Whole() {
		parent, start, end := rows.Columns()
		if err := writeIdentity(ctx, tx, &bmstore.Version{}, parent, start, end, defaultBatch); err != nil {
			return nil, err
		}
	}
	v, err := tx.Commit(meta)
	if err != nil {
		return nil, fmt.Errorf("bmjob: create model %s: %w", m.ID, err)
	}
	return v, nil
}
