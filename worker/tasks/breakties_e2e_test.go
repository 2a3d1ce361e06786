package tasks_test

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/ties"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBreakTiesBothShapes(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(200, 9)
	for i := range grade {
		grade[i] = math.Max(0, math.Round(grade[i]*2)/2) // heavy ties, zeros included
	}
	id := h.put(b, "ties.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))

	// Seed shape: random order (no neighbourhood), same object as target.
	body, _ := json.Marshal(map[string]any{
		"source":      map[string]any{"object_reference": h.url("ties.json"), "object_element": []any{map[string]any{"path": "/locations/attributes/@name=au"}}},
		"target":      map[string]any{"object_reference": h.url("ties.json"), "object_element": []any{map[string]any{"path": "/locations/attributes/@name=au_bt"}}},
		"random_seed": 42,
	})
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostat/break-ties", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	zero := 0.0
	want, err := ties.Break(h.ctx, grade, xyz, nil, ties.Options{Seed: 42, LowerBound: &zero})
	require.NoError(t, err)
	obj, blobs := h.latest(id)
	got := h.column(obj, blobs, "au_bt")
	assertSameFloats(t, want, got)
	sorted := append([]float64(nil), got...)
	sort.Float64s(sorted)
	for i := 1; i < len(sorted); i++ {
		require.Less(t, sorted[i-1], sorted[i], "all values distinct")
	}
	assert.GreaterOrEqual(t, sorted[0], 0.0, "zeros stay non-negative")

	// Current shape with a neighbourhood: local means decide.
	job, err := h.c.RunTask(h.ctx, org, "break-ties", map[string]any{
		"source":       map[string]any{"object": h.url("ties.json"), "attribute": "locations.attributes[?name=='au']"},
		"target":       map[string]any{"object": h.url("ties.json"), "attribute": map[string]any{"operation": "create", "name": "au_local"}},
		"neighborhood": neighbourhood(8),
		"seed":         7,
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	np := neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 15}, MaxSamples: 8}
	want, err = ties.Break(h.ctx, grade, xyz, &np, ties.Options{Seed: 7, LowerBound: &zero})
	require.NoError(t, err)
	obj, blobs = h.latest(id)
	assertSameFloats(t, want, h.column(obj, blobs, "au_local"))

	// A target elsewhere must have the source's locations.
	other, _ := sampleData(200, 10)
	h.put(b, "other.json", b.Pointset("1.3.0", other))
	body, _ = json.Marshal(map[string]any{"parameters": map[string]any{
		"source": map[string]any{"object": h.url("ties.json"), "attribute": "au"},
		"target": map[string]any{"object": h.url("other.json"), "attribute": map[string]any{"operation": "create", "name": "x"}},
	}})
	r, err = h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/break-ties", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "differs from the source")
}
