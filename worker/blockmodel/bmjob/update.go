package bmjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// ApplyUpdate applies an update job to the model's latest version (A.7.3)
// and returns the new version. It holds the model's write lock (bmstore
// Begin) from the first check to the commit, so jobs of one model apply one
// after the other, each to the then latest version.
//
// The file (when the update has new or update columns) is read and checked
// in full before anything becomes visible: a row matching no block or one
// matched twice, a missing column or a value of the wrong type fail with a
// *bmwire.FileError listing them. Titles are checked again against the
// latest version (another job may have deleted or added a column since the
// request was accepted): a *blockmodel.ValidationError names them. A geometry
// change rebuilds the sub-block set from a coordinate-form file (or, for a
// flexible model, the start/end form) and rewrites every column. Rows a file
// gives get the new version's id as their per-row version_id, and the
// version's bbox is the parent-index box of those rows. On any error
// nothing is written and the latest version is unchanged.
func ApplyUpdate(ctx context.Context, s *bmstore.Store, in UpdateInput) (*bmstore.Version, error) {
	v, err := applyUpdate(ctx, s, in, true)
	var fe *bmwire.FileError
	if errors.Is(err, errOutOfOrder) || (errors.As(err, &fe) && len(in.Update.Columns.New)+len(in.Update.Columns.Update) > 1) {
		// The file could not be streamed, or its columns were checked one
		// at a time and the report would miss the later columns' problems:
		// again, through memory, on the then latest version.
		v, err = applyUpdate(ctx, s, in, false)
	}
	return v, err
}

