package objects_test

import (
	"context"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otherMembersEqual asserts that two documents differ only in the attribute
// list at listPath (a dotted path).
func otherMembersEqual(t *testing.T, before, after map[string]any, listPath ...string) {
	t.Helper()
	strip := func(doc map[string]any) map[string]any {
		m := roundTripDoc(t, objecttest.JSON(doc))
		cur := m
		for i, p := range listPath {
			if i == len(listPath)-1 {
				delete(cur, p)
				break
			}
			cur = cur[p].(map[string]any)
		}
		return m
	}
	assert.Equal(t, strip(before), strip(after))
}

func TestWriteContinuousCreateAppends(t *testing.T) {
	ctx := context.Background()
	b := objecttest.NewBlobs()
	for _, v := range objVersions {
		doc := b.Pointset(v, samplePoints(), b.Scalar("grade", key1, []float64{1, 2, 3, 4}))
		// Members the worker does not model must survive the write.
		doc["tags"] = map[string]any{"project": "demo"}
		doc["extensions"] = map[string]any{"vendor": map[string]any{"x": []any{1, 2.5, "s"}}}
		doc["description"] = "sample"
		doc["locations"].(map[string]any)["attributes"].([]any)[0].(map[string]any)["attribute_description"] =
			map[string]any{"discipline": "Geochemistry", "type": "Au", "unit": "g/t"}
		before := objecttest.JSON(doc)
		o, err := objects.Decode(before)
		require.NoError(t, err)

		key := b.Float64([][]float64{{5, 6, 7, 8}}, []string{"knn"})
		a, err := o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "knn"},
			objects.ContinuousValues{Data: key, Length: 4, Width: 1})
		require.NoError(t, err, v)
		assert.Equal(t, "knn", a.Name)
		assert.Equal(t, 1, a.Index)
		_, err = uuid.Parse(a.Key)
		assert.NoError(t, err, "fresh UUID key")
		assert.Equal(t, objects.AttributeScalar, a.Type)

		after, err := o.JSON()
		require.NoError(t, err)
		otherMembersEqual(t, roundTripDoc(t, before), roundTripDoc(t, after), "locations", "attributes")
		m := roundTripDoc(t, after)
		list := m["locations"].(map[string]any)["attributes"].([]any)
		require.Len(t, list, 2)
		assert.Equal(t, roundTripDoc(t, before)["locations"].(map[string]any)["attributes"].([]any)[0], list[0], "the other attribute is untouched")
		assert.Equal(t, map[string]any{"values": []any{}}, list[1].(map[string]any)["nan_description"])
		validate(t, m)

		vals, err := o.ReadContinuous(ctx, b, a)
		require.NoError(t, err)
		assert.Equal(t, [][]float64{{5, 6, 7, 8}}, vals)
	}
}

func TestWriteContinuousReplaceKeepsKey(t *testing.T) {
	b := objecttest.NewBlobs()
	grade := b.Scalar("grade", key1, []float64{1, 2, 3, 4})
	grade["attribute_description"] = map[string]any{"discipline": "Geochemistry", "type": "Au", "unit": "g/t"}
	grade["nan_description"] = map[string]any{"values": []any{-99}}
	doc := b.Pointset("1.3.0", samplePoints(), grade)
	o, err := objects.Decode(objecttest.JSON(doc))
	require.NoError(t, err)
	key := b.Float64([][]float64{{9, 9, 9, 9}}, []string{"grade"})

	// create with an existing name replaces it, keeping key and description.
	a, err := o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "grade"},
		objects.ContinuousValues{Data: key, Length: 4, Width: 1})
	require.NoError(t, err)
	assert.Equal(t, key1, a.Key)
	assert.Equal(t, 0, a.Index)
	assert.Empty(t, a.NaN, "values are written with NaN for missing, so the sentinels go")
	m := roundTripDoc(t, mustJSON(t, o))
	list := m["locations"].(map[string]any)["attributes"].([]any)
	require.Len(t, list, 1)
	assert.Contains(t, list[0], "attribute_description")
	validate(t, m)

	// update by reference, as an ensemble of 3 realisations.
	ens := b.Float64([][]float64{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}, objects.EnsembleColumnNames("grade", 3))
	a, err = o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationUpdate, Reference: "locations.attributes[?key=='" + key1 + "']"},
		objects.ContinuousValues{Data: ens, Length: 4, Width: 3, Ensemble: true})
	require.NoError(t, err)
	assert.Equal(t, key1, a.Key)
	assert.Equal(t, "grade", a.Name)
	assert.Equal(t, objects.AttributeEnsembleContinuous, a.Type)
	assert.Equal(t, 3, a.Width())
	validate(t, roundTripDoc(t, mustJSON(t, o)))
	vals, err := o.ReadContinuous(context.Background(), b, a)
	require.NoError(t, err)
	assert.Equal(t, [][]float64{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}, vals)
}

