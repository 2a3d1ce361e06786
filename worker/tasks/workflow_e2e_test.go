package tasks_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"sync"
	"testing"

	"github.com/geostat-engine/geostat/worker/store"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memFiles keeps reports in memory: the harness has no file area.
type memFiles struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (m *memFiles) PutFile(_ context.Context, org, ws, path string, content io.Reader, _ string, _ store.User) (string, string, error) {
	data, err := io.ReadAll(content)
	if err != nil {
		return "", "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[path] = data
	return "00000000-0000-4000-8000-0000000000f1", "1", nil
}

func (m *memFiles) FileURL(base, org, ws, id, version string) string { return base + "/files/" + id }
func (m *memFiles) DashboardURL(base, org, ws, id string) string     { return base + "/dashboard/" + id }
func (m *memFiles) ViewURL(base, org, ws, id, version string) (string, error) {
	return base + "/view/" + id, nil
}
func (m *memFiles) CheckPath(string) error { return nil }

// TestWorkflowDeclusterToReport runs the inputs of a simulation end to end:
// declustering (the lowest sample lies where no evaluation location reaches,
// so its weight is 0) → continuous-distribution weighted by the weights →
// normal-score → conditional-turning-bands with that distribution →
// simulation-report weighted by the same weights, each task reading what the
// one before wrote.
func TestWorkflowDeclusterToReport(t *testing.T) {
	h := start(t, 1)
	files := &memFiles{files: map[string][]byte{}}
	h.env.Files = files
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(120, 81)
	xyz = append(xyz, 900, 900, 10)
	grade = append(grade, -5) // the smallest value, far from the grid
	h.put(b, "wf/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("cu", "k-cu", grade)))
	h.put(b, "wf/vario.json", objecttest.Variogram("1.2.0"))
	spec := objecttest.GridSpec{Size: [3]int{10, 10, 4}, CellSize: [3]float64{10, 10, 5}}
	h.put(b, "wf/grid.json", b.Grid("1.3.0", spec))
	run := func(task string, params map[string]any) json.RawMessage {
		t.Helper()
		job, err := h.c.RunTask(h.ctx, org, task, params)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s: %s", task, job.Error)
		return job.Results
	}
	run("declustering", map[string]any{
		"source": map[string]any{"object": h.url("wf/pts.json")}, "grid": map[string]any{"object": h.url("wf/grid.json")},
		"target":       map[string]any{"object": h.url("wf/pts.json"), "attribute": map[string]any{"operation": "create", "name": "w"}},
		"neighborhood": neighbourhood(8), "power": 2.0})
	res := run("continuous-distribution", map[string]any{
		"source":             map[string]any{"object": h.url("wf/pts.json"), "attribute": "cu"},
		"weights":            map[string]any{"object": h.url("wf/pts.json"), "attribute": "w"},
		"tail_extrapolation": map[string]any{"upper": map[string]any{"power": 0.5, "max": 10.0}, "lower": map[string]any{"power": 1.0, "min": -10.0}},
		"target":             map[string]any{"reference": h.url("wf/dist.json"), "overwrite": false, "tags": map[string]any{}}})
	var dr distributionResult
	require.NoError(t, json.Unmarshal(res, &dr))
	assert.Contains(t, dr.Message, "1 values of weight 0 left out")
	_, d := readDistribution(t, h, objectID(t, dr.Distribution.Reference))
	z0, _ := d.Node(0)
	assert.Greater(t, z0, -5.0, "the unreached sample carries no mass")
	run("normal-score", map[string]any{"method": "forward",
		"source":       map[string]any{"object": h.url("wf/pts.json"), "attribute": "cu"},
		"target":       map[string]any{"object": h.url("wf/pts.json"), "attribute": map[string]any{"operation": "create", "name": "cu_ns"}},
		"distribution": h.url("wf/dist.json")})
	run("conditional-turning-bands", map[string]any{
		"source": h.url("wf/pts.json"), "source_attribute": "cu", "target": h.url("wf/grid.json"),
		"distribution": h.url("wf/dist.json"), "variogram_model": h.url("wf/vario.json"), "realizations": 2,
		"number_of_lines": 100, "save_gaussian_results": true})
	res = run("simulation-report", map[string]any{
		"simulation_source": h.url("wf/pts.json"), "source_attribute": "cu", "simulation_target": h.url("wf/grid.json"),
		"block_simulations": "simulation-results", "block_simulations_normal_score": "simulation-results_normal_score",
		"point_simulations": "simulation-results_point", "point_simulations_normal_score": "simulation-results_point_normal_score",
		"variogram_model": h.url("wf/vario.json"), "number_of_simulations": 2, "number_of_lines": 100,
		"distribution": map[string]any{"weights": "w"}})
	var rep struct {
		ValidationSummary struct {
			ReferenceMean float64 `json:"reference_mean"`
			Mean          float64
		} `json:"validation_summary"`
	}
	require.NoError(t, json.Unmarshal(res, &rep))
	assert.False(t, math.IsNaN(rep.ValidationSummary.ReferenceMean))
	assert.Greater(t, rep.ValidationSummary.ReferenceMean, -5.0)
	files.mu.Lock()
	defer files.mu.Unlock()
	assert.Positive(t, len(files.files), "the report was stored")
}
