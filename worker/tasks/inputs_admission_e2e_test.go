package tasks_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputsTasksAreAdmitted checks that declustering, continuous-distribution,
// normal-score and idw estimate their needs at submit: a memory limit below
// the estimate, or too little free disk for the output, is 422 before any
// job exists.
func TestInputsTasksAreAdmitted(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(40, 91)
	h.put(b, "a/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	h.put(b, "a/grid.json", b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{20, 20, 5}, CellSize: [3]float64{5, 5, 4}}))
	h.put(b, "a/dist.json", b.Distribution("1.2.0", []float64{0, 1, 2}, []float64{0.2, 0.5, 0.8}))
	create := func(object, name string) map[string]any {
		return map[string]any{"object": h.url(object), "attribute": map[string]any{"operation": "create", "name": name}}
	}
	bodies := map[string]map[string]any{
		"declustering": {"source": map[string]any{"object": h.url("a/pts.json")}, "grid": map[string]any{"object": h.url("a/grid.json")},
			"target": create("a/pts.json", "w"), "neighborhood": neighbourhood(4), "power": 2.0},
		"continuous-distribution": {"source": map[string]any{"object": h.url("a/pts.json"), "attribute": "au"},
			"target": map[string]any{"reference": h.url("a/new.json"), "overwrite": false, "tags": map[string]any{}}},
		"normal-score": {"method": "forward", "source": map[string]any{"object": h.url("a/pts.json"), "attribute": "au"},
			"target": create("a/pts.json", "ns"), "distribution": h.url("a/dist.json")},
		"idw": {"source": map[string]any{"object": h.url("a/pts.json"), "attribute": "au"},
			"target": create("a/grid.json", "idw"), "neighborhood": neighbourhood(4), "power": 2.0},
	}
	for task, params := range bodies {
		body, err := json.Marshal(map[string]any{"parameters": params})
		require.NoError(t, err)
		path := "/compute/orgs/" + org + "/geostatistics/" + task
		h.env.MaxMemory = 64
		p := problem(t, h, path, body, http.StatusUnprocessableEntity, "/validation")
		assert.Contains(t, p["detail"], "memory", task)
		h.env.MaxMemory = 0
		h.env.FreeDisk = func() (int64, error) { return 8, nil }
		p = problem(t, h, path, body, http.StatusUnprocessableEntity, "/insufficient-storage")
		assert.Positive(t, p["needed_bytes"], task)
		h.env.FreeDisk = nil
	}
	assert.Empty(t, h.jobs.List(org), "no job was created")
}