func mustJSON(t *testing.T, o *objects.Object) []byte {
	t.Helper()
	data, err := o.JSON()
	require.NoError(t, err)
	return data
}

func TestWriteContinuousOnGridsAndIntervals(t *testing.T) {
	b := objecttest.NewBlobs()
	g := objecttest.GridSpec{Origin: [3]float64{1, 2, 3}, Size: [3]int{3, 2, 2}, CellSize: [3]float64{1, 1, 1}}
	mask := []bool{true, true, false, false, true, true, true, false, true, true, false, true}
	for _, v := range objVersions {
		// Realisations of a conditional simulation on a regular grid.
		o, err := objects.Decode(objecttest.JSON(b.Grid(v, g)))
		require.NoError(t, err)
		k := b.Float64([][]float64{make([]float64, 12)}, []string{"s_0"})
		a, err := o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "simulation-results"},
			objects.ContinuousValues{Data: k, Length: 12, Width: 1, Ensemble: true})
		require.NoError(t, err)
		assert.Equal(t, "cell_attributes", a.List)
		validate(t, roundTripDoc(t, mustJSON(t, o)))

		o, err = objects.Decode(objecttest.JSON(b.MaskedGrid(v, g, mask)))
		require.NoError(t, err)
		_, err = o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x"},
			objects.ContinuousValues{Data: k, Length: 12, Width: 1})
		assert.ErrorContains(t, err, "8 active cells", "masked grids take one row per active cell")
		k8 := b.Float64([][]float64{make([]float64, 8)}, []string{"x"})
		_, err = o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x"},
			objects.ContinuousValues{Data: k8, Length: 8, Width: 1})
		require.NoError(t, err)
		validate(t, roundTripDoc(t, mustJSON(t, o)))

		o, err = objects.Decode(objecttest.JSON(b.Intervals(v, samplePoints())))
		require.NoError(t, err)
		k4 := b.Float64([][]float64{{1, 2, 3, 4}}, []string{"Au_bt"})
		a, err = o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "Au_bt"},
			objects.ContinuousValues{Data: k4, Length: 4, Width: 1})
		require.NoError(t, err)
		assert.Equal(t, "attributes", a.List)
		validate(t, roundTripDoc(t, mustJSON(t, o)))
	}
}

