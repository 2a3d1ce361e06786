package tasks_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/declus"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bruteDeclus is the oracle of influence declustering: every location
// shares one unit among its brute-force neighbours (1/n each with power 0,
// h^−p otherwise, the coincident samples alone in equal parts at h = 0),
// locations with fewer than minN give nothing, the influences normalised
// to sum 1.
func bruteDeclus(xyz, values []float64, locs []float64, ranges [3]float64, maxN, minN int, power float64) []float64 {
	inf := make([]float64, len(xyz)/3)
	for l := 0; l < len(locs)/3; l++ {
		cs := bruteNeighbours(xyz, values, ranges, maxN, locs[3*l], locs[3*l+1], locs[3*l+2])
		if len(cs) < minN || len(cs) == 0 {
			continue
		}
		switch {
		case power == 0:
			for _, c := range cs {
				inf[c.i] += 1 / float64(len(cs))
			}
		case cs[0].h == 0:
			n := 0
			for _, c := range cs {
				if c.h == 0 {
					n++
				}
			}
			for _, c := range cs[:n] {
				inf[c.i] += 1 / float64(n)
			}
		default:
			den := 0.0
			for _, c := range cs {
				den += math.Pow(c.h, -power)
			}
			for _, c := range cs {
				inf[c.i] += math.Pow(c.h, -power) / den
			}
		}
	}
	sum := 0.0
	for _, v := range inf {
		sum += v
	}
	for i := range inf {
		inf[i] /= sum
	}
	return inf
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// TestDeclusteringInfluence runs the client's shape in KNN mode (power
// null), IDW mode with the default power (absent) and an explicit power,
// over a grid, a masked grid and points, and checks the weights against a
// brute-force oracle.
func TestDeclusteringInfluence(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	// A cluster of 40 samples in a corner and 60 spread ones.
	xyz, grade := sampleData(60, 51)
	cx, cg := sampleData(40, 52)
	for i := range cg {
		cx[3*i] = 5 + cx[3*i]/10
		cx[3*i+1] = 5 + cx[3*i+1]/10
		cg[i] += 2
	}
	xyz, grade = append(xyz, cx...), append(grade, cg...)
	grade[7] = math.NaN()
	sid := h.put(b, "d/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	spec := objecttest.GridSpec{Size: [3]int{10, 10, 2}, CellSize: [3]float64{10, 10, 10}}
	h.put(b, "d/grid.json", b.Grid("1.3.0", spec))
	mask := make([]bool, 200)
	for i := range mask {
		mask[i] = i%5 != 0
	}
	h.put(b, "d/masked.json", b.MaskedGrid("1.3.0", spec, mask))
	other := h.put(b, "d/copy.json", b.Pointset("1.3.0", xyz))
	g, err := grid.New(spec.Origin, spec.Size, spec.CellSize, geostat.Rotation{})
	require.NoError(t, err)
	centres := g.CellCentres(nil)
	var active []float64
	for c := range mask {
		if mask[c] {
			active = append(active, centres[3*c:3*c+3]...)
		}
	}
	ranges := [3]float64{40, 30, 25}
	nb := map[string]any{"max_samples": 6, "min_samples": 2, "ellipsoid": map[string]any{
		"ellipsoid_ranges": map[string]any{"major": ranges[0], "semi_major": ranges[1], "minor": ranges[2]},
		"rotation":         map[string]any{"dip_azimuth": 0, "dip": 0, "pitch": 0}}}

	run := func(name, locations, target, attribute string, power any, withPower bool) string {
		src := map[string]any{"object": h.url("d/pts.json")}
		if attribute != "" {
			src["attribute"] = attribute
		}
		p := map[string]any{"source": src, "grid": map[string]any{"object": h.url(locations)},
			"target":       map[string]any{"object": h.url(target), "attribute": map[string]any{"operation": "create", "name": name}},
			"neighborhood": nb}
		if withPower {
			p["power"] = power
		}
		job, err := h.c.RunTask(h.ctx, org, "declustering", p)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
		var res struct {
			Message string
			Target  struct {
				Attribute struct{ Reference, Name string }
			}
		}
		require.NoError(t, json.Unmarshal(job.Results, &res))
		assert.Equal(t, "locations.attributes[?name=='"+name+"']", res.Target.Attribute.Reference)
		return res.Message
	}
	msg := run("w_knn", "d/grid.json", "d/pts.json", "", nil, true)
	assert.Contains(t, msg, "KNN declustering")
	run("w_idw", "d/masked.json", "d/pts.json", "", nil, false)
	msg = run("w_idw3", "d/grid.json", "d/copy.json", "locations.attributes[?name=='au']", 3.0, true)
	assert.Contains(t, msg, "IDW declustering (power 3)")

	obj, blobs := h.latest(sid)
	knn := h.column(obj, blobs, "w_knn")
	assertClose(t, bruteDeclus(xyz, nil, centres, ranges, 6, 2, 0), knn, 1e-12)
	assertClose(t, bruteDeclus(xyz, nil, active, ranges, 6, 2, 2), h.column(obj, blobs, "w_idw"), 1e-12)
	assert.InDelta(t, 1, sum(knn), 1e-12)
	// Clustered samples get less than the spread ones.
	assert.Less(t, sum(knn[60:])/40, sum(knn[:60])/60)
	obj, blobs = h.latest(other)
	w3 := h.column(obj, blobs, "w_idw3")
	assertClose(t, bruteDeclus(xyz, grade, centres, ranges, 6, 2, 3), w3, 1e-12)
	assert.Zero(t, w3[7], "a sample without a value gets weight 0")
}

// TestDeclusteringCell checks cell declustering against a hand-computed
// case and against the library for a range of sizes.
func TestDeclusteringCell(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	// Four samples on a line, three within 3 m: cells of 5 m, two origins
	// (at −0.01 and −2.51): origin 1 puts {0, 1, 3} together and 10 alone
	// (1/6, 1/6, 1/6, 1/2); origin 2 puts {0, 1} in [−2.51, 2.49),
	// 3 in [2.49, 7.49), 10 in [7.49, 12.49) (1/6, 1/6, 1/3, 1/3).
	// Averaged: 1/6, 1/6, 1/4, 5/12.
	line := []float64{0, 0, 0, 1, 0, 0, 3, 0, 0, 10, 0, 0}
	lid := h.put(b, "c/line.json", b.Pointset("1.3.0", line))
	job, err := h.c.RunTask(h.ctx, org, "declustering", map[string]any{
		"source": map[string]any{"object": h.url("c/line.json")},
		"target": map[string]any{"object": h.url("c/line.json"), "attribute": map[string]any{"operation": "create", "name": "w"}},
		"power":  2.0, // sent by the client, ignored by the cell method
		"method": map[string]any{"type": "cell", "cell_size": []any{5}, "offsets": 2}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	obj, blobs := h.latest(lid)
	assertClose(t, []float64{1.0 / 6, 1.0 / 6, 1.0 / 4, 5.0 / 12}, h.column(obj, blobs, "w"), 1e-14)

	// A range of sizes with anisotropy and the max objective, against the
	// library.
	xyz, grade := sampleData(120, 53)
	sid := h.put(b, "c/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	job, err = h.c.RunTask(h.ctx, org, "declustering", map[string]any{
		"source": map[string]any{"object": h.url("c/pts.json"), "attribute": "au"},
		"target": map[string]any{"object": h.url("c/pts.json"), "attribute": map[string]any{"operation": "create", "name": "w_cell"}},
		"method": map[string]any{"type": "cell", "cell_size": map[string]any{"min": 5, "max": 50, "steps": 9},
			"anisotropy": []any{1.5, 0.5}, "offsets": 4, "objective": "max"}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	want, err := declus.Cell(context.Background(), xyz, grade, declus.CellParams{Sizes: declus.SizeRange(5, 50, 9),
		AnisY: 1.5, AnisZ: 0.5, Offsets: 4, Objective: declus.Maximize}, nil)
	require.NoError(t, err)
	obj, blobs = h.latest(sid)
	got := h.column(obj, blobs, "w_cell")
	assertSameFloats(t, want.Weights, got)
	assert.InDelta(t, 1, sum(got), 1e-12)
}

// TestDeclusteringRefusals checks the client's refusals and the worker's
// checks, each a 4xx naming the member, and that failures leave the target
// untouched.
func TestDeclusteringRefusals(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(30, 54)
	sid := h.put(b, "r/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	h.put(b, "r/short.json", b.Pointset("1.3.0", xyz[:30]))
	// Evaluation points far from every sample.
	h.put(b, "r/far.json", b.Pointset("1.3.0", []float64{1e6, 1e6, 0, 2e6, 1e6, 0}))
	before, err := h.c.GetObject(h.ctx, org, ws, sid, "")
	require.NoError(t, err)
	base := func() map[string]any {
		return map[string]any{
			"source":       map[string]any{"object": h.url("r/pts.json")},
			"grid":         map[string]any{"object": h.url("r/pts.json")},
			"target":       map[string]any{"object": h.url("r/pts.json"), "attribute": map[string]any{"operation": "create", "name": "w"}},
			"neighborhood": neighbourhood(4), "power": 2.0}
	}
	path := "/compute/orgs/" + org + "/geostatistics/declustering"
	refuse := func(name string, edit func(p map[string]any)) {
		t.Helper()
		p := base()
		edit(p)
		body, _ := json.Marshal(map[string]any{"parameters": p})
		pr := problem(t, h, path, body, http.StatusUnprocessableEntity, "/validation")
		var names []string
		for _, ip := range pr["invalid-params"].([]any) {
			names = append(names, ip.(map[string]any)["name"].(string))
		}
		assert.Contains(t, names, name, "%v", pr)
	}
	refuse("parameters.power", func(p map[string]any) { p["power"] = 0 })
	refuse("parameters.power", func(p map[string]any) { p["power"] = -1.5 })
	refuse("parameters.source.object", func(p map[string]any) { p["source"] = map[string]any{"object": "grid"} })
	refuse("parameters.grid", func(p map[string]any) { delete(p, "grid") })
	refuse("parameters.neighborhood", func(p map[string]any) { delete(p, "neighborhood") })
	refuse("parameters.method.type", func(p map[string]any) { p["method"] = map[string]any{"type": "polygonal"} })
	refuse("parameters.method.cell_size", func(p map[string]any) { p["method"] = map[string]any{"type": "cell"} })
	refuse("parameters.method.cell_size[0]", func(p map[string]any) { p["method"] = map[string]any{"type": "cell", "cell_size": []any{0}} })
	refuse("parameters.method.anisotropy", func(p map[string]any) {
		p["method"] = map[string]any{"type": "cell", "cell_size": []any{5}, "anisotropy": []any{1}}
	})
	refuse("parameters.source.attribute", func(p map[string]any) { p["method"] = map[string]any{"type": "cell", "cell_size": []any{5, 10}} })
	refuse("target", func(p map[string]any) {
		p["target"] = map[string]any{"object": h.url("r/short.json"), "attribute": map[string]any{"operation": "create", "name": "w"}}
	})
	h.put(b, "r/empty.json", b.Pointset("1.3.0", nil))
	refuse("source", func(p map[string]any) { p["source"] = map[string]any{"object": h.url("r/empty.json")} })
	// No evaluation location reaches a sample: the job fails with 422.
	p := base()
	p["grid"] = map[string]any{"object": h.url("r/far.json")}
	body, _ := json.Marshal(map[string]any{"parameters": p})
	pr := runFails(t, h, "declustering", body)
	invalidData(t, pr, "r/far.json", "neighborhood")
	after, err := h.c.GetObject(h.ctx, org, ws, sid, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, after.VersionID, "the target is untouched")
}
