package objects_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validate checks a document against its schema.
func validate(t *testing.T, doc map[string]any) {
	t.Helper()
	d, err := objects.DecodeJSON(objecttest.JSON(doc))
	require.NoError(t, err)
	require.NoError(t, objecttest.Schemas(t).Validate(d))
}

var (
	objVersions   = []string{"1.0.1", "1.1.0", "1.2.0", "1.3.0"}
	modelVersions = []string{"1.0.1", "1.1.0", "1.2.0"}
)

const key1 = "0b9e3c0e-5c4a-4f0e-9c1e-1a2b3c4d5e6f"

func samplePoints() []float64 {
	return []float64{0, 0, 0, 10, 0, 1, 0, 10, 2, 10, 10, 3}
}

func TestBuiltObjectsValidateEveryVersion(t *testing.T) {
	b := objecttest.NewBlobs()
	g := objecttest.GridSpec{Origin: [3]float64{1000, 2000, 300}, Size: [3]int{2, 3, 2}, CellSize: [3]float64{10, 20, 5},
		Rotation: &geostat.Rotation{DipAzimuth: 90}}
	mask := []bool{true, false, true, true, false, false, true, true, true, false, false, true}
	for _, v := range objVersions {
		validate(t, b.Pointset(v, samplePoints(), b.Scalar("grade", key1, []float64{1, 2, 3, 4})))
		validate(t, b.Intervals(v, samplePoints(), b.Scalar("Au", key1, []float64{1, 2, 3, 4})))
		validate(t, b.Grid(v, g, b.Ensemble("sims", key1, [][]float64{make([]float64, 12), make([]float64, 12)})))
		validate(t, b.MaskedGrid(v, g, mask, b.Scalar("x", key1, make([]float64, 7))))
	}
	for _, v := range modelVersions {
		validate(t, objecttest.Variogram(v))
		validate(t, b.Distribution(v, []float64{1, 2, 3}, []float64{0.2, 0.5, 0.8}))
	}
}

func TestSchemaValidationReportsPath(t *testing.T) {
	b := objecttest.NewBlobs()
	doc := b.Pointset("1.3.0", samplePoints())
	doc["unexpected"] = 1
	d, err := objects.DecodeJSON(objecttest.JSON(doc))
	require.NoError(t, err)
	err = objecttest.Schemas(t).Validate(d)
	var se *objects.SchemaError
	require.True(t, errors.As(err, &se), "%v", err)
	assert.NotEmpty(t, se.SchemaPath)

	doc = objecttest.Variogram("1.2.0")
	doc["bounding_box"] = objecttest.BoundingBox(samplePoints())
	d, err = objects.DecodeJSON(objecttest.JSON(doc))
	require.NoError(t, err)
	assert.Error(t, objecttest.Schemas(t).Validate(d), "a variogram is not spatial")

	d["schema"] = "/objects/unknown/1.0.0/unknown.schema.json"
	err = objecttest.Schemas(t).Validate(d)
	require.True(t, errors.As(err, &se))
	assert.True(t, se.NotFound)
}

func TestEmbeddedSchemas(t *testing.T) {
	s, err := objects.EmbeddedSchemas()
	require.NoError(t, err)
	assert.Equal(t, objects.EmbeddedSchemasSource, s.Source())
	for _, id := range []string{
		"/objects/pointset/1.3.0/pointset.schema.json",
		"/objects/regular-masked-3d-grid/1.3.0/regular-masked-3d-grid.schema.json",
		"/objects/experimental-variogram/1.0.0/experimental-variogram.schema.json",
		"/elements/float-array-1/1.0.1/float-array-1.schema.json",
	} {
		assert.True(t, s.Has(id), id)
	}
	// A pointset without locations is refused by the embedded set.
	doc := objecttest.NewBlobs().Pointset("1.3.0", samplePoints())
	delete(doc, "locations")
	d, err := objects.DecodeJSON(objecttest.JSON(doc))
	require.NoError(t, err)
	var se *objects.SchemaError
	require.True(t, errors.As(s.Validate(d), &se))
	assert.False(t, se.NotFound)
}

