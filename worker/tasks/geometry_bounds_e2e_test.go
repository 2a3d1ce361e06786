package tasks_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	prob "github.com/geostat-engine/geostat/worker/problem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geometryCase is a stored grid whose geometry is outside the documented
// bounds, and the member that must be named.
type geometryCase struct {
	name   string
	edit   func(doc map[string]any)
	member string
}

// outOfBoundsGrids are the grids of the problem report: an origin of 1e308
// (turning bands panicked in partitionSphericalRow), cell sizes of 1e300
// and 1e19, and a 10×10×10 grid of 1e9 cells (turning bands grew past
// 3 GB), plus a negative origin and an extent beyond 1e9 with a cell size
// inside the bounds.
func outOfBoundsGrids() []geometryCase {
	return []geometryCase{
		{"origin 1e308", func(d map[string]any) { d["origin"] = []any{1e308, 1e308, 1e308} }, "origin"},
		{"origin -2e9", func(d map[string]any) { d["origin"] = []any{0, -2e9, 0} }, "origin"},
		{"cell size 1e300", func(d map[string]any) { d["cell_size"] = []any{1e300, 1e300, 1e300} }, "cell_size"},
		{"cell size 1e19", func(d map[string]any) { d["cell_size"] = []any{1e19, 1, 1} }, "cell_size"},
		{"cell size 1e9", func(d map[string]any) { d["cell_size"] = []any{1e9, 1e9, 1e9} }, "cell_size"},
		{"extent 1.2e9", func(d map[string]any) { d["size"] = []any{1200, 10, 10}; d["cell_size"] = []any{1e6, 1, 1} }, "cell_size"},
	}
}

// geometryRefused asserts a 422 invalid-data answer that names the field's
// member in invalid-params.
func geometryRefused(t *testing.T, r []byte, status int, name string) {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, status, "%s", r)
	var p map[string]any
	require.NoError(t, json.Unmarshal(r, &p))
	assert.Equal(t, prob.ComputeInvalidData, p["type"], "%s", r)
	params, _ := p["invalid-params"].([]any)
	require.Len(t, params, 1, "%s", r)
	assert.Equal(t, name, params[0].(map[string]any)["name"], "%s", r)
}

// TestGridGeometryOutOfBoundsIsRefusedAtSubmit stores the out-of-bounds
// grids and submits every estimation and simulation task onto them, in both
// the current and the seed's shapes: each is 422 at submit naming the
// member, and no job is created (before the bounds, simulations crashed the
// worker and knn and kriging succeeded with nonsense).
func TestGridGeometryOutOfBoundsIsRefusedAtSubmit(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(40, 3)
	h.put(b, "g/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	h.put(b, "g/vario.json", objecttest.Variogram("1.2.0"))
	h.put(b, "g/dist.json", b.Distribution("1.2.0", []float64{0, 1, 2}, []float64{0.2, 0.5, 0.8}))
	create := func(target string) map[string]any {
		return map[string]any{"object": h.url(target), "attribute": map[string]any{"operation": "create", "name": "est"}}
	}
	src := map[string]any{"object": h.url("g/pts.json"), "attribute": "au"}
	for i, gc := range outOfBoundsGrids() {
		doc := b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{10, 10, 10}, CellSize: [3]float64{1, 1, 1}})
		gc.edit(doc)
		target := "g/bad" + string(rune('a'+i)) + ".json"
		h.put(b, target, doc)
		current := map[string]map[string]any{
			"knn":     {"source": src, "target": create(target), "neighborhood": neighbourhood(4)},
			"idw":     {"source": src, "target": create(target), "neighborhood": neighbourhood(4), "power": 2.0},
			"kriging": {"source": src, "target": create(target), "variogram": h.url("g/vario.json"), "neighborhood": neighbourhood(8)},
			"conditional-turning-bands": {"source": h.url("g/pts.json"), "source_attribute": "au", "target": h.url(target),
				"distribution": h.url("g/dist.json"), "variogram_model": h.url("g/vario.json"), "realizations": 2, "number_of_lines": 50},
			"consim": {"source_object": h.url("g/pts.json"), "source_attribute": "au", "target_object": h.url(target),
				"variogram_model": h.url("g/vario.json"), "neighborhood": neighbourhood(8)},
		}
		for task, params := range current {
			t.Run(gc.name+"/"+task, func(t *testing.T) {
				body, err := json.Marshal(map[string]any{"parameters": params})
				require.NoError(t, err)
				r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/"+task, body)
				require.NoError(t, err)
				field := "target"
				if task == "consim" {
					field = "target_object"
				}
				geometryRefused(t, r.Body, r.Status, field+"."+gc.member)
			})
		}
		seed := map[string]map[string]any{
			"knn": {"source": map[string]any{"object_reference": h.url("g/pts.json"), "object_element": []any{map[string]any{"path": "/locations/attributes/@name=au"}}},
				"target": map[string]any{"object_reference": h.url(target), "object_element": []any{map[string]any{"path": "/cell_attributes/@name=est"}}},
				"neighborhood": map[string]any{"max-samples": 4, "anisotropy": map[string]any{
					"ellipsoid_ranges": map[string]any{"major": 60, "semi_major": 40, "minor": 15}}}},
			"conditional-tbsim": {"source": map[string]any{"object_reference": h.url("g/pts.json"), "object_element": []any{map[string]any{"path": "/locations/attributes/@name=au"}}},
				"target":          map[string]any{"object_reference": h.url(target), "object_element": []any{map[string]any{"path": "/cell_attributes/@name=sims"}}},
				"distribution":    map[string]any{"object_reference": h.url("g/dist.json")},
				"variogram_model": map[string]any{"object_reference": h.url("g/vario.json")},
				"realizations":    2, "number_of_lines": 50},
		}
		for task, params := range seed {
			t.Run(gc.name+"/seed "+task, func(t *testing.T) {
				body, err := json.Marshal(params)
				require.NoError(t, err)
				r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostat/"+task, body)
				require.NoError(t, err)
				geometryRefused(t, r.Body, r.Status, "target."+gc.member)
			})
		}
	}
	assert.Empty(t, h.jobs.List(org), "no job was created")
}

