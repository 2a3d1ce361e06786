package tasks_test

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// neighbourCand is a sample found by bruteNeighbours: its anisotropic
// distance and index.
type neighbourCand struct {
	h float64
	i int
}

// bruteNeighbours scans every sample with a value (values nil: every
// sample) and returns the up to maxN nearest with h ≤ 1, ordered by (h,
// index); the ellipsoid is unrotated with the major range along x.
func bruteNeighbours(xyz, values []float64, ranges [3]float64, maxN int, tx, ty, tz float64) []neighbourCand {
	var cs []neighbourCand
	for i := 0; i < len(xyz)/3; i++ {
		if values != nil && math.IsNaN(values[i]) {
			continue
		}
		dx, dy, dz := (xyz[3*i]-tx)/ranges[0], (xyz[3*i+1]-ty)/ranges[1], (xyz[3*i+2]-tz)/ranges[2]
		h := math.Sqrt(dx*dx + dy*dy + dz*dz)
		if h <= 1 {
			cs = append(cs, neighbourCand{h, i})
		}
	}
	for a := 0; a < len(cs) && a < maxN; a++ {
		best := a
		for b := a + 1; b < len(cs); b++ {
			if cs[b].h < cs[best].h || cs[b].h == cs[best].h && cs[b].i < cs[best].i {
				best = b
			}
		}
		cs[a], cs[best] = cs[best], cs[a]
	}
	if len(cs) > maxN {
		cs = cs[:maxN]
	}
	return cs
}

// bruteIDW is the oracle of the idw task: every sample with a value, its
// anisotropic distance h from the target (the isotropic distance after
// scaling the ellipsoid's axes, here unrotated: major along x), the max nearest with
// h ≤ 1 (ties by index), at least min of them, weights h^−p, the mean of
// the coincident samples at h = 0.
func bruteIDW(xyz, values []float64, ranges [3]float64, maxN, minN int, power float64, tx, ty, tz float64) float64 {
	cs := bruteNeighbours(xyz, values, ranges, maxN, tx, ty, tz)
	if len(cs) < minN || len(cs) == 0 {
		return math.NaN()
	}
	if cs[0].h == 0 {
		s, n := 0.0, 0
		for _, c := range cs {
			if c.h == 0 {
				s += values[c.i]
				n++
			}
		}
		return s / float64(n)
	}
	num, den := 0.0, 0.0
	for _, c := range cs {
		w := math.Pow(c.h, -power)
		num += w * values[c.i]
		den += w
	}
	return num / den
}

