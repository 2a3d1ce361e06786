package bmwire

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/google/uuid"
)

// Geometry column sets of a query (geometry_columns).
const (
	GeometryIndices     = "indices"
	GeometryCoordinates = "coordinates"
)

// BBox is a box given as indices or as coordinates: exactly one of IJK and
// XYZ is set, neither when the member was absent (the whole model). An XYZ
// box is in world coordinates (A.8).
type BBox struct {
	IJK *blockmodel.IJKBox
	XYZ *blockmodel.BBox
}

// MarshalJSON writes the box as the client models it.
func (b BBox) MarshalJSON() ([]byte, error) {
	switch {
	case b.IJK != nil:
		return json.Marshal(b.IJK)
	case b.XYZ != nil:
		return json.Marshal(b.XYZ)
	}
	return []byte("null"), nil
}

// decodeBBox reads an IJK or XYZ box member; n, when not nil, bounds the
// indices to 0…n−1.
func decodeBBox(o object, member string, n *[3]int) BBox {
	p, ok := parseObject(o.raw(member), o.name(member), o.e)
	if !ok {
		return BBox{}
	}
	ijk := p.has("i_minmax") || p.has("j_minmax") || p.has("k_minmax")
	xyz := p.has("x_minmax") || p.has("y_minmax") || p.has("z_minmax")
	if ijk == xyz {
		o.e.Add(p.path, "must be {i_minmax, j_minmax, k_minmax} or {x_minmax, y_minmax, z_minmax}")
		return BBox{}
	}
	var box BBox
	names := [3]string{"x_minmax", "y_minmax", "z_minmax"}
	if ijk {
		box.IJK = &blockmodel.IJKBox{}
		names = [3]string{"i_minmax", "j_minmax", "k_minmax"}
	} else {
		box.XYZ = &blockmodel.BBox{}
	}
	for a, m := range names {
		if !p.required(m) {
			continue
		}
		r, ok := parseObject(p.raw(m), p.name(m), o.e)
		if !ok || !r.required("min") || !r.required("max") {
			continue
		}
		if xyz {
			lo, hi := r.number("min"), r.number("max")
			if lo == nil || hi == nil {
				continue
			}
			box.XYZ.Axes()[a].Min, box.XYZ.Axes()[a].Max = *lo, *hi
			if *lo > *hi {
				o.e.Add(r.path, "min %g exceeds max %g", *lo, *hi)
			}
			continue
		}
		lo, hi := r.integer("min"), r.integer("max")
		if lo == nil || hi == nil {
			continue
		}
		box.IJK.Axes()[a].Min, box.IJK.Axes()[a].Max = *lo, *hi
		switch {
		case *lo > *hi:
			o.e.Add(r.path, "min %d exceeds max %d", *lo, *hi)
		case *lo < 0:
			o.e.Add(r.name("min"), "must be ≥ 0")
		case n != nil && *hi > int64(n[a])-1:
			o.e.Add(r.name("max"), "must be ≤ %d (the model has %d blocks along this axis)", n[a]-1, n[a])
		}
	}
	return box
}

// OutputOptions describe a query's output file.
type OutputOptions struct {
	Format          string
	Delimiter       byte
	ColumnHeaders   string // "name" or "id"
	ExcludeNullRows bool
}

// Query is the body of POST …/blocks (A.8, the client's QueryCriteria).
type Query struct {
	Columns         []string
	GeometryColumns string
	BBox            BBox
	VersionUUID     *uuid.UUID
	Output          OutputOptions
}

