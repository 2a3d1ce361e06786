package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// BlobFile is an open blob: random access for the Parquet reader.
type BlobFile interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// BlobOpener opens blobs by key. The store provides it for one object
// version (the embedded store reads files; the remote client downloads).
type BlobOpener interface {
	OpenBlob(ctx context.Context, key string) (BlobFile, error)
}

// ReadElement opens the blob of e and decodes it, checking it against the
// element (columns, types, rows). A null data key is an error unless the
// element has no rows.
func ReadElement(ctx context.Context, blobs BlobOpener, e Element) (*Table, error) {
	spec, err := e.Spec()
	if err != nil {
		return nil, invalidData(err)
	}
	if e.Data == "" {
		if e.Length == 0 {
			t := &Table{Columns: make([]Column, len(spec.Types))}
			for i := range t.Columns {
				t.Columns[i].Type = spec.Types[i]
			}
			return t, nil
		}
		return nil, invalidData(fmt.Errorf("%s: data is null but length is %d", e.Path, e.Length))
	}
	f, err := blobs.OpenBlob(ctx, e.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: opening blob %s: %w", e.Path, e.Data, err)
	}
	defer f.Close()
	return ReadTable(f, f.Size(), spec)
}

// readXYZ reads a float-array-3 element as flat xyz, rejecting nulls,
// non-finite values and coordinates beyond ±grid.MaxCoordinate (the bound
// of grid origins): a *DataError naming the element.
func readXYZ(ctx context.Context, blobs BlobOpener, e Element) ([]float64, error) {
	t, err := ReadElement(ctx, blobs, e)
	if err != nil {
		return nil, err
	}
	cols, err := t.Float64Columns(e.Path, false)
	if err != nil {
		return nil, err
	}
	xyz := InterleaveXYZ(cols[0], cols[1], cols[2])
	for i, v := range xyz {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &DataError{Member: e.Path, Err: fmt.Errorf("%s: row %d has a non-finite coordinate", e.Path, i/3)}
		}
		if math.Abs(v) > grid.MaxCoordinate {
			return nil, &DataError{Member: e.Path, Err: fmt.Errorf("%s: row %d has the coordinate %v, beyond ±%g",
				e.Path, i/3, v, float64(grid.MaxCoordinate))}
		}
	}
	return xyz, nil
}

// Locations returns the locations of the rows of the object's primary
// attribute list as flat xyz world coordinates: pointset coordinates, the
// mid points of downhole intervals, grid cell centres, or the centres of the
// active cells of a masked grid.
func (o *Object) Locations(ctx context.Context, blobs BlobOpener) ([]float64, error) {
	lists := o.AttributeLists()
	if len(lists) == 0 {
		return nil, invalidData(fmt.Errorf("%s objects have no locations", o.Schema.Kind))
	}
	return o.ListLocations(ctx, blobs, lists[0])
}

// ListLocations returns the locations of the rows of the given attribute
// list (vertex_attributes: the grid's vertices, x fastest).
func (o *Object) ListLocations(ctx context.Context, blobs BlobOpener, list string) ([]float64, error) {
	if !o.hasList(list) {
		return nil, invalidData(fmt.Errorf("%s has no attribute list %q", o.Schema.Kind, list))
	}
	switch {
	case o.Pointset != nil:
		return readXYZ(ctx, blobs, o.Pointset.Coordinates)
	case o.Intervals != nil:
		return readXYZ(ctx, blobs, o.Intervals.MidPoints)
	case o.Grid != nil && list == ListVertexAttributes:
		return o.Grid.vertices()
	case o.Grid != nil && o.Grid.Masked:
		m, err := o.Grid.MaskedGeometry(ctx, blobs)
		if err != nil {
			return nil, err
		}
		return m.ActiveCentres(nil), nil
	case o.Grid != nil:
		g, err := o.Grid.Geometry()
		if err != nil {
			return nil, err
		}
		return g.CellCentres(nil), nil
	}
	return nil, invalidData(fmt.Errorf("%s has no attribute list %q", o.Schema.Kind, list))
}

