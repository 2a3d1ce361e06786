package tasks_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleData is a random pointset in a 100 × 100 × 20 box with a smooth
// grade.
func sampleData(n int, seed uint64) (xyz, grade []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < n; i++ {
		x, y, z := rng.Float64()*100, rng.Float64()*100, rng.Float64()*20
		xyz = append(xyz, x, y, z)
		grade = append(grade, 1+math.Sin(x/15)+0.5*math.Cos(y/20)+0.02*z+0.1*rng.NormFloat64())
	}
	return
}

func TestKNNBothShapes(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(300, 1)
	grade[5] = math.NaN()
	pts := h.put(b, "data/points.json", b.Pointset("1.3.0", xyz, b.Scalar("grade", "k-grade", grade)))
	spec := objecttest.GridSpec{Origin: [3]float64{0, 0, 0}, Size: [3]int{10, 10, 4}, CellSize: [3]float64{10, 10, 5}, Rotation: &geostat.Rotation{DipAzimuth: 10}}
	gid := h.put(b, "grids/g.json", b.Grid("1.2.0", spec))

	ell := geostat.Ellipsoid{Major: 40, SemiMajor: 25, Minor: 10, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 10}}
	// The oracle: the library on the same data.
	g, err := grid.New(spec.Origin, spec.Size, spec.CellSize, *spec.Rotation)
	require.NoError(t, err)
	ix, err := neighbor.NewIndex(xyz, grade, nil, neighbor.Params{Ellipsoid: ell, MaxSamples: 8, MinSamples: 2})
	require.NoError(t, err)
	want := make([]float64, g.NumCells())
	require.NoError(t, ix.Mean(h.ctx, grade, g.CellCentres(nil), want, nil))

	// Seed shape: synchronous 200 with {message, object_modified}.
	seed := map[string]any{
		"source": map[string]any{"type": "geoscience-object-reference", "object_reference": h.url("data/points.json"),
			"object_element": []any{map[string]any{"type": "element", "path": "/locations/attributes/@name=grade"}}},
		"target": map[string]any{"object_reference": h.url("grids/g.json"),
			"object_element": []any{map[string]any{"path": "/cell_attributes/@name=knn_seed"}}},
		"neighborhood": map[string]any{"max-samples": 8, "anisotropy": map[string]any{
			"ellipsoid_ranges": map[string]any{"major": 40, "semi_major": 25, "minor": 10},
			"rotation":         map[string]any{"dip_azimuth": 30, "dip": 10, "pitch": 0}}},
	}
	body, _ := json.Marshal(seed)
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostat/knn", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var res struct {
		Message        string `json:"message"`
		ObjectModified struct {
			ObjectReference string                  `json:"object_reference"`
			ObjectElement   []struct{ Path string } `json:"object_element"`
		} `json:"object_modified"`
	}
	require.NoError(t, r.JSON(&res))
	assert.Contains(t, res.ObjectModified.ObjectReference, gid+"?version=")
	assert.Equal(t, "/cell_attributes/@name=knn_seed", res.ObjectModified.ObjectElement[0].Path)

	obj, blobs := h.latest(gid)
	got := h.column(obj, blobs, "knn_seed")
	// min_samples is not part of the seed shape: compare with MinSamples 0.
	ix0, err := neighbor.NewIndex(xyz, grade, nil, neighbor.Params{Ellipsoid: ell, MaxSamples: 8})
	require.NoError(t, err)
	want0 := make([]float64, g.NumCells())
	require.NoError(t, ix0.Mean(h.ctx, grade, g.CellCentres(nil), want0, nil))
	assertSameFloats(t, want0, got)

	// Current shape: 303 and a job; min_samples honoured; a target filter.
	params := map[string]any{
		"source": map[string]any{"object": h.url("data/points.json"), "attribute": "locations.attributes[?name=='grade']"},
		"target": map[string]any{"object": h.c.Base + "/geoscience-object/orgs/" + org + "/workspaces/" + ws + "/objects/" + gid,
			"attribute": map[string]any{"operation": "create", "name": "knn_cur"}},
		"neighborhood": map[string]any{"max_samples": 8, "min_samples": 2, "ellipsoid": map[string]any{
			"ellipsoid_ranges": map[string]any{"major": 40, "semi_major": 25, "minor": 10},
			"rotation":         map[string]any{"dip_azimuth": 30, "dip": 10, "pitch": 0}}},
	}
	job, err := h.c.RunTask(h.ctx, org, "knn", params)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var cur struct {
		Target struct {
			Reference string
			SchemaID  string `json:"schema_id"`
			Attribute struct{ Reference, Name string }
		}
	}
	require.NoError(t, json.Unmarshal(job.Results, &cur))
	assert.Equal(t, "cell_attributes[?name=='knn_cur']", cur.Target.Attribute.Reference)
	assert.Equal(t, "/objects/regular-3d-grid/1.2.0/regular-3d-grid.schema.json", cur.Target.SchemaID)
	obj, blobs = h.latest(gid)
	assertSameFloats(t, want, h.column(obj, blobs, "knn_cur"))
	assertSameFloats(t, want0, h.column(obj, blobs, "knn_seed"), "the earlier attribute is kept")
	_ = pts
}

func assertSameFloats(t *testing.T, want, got []float64, msg ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg...)
	finite := 0
	for i := range want {
		if math.IsNaN(want[i]) {
			require.True(t, math.IsNaN(got[i]), "row %d: want NaN, got %v", i, got[i])
			continue
		}
		finite++
		require.Equal(t, want[i], got[i], "row %d", i)
	}
	require.Greater(t, finite, 0, "some rows have values")
}
