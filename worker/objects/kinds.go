package objects

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// Pointset is the view of a pointset object (1.0.1-1.3.0): coordinates
// (float-array-3, columns x, y, z) and the attributes under
// "locations.attributes" (docs/objects.md 1.5).
type Pointset struct {
	Coordinates Element
	Attributes  []Attribute
}

func decodePointset(raw []byte) (*Pointset, error) {
	var w struct {
		Locations *struct {
			Coordinates json.RawMessage `json:"coordinates"`
			Attributes  json.RawMessage `json:"attributes"`
		} `json:"locations"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("pointset: %w", err)
	}
	if w.Locations == nil {
		return nil, fmt.Errorf("locations: missing")
	}
	p := &Pointset{}
	var err error
	if p.Coordinates, err = decodeElement("locations.coordinates", w.Locations.Coordinates); err != nil {
		return nil, err
	}
	if err := checkFloatElement(p.Coordinates, 3); err != nil {
		return nil, err
	}
	if p.Attributes, err = decodeAttributes(ListLocationAttributes, w.Locations.Attributes); err != nil {
		return nil, err
	}
	return p, nil
}

// checkFloatElement checks that e is a float64 element of the given width.
func checkFloatElement(e Element, width int) error {
	if e.DataType != TypeFloat64 {
		return fmt.Errorf("%s: data_type %q, want float64", e.Path, e.DataType)
	}
	if e.Width != width {
		return fmt.Errorf("%s: width %d, want %d", e.Path, e.Width, width)
	}
	return nil
}

// DownholeIntervals is the view of a downhole-intervals object (1.0.1-1.3.0,
// docs/objects.md 1.6). An interval's location is its mid point.
type DownholeIntervals struct {
	IsComposited bool
	// Start, End and MidPoints are float-array-3 elements, one row per interval.
	Start, End, MidPoints Element
	// FromTo is from_to.intervals.start_and_end (float-array-2: from, to depth).
	FromTo Element
	// FromToUnit is from_to.unit ("" when absent).
	FromToUnit string
	// HoleID is hole_id.values (int32/int64 key per interval) and HoleTable
	// hole_id.table (key -> hole name).
	HoleID, HoleTable Element
	// Attributes are the top-level "attributes".
	Attributes []Attribute
}

func decodeIntervals(raw []byte) (*DownholeIntervals, error) {
	type locJSON struct {
		Coordinates json.RawMessage `json:"coordinates"`
	}
	var w struct {
		IsComposited *bool    `json:"is_composited"`
		Start        *locJSON `json:"start"`
		End          *locJSON `json:"end"`
		MidPoints    *locJSON `json:"mid_points"`
		FromTo       *struct {
			Intervals *struct {
				StartAndEnd json.RawMessage `json:"start_and_end"`
			} `json:"intervals"`
			Unit string `json:"unit"`
		} `json:"from_to"`
		HoleID *struct {
			Values json.RawMessage `json:"values"`
			Table  json.RawMessage `json:"table"`
		} `json:"hole_id"`
		Attributes json.RawMessage `json:"attributes"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("downhole-intervals: %w", err)
	}
	d := &DownholeIntervals{}
	if w.IsComposited == nil {
		return nil, fmt.Errorf("is_composited: missing")
	}
	d.IsComposited = *w.IsComposited
	var err error
	for _, loc := range []struct {
		name string
		src  *locJSON
		dst  *Element
	}{{"start", w.Start, &d.Start}, {"end", w.End, &d.End}, {"mid_points", w.MidPoints, &d.MidPoints}} {
		if loc.src == nil {
			return nil, fmt.Errorf("%s: missing", loc.name)
		}
		if *loc.dst, err = decodeElement(loc.name+".coordinates", loc.src.Coordinates); err != nil {
			return nil, err
		}
		if err := checkFloatElement(*loc.dst, 3); err != nil {
			return nil, err
		}
	}
	if w.FromTo == nil || w.FromTo.Intervals == nil {
		return nil, fmt.Errorf("from_to.intervals: missing")
	}
	if d.FromTo, err = decodeElement("from_to.intervals.start_and_end", w.FromTo.Intervals.StartAndEnd); err != nil {
		return nil, err
	}
	if err := checkFloatElement(d.FromTo, 2); err != nil {
		return nil, err
	}
	d.FromToUnit = w.FromTo.Unit
	if w.HoleID == nil {
		return nil, fmt.Errorf("hole_id: missing")
	}
	if d.HoleID, err = decodeElement("hole_id.values", w.HoleID.Values); err != nil {
		return nil, err
	}
	if d.HoleTable, err = decodeElement("hole_id.table", w.HoleID.Table); err != nil {
		return nil, err
	}
	if d.Attributes, err = decodeAttributes(ListAttributes, w.Attributes); err != nil {
		return nil, err
	}
	return d, nil
}

// checkLengths checks that every per-interval element has one row per interval.
func (d *DownholeIntervals) checkLengths() error {
	n := d.MidPoints.Length
	for _, e := range []Element{d.Start, d.End, d.FromTo, d.HoleID} {
		if e.Length != n {
			return fmt.Errorf("%s: length %d does not match mid_points.coordinates (%d intervals)", e.Path, e.Length, n)
		}
	}
	return nil
}