func TestWriteContinuousErrors(t *testing.T) {
	b := objecttest.NewBlobs()
	doc := b.Pointset("1.3.0", samplePoints())
	o, err := objects.Decode(objecttest.JSON(doc))
	require.NoError(t, err)
	k := b.Float64([][]float64{{1, 2, 3}}, []string{"x"})
	before := mustJSON(t, o)
	cases := []struct {
		target objects.AttributeTarget
		values objects.ContinuousValues
		msg    string
	}{
		{objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x"}, objects.ContinuousValues{Data: k, Length: 3, Width: 1}, "locations.attributes[?name=='x']: length 3 does not match the geometry (4 points)"},
		{objects.AttributeTarget{Operation: objects.OperationCreate}, objects.ContinuousValues{Data: k, Length: 4, Width: 1}, "needs a name"},
		{objects.AttributeTarget{Operation: "delete", Name: "x"}, objects.ContinuousValues{Data: k, Length: 4, Width: 1}, "want create or update"},
		{objects.AttributeTarget{Operation: objects.OperationUpdate, Reference: "nope"}, objects.ContinuousValues{Data: k, Length: 4, Width: 1}, "no attribute"},
		{objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x", List: "cell_attributes"}, objects.ContinuousValues{Data: k, Length: 4, Width: 1}, "no attribute list"},
		{objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x"}, objects.ContinuousValues{Data: "zz", Length: 4, Width: 1}, "not a SHA-256"},
		{objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x"}, objects.ContinuousValues{Data: k, Length: 4, Width: 2}, "width 2"},
	}
	for _, c := range cases {
		_, err := o.WriteContinuous(c.target, c.values)
		assert.ErrorContains(t, err, c.msg)
	}
	assert.Equal(t, before, mustJSON(t, o), "failed writes leave the object unchanged")

	v, err := objects.Decode(objecttest.JSON(objecttest.Variogram("1.2.0")))
	require.NoError(t, err)
	_, err = v.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "x"}, objects.ContinuousValues{Data: k, Length: 3, Width: 1})
	assert.ErrorContains(t, err, "no attributes")
}

// TestWriteCategoryCreateAndReplace writes a category attribute with a
// lookup table and a missing-key sentinel into grids of every version: it
// validates against the schemas, reads back with ReadCategory, and a second
// write of the same name replaces it, keeping its key.
func TestWriteCategoryCreateAndReplace(t *testing.T) {
	ctx := context.Background()
	b := objecttest.NewBlobs()
	spec := objecttest.GridSpec{Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}}
	for _, v := range objVersions {
		doc := b.Grid(v, spec, b.Scalar("grade", key1, []float64{1, 2, 3, 4}))
		o, err := objects.Decode(objecttest.JSON(doc))
		require.NoError(t, err)
		keys := b.Table([]objects.Column{{Type: objects.TypeInt32, Int64: []int64{0, 1, -1, 1}}}, []string{"class"})
		table := b.Table([]objects.Column{{Type: objects.TypeInt32, Int64: []int64{0, 1}}, {Type: objects.TypeString, String: []string{"waste", "ore"}}},
			[]string{"key", "value"})
		target := objects.AttributeTarget{Operation: objects.OperationCreate, Name: "class"}
		a, err := o.WriteCategory(target, objects.CategoryValues{Data: keys, Length: 4, Table: table, TableLength: 2, Missing: []int64{-1}})
		require.NoError(t, err, v)
		assert.Equal(t, objects.AttributeCategory, a.Type)
		assert.Equal(t, 1, a.Index)
		out, err := o.JSON()
		require.NoError(t, err)
		validate(t, roundTripDoc(t, out))
		cat, err := o.ReadCategory(ctx, b, a)
		require.NoError(t, err)
		assert.Equal(t, []int64{0, 1, -1, 1}, cat.Keys)
		assert.Equal(t, []bool{true, true, false, true}, cat.Valid, "the sentinel -1 is missing")
		assert.Equal(t, map[int64]string{0: "waste", 1: "ore"}, cat.Names)

		key := a.Key
		a2, err := o.WriteCategory(target, objects.CategoryValues{Data: keys, Length: 4, Table: table, TableLength: 2, Missing: []int64{-1}})
		require.NoError(t, err)
		assert.Equal(t, key, a2.Key, "a replaced attribute keeps its key")
		assert.Len(t, o.Attributes("cell_attributes"), 2)
		_, err = o.WriteCategory(target, objects.CategoryValues{Data: keys, Length: 3, Table: table, TableLength: 2})
		assert.ErrorContains(t, err, "does not match the geometry")
	}
}
