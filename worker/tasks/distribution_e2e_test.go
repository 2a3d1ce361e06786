package tasks_test

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type distributionResult struct {
	Message      string
	Distribution struct {
		Reference   string
		Name        string
		Description *string
		SchemaID    string `json:"schema_id"`
	}
}

// readDistribution reads the latest version of a distribution object (it
// validates against its schema) and builds it as the simulation does.
func readDistribution(t *testing.T, h *harness, id string) (*objects.Object, *geostat.Distribution) {
	t.Helper()
	obj, blobs := h.latest(id)
	require.NotNil(t, obj.Distribution)
	d, err := obj.Distribution.Build(h.ctx, blobs)
	require.NoError(t, err)
	return obj, d
}

// objectID is the object id in a result reference.
func objectID(t *testing.T, ref string) string {
	t.Helper()
	i := strings.Index(ref, "/objects/")
	require.Positive(t, i, ref)
	id := ref[i+len("/objects/"):]
	if j := strings.Index(id, "?"); j >= 0 {
		id = id[:j]
	}
	return id
}

func sameDistribution(t *testing.T, want, got *geostat.Distribution) {
	t.Helper()
	require.Equal(t, want.Len(), got.Len())
	for j := 0; j < want.Len(); j++ {
		wz, wp := want.Node(j)
		gz, gp := got.Node(j)
		require.Equal(t, wz, gz, "node %d", j)
		require.Equal(t, wp, gp, "node %d", j)
	}
	wl, wu := want.Tails()
	gl, gu := got.Tails()
	assert.Equal(t, wl, gl)
	assert.Equal(t, wu, gu)
}