// Grid is the view of a regular-3d-grid or regular-masked-3d-grid object
// (1.0.1-1.3.0, docs/objects.md 1.7 and 1.8).
type Grid struct {
	Origin   [3]float64
	Size     [3]int
	CellSize [3]float64
	// Rotation is the grid rotation; the identity when the member is absent
	// (HasRotation false).
	Rotation    geostat.Rotation
	HasRotation bool

	CellAttributes   []Attribute
	VertexAttributes []Attribute // regular grids only

	// Masked is true for regular-masked-3d-grid; then Mask is the bool
	// attribute over every cell (x fastest) and NumberOfActiveCells the count
	// of true values, which is the length of every cell attribute.
	Masked              bool
	Mask                *Attribute
	NumberOfActiveCells int64
}

func decodeGrid(raw []byte, masked bool) (*Grid, error) {
	var w struct {
		Origin              []float64         `json:"origin"`
		Size                []float64         `json:"size"`
		CellSize            []float64         `json:"cell_size"`
		Rotation            *geostat.Rotation `json:"rotation"`
		CellAttributes      json.RawMessage   `json:"cell_attributes"`
		VertexAttributes    json.RawMessage   `json:"vertex_attributes"`
		Mask                json.RawMessage   `json:"mask"`
		NumberOfActiveCells *float64          `json:"number_of_active_cells"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("grid: %w", err)
	}
	g := &Grid{Masked: masked}
	if len(w.Origin) != 3 {
		return nil, geometryError("origin", "origin: want 3 numbers, have %d", len(w.Origin))
	}
	copy(g.Origin[:], w.Origin)
	if len(w.CellSize) != 3 {
		return nil, geometryError("cell_size", "cell_size: want 3 numbers, have %d", len(w.CellSize))
	}
	copy(g.CellSize[:], w.CellSize)
	if len(w.Size) != 3 {
		return nil, geometryError("size", "size: want 3 integers, have %d", len(w.Size))
	}
	for i, s := range w.Size {
		if s < 1 || s != math.Trunc(s) || s > math.MaxInt32 {
			return nil, geometryError("size", "size[%d]: %v is not an integer in 1..%d", i, s, math.MaxInt32)
		}
		g.Size[i] = int(s)
	}
	if w.Rotation != nil {
		g.Rotation, g.HasRotation = *w.Rotation, true
	}
	if _, err := g.Geometry(); err != nil {
		return nil, err
	}
	var err error
	if g.CellAttributes, err = decodeAttributes(ListCellAttributes, w.CellAttributes); err != nil {
		return nil, err
	}
	if masked {
		if len(w.VertexAttributes) != 0 {
			return nil, fmt.Errorf("vertex_attributes: not allowed on a masked grid")
		}
		a, err := decodeAttribute("mask", 0, w.Mask)
		if err != nil {
			return nil, fmt.Errorf("mask: %w", err)
		}
		if a.Type != AttributeBool || a.Values == nil {
			return nil, fmt.Errorf("mask: attribute_type %q, want bool", a.Type)
		}
		a.List, a.Values.Path = "", "mask.values"
		g.Mask = &a
		if w.NumberOfActiveCells == nil {
			return nil, fmt.Errorf("number_of_active_cells: missing")
		}
		n := *w.NumberOfActiveCells
		if n < 1 || n != math.Trunc(n) || n > float64(g.NumCells()) {
			return nil, fmt.Errorf("number_of_active_cells: %v is not an integer in 1..%d", n, g.NumCells())
		}
		g.NumberOfActiveCells = int64(n)
	} else if g.VertexAttributes, err = decodeAttributes(ListVertexAttributes, w.VertexAttributes); err != nil {
		return nil, err
	}
	return g, nil
}

// geometryError is a grid member the grid geometry cannot use, naming the
// member (as grid.New's errors do).
func geometryError(member, format string, args ...any) error {
	return &grid.GeometryError{Member: member, Err: fmt.Errorf(format, args...)}
}

// NumCells returns nx*ny*nz.
func (g *Grid) NumCells() int64 { return int64(g.Size[0]) * int64(g.Size[1]) * int64(g.Size[2]) }

// NumVertices returns (nx+1)*(ny+1)*(nz+1).
func (g *Grid) NumVertices() int64 {
	return int64(g.Size[0]+1) * int64(g.Size[1]+1) * int64(g.Size[2]+1)
}

// Geometry returns the grid geometry of the lead's grid package.
func (g *Grid) Geometry() (*grid.Grid, error) {
	gg, err := grid.New(g.Origin, g.Size, g.CellSize, g.Rotation)
	if err != nil {
		return nil, fmt.Errorf("grid geometry: %w", err)
	}
	return gg, nil
}

// checkMask checks the mask length against the full grid.
func (g *Grid) checkMask() error {
	if g.Mask.Values.Length != g.NumCells() {
		return fmt.Errorf("mask.values: length %d does not match the grid's %d cells", g.Mask.Values.Length, g.NumCells())
	}
	return nil
}

// Variogram is the view of a variogram object (1.0.1-1.2.0, docs/objects.md
// 1.10). The numerical model is built by geostat.DecodeVariogram from the
// object's JSON (see Object.DecodeVariogram); this view exposes the members.
type Variogram struct {
	Sill            float64
	Nugget          float64
	IsRotationFixed bool
	// DataVariance is nil when absent.
	DataVariance   *float64
	ModellingSpace string
	Domain         string
	Attribute      string
	Structures     []VariogramStructure
}

// VariogramStructure is one nested structure of a variogram.
type VariogramStructure struct {
	Type         string
	Contribution float64
	// Alpha is the shape factor of spheroidal and generalisedcauchy
	// structures, 0 when absent.
	Alpha      int
	Anisotropy geostat.Ellipsoid
}

func decodeVariogram(raw []byte) (*Variogram, error) {
	var w struct {
		Sill            *float64 `json:"sill"`
		Nugget          float64  `json:"nugget"`
		IsRotationFixed *bool    `json:"is_rotation_fixed"`
		DataVariance    *float64 `json:"data_variance"`
		ModellingSpace  string   `json:"modelling_space"`
		Domain          string   `json:"domain"`
		Attribute       string   `json:"attribute"`
		Structures      []struct {
			VariogramType string  `json:"variogram_type"`
			Contribution  float64 `json:"contribution"`
			Alpha         float64 `json:"alpha"`
			Anisotropy    struct {
				Ranges struct {
					Major     float64 `json:"major"`
					SemiMajor float64 `json:"semi_major"`
					Minor     float64 `json:"minor"`
				} `json:"ellipsoid_ranges"`
				Rotation geostat.Rotation `json:"rotation"`
			} `json:"anisotropy"`
		} `json:"structures"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("variogram: %w", err)
	}
	if w.Sill == nil {
		return nil, fmt.Errorf("sill: missing")
	}
	if w.IsRotationFixed == nil {
		return nil, fmt.Errorf("is_rotation_fixed: missing")
	}
	v := &Variogram{Sill: *w.Sill, Nugget: w.Nugget, IsRotationFixed: *w.IsRotationFixed, DataVariance: w.DataVariance,
		ModellingSpace: w.ModellingSpace, Domain: w.Domain, Attribute: w.Attribute}
	for i, s := range w.Structures {
		if s.VariogramType == "" {
			return nil, fmt.Errorf("structures[%d].variogram_type: missing", i)
		}
		if s.Alpha != math.Trunc(s.Alpha) || s.Alpha < 0 || s.Alpha > 1000 {
			return nil, fmt.Errorf("structures[%d].alpha: %v is not a small integer", i, s.Alpha)
		}
		r := s.Anisotropy.Ranges
		v.Structures = append(v.Structures, VariogramStructure{
			Type: s.VariogramType, Contribution: s.Contribution, Alpha: int(s.Alpha),
			Anisotropy: geostat.Ellipsoid{Major: r.Major, SemiMajor: r.SemiMajor, Minor: r.Minor, Rotation: s.Anisotropy.Rotation},
		})
	}
	return v, nil
}

