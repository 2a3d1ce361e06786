package tasks_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func neighbourhood(maxSamples int) map[string]any {
	return map[string]any{"max_samples": maxSamples, "ellipsoid": map[string]any{
		"ellipsoid_ranges": map[string]any{"major": 60, "semi_major": 40, "minor": 15},
		"rotation":         map[string]any{"dip_azimuth": 0, "dip": 0, "pitch": 0}}}
}

func TestKrigingTask(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(250, 3)
	h.put(b, "pts.json", b.Pointset("1.2.0", xyz, b.Scalar("au", "k-au", grade)))
	vdoc := objecttest.Variogram("1.2.0")
	h.put(b, "vario.json", vdoc)
	spec := objecttest.GridSpec{Size: [3]int{8, 8, 3}, CellSize: [3]float64{12.5, 12.5, 6}}
	mask := make([]bool, 8*8*3)
	for i := range mask {
		mask[i] = i%3 != 0
	}
	gid := h.put(b, "masked.json", b.MaskedGrid("1.3.0", spec, mask))

	vobj, err := objects.Decode(objecttest.JSON(vdoc))
	require.NoError(t, err)
	dv, err := vobj.DecodeVariogram()
	require.NoError(t, err)
	g, err := grid.New(spec.Origin, spec.Size, spec.CellSize, geostat.Rotation{})
	require.NoError(t, err)
	m, err := grid.NewMasked(g, mask)
	require.NoError(t, err)
	targets := m.ActiveCentres(nil)
	search := neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 15}, MaxSamples: 16}

	// Ordinary point kriging with diagnostics.
	job, err := h.c.RunTask(h.ctx, org, "kriging", map[string]any{
		"source":       map[string]any{"object": h.url("pts.json"), "attribute": "locations.attributes[?name=='au']"},
		"target":       map[string]any{"object": h.url("masked.json"), "attribute": map[string]any{"operation": "create", "name": "au_ok"}},
		"variogram":    h.url("vario.json"),
		"neighborhood": neighbourhood(16),
		"outputs":      []string{"variance", "samples"},
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	k, err := kriging.New(xyz, grade, kriging.Params{Variogram: dv.Variogram, Method: kriging.Ordinary, Search: search})
	require.NoError(t, err)
	want := kriging.Output{Estimate: make([]float64, m.NumActive()), Variance: make([]float64, m.NumActive()), Samples: make([]float64, m.NumActive())}
	require.NoError(t, k.Estimate(h.ctx, targets, &want, nil))
	obj, blobs := h.latest(gid)
	assertSameFloats(t, want.Estimate, h.column(obj, blobs, "au_ok"))
	assertSameFloats(t, want.Variance, h.column(obj, blobs, "au_ok_variance"))
	assertSameFloats(t, want.Samples, h.column(obj, blobs, "au_ok_samples"))

	// Simple block kriging (2 × 2 × 2) with a given mean, updating the
	// estimate written above (its key is kept).
	before, _ := obj.ResolveAttribute("au_ok")
	job, err = h.c.RunTask(h.ctx, org, "kriging", map[string]any{
		"source":               map[string]any{"object": h.url("pts.json"), "attribute": "au"},
		"target":               map[string]any{"object": h.url("masked.json"), "attribute": map[string]any{"operation": "update", "reference": "cell_attributes[?name=='au_ok']"}},
		"variogram":            h.url("vario.json"),
		"neighborhood":         neighbourhood(16),
		"kriging_method":       map[string]any{"type": "simple", "mean": 1.0},
		"block_discretisation": map[string]any{"nx": 2, "ny": 2, "nz": 2},
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	kb, err := kriging.New(xyz, grade, kriging.Params{Variogram: dv.Variogram, Mean: 1, Search: search,
		Discretisation: grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, CellSize: spec.CellSize})
	require.NoError(t, err)
	wantB := kriging.Output{Estimate: make([]float64, m.NumActive())}
	require.NoError(t, kb.Estimate(h.ctx, targets, &wantB, nil))
	obj, blobs = h.latest(gid)
	assertSameFloats(t, wantB.Estimate, h.column(obj, blobs, "au_ok"))
	after, _ := obj.ResolveAttribute("au_ok")
	assert.Equal(t, before.Key, after.Key)
}

func TestKrigingValidation(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(20, 4)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	h.put(b, "pts2.json", b.Pointset("1.3.0", xyz))
	h.put(b, "vario.json", objecttest.Variogram("1.1.0"))
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source":               map[string]any{"object": h.url("pts.json"), "attribute": "nope"},
		"target":               map[string]any{"object": h.url("pts2.json"), "attribute": map[string]any{"operation": "create", "name": "x"}},
		"variogram":            h.url("vario.json"),
		"neighborhood":         neighbourhood(8),
		"block_discretisation": map[string]any{"nx": 2},
	}})
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/kriging", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	var p map[string]any
	require.NoError(t, r.JSON(&p))
	assert.Equal(t, float64(422), p["status"])
	assert.Contains(t, string(r.Body), "source.attribute")
	// A missing object is named too.
	body, _ = json.Marshal(map[string]any{"parameters": map[string]any{
		"source":       map[string]any{"object": h.url("missing.json"), "attribute": "au"},
		"target":       map[string]any{"object": h.url("pts2.json"), "attribute": map[string]any{"operation": "create", "name": "x"}},
		"variogram":    h.url("vario.json"),
		"neighborhood": neighbourhood(8),
	}})
	r, err = h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/kriging", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), `"name":"source"`)
}
