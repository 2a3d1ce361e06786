// Package demo builds the worker's demo workspace from the deterministic
// synthetic case of the benchmarks: a drill-hole pointset with a skewed,
// spatially correlated grade, the same samples as downhole intervals, a
// regular grid and a masked grid over the deposit, a two-structure
// variogram of the normal scores and the grade distribution. Seed stores it
// through the object store; Commands prints ready-to-paste curl commands
// for every compute task.
package demo

import (
	"fmt"
	"math"
	"sort"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/google/uuid"
)

// Object is a document to store at a path.
type Object struct {
	Path string
	Doc  []byte
}

// Set is a workspace's worth of objects and the blobs they reference.
type Set struct {
	Objects []Object
	// Blobs maps SHA-256 keys to Parquet bytes.
	Blobs map[string][]byte
	// Keys are the blob keys in a stable order.
	Keys []string
}

// Paths of the demo objects.
const (
	PointsPath       = "demo/drillhole-samples.json"
	IntervalsPath    = "demo/drillhole-intervals.json"
	GridPath         = "demo/block-grid.json"
	MaskedGridPath   = "demo/orebody-grid.json"
	VariogramPath    = "demo/grade-variogram.json"
	DistributionPath = "demo/grade-distribution.json"
)

// builder accumulates blobs while documents are built.
type builder struct {
	set *Set
	// keys gives the attribute keys deterministically.
	seq int
}

func (b *builder) blob(data []byte, key string) string {
	if _, ok := b.set.Blobs[key]; !ok {
		b.set.Blobs[key] = data
		b.set.Keys = append(b.set.Keys, key)
	}
	return key
}

func (b *builder) float64s(cols [][]float64, names []string) (map[string]any, error) {
	data, blob, err := objects.EncodeFloat64(cols, names, nil)
	if err != nil {
		return nil, err
	}
	b.blob(data, blob.Key)
	return map[string]any{"data": blob.Key, "length": blob.Rows, "width": len(cols), "data_type": "float64"}, nil
}

func (b *builder) xyz(flat []float64) (map[string]any, error) {
	data, blob, err := objects.EncodeXYZ(flat, nil)
	if err != nil {
		return nil, err
	}
	b.blob(data, blob.Key)
	return map[string]any{"data": blob.Key, "length": blob.Rows, "width": 3, "data_type": "float64"}, nil
}

// key returns a deterministic attribute key (a name-based UUID).
func (b *builder) key(name string) string {
	b.seq++
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("geostat-demo/%d/%s", b.seq, name))).String()
}

func (b *builder) scalar(name string, values []float64, unit string) (map[string]any, error) {
	el, err := b.float64s([][]float64{values}, []string{name})
	if err != nil {
		return nil, err
	}
	a := map[string]any{"name": name, "key": b.key(name), "attribute_type": "scalar", "nan_description": map[string]any{"values": []any{}}, "values": el}
	if unit != "" {
		a["attribute_description"] = map[string]any{"discipline": "Geochemistry", "type": "Cu", "unit": unit}
	}
	return a, nil
}

func envelope(kind objects.Kind, version, name, description string) map[string]any {
	return map[string]any{
		"schema":      objects.SchemaID{Kind: kind, Version: version}.String(),
		"name":        name,
		"uuid":        nil,
		"description": description,
	}
}

func boundingBox(lo, hi [3]float64) map[string]any {
	return map[string]any{"min_x": lo[0], "max_x": hi[0], "min_y": lo[1], "max_y": hi[1], "min_z": lo[2], "max_z": hi[2]}
}

func pointsBox(flat []float64) map[string]any {
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i := 0; i < len(flat); i += 3 {
		for a := 0; a < 3; a++ {
			lo[a] = math.Min(lo[a], flat[i+a])
			hi[a] = math.Max(hi[a], flat[i+a])
		}
	}
	return boundingBox(lo, hi)
}

func (b *builder) spatial(doc map[string]any, box map[string]any) map[string]any {
	doc["bounding_box"] = box
	doc["coordinate_reference_system"] = "unspecified"
	return doc
}

