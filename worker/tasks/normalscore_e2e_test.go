package tasks_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNormalScore transforms forward and backward through a distribution
// object made by continuous-distribution (with tails), on a point set,
// downhole intervals, a regular and a masked grid, and checks every value
// against the distribution's own transforms; missing values stay missing.
func TestNormalScore(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(60, 71)
	grade[2] = math.NaN()
	pid := h.put(b, "ns/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	job, err := h.c.RunTask(h.ctx, org, "continuous-distribution", map[string]any{
		"source":             map[string]any{"object": h.url("ns/pts.json"), "attribute": "au"},
		"tail_extrapolation": map[string]any{"upper": map[string]any{"power": 0.5, "max": 6.0}, "lower": map[string]any{"power": 1, "min": -3.0}},
		"target":             map[string]any{"reference": h.url("ns/dist.json"), "overwrite": false, "tags": map[string]any{}}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res distributionResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	_, d := readDistribution(t, h, objectID(t, res.Distribution.Reference))

	run := func(method, source, attr, target, name string) {
		t.Helper()
		job, err := h.c.RunTask(h.ctx, org, "normal-score", map[string]any{"method": method,
			"source":       map[string]any{"object": h.url(source), "attribute": attr},
			"target":       map[string]any{"object": h.url(target), "attribute": map[string]any{"operation": "create", "name": name}},
			"distribution": h.url("ns/dist.json")})
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	}
	transform := func(f func(float64) float64, src []float64) []float64 {
		out := make([]float64, len(src))
		for i, v := range src {
			out[i] = math.NaN()
			if !math.IsNaN(v) {
				out[i] = f(v)
			}
		}
		return out
	}

	// Point set, forward, onto itself; then backward from the scores.
	run("forward", "ns/pts.json", "locations.attributes[?name=='au']", "ns/pts.json", "au_ns")
	obj, blobs := h.latest(pid)
	ns := h.column(obj, blobs, "au_ns")
	assertSameFloats(t, transform(d.NormalScore, grade), ns)
	run("backward", "ns/pts.json", "au_ns", "ns/pts.json", "au_back")
	obj, blobs = h.latest(pid)
	back := h.column(obj, blobs, "au_back")
	assertSameFloats(t, transform(d.BackTransform, ns), back)
	assertClose(t, grade, back, 1e-9) // the transforms are inverse

	// Intervals onto a point set of as many elements.
	h.put(b, "ns/iv.json", b.Intervals("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	tid := h.put(b, "ns/mids.json", b.Pointset("1.3.0", xyz))
	run("forward", "ns/iv.json", "attributes[?name=='au']", "ns/mids.json", "au_ns")
	obj, blobs = h.latest(tid)
	assertSameFloats(t, transform(d.NormalScore, grade), h.column(obj, blobs, "au_ns"))

	// Grids, backward from Gaussian values (beyond the tails too).
	rng := rand.New(rand.NewPCG(7, 7))
	spec := objecttest.GridSpec{Size: [3]int{5, 4, 3}, CellSize: [3]float64{10, 10, 5}}
	y := make([]float64, 60)
	for i := range y {
		y[i] = 3 * rng.NormFloat64()
	}
	y[0], y[1], y[2] = math.NaN(), 40, -40
	gid := h.put(b, "ns/grid.json", b.Grid("1.3.0", spec, b.Scalar("y", "k-y", y)))
	run("backward", "ns/grid.json", "cell_attributes[?name=='y']", "ns/grid.json", "z")
	obj, blobs = h.latest(gid)
	z := h.column(obj, blobs, "z")
	assertSameFloats(t, transform(d.BackTransform, y), z)
	assert.Equal(t, 6.0, z[1], "clamped to the upper tail's max")
	assert.Equal(t, -3.0, z[2], "clamped to the lower tail's min")
	mask := make([]bool, 60)
	var ya []float64
	for i := range mask {
		mask[i] = i%4 != 1
		if mask[i] {
			ya = append(ya, y[i])
		}
	}
	mid := h.put(b, "ns/masked.json", b.MaskedGrid("1.3.0", spec, mask, b.Scalar("y", "k-y", ya)))
	run("backward", "ns/masked.json", "y", "ns/masked.json", "z")
	obj, blobs = h.latest(mid)
	assertSameFloats(t, transform(d.BackTransform, ya), h.column(obj, blobs, "z"))
	// Forward scores are clamped to ±7.03 (probabilities within 1e-12 of 0 and 1).
	assert.InDelta(t, geostat.NormalQuantile(1e-12), d.NormalScore(-3), 1e-9)
}

// TestNormalScoreRefusals checks the client's refusal (method) and the
// worker's checks, each a 422 naming the member, with the target untouched.
func TestNormalScoreRefusals(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(20, 72)
	pid := h.put(b, "r/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade),
		b.Ensemble("sims", "k-sims", [][]float64{grade, grade})))
	h.put(b, "r/short.json", b.Pointset("1.3.0", xyz[:30]))
	h.put(b, "r/dist.json", b.Distribution("1.2.0", []float64{0, 1, 2}, []float64{0.2, 0.5, 0.8}))
	before, err := h.c.GetObject(h.ctx, org, ws, pid, "")
	require.NoError(t, err)
	body := func(edit func(p map[string]any)) []byte {
		p := map[string]any{"method": "forward",
			"source":       map[string]any{"object": h.url("r/pts.json"), "attribute": "au"},
			"target":       map[string]any{"object": h.url("r/pts.json"), "attribute": map[string]any{"operation": "create", "name": "ns"}},
			"distribution": h.url("r/dist.json")}
		edit(p)
		raw, _ := json.Marshal(map[string]any{"parameters": p})
		return raw
	}
	path := "/compute/orgs/" + org + "/geostatistics/normal-score"
	refuse := func(name string, edit func(p map[string]any)) {
		t.Helper()
		pr := problem(t, h, path, body(edit), http.StatusUnprocessableEntity, "/validation")
		var names []string
		for _, ip := range pr["invalid-params"].([]any) {
			names = append(names, ip.(map[string]any)["name"].(string))
		}
		assert.Contains(t, names, name, "%v", pr)
	}
	refuse("parameters.method", func(p map[string]any) { p["method"] = "sideways" })
	refuse("parameters.method", func(p map[string]any) { delete(p, "method") })
	refuse("parameters.distribution", func(p map[string]any) { p["distribution"] = "dist" })
	refuse("distribution", func(p map[string]any) { p["distribution"] = h.url("r/pts.json") })
	refuse("source.attribute", func(p map[string]any) {
		p["source"] = map[string]any{"object": h.url("r/pts.json"), "attribute": "sims"}
	})
	refuse("target", func(p map[string]any) {
		p["target"] = map[string]any{"object": h.url("r/short.json"), "attribute": map[string]any{"operation": "create", "name": "ns"}}
	})
	after, err := h.c.GetObject(h.ctx, org, ws, pid, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, after.VersionID, "the target is untouched")
}