// vertices returns the world positions of the grid's corners, x fastest.
func (g *Grid) vertices() ([]float64, error) {
	gg, err := g.Geometry()
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, 3*g.NumVertices())
	for k := 0; k <= g.Size[2]; k++ {
		for j := 0; j <= g.Size[1]; j++ {
			for i := 0; i <= g.Size[0]; i++ {
				p := gg.LocalToWorld(float64(i)*g.CellSize[0], float64(j)*g.CellSize[1], float64(k)*g.CellSize[2])
				out = append(out, p[0], p[1], p[2])
			}
		}
	}
	return out, nil
}

// ReadMask reads the mask of a masked grid (one bool per cell, x fastest) and
// checks that its count of true values equals number_of_active_cells.
func (g *Grid) ReadMask(ctx context.Context, blobs BlobOpener) ([]bool, error) {
	if !g.Masked {
		return nil, invalidData(errors.New("grid is not masked"))
	}
	t, err := ReadElement(ctx, blobs, *g.Mask.Values)
	if err != nil {
		return nil, err
	}
	c := &t.Columns[0]
	if c.HasNulls() {
		return nil, invalidData(fmt.Errorf("mask.values: contains nulls"))
	}
	var n int64
	for _, b := range c.Bool {
		if b {
			n++
		}
	}
	if n != g.NumberOfActiveCells {
		return nil, invalidData(fmt.Errorf("mask.values: %d active cells, number_of_active_cells is %d", n, g.NumberOfActiveCells))
	}
	return c.Bool, nil
}

// MaskedGeometry reads the mask and returns the masked grid geometry.
func (g *Grid) MaskedGeometry(ctx context.Context, blobs BlobOpener) (*grid.Masked, error) {
	gg, err := g.Geometry()
	if err != nil {
		return nil, err
	}
	mask, err := g.ReadMask(ctx, blobs)
	if err != nil {
		return nil, err
	}
	m, err := grid.NewMasked(gg, mask)
	if err != nil {
		return nil, invalidData(fmt.Errorf("mask: %w", err))
	}
	return m, nil
}

// ReadContinuous reads the values of a continuous attribute (one column), a
// continuous ensemble (one column per realisation) or an integer attribute
// (converted to float64). A value is missing, and returned as NaN, when it is
// null, NaN or equal to one of the attribute's nan_description values
// (docs/objects.md 1.4).
func (o *Object) ReadContinuous(ctx context.Context, blobs BlobOpener, a *Attribute) ([][]float64, error) {
	if a.Values == nil || !(a.IsContinuous() || a.Type == AttributeInteger) {
		return nil, invalidData(fmt.Errorf("attribute %s: type %q is not continuous", a.label(), a.Type))
	}
	if err := o.checkAttributeLength(a); err != nil {
		return nil, err
	}
	t, err := ReadElement(ctx, blobs, *a.Values)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		switch c.Type {
		case TypeFloat64:
			out[i] = c.Float64
			for r, v := range out[i] {
				if slices.Contains(a.NaN, v) {
					out[i][r] = math.NaN()
				}
			}
		case TypeInt32, TypeInt64:
			out[i] = make([]float64, len(c.Int64))
			for r, v := range c.Int64 {
				f := float64(v)
				if c.Null != nil && c.Null[r] || slices.Contains(a.NaN, f) {
					f = math.NaN()
				}
				out[i][r] = f
			}
		default:
			return nil, invalidData(fmt.Errorf("%s: column %d is %s, not numeric", a.Values.Path, i, c.Type))
		}
	}
	return out, nil
}

// Category holds the values of a category attribute: a key per row (Valid
// false for missing rows) and the lookup table from key to category name.
type Category struct {
	Keys  []int64
	Valid []bool
	Names map[int64]string
}

// ReadCategory reads a category attribute with its lookup table. Rows that
// are null or equal to a nan_description value are not Valid.
func (o *Object) ReadCategory(ctx context.Context, blobs BlobOpener, a *Attribute) (*Category, error) {
	if a.Type != AttributeCategory || a.Values == nil || a.Table == nil {
		return nil, invalidData(fmt.Errorf("attribute %s: type %q is not category", a.label(), a.Type))
	}
	if err := o.checkAttributeLength(a); err != nil {
		return nil, err
	}
	t, err := ReadElement(ctx, blobs, *a.Values)
	if err != nil {
		return nil, err
	}
	names, err := ReadLookupTable(ctx, blobs, *a.Table)
	if err != nil {
		return nil, err
	}
	c := &t.Columns[0]
	cat := &Category{Keys: c.Int64, Valid: make([]bool, len(c.Int64)), Names: names}
	for r, k := range c.Int64 {
		cat.Valid[r] = !(c.Null != nil && c.Null[r]) && !slices.Contains(a.NaN, float64(k))
	}
	return cat, nil
}

