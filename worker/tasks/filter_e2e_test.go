package tasks_test

import (
	"math"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/require"
)

// TestKNNFilters runs knn with a source filter on a category attribute and
// a target filter on a continuous one, with the explicit nulls the SDK
// sends, and checks the result against the library on the filtered data.
func TestKNNFilters(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(200, 21)
	domain := make([]int64, len(grade))
	for i := range domain {
		domain[i] = int64(1 + i%3) // 1 ore, 2 waste, 3 mixed
	}
	h.put(b, "f/pts.json", b.Pointset("1.3.0", xyz,
		b.Scalar("au", "k-au", grade),
		b.Category("domain", "k-dom", domain, map[int64]string{1: "ore", 2: "waste", 3: "mixed"})))
	txyz, tval := sampleData(80, 22)
	tid := h.put(b, "f/targets.json", b.Pointset("1.3.0", txyz, b.Scalar("depth", "k-d", tval)))

	cond := func(attr, op string, extra map[string]any) map[string]any {
		c := map[string]any{"type": "condition", "attribute": attr, "operator": op, "values": nil, "threshold": nil}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	job, err := h.c.RunTask(h.ctx, org, "knn", map[string]any{
		"source": map[string]any{"object": h.url("f/pts.json"), "attribute": "au",
			"filter": map[string]any{"where": map[string]any{"type": "any_of", "filters": []any{
				cond("locations.attributes[?name=='domain']", "in", map[string]any{"values": []any{"ore"}}),
				cond("locations.attributes[?name=='domain']", "in", map[string]any{"values": []any{3}}),
			}}}},
		"target": map[string]any{"object": h.url("f/targets.json"), "attribute": map[string]any{"operation": "create", "name": "au_knn"},
			"filter": map[string]any{"where": cond("depth", "greater_than", map[string]any{"threshold": 1.0})}},
		"neighborhood": neighbourhood(6),
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)

	filtered := append([]float64(nil), grade...)
	for i := range filtered {
		if domain[i] == 2 {
			filtered[i] = math.NaN()
		}
	}
	ix, err := neighbor.NewIndex(xyz, filtered, nil, neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 15}, MaxSamples: 6})
	require.NoError(t, err)
	want := make([]float64, len(tval))
	require.NoError(t, ix.Mean(h.ctx, filtered, txyz, want, nil))
	for i, v := range tval {
		if !(v > 1.0) {
			want[i] = math.NaN()
		}
	}
	obj, blobs := h.latest(tid)
	assertSameFloats(t, want, h.column(obj, blobs, "au_knn"))
}