// applyUpdate is ApplyUpdate; with stream, the file is read once per value
// column, each column written while it is read (streamSink), as long as
// the file's rows are in row order (else errOutOfOrder).
func applyUpdate(ctx context.Context, s *bmstore.Store, in UpdateInput, stream bool) (*bmstore.Version, error) {
	u := in.Update
	if u == nil || in.Geometry == nil {
		return nil, errors.New("bmjob: update without request or geometry")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx, err := s.Begin(in.ModelID)
	if err != nil {
		return nil, fmt.Errorf("bmjob: update model %s: %w", in.ModelID, err)
	}
	defer tx.Abort()
	base := tx.Base()
	if err := checkTitles(base, u); err != nil {
		return nil, err
	}
	// Reading and writing go in batches of batch rows; a streamed column
	// is written in batches of chunk rows, by default the store's row
	// groups, which its writer encodes without a copy (WriteLent).
	batch, chunk := in.BatchRows, in.BatchRows
	if batch <= 0 {
		batch, chunk = defaultBatch, bmstore.StoreRowGroup
	}
	meta := bmstore.Meta{CreatedBy: in.CreatedBy, Comment: u.Comment, CreatedAt: in.CreatedAt, VersionUUID: in.VersionUUID}
	info := ModelInfo(in.Geometry, base)
	if u.GeometryChange != nil && *u.GeometryChange {
		if err := applyGeometryChange(ctx, s, tx, in, info, &meta, batch); err != nil {
			return nil, err
		}
	} else if u.NeedsFile() {
		rows, err := Rows(ctx, s, in.ModelID, base, in.Geometry)
		if err != nil {
			return nil, err
		}
		r, size, closeFile, err := openFile(in)
		if err != nil {
			return nil, err
		}
		defer closeFile()
		cols := u.ValueColumns(info)
		spec := bmwire.FileSpec{Kind: in.Geometry.Type(), Input: u.Input, Columns: cols, BatchRows: batch}
		var sum bmwire.Summary
		if stream {
			for i := range cols {
				one := spec
				one.Columns = cols[i : i+1]
				if sum, err = streamColumn(ctx, tx, base, u, i, r, size, one, rows, chunk); err != nil {
					break
				}
			}
		} else {
			sum, err = scatterColumns(ctx, tx, base, u, r, size, spec, rows, batch)
		}
		if err != nil {
			return nil, err
		}
		meta.BBox = storeBBox(sum.BBox)
		uploaded := sum.Rows
		meta.BlocksUploaded = &uploaded
		ut := u.UpdateType
		meta.UpdateType = &ut
	}
	if err := columnOps(tx, base, u, !(u.GeometryChange != nil && *u.GeometryChange)); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := tx.Commit(meta)
	if err != nil {
		return nil, fmt.Errorf("bmjob: update model %s: %w", in.ModelID, err)
	}
	return v, nil
}

// streamColumn reads value column i of an update's file (new columns
// first, then updated ones) and writes the column as it reads
// (streamSink), in batches of chunk rows.
func streamColumn(ctx context.Context, tx *bmstore.Tx, base *bmstore.Version, u *bmwire.Update, i int, r io.ReaderAt, size int64,
	spec bmwire.FileSpec, rows *blockmodel.Blocks, chunk int) (bmwire.Summary, error) {
	open := func(allRows bool) (*bmstore.ColumnWriter, error) {
		if i < len(u.Columns.New) {
			nc := u.Columns.New[i]
			w, err := tx.AddColumn(bmstore.ColumnMeta{Title: nc.Title, DataType: nc.DataType, UnitID: nc.UnitID, Tags: nc.Tags})
			if err != nil {
				return nil, fmt.Errorf("bmjob: add column %q: %w", nc.Title, err)
			}
			return w, nil
		}
		col, _ := base.Column(u.Columns.Update[i-len(u.Columns.New)])
		// A file with a row for every model row (and no error) gives
		// every row: merge is replace, and the store need not read the
		// old values.
		w, err := tx.UpdateColumn(col.ColID, u.UpdateType == bmwire.Replace || allRows)
		if err != nil {
			return nil, fmt.Errorf("bmjob: update column %q: %w", col.Title, err)
		}
		return w, nil
	}
	sink := newStreamSink(ctx, spec.Columns[0].Type, rows.NumRows(), chunk, open)
	sum, err := bmwire.Read(r, size, spec, rows, sink)
	if err != nil {
		sink.stop()
		return sum, err
	}
	if err := sink.finish(); err != nil {
		return sum, fmt.Errorf("bmjob: write column %q: %w", spec.Columns[0].Title, err)
	}
	return sum, nil
}

// scatterColumns reads the file of an update into memory, each value at
// its row, then writes the columns one after the other.
func scatterColumns(ctx context.Context, tx *bmstore.Tx, base *bmstore.Version, u *bmwire.Update, r io.ReaderAt, size int64,
	spec bmwire.FileSpec, rows *blockmodel.Blocks, batch int) (bmwire.Summary, error) {
	sink := newScatter(ctx, spec.Columns, rows.NumRows())
	sum, err := bmwire.Read(r, size, spec, rows, sink)
	if err != nil {
		return sum, err
	}
	for i, nc := range u.Columns.New {
		spec := bmstore.ColumnMeta{Title: nc.Title, DataType: nc.DataType, UnitID: nc.UnitID, Tags: nc.Tags}
		if err := writeNew(ctx, tx, spec, sink.cols[i], batch); err != nil {
			return sum, err
		}
		sink.cols[i] = nil // release the values
	}
	for i, title := range u.Columns.Update {
		col, _ := base.Column(title)
		k := len(u.Columns.New) + i
		if err := writeUpdate(ctx, tx, col, sink.cols[k], u.UpdateType == bmwire.Replace, batch); err != nil {
			return sum, err
		}
		sink.cols[k] = nil
	}
	return sum, nil
}

// columnOps applies delete, rename and update_metadata (and, unless a
// geometry change did it already, delete) to tx.
func columnOps(tx *bmstore.Tx, base *bmstore.Version, u *bmwire.Update, deletes bool) error {
	c := u.Columns
	if deletes {
		for _, title := range c.Delete {
			col, _ := base.Column(title)
			if err := tx.DeleteColumn(col.ColID); err != nil {
				return fmt.Errorf("bmjob: delete column %q: %w", title, err)
			}
		}
	}
	for _, r := range c.Rename {
		col, _ := base.Column(r.Title)
		if err := tx.Rename(col.ColID, r.NewTitle); err != nil {
			return fmt.Errorf("bmjob: rename column %q: %w", r.Title, err)
		}
	}
	for _, m := range c.UpdateMetadata {
		col, _ := base.Column(m.Title)
		if m.NewTitle != nil && *m.NewTitle != col.Title {
			if err := tx.Rename(col.ColID, *m.NewTitle); err != nil {
				return fmt.Errorf("bmjob: rename column %q: %w", m.Title, err)
			}
		}
		var err error
		switch {
		case m.UnitSet && m.UnitID == nil:
			err = tx.ClearUnit(col.ColID)
		case m.UnitSet:
			err = tx.SetColumnMeta(col.ColID, m.UnitID, nil)
		}
		if err == nil && m.Tags != nil {
			err = tx.SetColumnMeta(col.ColID, nil, m.Tags)
		}
		if err != nil {
			return fmt.Errorf("bmjob: metadata of column %q: %w", m.Title, err)
		}
	}
	return nil
}

// checkTitles checks the update's titles against the latest version: the
// columns it names must still exist as user columns, the titles it creates
// must still be free.
func checkTitles(base *bmstore.Version, u *bmwire.Update) error {
	e := &blockmodel.ValidationError{}
	user := map[string]bool{}
	for _, c := range base.UserColumns() {
		user[blockmodel.TitleKey(c.Title)] = true
	}
	exists := func(name, title string) {
		if !user[blockmodel.TitleKey(title)] {
			e.Add(name, "column %q no longer exists in the latest version %d (another update removed or renamed it)", title, base.VersionID)
		}
	}
	c := u.Columns
	freed := map[string]bool{}
	for i, t := range c.Update {
		exists("columns.update["+strconv.Itoa(i)+"]", t)
	}
	for i, t := range c.Delete {
		exists("columns.delete["+strconv.Itoa(i)+"]", t)
		freed[blockmodel.TitleKey(t)] = true
	}
	for i, r := range c.Rename {
		exists("columns.rename["+strconv.Itoa(i)+"].title", r.Title)
		freed[blockmodel.TitleKey(r.Title)] = true
	}
	for i, m := range c.UpdateMetadata {
		exists("columns.update_metadata["+strconv.Itoa(i)+"].title", m.Title)
		if m.NewTitle != nil {
			freed[blockmodel.TitleKey(m.Title)] = true
		}
	}
	taken := func(name, title string) {
		k := blockmodel.TitleKey(title)
		if user[k] && !freed[k] {
			e.Add(name, "a column titled %q exists in the latest version %d (another update created it)", title, base.VersionID)
		}
	}
	for i, n := range c.New {
		taken("columns.new["+strconv.Itoa(i)+"].title", n.Title)
	}
	for i, r := range c.Rename {
		taken("columns.rename["+strconv.Itoa(i)+"].new_title", r.NewTitle)
	}
	for i, m := range c.UpdateMetadata {
		if m.NewTitle != nil && blockmodel.TitleKey(*m.NewTitle) != blockmodel.TitleKey(m.Title) {
			taken("columns.update_metadata["+strconv.Itoa(i)+"].values.title", *m.NewTitle)
		}
	}
	return e.Err()
}

// openFile opens the update file of in.
func openFile(in UpdateInput) (io.ReaderAt, int64, func(), error) {
	if in.File != nil {
		return in.File, in.FileSize, func() {}, nil
	}
	if in.FilePath == "" {
		return nil, 0, nil, ErrNoFile
	}
	f, err := os.Open(in.FilePath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil, fmt.Errorf("%w (%s)", ErrNoFile, in.FilePath)
	}
	if err != nil {
		return nil, 0, nil, fmt.Errorf("bmjob: update file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, fmt.Errorf("bmjob: update file: %w", err)
	}
	return f, st.Size(), func() { f.Close() }, nil
}

// storeBBox converts a parent-index box to the store's (nil stays nil).
func storeBBox(b *blockmodel.IJKBox) *bmstore.BBox {
	if b == nil {
		return nil
	}
	return &bmstore.BBox{
		I: bmstore.MinMax{Min: int(b.IMinMax.Min), Max: int(b.IMinMax.Max)},
		J: bmstore.MinMax{Min: int(b.JMinMax.Min), Max: int(b.JMinMax.Max)},
		K: bmstore.MinMax{Min: int(b.KMinMax.Min), Max: int(b.KMinMax.Max)},
	}
}