// ReadLookupTable reads a lookup-table element (key column, string column).
func ReadLookupTable(ctx context.Context, blobs BlobOpener, e Element) (map[int64]string, error) {
	t, err := ReadElement(ctx, blobs, e)
	if err != nil {
		return nil, err
	}
	keys, vals := &t.Columns[0], &t.Columns[1]
	if keys.HasNulls() {
		return nil, invalidData(fmt.Errorf("%s: null keys", e.Path))
	}
	out := make(map[int64]string, len(keys.Int64))
	for i, k := range keys.Int64 {
		out[k] = vals.String[i]
	}
	return out, nil
}

// ReadBool reads a bool attribute; nulls are returned as false with valid
// false.
func (o *Object) ReadBool(ctx context.Context, blobs BlobOpener, a *Attribute) (values, valid []bool, err error) {
	if a.Type != AttributeBool || a.Values == nil {
		return nil, nil, invalidData(fmt.Errorf("attribute %s: type %q is not bool", a.label(), a.Type))
	}
	if err := o.checkAttributeLength(a); err != nil {
		return nil, nil, err
	}
	t, err := ReadElement(ctx, blobs, *a.Values)
	if err != nil {
		return nil, nil, err
	}
	c := &t.Columns[0]
	valid = make([]bool, len(c.Bool))
	for i := range valid {
		valid[i] = c.Null == nil || !c.Null[i]
	}
	return c.Bool, valid, nil
}

func (o *Object) checkAttributeLength(a *Attribute) error {
	want, err := o.ExpectedLength(a.List)
	if err != nil {
		return err
	}
	if a.Values.Length != want {
		return invalidData(fmt.Errorf("attribute %s: length %d does not match the geometry (%d %s)", a.label(), a.Values.Length, want, o.unitName(a.List)))
	}
	return nil
}

// ReadCDF reads the table of a distribution: values and cumulative
// probabilities (cdf.values columns 0 and 1), without nulls.
func (d *Distribution) ReadCDF(ctx context.Context, blobs BlobOpener) (values, probs []float64, err error) {
	t, err := ReadElement(ctx, blobs, d.Values)
	if err != nil {
		return nil, nil, err
	}
	cols, err := t.Float64Columns(d.Values.Path, false)
	if err != nil {
		return nil, nil, err
	}
	return cols[0], cols[1], nil
}

// Build reads the CDF table and builds the geostat distribution with its
// tails (geostat.DecodeTail, geostat.NewDistribution).
func (d *Distribution) Build(ctx context.Context, blobs BlobOpener) (*geostat.Distribution, error) {
	values, probs, err := d.ReadCDF(ctx, blobs)
	if err != nil {
		return nil, err
	}
	lower, err := geostat.DecodeTail(d.LowerTail, false)
	if err != nil {
		return nil, invalidData(fmt.Errorf("cdf.lower_tail_extrapolation: %w", err))
	}
	upper, err := geostat.DecodeTail(d.UpperTail, true)
	if err != nil {
		return nil, invalidData(fmt.Errorf("cdf.upper_tail_extrapolation: %w", err))
	}
	dist, err := geostat.NewDistribution(values, probs, lower, upper)
	if err != nil {
		return nil, invalidData(fmt.Errorf("cdf: %w", err))
	}
	return dist, nil
}

// DecodeVariogram builds the geostat variogram model from a variogram
// object's JSON (geostat.DecodeVariogram).
func (o *Object) DecodeVariogram() (*geostat.DecodedVariogram, error) {
	if o.Variogram == nil {
		return nil, invalidData(fmt.Errorf("%s is not a variogram", o.Schema))
	}
	raw, err := o.JSON()
	if err != nil {
		return nil, err
	}
	return geostat.DecodeVariogram(raw)
}
