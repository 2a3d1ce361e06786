package bmjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
)

// userColumn returns the user column of v titled title (case-insensitive) or
// whose col_id is title.
func userColumn(v *bmstore.Version, title string) (bmstore.ColumnMeta, error) {
	c, ok := v.Column(title)
	if !ok || c.Internal {
		return bmstore.ColumnMeta{}, fmt.Errorf("%w: %q in version %d", ErrColumnNotFound, title, v.VersionID)
	}
	return c, nil
}

// scanColumn streams one column of v to fn, batch by batch (rows from, in
// order).
func scanColumn(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, col string, fn func(from int64, c *bmstore.Column)) error {
	sc, err := s.Scan(modelID, v.VersionID, []string{col}, 0, v.Rows, 0)
	if err != nil {
		return fmt.Errorf("bmjob: read column %q: %w", col, err)
	}
	defer sc.Close()
	var at int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		cols, err := sc.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bmjob: read column %q: %w", col, err)
		}
		fn(at, &cols[0])
		at += int64(cols[0].Len())
	}
}

// ReadFloat64 reads column title of version v as float64 values, one per
// row in canonical order, NaN for nulls (A.14.3 step 4). The column must be
// Int*, UInt* or Float* (else ErrNotContinuous); ErrColumnNotFound when
// there is none.
func ReadFloat64(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, title string) ([]float64, error) {
	c, err := userColumn(v, title)
	if err != nil {
		return nil, err
	}
	if !c.DataType.Numeric() {
		return nil, fmt.Errorf("%w: %q is %s", ErrNotContinuous, c.Title, c.DataType)
	}
	out := make([]float64, 0, v.Rows)
	err = scanColumn(ctx, s, modelID, v, c.ColID, func(_ int64, b *bmstore.Column) {
		for r := range b.Len() {
			switch {
			case b.IsNull(r):
				out = append(out, math.NaN())
			case b.Floats != nil:
				out = append(out, b.Floats[r])
			case b.Ints != nil:
				out = append(out, float64(b.Ints[r]))
			default:
				out = append(out, float64(b.Uints[r]))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadCategories reads a Utf8 or Boolean column of version v as categories
// (A.14.3 step 5: a Utf8 column's categories are its values; a Boolean's
// keys are 0 and 1), else ErrNotCategorical; ErrColumnNotFound when there is
// none.
func ReadCategories(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, title string) (*Categories, error) {
	c, err := userColumn(v, title)
	if err != nil {
		return nil, err
	}
	if c.DataType != blockmodel.Utf8 && c.DataType != blockmodel.Boolean {
		return nil, fmt.Errorf("%w: %q is %s", ErrNotCategorical, c.Title, c.DataType)
	}
	cat := &Categories{Keys: make([]int64, 0, v.Rows), Valid: make([]bool, 0, v.Rows), Names: map[int64]string{}}
	keys := map[string]int64{}
	if c.DataType == blockmodel.Boolean {
		cat.Names[0], cat.Names[1] = "false", "true"
	}
	err = scanColumn(ctx, s, modelID, v, c.ColID, func(_ int64, b *bmstore.Column) {
		for r := range b.Len() {
			if b.IsNull(r) {
				cat.Keys, cat.Valid = append(cat.Keys, 0), append(cat.Valid, false)
				continue
			}
			var k int64
			if b.Type == blockmodel.Boolean {
				if b.Bools[r] {
					k = 1
				}
			} else {
				var ok bool
				if k, ok = keys[b.Strings[r]]; !ok {
					k = int64(len(keys))
					keys[b.Strings[r]] = k
					cat.Names[k] = b.Strings[r]
				}
			}
			cat.Keys, cat.Valid = append(cat.Keys, k), append(cat.Valid, true)
		}
	})
	if err != nil {
		return nil, err
	}
	return cat, nil
}