// TestContinuousDistribution builds an unweighted distribution without
// tails and a weighted one with both tails, and checks both against the
// definition (sorted values, mid-step probabilities) and the library, as
// the simulation reads them back.
func TestContinuousDistribution(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(50, 61)
	grade[4] = math.NaN()
	weights := make([]float64, len(grade))
	for i := range weights {
		weights[i] = 0.5 + float64(i%7)
	}
	weights[4] = math.NaN() // its value is missing too: skipped together
	weights[9], weights[17] = 0, 0
	doc := b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade), b.Scalar("w", "k-w", weights))
	doc["locations"].(map[string]any)["attributes"].([]any)[0].(map[string]any)["attribute_description"] =
		map[string]any{"discipline": "Geochemistry", "type": "Au", "unit": "g/t"}
	h.put(b, "cd/pts.json", doc)

	// Unweighted, no tails: the definition.
	job, err := h.c.RunTask(h.ctx, org, "continuous-distribution", map[string]any{
		"source": map[string]any{"object": h.url("cd/pts.json"), "attribute": "locations.attributes[?name=='au']"},
		"target": map[string]any{"reference": h.url("dists/au plain.json"), "overwrite": false, "tags": map[string]any{}}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res distributionResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Equal(t, "au plain", res.Distribution.Name)
	assert.Equal(t, "/objects/non-parametric-continuous-cumulative-distribution/1.2.0/non-parametric-continuous-cumulative-distribution.schema.json", res.Distribution.SchemaID)
	assert.Contains(t, res.Distribution.Reference, "?version=")
	obj, d := readDistribution(t, h, objectID(t, res.Distribution.Reference))
	var present []float64
	for _, v := range grade {
		if !math.IsNaN(v) {
			present = append(present, v)
		}
	}
	slices.Sort(present)
	require.Equal(t, len(present), d.Len())
	for j, z := range present {
		gz, gp := d.Node(j)
		assert.Equal(t, z, gz)
		assert.InDelta(t, (float64(j)+0.5)/float64(len(present)), gp, 1e-15)
	}
	lower, upper := d.Tails()
	assert.False(t, lower.Extrapolates())
	assert.False(t, upper.Extrapolates())
	doc2 := obj.Doc()
	assert.Equal(t, false, doc2["is_declustered"])
	assert.Equal(t, "point", doc2["support"])
	assert.Equal(t, "no_extrapolation", doc2["cdf"].(map[string]any)["lower_tail_extrapolation"])
	assert.Equal(t, "Au", doc2["attribute_description"].(map[string]any)["type"])
	assert.NotNil(t, doc2["bounding_box"])

	// Weighted, both tails; zero weights left out.
	job, err = h.c.RunTask(h.ctx, org, "continuous-distribution", map[string]any{
		"source":  map[string]any{"object": h.url("cd/pts.json"), "attribute": "au"},
		"weights": map[string]any{"object": h.url("cd/pts.json"), "attribute": "locations.attributes[?key=='k-w']"},
		"tail_extrapolation": map[string]any{"upper": map[string]any{"power": 0.3, "max": 10.0},
			"lower": map[string]any{"power": 0.5, "min": -2.0}},
		"target": map[string]any{"reference": h.url("dists/au weighted.json"), "overwrite": false, "description": "declustered", "tags": map[string]any{"stage": "test"}}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Contains(t, res.Message, "2 values of weight 0 left out")
	require.NotNil(t, res.Distribution.Description)
	assert.Equal(t, "declustered", *res.Distribution.Description)
	wid := objectID(t, res.Distribution.Reference)
	obj, d = readDistribution(t, h, wid)
	var vs, wts []float64
	for i := range grade {
		if !math.IsNaN(grade[i]) && weights[i] > 0 {
			vs, wts = append(vs, grade[i]), append(wts, weights[i])
		}
	}
	lo, err := geostat.LowerPowerTail(-2, 0.5)
	require.NoError(t, err)
	hi, err := geostat.UpperPowerTail(10, 0.3)
	require.NoError(t, err)
	want, err := geostat.BuildDistribution(vs, wts, lo, hi)
	require.NoError(t, err)
	sameDistribution(t, want, d)
	cdf := obj.Doc()["cdf"].(map[string]any)
	// The lower power ω = 0.5 is stored as 1/ω (the schema asks ≥ 1).
	assert.Equal(t, json.Number("2"), cdf["lower_tail_extrapolation"].(map[string]any)["power_model"].(map[string]any)["power"])
	assert.Equal(t, json.Number("0.3"), cdf["upper_tail_extrapolation"].(map[string]any)["power_model"].(map[string]any)["power"])
	assert.Equal(t, true, obj.Doc()["is_declustered"])
	assert.Equal(t, map[string]any{"stage": "test"}, obj.Doc()["tags"])
	// The tails reach the bounds.
	assert.Equal(t, -2.0, d.BackTransform(-40))
	assert.Equal(t, 10.0, d.BackTransform(40))

	// An existing object: refused without overwrite, a new version with it.
	before, err := h.c.GetObject(h.ctx, org, ws, wid, "")
	require.NoError(t, err)
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": map[string]any{"object": h.url("cd/pts.json"), "attribute": "au"},
		"target": map[string]any{"reference": h.url("dists/au weighted.json"), "overwrite": false, "tags": map[string]any{}}}})
	p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/continuous-distribution", body, http.StatusUnprocessableEntity, "/validation")
	assert.Equal(t, "target.overwrite", p["invalid-params"].([]any)[0].(map[string]any)["name"])
	job, err = h.c.RunTask(h.ctx, org, "continuous-distribution", map[string]any{
		"source": map[string]any{"object": h.url("cd/pts.json"), "attribute": "au"},
		// A reference by id pinning the version the client loaded, as it sends it.
		"target": map[string]any{"reference": h.c.Base + "/geoscience-object/orgs/" + org + "/workspaces/" + ws + "/objects/" + wid + "?version=" + before.VersionID,
			"overwrite": true, "tags": map[string]any{}}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Equal(t, wid, objectID(t, res.Distribution.Reference), "the same object")
	after, err := h.c.GetObject(h.ctx, org, ws, wid, "")
	require.NoError(t, err)
	assert.NotEqual(t, before.VersionID, after.VersionID)
	obj, d = readDistribution(t, h, wid)
	assert.Equal(t, false, obj.Doc()["is_declustered"])
	assert.Equal(t, "au weighted", obj.Name)
	assert.Equal(t, "declustered", obj.Doc()["description"], "an overwrite without description keeps the object's")
	assert.Equal(t, len(present), d.Len())
}

// TestDeclusterThenDistribution feeds declustering weights with zeros (a
// sample no evaluation location reaches) into continuous-distribution.
func TestDeclusterThenDistribution(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(40, 62)
	sid := h.put(b, "dd/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	// Evaluation points over the western half only.
	var locs []float64
	for x := 2.5; x < 50; x += 5 {
		for y := 2.5; y < 100; y += 5 {
			locs = append(locs, x, y, 10)
		}
	}
	h.put(b, "dd/west.json", b.Pointset("1.3.0", locs))
	job, err := h.c.RunTask(h.ctx, org, "declustering", map[string]any{
		"source": map[string]any{"object": h.url("dd/pts.json")}, "grid": map[string]any{"object": h.url("dd/west.json")},
		"target":       map[string]any{"object": h.url("dd/pts.json"), "attribute": map[string]any{"operation": "create", "name": "w"}},
		"neighborhood": neighbourhood(1), "power": nil})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	obj, blobs := h.latest(sid)
	w := h.column(obj, blobs, "w")
	zeros := 0
	var vs, wts []float64
	for i, x := range w {
		if x == 0 {
			zeros++
		} else {
			vs, wts = append(vs, grade[i]), append(wts, x)
		}
	}
	require.Positive(t, zeros, "some eastern samples are reached by no location")
	job, err = h.c.RunTask(h.ctx, org, "continuous-distribution", map[string]any{
		"source":  map[string]any{"object": h.url("dd/pts.json"), "attribute": "au"},
		"weights": map[string]any{"object": h.url("dd/pts.json"), "attribute": "w"},
		"target":  map[string]any{"reference": h.url("dd/dist.json"), "overwrite": false, "tags": map[string]any{}}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res distributionResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	_, d := readDistribution(t, h, objectID(t, res.Distribution.Reference))
	want, err := geostat.BuildDistribution(vs, wts, geostat.Tail{}, geostat.Tail{})
	require.NoError(t, err)
	sameDistribution(t, want, d)
}

// TestContinuousDistributionRefusals checks the client's refusals and the
// bad data of the decision (negative, missing or all-zero weights, no value,
// tail bounds not beyond the data): each a 4xx naming the member, the
// existing target untouched.
func TestContinuousDistributionRefusals(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(20, 63)
	neg := make([]float64, 20)
	zero := make([]float64, 20)
	nanw := make([]float64, 20)
	nan := make([]float64, 20)
	for i := range neg {
		neg[i], nanw[i], nan[i] = 1, 1, math.NaN()
	}
	neg[3] = -0.1
	nanw[5] = math.NaN()
	h.put(b, "x/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade), b.Scalar("neg", "k-neg", neg),
		b.Scalar("zero", "k-zero", zero), b.Scalar("nanw", "k-nanw", nanw), b.Scalar("none", "k-none", nan)))
	h.put(b, "x/short.json", b.Pointset("1.3.0", xyz[:30], b.Scalar("w", "k-w", make([]float64, 10))))
	job, err := h.c.RunTask(h.ctx, org, "continuous-distribution", map[string]any{
		"source": map[string]any{"object": h.url("x/pts.json"), "attribute": "au"},
		"target": map[string]any{"reference": h.url("x/dist.json"), "overwrite": false, "tags": map[string]any{}}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res distributionResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	id := objectID(t, res.Distribution.Reference)
	before, err := h.c.GetObject(h.ctx, org, ws, id, "")
	require.NoError(t, err)

	params := func(edit func(p map[string]any)) []byte {
		p := map[string]any{
			"source": map[string]any{"object": h.url("x/pts.json"), "attribute": "au"},
			"target": map[string]any{"reference": h.url("x/dist.json"), "overwrite": true, "tags": map[string]any{}}}
		edit(p)
		body, _ := json.Marshal(map[string]any{"parameters": p})
		return body
	}
	path := "/compute/orgs/" + org + "/geostatistics/continuous-distribution"
	refuse := func(name string, edit func(p map[string]any)) {
		t.Helper()
		pr := problem(t, h, path, params(edit), http.StatusUnprocessableEntity, "/validation")
		var names []string
		for _, ip := range pr["invalid-params"].([]any) {
			names = append(names, ip.(map[string]any)["name"].(string))
		}
		assert.Contains(t, names, name, "%v", pr)
	}
	tails := func(upper, lower map[string]any) func(p map[string]any) {
		return func(p map[string]any) {
			t := map[string]any{}
			if upper != nil {
				t["upper"] = upper
			}
			if lower != nil {
				t["lower"] = lower
			}
			p["tail_extrapolation"] = t
		}
	}
	refuse("parameters.tail_extrapolation.upper.power", tails(map[string]any{"power": 0, "max": 100}, nil))
	refuse("parameters.tail_extrapolation.upper.power", tails(map[string]any{"power": 1.5, "max": 100}, nil))
	refuse("parameters.tail_extrapolation.lower.power", tails(map[string]any{"power": 1, "max": 100}, map[string]any{"power": -1, "min": -5}))
	refuse("parameters.tail_extrapolation.upper", tails(nil, map[string]any{"power": 1, "min": -5}))
	refuse("parameters.target.reference", func(p map[string]any) {
		p["target"] = map[string]any{"reference": "dist.json", "overwrite": true}
	})
	refuse("parameters.target.tags.a", func(p map[string]any) {
		p["target"] = map[string]any{"reference": h.url("x/dist.json"), "tags": map[string]any{"a": 1}}
	})
	refuse("weights.attribute", func(p map[string]any) {
		p["weights"] = map[string]any{"object": h.url("x/short.json"), "attribute": "w"}
	})
	refuse("target.reference", func(p map[string]any) {
		p["target"] = map[string]any{"reference": h.url("x/pts.json"), "overwrite": true}
	})

	// Bad data fails the job with 422 naming the member.
	fails := func(member string, edit func(p map[string]any)) {
		t.Helper()
		pr := runFails(t, h, "continuous-distribution", params(edit))
		assert.Equal(t, "https://errors.geostat-engine.dev/compute/invalid-data", pr["type"])
		assert.Equal(t, float64(422), pr["status"])
		assert.Contains(t, pr["detail"], member, "%v", pr)
		assert.Equal(t, member, pr["field"])
	}
	fails("tail_extrapolation.upper.max", tails(map[string]any{"power": 0.5, "max": 0.1}, nil))
	fails("tail_extrapolation.lower.min", tails(map[string]any{"power": 0.5, "max": 100}, map[string]any{"power": 0.5, "min": 10}))
	fails("weights", func(p map[string]any) {
		p["weights"] = map[string]any{"object": h.url("x/pts.json"), "attribute": "neg"}
	})
	fails("weights", func(p map[string]any) {
		p["weights"] = map[string]any{"object": h.url("x/pts.json"), "attribute": "zero"}
	})
	fails("weights", func(p map[string]any) {
		p["weights"] = map[string]any{"object": h.url("x/pts.json"), "attribute": "nanw"}
	})
	fails("source", func(p map[string]any) {
		p["source"] = map[string]any{"object": h.url("x/pts.json"), "attribute": "none"}
	})

	after, err := h.c.GetObject(h.ctx, org, ws, id, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, after.VersionID, "the target is untouched")
}
