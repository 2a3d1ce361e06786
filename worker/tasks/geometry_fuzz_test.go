package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/require"
)

// FuzzGridGeometry stores a grid of fuzzed origin, size, cell size and
// rotation, submits every task that reads a grid (as target, as source or
// as declustering grid) onto it, in both topics, and follows each job to
// its end: every answer must be 2xx, 303 or 4xx, every failed job a 4xx
// problem, and the worker must keep answering. One worker (with a small
// memory limit, so large valid grids are refused at submit rather than
// computed) serves every input of a fuzzing process.
//
// Numbers that JSON cannot carry (NaN, ±Inf) become 0 and ±MaxFloat64.
func FuzzGridGeometry(f *testing.F) {
	type geom struct {
		ox, oy, oz    float64
		nx, ny, nz    int64
		dx, dy, dz    float64
		az, dip, ptch float64
	}
	for _, g := range []geom{
		{0, 0, 0, 4, 3, 2, 10, 10, 5, 0, 0, 0},                 // a good grid: every task runs
		{1e308, 1e308, 1e308, 10, 10, 10, 1, 1, 1, 0, 0, 0},    // turning bands panicked
		{0, 0, 0, 10, 10, 10, 1e300, 1e300, 1e300, 0, 0, 0},    // turning bands panicked
		{0, 0, 0, 10, 10, 10, 1e19, 1, 1, 0, 0, 0},             // turning bands panicked
		{0, 0, 0, 10, 10, 10, 1e9, 1e9, 1e9, 0, 0, 0},          // turning bands grew past 3 GB
		{0, 0, 0, 1000, 1, 1, 1e6, 1, 1, 0, 0, 0},              // in bounds, 5e7 ranges long
		{-1e9, 1e9, -1e9, 2, 2, 2, 1e6, 1e6, 1e6, 0, 0, 0},     // the extremes accepted
		{-1e9 - 1, 0, 0, 2, 2, 2, 1, 1, 1, 0, 0, 0},            // just beyond
		{0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0},                   // empty
		{0, 0, 0, -3, 2, 2, 1, 1, 1, 0, 0, 0},                  // negative count
		{0, 0, 0, 3037000500, 3037000500, 1, 1, 1, 1, 0, 0, 0}, // cell count overflows
		{0, 0, 0, 2, 2, 2, 0, 1, 1, 0, 0, 0},                   // zero cell size
		{0, 0, 0, 2, 2, 2, -1, 1, 1, 0, 0, 0},                  // negative cell size
		{0, 0, 0, 2, 2, 2, 5e-324, 5e-324, 5e-324, 0, 0, 0},    // subnormal cell size
		{0, 0, 0, 3, 3, 3, 1, 1, 1, 1e308, -1e308, 720},        // rotation out of range
		{0, 0, 0, 3, 3, 3, 1, 1, 1, 359, 179, 359},             // rotation at its limits
	} {
		f.Add(g.ox, g.oy, g.oz, g.nx, g.ny, g.nz, g.dx, g.dy, g.dz, g.az, g.dip, g.ptch)
	}
	h := start(f, 1)
	h.env.MaxMemory = 32 << 20
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(40, 3)
	h.put(b, "fz/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	h.put(b, "fz/vario.json", objecttest.Variogram("1.2.0"))
	h.put(b, "fz/dist.json", b.Distribution("1.2.0", []float64{0, 1, 2}, []float64{0.2, 0.5, 0.8}))
	n := 0
	f.Fuzz(func(t *testing.T, ox, oy, oz float64, nx, ny, nz int64, dx, dy, dz, az, dip, ptch float64) {
		hh := *h
		hh.t = t
		n++
		path := fmt.Sprintf("fz/grid-%d.json", n)
		doc := b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{1, 1, 1}, CellSize: [3]float64{1, 1, 1}})
		doc["origin"] = []any{jsonFloat(ox), jsonFloat(oy), jsonFloat(oz)}
		doc["size"] = []any{nx, ny, nz}
		doc["cell_size"] = []any{jsonFloat(dx), jsonFloat(dy), jsonFloat(dz)}
		doc["rotation"] = map[string]any{"dip_azimuth": jsonFloat(az), "dip": jsonFloat(dip), "pitch": jsonFloat(ptch)}
		// A cell attribute and an ensemble when the grid is small enough to
		// carry them, so that the tasks reading a grid source run too.
		if nx >= 1 && ny >= 1 && nz >= 1 && nx <= 64 && ny <= 64 && nz <= 64 && nx*ny*nz <= 512 {
			cells := int(nx * ny * nz)
			v := make([]float64, cells)
			reals := make([][]float64, 3)
			for r := range reals {
				reals[r] = make([]float64, cells)
			}
			for i := range v {
				v[i] = float64(i%7) + 0.5
				for r := range reals {
					reals[r][i] = float64((i+r)%5) + 0.25
				}
			}
			doc["cell_attributes"] = []any{b.Scalar("v", "k-v", v), b.Ensemble("sims", "k-sims", reals)}
		}
		require.NoError(t, h.c.UploadBlobs(h.ctx, org, ws, b, 1))
		r, err := h.c.Do(h.ctx, http.MethodPost, workertest.WorkspacePrefix(org, ws)+"/objects/path/"+path, objecttest.JSON(doc))
		require.NoError(t, err)
		require.Less(t, r.Status, 500, "storing the grid: %s", r.Body)
		if r.Status != http.StatusCreated {
			return // the object API refused it (schema): nothing to compute on
		}
		grid := h.url(path)
		pts := h.url("fz/pts.json")
		create := func(name string) map[string]any {
			return map[string]any{"object": grid, "attribute": map[string]any{"operation": "create", "name": name}}
		}
		src := map[string]any{"object": pts, "attribute": "au"}
		gridSrc := func(attr string) map[string]any { return map[string]any{"object": grid, "attribute": attr} }
		current := map[string]map[string]any{
			"knn":     {"source": src, "target": create("knn"), "neighborhood": neighbourhood(4)},
			"idw":     {"source": src, "target": create("idw"), "neighborhood": neighbourhood(4), "power": 2.0},
			"kriging": {"source": src, "target": create("k"), "variogram": h.url("fz/vario.json"), "neighborhood": neighbourhood(8)},
			"conditional-turning-bands": {"source": pts, "source_attribute": "au", "target": grid,
				"distribution": h.url("fz/dist.json"), "variogram_model": h.url("fz/vario.json"), "realizations": 2, "number_of_lines": 10},
			"consim": {"source_object": pts, "source_attribute": "au", "target_object": grid,
				"variogram_model": h.url("fz/vario.json"), "neighborhood": neighbourhood(8), "number_of_lines": 10, "number_of_simulations": 2},
			"declustering": {"source": map[string]any{"object": pts}, "grid": map[string]any{"object": grid},
				"target":       map[string]any{"object": pts, "attribute": map[string]any{"operation": "create", "name": "w"}},
				"neighborhood": neighbourhood(4), "power": 2.0},
			"normal-score":  {"method": "forward", "source": gridSrc("v"), "target": create("ns"), "distribution": h.url("fz/dist.json")},
			"break-ties":    {"source": gridSrc("v"), "target": create("bt")},
			"location-wise": {"source": gridSrc("cell_attributes[?name=='sims']"), "target": map[string]any{"object": grid}, "summary": true},
		}
		for task, params := range current {
			body, err := json.Marshal(map[string]any{"parameters": params})
			require.NoError(t, err)
			answered(t, &hh, "/compute/orgs/"+org+"/geostatistics/"+task, body)
		}
		seedRef := func(object, element string) map[string]any {
			return map[string]any{"object_reference": object, "object_element": []any{map[string]any{"path": element}}}
		}
		seed := map[string]map[string]any{
			"knn": {"source": seedRef(pts, "/locations/attributes/@name=au"), "target": seedRef(grid, "/cell_attributes/@name=seedknn"),
				"neighborhood": map[string]any{"max-samples": 4, "anisotropy": map[string]any{
					"ellipsoid_ranges": map[string]any{"major": 60, "semi_major": 40, "minor": 15}}}},
			"conditional-tbsim": {"source": seedRef(pts, "/locations/attributes/@name=au"), "target": seedRef(grid, "/cell_attributes/@name=seedsims"),
				"distribution": map[string]any{"object_reference": h.url("fz/dist.json")}, "variogram_model": map[string]any{"object_reference": h.url("fz/vario.json")},
				"realizations": 1, "number_of_lines": 10},
		}
		for task, params := range seed {
			body, err := json.Marshal(params)
			require.NoError(t, err)
			answered(t, &hh, "/compute/orgs/"+org+"/geostat/"+task, body)
		}
		// The worker still answers.
		r, err = h.c.Do(h.ctx, http.MethodGet, workertest.WorkspacePrefix(org, ws)+"/objects/path/fz/pts.json", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	})
}

// jsonFloat maps the numbers JSON cannot carry onto the nearest it can.
func jsonFloat(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return x
}

// answered submits body and asserts a 2xx, 303 or 4xx answer; a 303 is
// followed (within a minute) to a succeeded job or one failed with a 4xx
// problem.
func answered(t *testing.T, h *harness, path string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	r, err := h.c.Do(ctx, http.MethodPost, path, body)
	require.NoError(t, err, path)
	require.Less(t, r.Status, 500, "%s: %s", path, r.Body)
	if r.Status != http.StatusSeeOther {
		return
	}
	job, err := h.c.Follow(ctx, r.Header.Get("Location"))
	require.NoError(t, err, path)
	if job.Status == "failed" {
		var p struct{ Status int }
		require.NoError(t, json.Unmarshal(job.Error, &p), "%s", job.Error)
		require.Less(t, p.Status, 500, "%s: %s", path, job.Error)
		return
	}
	require.Equal(t, "succeeded", job.Status, "%s: %s", path, job.Error)
}