// DecodeQuery reads and checks a query against the model (for the index
// box bounds): columns required, geometry_columns indices|coordinates
// (default indices), bbox IJK within 0…n−1 or XYZ, version_uuid,
// output_options parquet (default) or csv.
func DecodeQuery(body []byte, model ModelInfo) (*Query, error) {
	return decodeBody(body, func(o object, e *blockmodel.ValidationError) *Query {
		q := &Query{}
		if o.required("columns") {
			q.Columns = o.strings("columns")
		}
		q.GeometryColumns = o.enum("geometry_columns", GeometryIndices, GeometryIndices, GeometryCoordinates)
		n := model.N
		q.BBox = decodeBBox(o, "bbox", &n)
		q.VersionUUID = o.uuidMember("version_uuid")
		q.Output = OutputOptions{Format: FormatParquet, Delimiter: ',', ColumnHeaders: "name", ExcludeNullRows: true}
		if p, ok := parseObject(o.raw("output_options"), "output_options", e); ok {
			q.Output.Format = p.enum("file_format", FormatParquet, FormatParquet, FormatCSV)
			q.Output.ColumnHeaders = p.enum("column_headers", "name", "name", "id")
			if b := p.boolean("exclude_null_rows"); b != nil {
				q.Output.ExcludeNullRows = *b
			}
			if s := p.str("delimiter"); s != nil {
				if q.Output.Format != FormatCSV {
					// the client's parquet options have no delimiter: ignored
				} else if len(*s) != 1 || (*s)[0] == '\n' || (*s)[0] == '\r' || (*s)[0] == '"' {
					p.e.Add(p.name("delimiter"), "must be one ASCII character other than a line break or a quote")
				} else {
					q.Output.Delimiter = (*s)[0]
				}
			}
		}
		return q
	})
}

// GeometrySet returns the geometry columns the query's output starts with,
// for a model kind.
func (q *Query) GeometrySet(kind blockmodel.ModelType) []string {
	if q.GeometryColumns == GeometryCoordinates {
		return blockmodel.CoordinateColumns(kind)
	}
	return blockmodel.IndexColumns(kind)
}

// ResolveColumns returns the columns of the output after the geometry
// columns, as titles (user columns) or system names: each entry of columns
// by title or col_id; "*" expands to every user column sorted by title
// case-insensitively; a geometry column of the chosen set is dropped,
// another system column of the kind is kept (A.15b item 10); a column
// named twice appears once. An unknown name is a *ValidationError naming
// columns[i].
func (q *Query) ResolveColumns(model ModelInfo) ([]string, error) {
	geo := map[string]bool{}
	for _, g := range q.GeometrySet(model.Kind) {
		geo[g] = true
	}
	system := map[string]bool{blockmodel.ColSubBlockDerivation: true}
	for _, s := range blockmodel.SystemColumns(model.Kind) {
		system[s.Title] = true
	}
	e := &blockmodel.ValidationError{}
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for i, c := range q.Columns {
		switch {
		case c == "*":
			all := make([]string, 0, len(model.Columns))
			for _, col := range model.Columns {
				all = append(all, col.Title)
			}
			sort.SliceStable(all, func(a, b int) bool { return blockmodel.TitleKey(all[a]) < blockmodel.TitleKey(all[b]) })
			for _, t := range all {
				add(t)
			}
		case geo[c]:
		case system[c]:
			add(c)
		default:
			found := false
			for _, col := range model.Columns {
				if col.Title == c || col.ColID == c {
					add(col.Title)
					found = true
					break
				}
			}
			if !found {
				e.Add("columns["+strconv.Itoa(i)+"]", "no column titled or with id %q", c)
			}
		}
	}
	if err := e.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Delta is the body of POST …/versions/{version}/delta (A.5, the client's
// DeltaRequestData).
type Delta struct {
	BBox BBox
	// Columns are col_ids; All is set for ["*"].
	Columns        []string
	All            bool
	EndVersionUUID *uuid.UUID
	Verbose        bool
}

// DecodeDelta reads and checks a delta request: bbox (IJK or XYZ) and
// columns required, columns col_ids or ["*"], end_version_uuid, verbose
// (default false).
func DecodeDelta(body []byte) (*Delta, error) {
	return decodeBody(body, func(o object, e *blockmodel.ValidationError) *Delta {
		d := &Delta{}
		if o.required("bbox") {
			d.BBox = decodeBBox(o, "bbox", nil)
		}
		if o.required("columns") {
			d.Columns = o.strings("columns")
			for i, c := range d.Columns {
				if c == "*" {
					d.All = true
					if len(d.Columns) > 1 {
						e.Add("columns["+strconv.Itoa(i)+"]", `"*" must be the only item`)
					}
				}
			}
			if d.All {
				d.Columns = nil
			}
		}
		d.EndVersionUUID = o.uuidMember("end_version_uuid")
		if b := o.boolean("verbose"); b != nil {
			d.Verbose = *b
		}
		return d
	})
}