// Distribution is the view of a non-parametric-continuous-cumulative-
// distribution object (1.0.1-1.2.0, docs/objects.md 1.11).
type Distribution struct {
	// Values is cdf.values: float-array-2 with columns (value, cumulative
	// probability).
	Values Element
	// LowerTail and UpperTail are the raw tail extrapolation members
	// ("no_extrapolation" or {"power_model": {...}}), for geostat.DecodeTail.
	LowerTail, UpperTail json.RawMessage
	IsDeclustered        bool
	// Support is the raw support member ("point", "other" or {"block": ...}).
	Support json.RawMessage
}

func decodeDistribution(raw []byte) (*Distribution, error) {
	var w struct {
		CDF *struct {
			Values json.RawMessage `json:"values"`
			Lower  json.RawMessage `json:"lower_tail_extrapolation"`
			Upper  json.RawMessage `json:"upper_tail_extrapolation"`
		} `json:"cdf"`
		IsDeclustered *bool           `json:"is_declustered"`
		Support       json.RawMessage `json:"support"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("distribution: %w", err)
	}
	if w.CDF == nil {
		return nil, fmt.Errorf("cdf: missing")
	}
	d := &Distribution{LowerTail: w.CDF.Lower, UpperTail: w.CDF.Upper, Support: w.Support}
	var err error
	if d.Values, err = decodeElement("cdf.values", w.CDF.Values); err != nil {
		return nil, err
	}
	if err := checkFloatElement(d.Values, 2); err != nil {
		return nil, err
	}
	if len(d.LowerTail) == 0 || len(d.UpperTail) == 0 {
		return nil, fmt.Errorf("cdf: lower_tail_extrapolation and upper_tail_extrapolation are required")
	}
	if w.IsDeclustered == nil {
		return nil, fmt.Errorf("is_declustered: missing")
	}
	d.IsDeclustered = *w.IsDeclustered
	return d, nil
}