// TestIDWTask runs idw onto a grid and onto a point set that shares points
// with the samples, with both filters nested and their explicit nulls, and
// checks every value against a brute-force scan.
func TestIDWTask(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(250, 41)
	grade[3] = math.NaN()
	domain := make([]float64, len(grade))
	for i := range domain {
		domain[i] = float64(i % 4)
	}
	h.put(b, "idw/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade), b.Scalar("dom", "k-dom", domain)))
	spec := objecttest.GridSpec{Size: [3]int{8, 8, 3}, CellSize: [3]float64{12.5, 12.5, 7}}
	gid := h.put(b, "idw/grid.json", b.Grid("1.3.0", spec))
	// Targets: 20 sample positions (h = 0) and 20 new points.
	txyz := append([]float64{}, xyz[:60]...)
	more, depth := sampleData(20, 42)
	txyz = append(txyz, more...)
	tdepth := append(make([]float64, 20), depth...)
	for i := 0; i < 20; i++ {
		tdepth[i] = 5
	}
	tdepth[25] = -1 // filtered out
	tid := h.put(b, "idw/targets.json", b.Pointset("1.3.0", txyz, b.Scalar("depth", "k-depth", tdepth)))
	ranges := [3]float64{60, 40, 15}
	nb := map[string]any{"max_samples": 10, "min_samples": 3, "ellipsoid": map[string]any{
		"ellipsoid_ranges": map[string]any{"major": ranges[0], "semi_major": ranges[1], "minor": ranges[2]},
		"rotation":         map[string]any{"dip_azimuth": 0, "dip": 0, "pitch": 0}}}

	// Onto the grid, power 2 sent as the float the client sends.
	job, err := h.c.RunTask(h.ctx, org, "idw", map[string]any{
		"source":       map[string]any{"object": h.url("idw/pts.json"), "attribute": "locations.attributes[?name=='au']"},
		"target":       map[string]any{"object": h.url("idw/grid.json"), "attribute": map[string]any{"operation": "create", "name": "au_idw"}},
		"neighborhood": nb, "power": 2.0})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res struct {
		Message string
		Target  struct {
			Attribute struct{ Reference, Name string }
		}
	}
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Equal(t, "cell_attributes[?name=='au_idw']", res.Target.Attribute.Reference)
	g, err := grid.New(spec.Origin, spec.Size, spec.CellSize, geostat.Rotation{})
	require.NoError(t, err)
	centres := g.CellCentres(nil)
	want := make([]float64, g.NumCells())
	for c := range want {
		want[c] = bruteIDW(xyz, grade, ranges, 10, 3, 2, centres[3*c], centres[3*c+1], centres[3*c+2])
	}
	obj, blobs := h.latest(gid)
	assertClose(t, want, h.column(obj, blobs, "au_idw"), 1e-12)

	// Onto points, power 3, with both filters nested and explicit nulls.
	cond := func(attr, op string, threshold any, values any) map[string]any {
		return map[string]any{"type": "condition", "attribute": attr, "operator": op, "threshold": threshold, "values": values}
	}
	job, err = h.c.RunTask(h.ctx, org, "idw", map[string]any{
		"source": map[string]any{"object": h.url("idw/pts.json"), "attribute": "au",
			"filter": map[string]any{"where": cond("dom", "not_equal", 1.0, nil)}},
		"target": map[string]any{"object": h.url("idw/targets.json"), "attribute": map[string]any{"operation": "create", "name": "au_idw"},
			"filter": map[string]any{"where": cond("depth", "greater_than_or_equal_to", 0, nil)}},
		"neighborhood": nb, "power": 3})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	filtered := append([]float64{}, grade...)
	for i := range filtered {
		if domain[i] == 1 {
			filtered[i] = math.NaN()
		}
	}
	want = make([]float64, len(tdepth))
	for i := range want {
		want[i] = math.NaN()
		if tdepth[i] >= 0 {
			want[i] = bruteIDW(xyz, filtered, ranges, 10, 3, 3, txyz[3*i], txyz[3*i+1], txyz[3*i+2])
		}
	}
	obj, blobs = h.latest(tid)
	got := h.column(obj, blobs, "au_idw")
	assertClose(t, want, got, 1e-12)
	// Exact reproduction at the samples that take part.
	for i := 0; i < 20; i++ {
		if !math.IsNaN(filtered[i]) {
			assert.Equal(t, filtered[i], got[i], "target %d sits on sample %d", i, i)
		}
	}
}

// TestIDWRefusals checks the client's refusals (power missing or ≤ 0) and a
// bad reference, each a 422 naming the member, and that a refused or failed
// request leaves the target as it was.
func TestIDWRefusals(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(30, 43)
	h.put(b, "r/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	nan := make([]float64, len(grade))
	for i := range nan {
		nan[i] = math.NaN()
	}
	h.put(b, "r/nan.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", nan)))
	tid := h.put(b, "r/targets.json", b.Pointset("1.3.0", xyz))
	before, err := h.c.GetObject(h.ctx, org, ws, tid, "")
	require.NoError(t, err)
	params := func(power any, source string) []byte {
		p := map[string]any{
			"source":       map[string]any{"object": h.url(source), "attribute": "au", "filter": nil},
			"target":       map[string]any{"object": h.url("r/targets.json"), "attribute": map[string]any{"operation": "create", "name": "x"}},
			"neighborhood": neighbourhood(4)}
		if power != "absent" {
			p["power"] = power
		}
		body, _ := json.Marshal(map[string]any{"parameters": p})
		return body
	}
	path := "/compute/orgs/" + org + "/geostatistics/idw"
	for _, power := range []any{"absent", nil, 0, -2.0, "2"} {
		p := problem(t, h, path, params(power, "r/pts.json"), http.StatusUnprocessableEntity, "/validation")
		assert.Equal(t, "parameters.power", p["invalid-params"].([]any)[0].(map[string]any)["name"], "power %v", power)
	}
	// A source without any value fails the job with 422 invalid-data.
	p := runFails(t, h, "idw", params(2, "r/nan.json"))
	invalidData(t, p, "r/nan.json", "au")
	after, err := h.c.GetObject(h.ctx, org, ws, tid, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, after.VersionID, "the target is untouched")
}

// assertClose compares two columns with a relative tolerance; NaN must
// match NaN.
func assertClose(t *testing.T, want, got []float64, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	finite := 0
	for i := range want {
		if math.IsNaN(want[i]) {
			require.True(t, math.IsNaN(got[i]), "row %d: want NaN, got %v", i, got[i])
			continue
		}
		finite++
		require.InDelta(t, want[i], got[i], tol*math.Max(1, math.Abs(want[i])), "row %d", i)
	}
	require.Positive(t, finite, "some rows have values")
}
