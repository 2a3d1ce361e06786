package service_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigCellsSimulation stores, beside the demo, a 10×10×10 grid of 10⁵ m
// cells at the demo grid's origin and a spherical variogram of 200 m
// range, and returns a conditional-turning-bands request on them (40
// realisations, 1000 lines). It is within the geometry bounds, but every
// tile spans thousands of intervals of each line: each tile takes seconds
// and its sign tables grow by megabytes while it runs.
func bigCellsSimulation(t *testing.T, c *workertest.Client) []byte {
	t.Helper()
	ctx := context.Background()
	r, err := c.Do(ctx, http.MethodGet, "/geoscience-object/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/objects/path/"+demo.GridPath, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var rec struct {
		Object struct{ Origin [3]float64 }
	}
	require.NoError(t, r.JSON(&rec))
	b := objecttest.NewBlobs()
	spec := objecttest.GridSpec{Origin: rec.Object.Origin, Size: [3]int{10, 10, 10}, CellSize: [3]float64{1e5, 1e5, 1e5}}
	_, err = c.PostObject(ctx, demo.Org, demo.Workspace, "big-cells/grid.json", objecttest.JSON(b.Grid("1.3.0", spec)))
	require.NoError(t, err)
	v := objecttest.Variogram("1.2.0")
	v["structures"].([]any)[0].(map[string]any)["anisotropy"].(map[string]any)["ellipsoid_ranges"] =
		map[string]any{"major": 200.0, "semi_major": 200.0, "minor": 200.0}
	_, err = c.PostObject(ctx, demo.Org, demo.Workspace, "big-cells/variogram.json", objecttest.JSON(v))
	require.NoError(t, err)
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": demoURL(c.Base, demo.PointsPath), "source_attribute": "cu", "target": demoURL(c.Base, "big-cells/grid.json"),
		"distribution": demoURL(c.Base, demo.DistributionPath), "variogram_model": demoURL(c.Base, "big-cells/variogram.json"),
		"realizations": 40, "number_of_lines": 1000}})
	return body
}

// TestCancelStopsSimulationWithin2s cancels a bigCellsSimulation with
// DELETE while its tiles run (after the first tile was delivered, so
// others are being computed): the job reads cancelled within 2 s of the
// DELETE. Before, the tiles in progress ignored the cancel and ran on for
// seconds each, their memory growing.
func TestCancelStopsSimulationWithin2s(t *testing.T) {
	s, c, _ := start(t, t.TempDir(), service.Options{Threads: 2})
	_, err := s.SeedDemo(context.Background())
	require.NoError(t, err)
	status := submit(t, c, "geostatistics", "conditional-turning-bands", bigCellsSimulation(t, c))
	waitMessage(t, c, status, "simulating")
	d, err := c.Do(context.Background(), http.MethodDelete, jobURL(status), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, d.Status, "%s", d.Body)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rec, finished := s.Jobs().Wait(ctx, jobID(status))
	require.True(t, finished, "the job did not stop within 2 s of the cancel: %s", rec.Message)
	assert.Equal(t, jobs.Cancelled, rec.Status)
}

// TestShutdownStopsSimulationWithin2s stops the worker (a 300 ms shutdown
// timeout) while a bigCellsSimulation runs its tiles: Run returns within
// the timeout plus 2 s, the job having stopped at its cancel (not left
// behind by the shutdown's grace).
func TestShutdownStopsSimulationWithin2s(t *testing.T) {
	const timeout = 300 * time.Millisecond
	logs := &syncBuffer{}
	opts := testOptions(t.TempDir(), service.Options{Threads: 2, Options: server.Options{ShutdownTimeout: timeout}})
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, stop := run(t, opts)
	c := &workertest.Client{Base: s.URL(), Token: token}
	_, err := s.SeedDemo(context.Background())
	require.NoError(t, err)
	status := submit(t, c, "geostatistics", "conditional-turning-bands", bigCellsSimulation(t, c))
	waitMessage(t, c, status, "simulating")
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(timeout + 2*time.Second):
		t.Fatal("the worker did not stop within its shutdown timeout plus 2 s")
	}
	assert.Contains(t, logs.String(), "shutdown: job interrupted at the timeout")
	assert.NotContains(t, logs.String(), "did not stop within", "the job stopped at its cancel")
}
