// Package objecttest builds small, data-consistent geoscience objects and their
// Parquet blobs for tests: a pointset, downhole intervals, regular and masked
// grids, a variogram and a distribution, in any supported schema version.
// Blobs go into an in-memory Blobs map that implements objects.BlobOpener.
package objecttest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/worker/objects"
)

// Blobs is an in-memory blob store keyed by SHA-256 hex; safe for concurrent
// use.
type Blobs struct {
	mu sync.Mutex
	m  map[string][]byte
}

// NewBlobs returns an empty store.
func NewBlobs() *Blobs { return &Blobs{m: map[string][]byte{}} }

// Put stores data under key.
func (b *Blobs) Put(key string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[key] = data
}

// Get returns the bytes stored under key.
func (b *Blobs) Get(key string) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.m[key]
	return d, ok
}

// Keys returns the stored keys, sorted.
func (b *Blobs) Keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.m))
	for k := range b.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

// OpenBlob implements objects.BlobOpener.
func (b *Blobs) OpenBlob(_ context.Context, key string) (objects.BlobFile, error) {
	d, ok := b.Get(key)
	if !ok {
		return nil, fmt.Errorf("blob %s not found", key)
	}
	return memFile{bytes.NewReader(d)}, nil
}

// Table encodes cols as a Parquet blob, stores it and returns its key.
func (b *Blobs) Table(cols []objects.Column, names []string) string {
	data, blob, err := objects.EncodeTable(cols, names, nil)
	if err != nil {
		panic("objecttest: " + err.Error())
	}
	b.Put(blob.Key, data)
	return blob.Key
}

// Float64 encodes float64 columns as a Parquet blob, stores it and returns its
// key.
func (b *Blobs) Float64(cols [][]float64, names []string) string {
	data, blob, err := objects.EncodeFloat64(cols, names, nil)
	if err != nil {
		panic("objecttest: " + err.Error())
	}
	b.Put(blob.Key, data)
	return blob.Key
}

// XYZ stores flat coordinates as a float-array-3 blob and returns the element.
func (b *Blobs) XYZ(flat []float64) map[string]any {
	data, blob, err := objects.EncodeXYZ(flat, nil)
	if err != nil {
		panic("objecttest: " + err.Error())
	}
	b.Put(blob.Key, data)
	return Element(blob.Key, int64(len(flat)/3), 3, "float64")
}

// Element returns the JSON of an array element (width 0 omits the member).
func Element(key string, length int64, width int, dataType string) map[string]any {
	e := map[string]any{"data": key, "length": length, "data_type": dataType}
	if width > 0 {
		e["width"] = width
	}
	return e
}

// Scalar stores values as a float64 blob and returns a continuous attribute.
func (b *Blobs) Scalar(name, key string, values []float64) map[string]any {
	k := b.Float64([][]float64{values}, []string{name})
	return map[string]any{
		"name": name, "key": key, "attribute_type": "scalar",
		"nan_description": map[string]any{"values": []any{}},
		"values":          Element(k, int64(len(values)), 1, "float64"),
	}
}

// Ensemble stores realisations (one slice each) and returns a continuous
// ensemble attribute.
func (b *Blobs) Ensemble(name, key string, reals [][]float64) map[string]any {
	k := b.Float64(reals, objects.EnsembleColumnNames(name, len(reals)))
	return map[string]any{
		"name": name, "key": key, "attribute_type": "ensemble_continuous",
		"nan_description": map[string]any{"values": []any{}},
		"values":          Element(k, int64(len(reals[0])), len(reals), "float64"),
	}
}

// Category stores int32 keys and a lookup table and returns a category
// attribute.
func (b *Blobs) Category(name, key string, keys []int64, table map[int64]string) map[string]any {
	vk := b.Table([]objects.Column{{Type: objects.TypeInt32, Int64: keys}}, []string{name})
	tk, n := b.lookup(table)
	return map[string]any{
		"name": name, "key": key, "attribute_type": "category",
		"nan_description": map[string]any{"values": []any{}},
		"values":          Element(vk, int64(len(keys)), 1, "int32"),
		"table":           map[string]any{"data": tk, "length": n, "keys_data_type": "int32", "values_data_type": "string"},
	}
}