// TestSourceCoordinatesOutOfBoundsFailTheJob stores point sets whose
// coordinates (read from Parquet by the job) are beyond ±1e9: the job fails
// 422 invalid-data naming the object and the coordinates member.
func TestSourceCoordinatesOutOfBoundsFailTheJob(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(30, 7)
	h.put(b, "c/good.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	far := append([]float64{}, xyz...)
	far[4] = 1e308
	h.put(b, "c/far.json", b.Pointset("1.3.0", far, b.Scalar("au", "k-au", grade)))
	p := runFails(t, h, "knn", knnBody(h, "c/far.json", "au", "c/good.json"))
	invalidData(t, p, "c/far.json", "locations.coordinates")
	assert.Equal(t, "locations.coordinates", p["member"])
	params, _ := p["invalid-params"].([]any)
	require.Len(t, params, 1)
	assert.Equal(t, "source.locations.coordinates", params[0].(map[string]any)["name"])
}

// TestSimulationDomainLongerThanTheRangesIsRefused checks the turning-bands
// line tables: a grid within the geometry bounds but some 10⁷ variogram
// ranges long is 422 at submit naming the target (it asked for tens of GB
// of interval signs), and conditioning data 9e8 m from a small grid fail
// the job 422 invalid-data naming the source's coordinates.
func TestSimulationDomainLongerThanTheRangesIsRefused(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(40, 3)
	h.put(b, "d/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	far := append([]float64{}, xyz...)
	far[0] = 9e8
	h.put(b, "d/far.json", b.Pointset("1.3.0", far, b.Scalar("au", "k-au", grade)))
	h.put(b, "d/vario.json", objecttest.Variogram("1.2.0"))
	h.put(b, "d/dist.json", b.Distribution("1.2.0", []float64{0, 1, 2}, []float64{0.2, 0.5, 0.8}))
	h.put(b, "d/long.json", b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{1000, 1, 1}, CellSize: [3]float64{1e6, 1, 1}}))
	h.put(b, "d/small.json", b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{5, 5, 2}, CellSize: [3]float64{20, 20, 10}}))
	cts := func(source, target string) map[string]any {
		return map[string]any{"source": h.url(source), "source_attribute": "au", "target": h.url(target),
			"distribution": h.url("d/dist.json"), "variogram_model": h.url("d/vario.json"), "realizations": 1, "number_of_lines": 20}
	}
	for task, params := range map[string]map[string]any{
		"conditional-turning-bands": cts("d/pts.json", "d/long.json"),
		"consim": {"source_object": h.url("d/pts.json"), "source_attribute": "au", "target_object": h.url("d/long.json"),
			"variogram_model": h.url("d/vario.json"), "neighborhood": neighbourhood(8), "number_of_lines": 20},
	} {
		body, err := json.Marshal(map[string]any{"parameters": params})
		require.NoError(t, err)
		p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/"+task, body, http.StatusUnprocessableEntity, "/validation")
		field := "target"
		if task == "consim" {
			field = "target_object"
		}
		assert.Equal(t, []string{field}, invalidParamNames(t, p), "%v", p)
		assert.Contains(t, p["detail"], "ranges")
	}
	assert.Empty(t, h.jobs.List(org), "no job was created")

	body, err := json.Marshal(map[string]any{"parameters": cts("d/far.json", "d/small.json")})
	require.NoError(t, err)
	p := runFails(t, h, "conditional-turning-bands", body)
	invalidData(t, p, "d/far.json", "locations.coordinates")
	params, _ := p["invalid-params"].([]any)
	require.Len(t, params, 1)
	assert.Equal(t, "source.locations.coordinates", params[0].(map[string]any)["name"])
	// The same request from data beside the grid runs.
	body, err = json.Marshal(map[string]any{"parameters": cts("d/pts.json", "d/small.json")})
	require.NoError(t, err)
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/conditional-turning-bands", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	job, err := h.c.Follow(h.ctx, r.Header.Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "succeeded", job.Status, "%s", job.Error)
}
