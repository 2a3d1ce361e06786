package tasks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simCase stores data, a distribution, a variogram and a grid, and returns
// what the library needs to reproduce a simulation.
type simCase struct {
	xyz, grade []float64
	dist       *geostat.Distribution
	vario      *geostat.Variogram
	grid       *grid.Grid
	gridID     string
}

func newSimCase(t *testing.T, h *harness, size [3]int) *simCase {
	b := objecttest.NewBlobs()
	c := &simCase{}
	c.xyz, c.grade = sampleData(120, 11)
	for i := range c.grade {
		c.grade[i] = c.grade[i] * c.grade[i] // skewed, positive
	}
	h.put(b, "sim/points.json", b.Pointset("1.3.0", c.xyz, b.Scalar("cu", "k-cu", c.grade)))
	z, p, err := geostat.ScoreTable(c.grade, nil)
	require.NoError(t, err)
	ddoc := b.Distribution("1.2.0", z, p)
	h.put(b, "sim/dist.json", ddoc)
	dobj, err := objects.Decode(objecttest.JSON(ddoc))
	require.NoError(t, err)
	c.dist, err = dobj.Distribution.Build(h.ctx, b)
	require.NoError(t, err)
	vdoc := objecttest.Variogram("1.2.0")
	h.put(b, "sim/vario.json", vdoc)
	vobj, err := objects.Decode(objecttest.JSON(vdoc))
	require.NoError(t, err)
	dv, err := vobj.DecodeVariogram()
	require.NoError(t, err)
	c.vario = dv.Variogram
	spec := objecttest.GridSpec{Size: size, CellSize: [3]float64{100 / float64(size[0]), 100 / float64(size[1]), 20 / float64(size[2])}}
	c.gridID = h.put(b, "sim/grid.json", b.Grid("1.3.0", spec))
	c.grid, err = grid.New(spec.Origin, spec.Size, spec.CellSize, geostat.Rotation{})
	require.NoError(t, err)
	return c
}

func TestSimulationBothShapes(t *testing.T) {
	h := start(t, 2)
	c := newSimCase(t, h, [3]int{10, 8, 4})

	// Current shape, with the Gaussian outputs.
	job, err := h.c.RunTask(h.ctx, org, "conditional-turning-bands", map[string]any{
		"source": h.url("sim/points.json"), "source_attribute": "locations.attributes[?name=='cu']",
		"target": h.url("sim/grid.json"), "distribution": h.url("sim/dist.json"), "variogram_model": h.url("sim/vario.json"),
		"realizations": 3, "number_of_lines": 100, "random_seed": 5,
		"block_discretization":  map[string]any{"nx": 2, "ny": 2, "nz": 1},
		"save_gaussian_results": true, "variogram_reproduction": true,
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res struct {
		Target struct {
			Simulations struct{ Reference, Name string }
		}
		VariogramReproduction []tbsim.ExperimentalVariogram `json:"variogram_reproduction"`
	}
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Equal(t, "simulation-results", res.Target.Simulations.Name)
	require.Len(t, res.VariogramReproduction, 3)

	tp := tbsim.DefaultParams()
	tp.Realisations, tp.Lines, tp.Seed, tp.SaveGaussian = 3, 100, 5, true
	tp.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}
	want, err := tbsim.Run(h.ctx, tbsim.Input{Grid: c.grid, Coords: c.xyz, Values: c.grade, Variogram: c.vario, Distribution: c.dist}, tp)
	require.NoError(t, err)
	obj, blobs := h.latest(c.gridID)
	for name, w := range map[string][]float64{"simulation-results": want.Block, "simulation-results_normal_score": want.BlockGaussian,
		"simulation-results_point": want.Point, "simulation-results_point_normal_score": want.PointGaussian} {
		a, err := obj.ResolveAttribute(name)
		require.NoError(t, err, name)
		assert.Equal(t, objects.AttributeEnsembleContinuous, a.Type)
		cols, err := obj.ReadContinuous(h.ctx, blobs, a)
		require.NoError(t, err)
		require.Len(t, cols, 3)
		var flat []float64
		for _, col := range cols {
			flat = append(flat, col...)
		}
		assertSameFloats(t, w, flat, name)
	}

	// Seed shape: synchronous, ensemble named by the element path.
	body, _ := json.Marshal(map[string]any{
		"source":          map[string]any{"object_reference": h.url("sim/points.json"), "object_element": []any{map[string]any{"path": "/locations/attributes/@name=cu"}}},
		"target":          map[string]any{"object_reference": h.url("sim/grid.json"), "object_element": []any{map[string]any{"path": "/cell_attributes/@name=cu_sims"}}},
		"distribution":    map[string]any{"object_reference": h.url("sim/dist.json")},
		"variogram_model": map[string]any{"object_reference": h.url("sim/vario.json")},
		"realizations":    2, "number_of_lines": 50, "kriging_method": "ordinary",
	})
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostat/conditional-tbsim", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "/cell_attributes/@name=cu_sims")
	obj, _ = h.latest(c.gridID)
	a, err := obj.ResolveAttribute("cu_sims")
	require.NoError(t, err)
	assert.Equal(t, 2, a.Width())
}

func TestSimulationCancelLeavesTargetUnchanged(t *testing.T) {
	h := start(t, 1)
	c := newSimCase(t, h, [3]int{100, 100, 20})
	before, err := h.c.GetObject(h.ctx, org, ws, c.gridID, "")
	require.NoError(t, err)
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": h.url("sim/points.json"), "source_attribute": "cu",
		"target": h.url("sim/grid.json"), "distribution": h.url("sim/dist.json"), "variogram_model": h.url("sim/vario.json"),
		"realizations": 100, "number_of_lines": 1000, "block_discretization": map[string]any{"nx": 3, "ny": 3, "nz": 3},
	}})
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/conditional-turning-bands", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	status := r.Header.Get("Location")
	// Wait for the event of the job starting (bounded), then cancel.
	id := strings.TrimSuffix(status, "/status")
	id = id[strings.LastIndex(id, "/")+1:]
	wctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	rec, started := h.jobs.WaitStarted(wctx, id)
	require.True(t, started, "the job did not start")
	require.Equal(t, jobs.InProgress, rec.Status)
	s, err := h.c.Do(h.ctx, http.MethodGet, status, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, s.Status, "%s", s.Body)
	assert.True(t, containsStatus(s.Body, "in progress"), "%s", s.Body)
	d, err := h.c.Do(h.ctx, http.MethodDelete, status[:len(status)-len("/status")], nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, d.Status)
	job, err := h.c.Follow(wctx, status)
	require.NoError(t, err)
	assert.Equal(t, "cancelled", job.Status)
	after, err := h.c.GetObject(h.ctx, org, ws, c.gridID, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, after.VersionID, "no new version of the target")
}

func containsStatus(body []byte, s string) bool {
	var v struct{ Status string }
	return json.Unmarshal(body, &v) == nil && v.Status == s
}
