package tasks_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync"
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

// krigingCase is a point set with a grade and a domain category, a
// variogram and an 8 × 8 × 3 grid with a zone category (keys 1, 2, 3 by
// layer) and a depth attribute.
type krigingCase struct {
	h                *harness
	xyz, grade       []float64
	domain           []int64
	gid              string
	zone             []int64
	depth            []float64
	centres          []float64
	variogram        *geostat.Variogram
	search           neighbor.Params
	points, vario, g string
}

func newKrigingCase(t *testing.T, h *harness) *krigingCase {
	b := objecttest.NewBlobs()
	kc := &krigingCase{h: h, points: "kc/pts.json", vario: "kc/vario.json", g: "kc/grid.json"}
	kc.xyz, kc.grade = sampleData(250, 31)
	kc.domain = make([]int64, len(kc.grade))
	for i := range kc.domain {
		kc.domain[i] = int64(1 + i%3) // 1 ore, 2 waste, 3 mixed
	}
	h.put(b, kc.points, b.Pointset("1.3.0", kc.xyz, b.Scalar("au", "k-au", kc.grade),
		b.Category("domain", "k-dom", kc.domain, map[int64]string{1: "ore", 2: "waste", 3: "mixed"})))
	vdoc := objecttest.Variogram("1.2.0")
	h.put(b, kc.vario, vdoc)
	spec := objecttest.GridSpec{Size: [3]int{8, 8, 3}, CellSize: [3]float64{12.5, 12.5, 6}}
	g, err := grid.New(spec.Origin, spec.Size, spec.CellSize, geostat.Rotation{})
	require.NoError(t, err)
	kc.centres = g.CellCentres(nil)
	n := g.NumCells()
	kc.zone, kc.depth = make([]int64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		kc.zone[i] = int64(1 + i/64)
		kc.depth[i] = kc.centres[3*i+2]
	}
	kc.gid = h.put(b, kc.g, b.Grid("1.3.0", spec, b.Category("zone", "k-zone", kc.zone, map[int64]string{1: "top", 2: "mid", 3: "low"}),
		b.Scalar("depth", "k-depth", kc.depth)))
	vobj, err := objects.Decode(objecttest.JSON(vdoc))
	require.NoError(t, err)
	dv, err := vobj.DecodeVariogram()
	require.NoError(t, err)
	kc.variogram = dv.Variogram
	kc.search = neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 15}, MaxSamples: 16}
	return kc
}

// estimate is ordinary point kriging of the values (NaN rows dropped) at
// every cell centre, by the library.
func (kc *krigingCase) estimate(t *testing.T, values []float64) []float64 {
	k, err := kriging.New(kc.xyz, values, kriging.Params{Variogram: kc.variogram, Method: kriging.Ordinary, Search: kc.search})
	require.NoError(t, err)
	out := kriging.Output{Estimate: make([]float64, len(kc.centres)/3)}
	require.NoError(t, k.Estimate(kc.h.ctx, kc.centres, &out, nil))
	return out.Estimate
}

func (kc *krigingCase) params(target map[string]any) map[string]any {
	return map[string]any{
		"source":         map[string]any{"object": kc.h.url(kc.points), "attribute": "locations.attributes[?name=='au']", "filter": nil},
		"target":         target,
		"variogram":      kc.h.url(kc.vario),
		"neighborhood":   neighbourhood(16),
		"kriging_method": map[string]any{"type": "ordinary"},
	}
}