// writeOnlySchema writes an evo-schemas-like directory holding one object
// schema that requires a numeric "n".
func writeOnlySchema(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "schema", "objects", "only", "1.0.0")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	schema := `{"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id": "/objects/only/1.0.0/only.schema.json",
		"type": "object", "required": ["schema", "n"], "properties": {"n": {"type": "number"}}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "only.schema.json"), []byte(schema), 0o644))
	return root
}

func TestOpenSchemasOverride(t *testing.T) {
	root := writeOnlySchema(t)
	noEnv := func(string) string { return "" }
	env := func(k string) string {
		if k == objects.SchemasDirEnv {
			return root
		}
		return ""
	}
	const only = "/objects/only/1.0.0/only.schema.json"
	const pointset = "/objects/pointset/1.3.0/pointset.schema.json"

	s, err := objects.OpenSchemas("", noEnv)
	require.NoError(t, err)
	assert.Equal(t, objects.EmbeddedSchemasSource, s.Source(), "neither flag nor environment: the embedded set")
	assert.True(t, s.Has(pointset))

	for name, open := range map[string]func() (*objects.Schemas, error){
		"directory":           func() (*objects.Schemas, error) { return objects.OpenSchemas(root, noEnv) },
		"schema subdirectory": func() (*objects.Schemas, error) { return objects.OpenSchemas(filepath.Join(root, "schema"), noEnv) },
		"environment":         func() (*objects.Schemas, error) { return objects.OpenSchemas("", env) },
		"flag over environment": func() (*objects.Schemas, error) {
			return objects.OpenSchemas(root, func(string) string { return t.TempDir() })
		},
	} {
		s, err := open()
		require.NoError(t, err, name)
		assert.Equal(t, filepath.Join(root, "schema"), s.Source(), name)
		assert.True(t, s.Has(only), name)
		assert.False(t, s.Has(pointset), "%s: the override replaces the embedded set", name)
		assert.NoError(t, s.Validate(map[string]any{"schema": only, "n": 1.0}), name)
		assert.Error(t, s.Validate(map[string]any{"schema": only, "n": "one"}), name)
	}

	_, err = objects.OpenSchemas(t.TempDir(), noEnv)
	assert.ErrorContains(t, err, objects.SchemasDirEnv, "a directory without schemas is an error, never validation off")
}

func TestDecodeDispatch(t *testing.T) {
	b := objecttest.NewBlobs()
	g := objecttest.GridSpec{Origin: [3]float64{0, 0, 0}, Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}}
	cases := []struct {
		doc  map[string]any
		kind objects.Kind
	}{
		{b.Pointset("1.2.0", samplePoints()), objects.KindPointset},
		{b.Intervals("1.0.1", samplePoints()), objects.KindDownholeIntervals},
		{b.Grid("1.1.0", g), objects.KindRegular3DGrid},
		{b.MaskedGrid("1.3.0", g, []bool{true, true, false, true}), objects.KindRegularMasked3DGrid},
		{objecttest.Variogram("1.0.1"), objects.KindVariogram},
		{b.Distribution("1.2.0", []float64{1, 2}, []float64{0.3, 0.6}), objects.KindDistribution},
	}
	for _, c := range cases {
		o, err := objects.Decode(objecttest.JSON(c.doc))
		require.NoError(t, err, c.kind)
		assert.Equal(t, c.kind, o.Schema.Kind)
		assert.Equal(t, c.doc["schema"], o.Schema.String())
		set := 0
		for _, p := range []bool{o.Pointset != nil, o.Intervals != nil, o.Grid != nil, o.Variogram != nil, o.Distribution != nil} {
			if p {
				set++
			}
		}
		assert.Equal(t, 1, set, "exactly one view for %s", c.kind)
	}
	_, err := objects.Decode([]byte(`{"schema": "/objects/triangle-mesh/2.1.0/triangle-mesh.schema.json"}`))
	assert.ErrorIs(t, err, objects.ErrUnsupportedSchema)
	_, err = objects.Decode([]byte(`{"schema": "/objects/pointset/9.9.9/pointset.schema.json"}`))
	assert.ErrorIs(t, err, objects.ErrUnsupportedSchema)
	_, err = objects.Decode([]byte(`{"name": "x"}`))
	assert.ErrorContains(t, err, "schema")
}

func TestDecodeRejectsNonFinite(t *testing.T) {
	for _, doc := range []string{
		`{"schema": "x", "v": NaN}`,
		`{"schema": "x", "v": -Infinity}`,
		`{"schema": "x", "v": [1, Infinity]}`,
		`{"schema": "x", "v": 1e999}`,
	} {
		_, err := objects.DecodeJSON([]byte(doc))
		var nf *objects.NonFiniteError
		assert.True(t, errors.As(err, &nf), "%s: %v", doc, err)
	}
	_, err := objects.DecodeJSON([]byte(`{"schema": "NaN is fine in a string"}`))
	assert.NoError(t, err)
	_, err = objects.DecodeJSON([]byte(`{"a": 1} {"b": 2}`))
	assert.ErrorContains(t, err, "invalid JSON at line 1, column 10: invalid character '{' after top-level value")
	_, err = objects.DecodeJSON([]byte(`[1]`))
	assert.ErrorContains(t, err, "not an object")
}

func TestNumbersSurviveRoundTrip(t *testing.T) {
	in := `{"a":0.1000000000000000055511151231257827,"b":12345678901234567890,"c":1E+2}`
	doc, err := objects.DecodeJSON([]byte(in))
	require.NoError(t, err)
	out, err := objects.EncodeJSON(doc)
	require.NoError(t, err)
	assert.Equal(t, in, string(out), "numbers are re-encoded verbatim")
}

func TestAttributeLengthMismatchNamesAttribute(t *testing.T) {
	b := objecttest.NewBlobs()
	doc := b.Pointset("1.3.0", samplePoints(), b.Scalar("grade", key1, []float64{1, 2, 3}))
	_, err := objects.Decode(objecttest.JSON(doc))
	assert.ErrorContains(t, err, "locations.attributes[?name=='grade']")
	assert.ErrorContains(t, err, "4 points")

	g := objecttest.GridSpec{Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}}
	doc = b.MaskedGrid("1.3.0", g, []bool{true, true, false, true}, b.Scalar("x", key1, make([]float64, 4)))
	_, err = objects.Decode(objecttest.JSON(doc))
	assert.ErrorContains(t, err, "cell_attributes[?name=='x']")
	assert.ErrorContains(t, err, "3 active cells")
}

func TestDataKeys(t *testing.T) {
	b := objecttest.NewBlobs()
	doc := b.Pointset("1.3.0", samplePoints(), b.Scalar("grade", key1, []float64{1, 2, 3, 4}))
	d, err := objects.DecodeJSON(objecttest.JSON(doc))
	require.NoError(t, err)
	keys, invalid := objects.DataKeys(d)
	assert.ElementsMatch(t, b.Keys(), keys)
	assert.Empty(t, invalid)

	d["locations"].(map[string]any)["coordinates"].(map[string]any)["data"] = "not-a-key"
	_, invalid = objects.DataKeys(d)
	assert.Equal(t, []string{"/locations/coordinates/data: not-a-key"}, invalid)
}

func TestLocations(t *testing.T) {
	ctx := context.Background()
	b := objecttest.NewBlobs()
	pts := samplePoints()
	o, err := objects.Decode(objecttest.JSON(b.Pointset("1.3.0", pts)))
	require.NoError(t, err)
	got, err := o.Locations(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, pts, got)

	o, err = objects.Decode(objecttest.JSON(b.Intervals("1.3.0", pts)))
	require.NoError(t, err)
	got, err = o.Locations(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, pts, got, "intervals are located at their mid points")

	// Worked example of docs/objects.md 1.7: origin (1000, 2000, 300), cell
	// size (10, 20, 5), dip azimuth 90; cell (1, 2, 0) is at (1050, 1985, 302.5).
	g := objecttest.GridSpec{Origin: [3]float64{1000, 2000, 300}, Size: [3]int{3, 4, 2}, CellSize: [3]float64{10, 20, 5},
		Rotation: &geostat.Rotation{DipAzimuth: 90}}
	o, err = objects.Decode(objecttest.JSON(b.Grid("1.3.0", g)))
	require.NoError(t, err)
	got, err = o.Locations(ctx, b)
	require.NoError(t, err)
	require.Len(t, got, 3*24)
	c := 1 + 3*2
	assert.InDeltaSlice(t, []float64{1050, 1985, 302.5}, got[3*c:3*c+3], 1e-9)

	mask := make([]bool, 24)
	mask[0], mask[c], mask[23] = true, true, true
	o, err = objects.Decode(objecttest.JSON(b.MaskedGrid("1.3.0", g, mask)))
	require.NoError(t, err)
	act, err := o.Locations(ctx, b)
	require.NoError(t, err)
	require.Len(t, act, 9)
	assert.InDeltaSlice(t, []float64{1050, 1985, 302.5}, act[3:6], 1e-9, "the second active cell")
	assert.InDeltaSlice(t, got[3*23:], act[6:], 1e-9)

	// Vertex locations of a regular grid: corner 0 is the origin.
	o, err = objects.Decode(objecttest.JSON(b.Grid("1.3.0", g)))
	require.NoError(t, err)
	verts, err := o.ListLocations(ctx, b, objects.ListVertexAttributes)
	require.NoError(t, err)
	require.Len(t, verts, 3*4*5*3)
	assert.InDeltaSlice(t, []float64{1000, 2000, 300}, verts[:3], 1e-9)
}

func TestMaskCountMismatch(t *testing.T) {
	b := objecttest.NewBlobs()
	g := objecttest.GridSpec{Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}}
	doc := b.MaskedGrid("1.3.0", g, []bool{true, true, false, true})
	doc["number_of_active_cells"] = 2
	o, err := objects.Decode(objecttest.JSON(doc))
	require.NoError(t, err)
	_, err = o.Locations(context.Background(), b)
	assert.ErrorContains(t, err, "number_of_active_cells")
}

func TestReadContinuousSentinelsAndCategory(t *testing.T) {
	ctx := context.Background()
	b := objecttest.NewBlobs()
	grade := b.Scalar("grade", key1, []float64{1, -99, math.NaN(), 4})
	grade["nan_description"] = map[string]any{"values": []any{-99}}
	rock := b.Category("rock", "c0ffee00-0000-4000-8000-000000000000", []int64{1, 2, 1, -1}, map[int64]string{1: "granite", 2: "schist"})
	rock["nan_description"] = map[string]any{"values": []any{-1}}
	o, err := objects.Decode(objecttest.JSON(b.Pointset("1.3.0", samplePoints(), grade, rock)))
	require.NoError(t, err)

	a, err := o.ResolveAttribute("grade")
	require.NoError(t, err)
	vals, err := o.ReadContinuous(ctx, b, a)
	require.NoError(t, err)
	require.Len(t, vals, 1)
	assert.Equal(t, 1.0, vals[0][0])
	assert.True(t, math.IsNaN(vals[0][1]), "sentinel -99 is missing")
	assert.True(t, math.IsNaN(vals[0][2]))
	assert.Equal(t, 4.0, vals[0][3])

	a, err = o.ResolveAttribute("locations.attributes[?name=='rock']")
	require.NoError(t, err)
	cat, err := o.ReadCategory(ctx, b, a)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 1, -1}, cat.Keys)
	assert.Equal(t, []bool{true, true, true, false}, cat.Valid)
	assert.Equal(t, map[int64]string{1: "granite", 2: "schist"}, cat.Names)
	_, err = o.ReadContinuous(ctx, b, a)
	assert.ErrorContains(t, err, "not continuous")
}

func TestDistributionAndVariogram(t *testing.T) {
	ctx := context.Background()
	b := objecttest.NewBlobs()
	o, err := objects.Decode(objecttest.JSON(b.Distribution("1.2.0", []float64{1, 2, 3}, []float64{0.2, 0.5, 0.8})))
	require.NoError(t, err)
	vals, probs, err := o.Distribution.ReadCDF(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, vals)
	assert.Equal(t, []float64{0.2, 0.5, 0.8}, probs)
	assert.JSONEq(t, `"no_extrapolation"`, string(o.Distribution.LowerTail))
	assert.JSONEq(t, `{"power_model": {"max": 13, "power": 0.5}}`, string(o.Distribution.UpperTail))
	_, err = o.Distribution.Build(ctx, b)
	require.NoError(t, err)

	o, err = objects.Decode(objecttest.JSON(objecttest.Variogram("1.2.0")))
	require.NoError(t, err)
	v := o.Variogram
	assert.Equal(t, 1.0, v.Sill)
	assert.Equal(t, 0.1, v.Nugget)
	require.Len(t, v.Structures, 1)
	assert.Equal(t, "spherical", v.Structures[0].Type)
	assert.Equal(t, geostat.Ellipsoid{Major: 100, SemiMajor: 50, Minor: 20, Rotation: geostat.Rotation{DipAzimuth: 30}}, v.Structures[0].Anisotropy)
	dv, err := o.DecodeVariogram()
	require.NoError(t, err)
	assert.NotNil(t, dv.Variogram)
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}

// roundTripDoc decodes and re-encodes a document as generic JSON.
func roundTripDoc(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(data, &v))
	return v
}

func TestSupportedSchemasHaveSchemaFiles(t *testing.T) {
	s := objecttest.Schemas(t)
	ids := objects.SupportedSchemas()
	assert.Len(t, ids, 22)
	for _, id := range ids {
		assert.True(t, s.Has(id.String()), id.String())
		parsed, err := objects.ParseSchemaID(id.String())
		require.NoError(t, err)
		assert.Equal(t, id, parsed)
		assert.True(t, parsed.Supported())
	}
	for _, bad := range []string{"", "/objects/pointset/1.3.0/other.schema.json", "objects/pointset/1.3.0/pointset.schema.json", "/objects/pointset/x.y/pointset.schema.json"} {
		_, err := objects.ParseSchemaID(bad)
		assert.Error(t, err, bad)
	}
}

func TestCloneAndElements(t *testing.T) {
	b := objecttest.NewBlobs()
	doc := b.Intervals("1.3.0", samplePoints(), b.Scalar("Au", key1, []float64{1, 2, 3, 4}))
	o, err := objects.Decode(objecttest.JSON(doc))
	require.NoError(t, err)
	c := o.Clone()
	k := b.Float64([][]float64{{1, 2, 3, 4}}, []string{"x"})
	_, err = c.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x"}, objects.ContinuousValues{Data: k, Length: 4, Width: 1})
	require.NoError(t, err)
	assert.Len(t, o.Attributes(objects.ListAttributes), 1, "the original is not changed by writes to the clone")
	assert.Len(t, c.Attributes(objects.ListAttributes), 2)

	d, err := objects.DecodeJSON(objecttest.JSON(doc))
	require.NoError(t, err)
	keys, _ := objects.DataKeys(d)
	var fromElements []string
	for _, e := range o.Elements() {
		fromElements = append(fromElements, e.Data)
	}
	assert.ElementsMatch(t, keys, fromElements, "every blob of the document is a modelled element")
}

// TestBlockModelSchemas: the embedded set holds the block model object and
// its four geometry structures. The evo-schemas examples (one per kind)
// validate, and the object's closed members are enforced: no geometry, an
// octree count that is not a power of two, or an unknown member fail.
func TestBlockModelSchemas(t *testing.T) {
	s, err := objects.EmbeddedSchemas()
	require.NoError(t, err)
	kinds := map[string]bool{}
	for i := 1; i <= 4; i++ {
		data, err := os.ReadFile(filepath.Join("testdata", "evo-examples", fmt.Sprintf("block-model-%d.json", i)))
		require.NoError(t, err)
		d, err := objects.DecodeJSON(data)
		require.NoError(t, err)
		require.NoError(t, s.Validate(d), "example %d", i)
		kinds[d["geometry"].(map[string]any)["model_type"].(string)] = true

		bad, err := objects.DecodeJSON(data)
		require.NoError(t, err)
		delete(bad, "geometry")
		assert.Error(t, s.Validate(bad), "example %d without geometry", i)
		bad, err = objects.DecodeJSON(data)
		require.NoError(t, err)
		bad["cells"] = 1
		assert.Error(t, s.Validate(bad), "example %d with an unknown member", i)
	}
	assert.Equal(t, map[string]bool{"regular": true, "fully-sub-blocked": true, "flexible": true, "variable-octree": true}, kinds)

	data, err := os.ReadFile(filepath.Join("testdata", "evo-examples", "block-model-4.json"))
	require.NoError(t, err)
	d, err := objects.DecodeJSON(data)
	require.NoError(t, err)
	d["geometry"].(map[string]any)["n_subblocks_per_parent"] = []any{json.Number("3"), json.Number("2"), json.Number("2")}
	assert.Error(t, s.Validate(d), "an octree splits each axis in a power of two")
}