func (b *Blobs) lookup(table map[int64]string) (string, int64) {
	var ks []int64
	for k := range table {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	vs := make([]string, len(ks))
	for i, k := range ks {
		vs[i] = table[k]
	}
	key := b.Table([]objects.Column{{Type: objects.TypeInt32, Int64: ks}, {Type: objects.TypeString, String: vs}}, []string{"key", "value"})
	return key, int64(len(ks))
}

func schema(kind objects.Kind, version string) string {
	return objects.SchemaID{Kind: kind, Version: version}.String()
}

// BoundingBox returns the bounding_box member of flat xyz points.
func BoundingBox(flat []float64) map[string]any {
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i := 0; i+2 < len(flat); i += 3 {
		for a := 0; a < 3; a++ {
			lo[a] = math.Min(lo[a], flat[i+a])
			hi[a] = math.Max(hi[a], flat[i+a])
		}
	}
	if len(flat) == 0 {
		lo, hi = [3]float64{}, [3]float64{}
	}
	return map[string]any{"min_x": lo[0], "max_x": hi[0], "min_y": lo[1], "max_y": hi[1], "min_z": lo[2], "max_z": hi[2]}
}

func envelope(kind objects.Kind, version, name string) map[string]any {
	return map[string]any{"schema": schema(kind, version), "name": name, "uuid": nil}
}

func spatial(doc map[string]any, flat []float64) map[string]any {
	doc["bounding_box"] = BoundingBox(flat)
	doc["coordinate_reference_system"] = map[string]any{"epsg_code": 32632}
	return doc
}

// Pointset returns a pointset document at the given schema version with the
// points xyz (flat) and the given attributes (built with Scalar etc.).
func (b *Blobs) Pointset(version string, xyz []float64, attrs ...map[string]any) map[string]any {
	doc := spatial(envelope(objects.KindPointset, version, "points"), xyz)
	locs := map[string]any{"coordinates": b.XYZ(xyz)}
	if len(attrs) > 0 {
		locs["attributes"] = toList(attrs)
	}
	doc["locations"] = locs
	return doc
}

func toList(attrs []map[string]any) []any {
	out := make([]any, len(attrs))
	for i, a := range attrs {
		out[i] = a
	}
	return out
}

// Intervals returns a downhole-intervals document: one interval per mid
// point, each 1 m long straight down, all in hole "DH-1".
func (b *Blobs) Intervals(version string, mid []float64, attrs ...map[string]any) map[string]any {
	n := len(mid) / 3
	start := make([]float64, len(mid))
	end := make([]float64, len(mid))
	from := make([]float64, n)
	to := make([]float64, n)
	holes := make([]int64, n)
	for i := 0; i < n; i++ {
		copy(start[3*i:], mid[3*i:3*i+3])
		copy(end[3*i:], mid[3*i:3*i+3])
		start[3*i+2] += 0.5
		end[3*i+2] -= 0.5
		from[i], to[i] = float64(i), float64(i+1)
		holes[i] = 1
	}
	doc := spatial(envelope(objects.KindDownholeIntervals, version, "intervals"), mid)
	doc["is_composited"] = false
	doc["start"] = map[string]any{"coordinates": b.XYZ(start)}
	doc["end"] = map[string]any{"coordinates": b.XYZ(end)}
	doc["mid_points"] = map[string]any{"coordinates": b.XYZ(mid)}
	ft := b.Float64([][]float64{from, to}, []string{"from", "to"})
	doc["from_to"] = map[string]any{"intervals": map[string]any{"start_and_end": Element(ft, int64(n), 2, "float64")}}
	hk := b.Table([]objects.Column{{Type: objects.TypeInt32, Int64: holes}}, []string{"hole_id"})
	tk, tn := b.lookup(map[int64]string{1: "DH-1"})
	doc["hole_id"] = map[string]any{
		"values": Element(hk, int64(n), 1, "int32"),
		"table":  map[string]any{"data": tk, "length": tn, "keys_data_type": "int32", "values_data_type": "string"},
	}
	if len(attrs) > 0 {
		doc["attributes"] = toList(attrs)
	}
	return doc
}

// GridSpec is the geometry of a test grid.
type GridSpec struct {
	Origin   [3]float64
	Size     [3]int
	CellSize [3]float64
	// Rotation is omitted from the document when nil.
	Rotation *geostat.Rotation
}

func (g GridSpec) members(doc map[string]any) map[string]any {
	doc["origin"] = []any{g.Origin[0], g.Origin[1], g.Origin[2]}
	doc["size"] = []any{g.Size[0], g.Size[1], g.Size[2]}
	doc["cell_size"] = []any{g.CellSize[0], g.CellSize[1], g.CellSize[2]}
	var rot geostat.Rotation
	if g.Rotation != nil {
		rot = *g.Rotation
		doc["rotation"] = map[string]any{"dip_azimuth": rot.DipAzimuth, "dip": rot.Dip, "pitch": rot.Pitch}
	}
	gg, err := grid.New(g.Origin, g.Size, g.CellSize, rot)
	if err != nil {
		panic("objecttest: " + err.Error())
	}
	lo, hi := gg.BoundingBox()
	doc["bounding_box"] = map[string]any{"min_x": lo[0], "max_x": hi[0], "min_y": lo[1], "max_y": hi[1], "min_z": lo[2], "max_z": hi[2]}
	doc["coordinate_reference_system"] = map[string]any{"epsg_code": 32632}
	return doc
}

// Grid returns a regular-3d-grid document with the given cell attributes.
func (b *Blobs) Grid(version string, g GridSpec, cellAttrs ...map[string]any) map[string]any {
	doc := g.members(envelope(objects.KindRegular3DGrid, version, "grid"))
	if len(cellAttrs) > 0 {
		doc["cell_attributes"] = toList(cellAttrs)
	}
	return doc
}

// MaskedGrid returns a regular-masked-3d-grid document with the given mask
// (one bool per cell, x fastest) and cell attributes (one row per active cell).
func (b *Blobs) MaskedGrid(version string, g GridSpec, mask []bool, cellAttrs ...map[string]any) map[string]any {
	doc := g.members(envelope(objects.KindRegularMasked3DGrid, version, "masked-grid"))
	mk := b.Table([]objects.Column{{Type: objects.TypeBool, Bool: mask}}, []string{"mask"})
	active := 0
	for _, m := range mask {
		if m {
			active++
		}
	}
	doc["mask"] = map[string]any{
		"name": "mask", "key": "6d0f1c1e-0000-4000-8000-000000000001", "attribute_type": "bool",
		"values": Element(mk, int64(len(mask)), 0, "bool"),
	}
	doc["number_of_active_cells"] = active
	if len(cellAttrs) > 0 {
		doc["cell_attributes"] = toList(cellAttrs)
	}
	return doc
}

// Variogram returns a variogram document: nugget 0.1 and one spherical
// structure (contribution 0.9, ranges 100/50/20, dip azimuth 30).
func Variogram(version string) map[string]any {
	doc := envelope(objects.KindVariogram, version, "variogram")
	doc["sill"] = 1.0
	doc["nugget"] = 0.1
	doc["is_rotation_fixed"] = true
	doc["modelling_space"] = "normalscore"
	doc["structures"] = []any{map[string]any{
		"variogram_type": "spherical",
		"contribution":   0.9,
		"anisotropy": map[string]any{
			"ellipsoid_ranges": map[string]any{"major": 100.0, "semi_major": 50.0, "minor": 20.0},
			"rotation":         map[string]any{"dip_azimuth": 30.0, "dip": 0.0, "pitch": 0.0},
		},
	}}
	return doc
}

// Distribution returns a distribution document with the CDF table (values,
// probabilities), no lower extrapolation and a power-model upper tail.
func (b *Blobs) Distribution(version string, values, probs []float64) map[string]any {
	doc := spatial(envelope(objects.KindDistribution, version, "distribution"), []float64{0, 0, 0, 1, 1, 1})
	k := b.Float64([][]float64{values, probs}, []string{"value", "probability"})
	doc["cdf"] = map[string]any{
		"values":                   Element(k, int64(len(values)), 2, "float64"),
		"lower_tail_extrapolation": "no_extrapolation",
		"upper_tail_extrapolation": map[string]any{"power_model": map[string]any{"max": values[len(values)-1] + 10, "power": 0.5}},
	}
	doc["is_declustered"] = false
	doc["support"] = "point"
	return doc
}

// JSON encodes a document built by this package.
func JSON(doc map[string]any) []byte {
	data, err := objects.EncodeJSON(doc)
	if err != nil {
		panic("objecttest: " + err.Error())
	}
	return data
}

var (
	schemasOnce sync.Once
	schemas     *objects.Schemas
	schemasErr  error
)

// Schemas loads the schemas embedded in the binary once per test binary
// (objects.EmbeddedSchemas) and fails the test if they do not load.
func Schemas(tb testing.TB) *objects.Schemas {
	tb.Helper()
	schemasOnce.Do(func() {
		schemas, schemasErr = objects.EmbeddedSchemas()
	})
	if schemasErr != nil {
		tb.Fatalf("loading the embedded evo schemas: %v", schemasErr)
	}
	return schemas
}