// Build makes the demo set from a synthetic case with the Holes layout.
func Build(c *synthetic.Case) (*Set, error) {
	if c.Intervals == nil {
		return nil, fmt.Errorf("demo: the case needs drill holes")
	}
	b := &builder{set: &Set{Blobs: map[string][]byte{}}}
	grade, err := b.scalar("cu", c.Grades, "%")
	if err != nil {
		return nil, err
	}
	// Pointset: the interval mid points.
	coords, err := b.xyz(c.Coords)
	if err != nil {
		return nil, err
	}
	pts := b.spatial(envelope(objects.KindPointset, "1.3.0", "Drill-hole samples", "Copper assays at the interval mid points"), pointsBox(c.Coords))
	pts["locations"] = map[string]any{"coordinates": coords, "attributes": []any{grade}}

	// Downhole intervals.
	dh := c.Intervals
	iv := b.spatial(envelope(objects.KindDownholeIntervals, "1.3.0", "Drill-hole intervals", "The same samples as downhole intervals"), pointsBox(dh.Mid))
	iv["is_composited"] = false
	for name, flat := range map[string][]float64{"start": dh.Start, "end": dh.End, "mid_points": dh.Mid} {
		el, err := b.xyz(flat)
		if err != nil {
			return nil, err
		}
		iv[name] = map[string]any{"coordinates": el}
	}
	ft, err := b.float64s([][]float64{dh.From, dh.To}, []string{"from", "to"})
	if err != nil {
		return nil, err
	}
	iv["from_to"] = map[string]any{"intervals": map[string]any{"start_and_end": ft}, "unit": "m"}
	holeKeys := make([]int64, len(dh.Holes))
	names := map[int64]string{}
	for i, h := range dh.Holes {
		holeKeys[i] = int64(h)
		names[int64(h)] = fmt.Sprintf("DH-%03d", h)
	}
	hk, hb, err := objects.EncodeTable([]objects.Column{{Type: objects.TypeInt32, Int64: holeKeys}}, []string{"hole_id"}, nil)
	if err != nil {
		return nil, err
	}
	b.blob(hk, hb.Key)
	var tk []int64
	for k := range names {
		tk = append(tk, k)
	}
	sort.Slice(tk, func(i, j int) bool { return tk[i] < tk[j] })
	tv := make([]string, len(tk))
	for i, k := range tk {
		tv[i] = names[k]
	}
	tdata, tb, err := objects.EncodeTable([]objects.Column{{Type: objects.TypeInt32, Int64: tk}, {Type: objects.TypeString, String: tv}}, []string{"key", "value"}, nil)
	if err != nil {
		return nil, err
	}
	b.blob(tdata, tb.Key)
	iv["hole_id"] = map[string]any{
		"values": map[string]any{"data": hb.Key, "length": hb.Rows, "width": 1, "data_type": "int32"},
		"table":  map[string]any{"data": tb.Key, "length": tb.Rows, "keys_data_type": "int32", "values_data_type": "string"},
	}
	ivGrade, err := b.scalar("cu", c.Grades, "%")
	if err != nil {
		return nil, err
	}
	iv["attributes"] = []any{ivGrade}

	// Grids.
	g := c.Grid
	gdoc := gridDoc(g, "Block model grid", "Regular grid over the deposit")
	m, err := c.Masked()
	if err != nil {
		return nil, err
	}
	mask := make([]bool, g.NumCells())
	for _, cell := range m.ActiveCells() {
		mask[cell] = true
	}
	mdata, mb, err := objects.EncodeTable([]objects.Column{{Type: objects.TypeBool, Bool: mask}}, []string{"mask"}, nil)
	if err != nil {
		return nil, err
	}
	b.blob(mdata, mb.Key)
	mdoc := gridDoc(g, "Orebody grid", "The cells of the orebody envelope")
	mdoc["schema"] = objects.SchemaID{Kind: objects.KindRegularMasked3DGrid, Version: "1.3.0"}.String()
	mdoc["mask"] = map[string]any{"name": "mask", "key": b.key("mask"), "attribute_type": "bool",
		"values": map[string]any{"data": mb.Key, "length": mb.Rows, "data_type": "bool"}}
	mdoc["number_of_active_cells"] = m.NumActive()

	// Variogram and distribution.
	vdoc := variogramDoc(c.Variogram)
	ddoc, err := b.distributionDoc(c)
	if err != nil {
		return nil, err
	}

	for _, o := range []struct {
		path string
		doc  map[string]any
	}{{PointsPath, pts}, {IntervalsPath, iv}, {GridPath, gdoc}, {MaskedGridPath, mdoc}, {VariogramPath, vdoc}, {DistributionPath, ddoc}} {
		data, err := objects.EncodeJSON(o.doc)
		if err != nil {
			return nil, err
		}
		b.set.Objects = append(b.set.Objects, Object{Path: o.path, Doc: data})
	}
	return b.set, nil
}

func gridDoc(g *grid.Grid, name, description string) map[string]any {
	doc := envelope(objects.KindRegular3DGrid, "1.3.0", name, description)
	doc["origin"] = []any{g.Origin[0], g.Origin[1], g.Origin[2]}
	doc["size"] = []any{g.Size[0], g.Size[1], g.Size[2]}
	doc["cell_size"] = []any{g.CellSize[0], g.CellSize[1], g.CellSize[2]}
	r := g.Rotation
	doc["rotation"] = map[string]any{"dip_azimuth": r.DipAzimuth, "dip": r.Dip, "pitch": r.Pitch}
	lo, hi := g.BoundingBox()
	doc["bounding_box"] = boundingBox(lo, hi)
	doc["coordinate_reference_system"] = "unspecified"
	return doc
}

func variogramDoc(v *geostat.Variogram) map[string]any {
	doc := envelope(objects.KindVariogram, "1.2.0", "Cu normal-score variogram", "Two nested structures, rotated")
	structs := geostat.EncodeStructures(v)
	doc["nugget"] = v.Nugget
	doc["sill"] = v.TotalSill()
	doc["is_rotation_fixed"] = true
	doc["modelling_space"] = "normalscore"
	doc["structures"] = structs
	return doc
}

func (b *builder) distributionDoc(c *synthetic.Case) (map[string]any, error) {
	d := c.Distribution
	z := make([]float64, d.Len())
	p := make([]float64, d.Len())
	for j := range z {
		z[j], p[j] = d.Node(j)
	}
	el, err := b.float64s([][]float64{z, p}, []string{"value", "probability"})
	if err != nil {
		return nil, err
	}
	doc := b.spatial(envelope(objects.KindDistribution, "1.2.0", "Cu distribution", "Grade distribution of the samples, power-model tails"), pointsBox(c.Coords))
	doc["cdf"] = map[string]any{
		"values":                   el,
		"lower_tail_extrapolation": map[string]any{"power_model": map[string]any{"min": d.Min(), "power": synthetic.LowerTailPower}},
		"upper_tail_extrapolation": map[string]any{"power_model": map[string]any{"max": d.Max(), "power": synthetic.UpperTailPower}},
	}
	doc["is_declustered"] = false
	doc["support"] = "point"
	return doc, nil
}