// cond is a filter condition as the client writes it: the unused one of
// values / threshold is an explicit null.
func cond(attr, op string, extra map[string]any) map[string]any {
	c := map[string]any{"type": "condition", "attribute": attr, "operator": op, "values": nil, "threshold": nil}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// TestKrigingFiltersKeepUnselectedCells runs kriging with nested source and
// target filters in the client's shape (explicit nulls), then updates the
// estimate through a target filter, and through the legacy
// target.region_filter: the selected cells get the library's estimate,
// the others keep the values they had (on create: no value).
func TestKrigingFiltersKeepUnselectedCells(t *testing.T) {
	h := start(t, 2)
	kc := newKrigingCase(t, h)
	n := len(kc.zone)

	// 1. Create, with a nested source filter (domain ore or key 3) and a
	// target filter (depth > 6): unselected cells get no value.
	p := kc.params(map[string]any{"object": h.url(kc.g), "attribute": map[string]any{"operation": "create", "name": "au_ok"},
		"filter": map[string]any{"where": cond("cell_attributes[?name=='depth']", "greater_than", map[string]any{"threshold": 6.0})}})
	p["source"].(map[string]any)["filter"] = map[string]any{"where": map[string]any{"type": "any_of", "filters": []any{
		cond("locations.attributes[?name=='domain']", "in", map[string]any{"values": []any{"ore"}}),
		map[string]any{"type": "all_of", "filters": []any{
			cond("locations.attributes[?name=='domain']", "not_in", map[string]any{"values": []any{1, 2}}),
			cond("locations.attributes[?name=='au']", "greater_than", map[string]any{"threshold": -100.0}),
		}},
	}}}
	job, err := h.c.RunTask(h.ctx, org, "kriging", p)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	filtered := append([]float64(nil), kc.grade...)
	for i, d := range kc.domain {
		if d == 2 {
			filtered[i] = math.NaN()
		}
	}
	est := kc.estimate(t, filtered)
	want := make([]float64, n)
	for i := range want {
		want[i] = math.NaN()
		if kc.depth[i] > 6 {
			want[i] = est[i]
		}
	}
	obj, blobs := h.latest(kc.gid)
	assertSameFloats(t, want, h.column(obj, blobs, "au_ok"))

	// 2. Update through a target filter on the zone category (names):
	// only zone "top" (depth 3, which the first job left empty) is
	// written, the other cells keep the first job's values.
	all := kc.estimate(t, kc.grade)
	update := func(filter map[string]any, key string) {
		t.Helper()
		target := map[string]any{"object": h.url(kc.g), "attribute": map[string]any{"operation": "update", "reference": "cell_attributes[?name=='au_ok']"}}
		target[key] = filter
		p := kc.params(target)
		p["outputs"] = []string{"variance"}
		job, err := h.c.RunTask(h.ctx, org, "kriging", p)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	}
	update(map[string]any{"where": cond("cell_attributes[?name=='zone']", "in", map[string]any{"values": []any{"top"}})}, "filter")
	for i := range want {
		if kc.zone[i] == 1 {
			want[i] = all[i]
		}
	}
	obj, blobs = h.latest(kc.gid)
	assertSameFloats(t, want, h.column(obj, blobs, "au_ok"))
	for i := range want {
		require.False(t, math.IsNaN(want[i]), "row %d: every cell has a value now", i)
	}

	// 3. The legacy region_filter with category keys selects zone 3 only;
	// this estimate uses all the data, so those cells change, the others
	// keep theirs.
	update(map[string]any{"attribute": "cell_attributes[?name=='zone']", "names": nil, "values": []any{3}}, "region_filter")
	changed := 0
	for i := range want {
		if kc.zone[i] == 3 {
			if want[i] != all[i] {
				changed++
			}
			want[i] = all[i]
		}
	}
	require.Greater(t, changed, 0, "the update changes the selected cells")
	obj, blobs = h.latest(kc.gid)
	assertSameFloats(t, want, h.column(obj, blobs, "au_ok"))

	// The diagnostics follow the estimate: written on the selected cells
	// of each update, kept elsewhere (zone 2 never had one).
	k, err := kriging.New(kc.xyz, kc.grade, kriging.Params{Variogram: kc.variogram, Method: kriging.Ordinary, Search: kc.search})
	require.NoError(t, err)
	full := kriging.Output{Estimate: make([]float64, n), Variance: make([]float64, n)}
	require.NoError(t, k.Estimate(h.ctx, kc.centres, &full, nil))
	wantVar := make([]float64, n)
	for i := range wantVar {
		wantVar[i] = math.NaN()
		if kc.zone[i] != 2 {
			wantVar[i] = full.Variance[i]
		}
	}
	assertSameFloats(t, wantVar, h.column(obj, blobs, "au_ok_variance"))
}

// TestKrigingFilterRefusals checks the client-side filter checks the
// worker repeats: an operator with the other operator family's payload,
// and a region_filter with both or neither list, each a 422 naming the
// member.
func TestKrigingFilterRefusals(t *testing.T) {
	h := start(t, 1)
	kc := newKrigingCase(t, h)
	cases := []struct {
		target map[string]any
		member string
	}{
		{map[string]any{"filter": map[string]any{"where": cond("depth", "in", map[string]any{"values": []any{1}, "threshold": 2.0})}}, "target.filter.where.threshold"},
		{map[string]any{"filter": map[string]any{"where": map[string]any{"type": "all_of", "filters": []any{
			cond("depth", "less_than", map[string]any{"values": []any{1}, "threshold": 2.0})}}}}, "target.filter.where.filters[0].values"},
		{map[string]any{"region_filter": map[string]any{"attribute": "zone", "names": []any{"top"}, "values": []any{1}}}, "target.region_filter"},
		{map[string]any{"region_filter": map[string]any{"attribute": "zone", "names": nil}}, "target.region_filter"},
		{map[string]any{"region_filter": map[string]any{"attribute": "zone", "values": []any{1.5}}}, "target.region_filter.values[0]"},
	}
	for _, c := range cases {
		target := map[string]any{"object": h.url(kc.g), "attribute": map[string]any{"operation": "create", "name": "x"}}
		for k, v := range c.target {
			target[k] = v
		}
		body, err := json.Marshal(map[string]any{"parameters": kc.params(target)})
		require.NoError(t, err)
		r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/kriging", body)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Contains(t, string(r.Body), `"name":"parameters.`+c.member+`"`, "%s", r.Body)
	}
}

// TestConcurrentKrigingOneTarget submits several kriging jobs at once, as
// the client does for several attributes of one object, each creating its
// own attribute, then several updating one attribute through disjoint
// target filters: the final version holds every job's result.
func TestConcurrentKrigingOneTarget(t *testing.T) {
	const jobs = 6
	h := start(t, jobs)
	kc := newKrigingCase(t, h)
	all := kc.estimate(t, kc.grade)
	run := func(params []map[string]any) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(params))
		for i, p := range params {
			wg.Add(1)
			go func() {
				defer wg.Done()
				job, err := h.c.RunTask(h.ctx, org, "kriging", p)
				if err == nil && job.Status != "succeeded" {
					err = fmt.Errorf("job %d: %s %s", i, job.Status, job.Error)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
	}
	var ps []map[string]any
	for i := 0; i < jobs; i++ {
		ps = append(ps, kc.params(map[string]any{"object": h.url(kc.g), "attribute": map[string]any{"operation": "create", "name": fmt.Sprintf("au_%d", i)}}))
	}
	run(ps)
	obj, blobs := h.latest(kc.gid)
	for i := 0; i < jobs; i++ {
		assertSameFloats(t, all, h.column(obj, blobs, fmt.Sprintf("cell_attributes[?name=='au_%d']", i)))
	}
	assertSameFloats(t, kc.depth, h.column(obj, blobs, "depth"), "the other attributes are kept")

	// Disjoint target filters on one attribute: three jobs, one zone each,
	// writing simple kriging with a different mean each.
	ps = ps[:0]
	for z := 1; z <= 3; z++ {
		p := kc.params(map[string]any{"object": h.url(kc.g), "attribute": map[string]any{"operation": "update", "reference": "cell_attributes[?name=='au_0']"},
			"filter": map[string]any{"where": cond("cell_attributes[?name=='zone']", "in", map[string]any{"values": []any{z}})}})
		p["kriging_method"] = map[string]any{"type": "simple", "mean": float64(z)}
		ps = append(ps, p)
	}
	run(ps)
	want := make([]float64, len(all))
	for z := 1; z <= 3; z++ {
		k, err := kriging.New(kc.xyz, kc.grade, kriging.Params{Variogram: kc.variogram, Mean: float64(z), Search: kc.search})
		require.NoError(t, err)
		out := kriging.Output{Estimate: make([]float64, len(all))}
		require.NoError(t, k.Estimate(h.ctx, kc.centres, &out, nil))
		for i, zz := range kc.zone {
			if zz == int64(z) {
				want[i] = out.Estimate[i]
			}
		}
	}
	obj, blobs = h.latest(kc.gid)
	assertSameFloats(t, want, h.column(obj, blobs, "cell_attributes[?name=='au_0']"))
	for i := 1; i < jobs; i++ {
		assertSameFloats(t, all, h.column(obj, blobs, fmt.Sprintf("cell_attributes[?name=='au_%d']", i)))
	}
}
