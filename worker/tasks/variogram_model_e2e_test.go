package tasks_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/geostat/variogram"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gaussianField samples n uniform points of a 200 × 200 × 20 m box and a
// field whose covariance is, on average over its random waves, an isotropic
// gaussian structure of sill 1 and range 40 m (synthetic.Field).
func vmGaussianField(t *testing.T, n int) (xyz, z []float64, truth *geostat.Variogram) {
	t.Helper()
	truth, err := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Gaussian, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 40, SemiMajor: 40, Minor: 40}})
	require.NoError(t, err)
	xyz = synthetic.UniformPoints(11, synthetic.Box{Max: [3]float64{200, 200, 20}}, n)
	f, err := synthetic.NewField(12, truth, 400)
	require.NoError(t, err)
	return xyz, f.Values(nil, xyz), truth
}

// vmRequest is a variogram-model request over the source pts.json.
func vmRequest(h *harness, attr string, directions []any, model map[string]any, expPath, varPath string) map[string]any {
	return map[string]any{
		"source":     map[string]any{"object": h.url("pts.json"), "attribute": attr},
		"directions": directions,
		"lags":       map[string]any{"lag_distance": 8.0, "number_of_lags": 10},
		"model":      model,
		"target": map[string]any{
			"experimental_variogram": map[string]any{"reference": h.url(expPath)},
			"variogram":              map[string]any{"reference": h.url(varPath)},
		},
	}
}

type vmObject struct {
	Reference string
	ObjectID  string `json:"object_id"`
	VersionID string `json:"version_id"`
	Name      string
	SchemaID  string `json:"schema_id"`
}

type vmResult struct {
	Message      string
	Experimental vmObject `json:"experimental_variogram"`
	Variogram    vmObject
	Samples      int
	DataVariance float64 `json:"data_variance"`
	Fit          struct {
		Residual   float64
		Nugget     float64
		Sill       float64
		Structures []map[string]any
		Warnings   []string
	}
}

// readTable reads a table element of a stored object.
func vmReadTable(t *testing.T, blobs *objecttest.Blobs, el map[string]any, types ...objects.DataType) *objects.Table {
	t.Helper()
	data, ok := blobs.Get(el["data"].(string))
	require.True(t, ok)
	tab, err := objects.ReadTable(vmBytes(data), int64(len(data)), objects.TableSpec{Element: "t", Types: types, Rows: int64(el["length"].(float64))})
	require.NoError(t, err)
	return tab
}

type vmBytes []byte

func (b vmBytes) ReadAt(p []byte, off int64) (int, error) {
	n := copy(p, b[off:])
	return n, nil
}

// vmStored reads the latest version of an object with its blobs; the store
// validated it against its schema when it was written.
func (h *harness) vmStored(id string) (map[string]any, []byte, *objecttest.Blobs) {
	h.t.Helper()
	rec, err := h.c.GetObject(h.ctx, org, ws, id, "")
	require.NoError(h.t, err)
	raw, err := json.Marshal(rec.Object)
	require.NoError(h.t, err)
	doc, err := objects.DecodeJSON(raw)
	require.NoError(h.t, err)
	require.NoError(h.t, objecttest.Schemas(h.t).Validate(doc))
	var plain map[string]any
	require.NoError(h.t, json.Unmarshal(raw, &plain))
	blobs := objecttest.NewBlobs()
	for _, l := range rec.Links.Data {
		data, err := h.c.Download(h.ctx, rec, l.Name)
		require.NoError(h.t, err)
		blobs.Put(l.Name, data)
	}
	return plain, raw, blobs
}

// TestVariogramModelRoundTrip fits an omnidirectional experimental
// variogram of a field with a known gaussian model, checks that the stored
// experimental-variogram object holds exactly what the library computes on
// the same samples, that the stored variogram decodes to the fitted model
// and recovers the range, and that kriging runs with it.
func TestVariogramModelRoundTrip(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, z, truth := vmGaussianField(t, 1500)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("g", "k-g", z)))

	req := vmRequest(h, "locations.attributes[?name=='g']", []any{"omnidirectional"},
		map[string]any{"structures": []any{map[string]any{"variogram_type": "gaussian"}}, "nugget": true, "sill_constraint": "free"},
		"vario/exp.json", "vario/model.json")
	job, err := h.c.RunTask(h.ctx, org, "variogram-model", req)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res vmResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Equal(t, 1500, res.Samples)
	assert.Equal(t, "/objects/variogram/1.2.0/variogram.schema.json", res.Variogram.SchemaID)
	assert.Equal(t, "model", res.Variogram.Name)
	assert.Contains(t, res.Variogram.Reference, res.Variogram.ObjectID)
	assert.Contains(t, res.Variogram.Reference, "?version="+res.Variogram.VersionID)

	// The oracle: the library on the same samples and parameters.
	want, err := variogram.Compute(context.Background(), xyz, z, nil, variogram.Params{
		Directions: []variogram.Direction{{Type: variogram.Omnidirectional}}, LagDistance: 8, NLags: 10})
	require.NoError(t, err)
	assert.Equal(t, want.DataVariance, res.DataVariance)

	expDoc, _, expBlobs := h.vmStored(res.Experimental.ObjectID)
	assert.Equal(t, "/objects/experimental-variogram/1.0.0/experimental-variogram.schema.json", expDoc["schema"])
	assert.Equal(t, "exp", expDoc["name"])
	assert.Equal(t, "g", expDoc["attribute"])
	assert.Equal(t, want.DataVariance, expDoc["data_variance"])
	dirs := vmReadTable(t, expBlobs, expDoc["directions"].(map[string]any), objects.TypeUint64, objects.TypeUint64, objects.TypeString,
		objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64)
	require.Equal(t, int64(1), dirs.Rows)
	assert.Equal(t, []uint64{0}, dirs.Columns[0].Uint64)
	assert.Equal(t, []uint64{11}, dirs.Columns[1].Uint64)
	assert.Equal(t, []string{"omnidirectional"}, dirs.Columns[2].String)
	assert.Equal(t, []float64{math.Inf(1)}, dirs.Columns[7].Float64, "no bandwidth is +Inf")
	lags := vmReadTable(t, expBlobs, expDoc["lags"].(map[string]any), objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64, objects.TypeUint64)
	require.Equal(t, int64(len(want.Lags)), lags.Rows)
	for i, l := range want.Lags {
		assert.Equal(t, l.Start, lags.Columns[0].Float64[i], "lag %d start", i)
		assert.Equal(t, l.End, lags.Columns[1].Float64[i], "lag %d end", i)
		if l.Pairs == 0 {
			assert.True(t, math.IsNaN(lags.Columns[2].Float64[i]) && math.IsNaN(lags.Columns[3].Float64[i]), "lag %d has no pairs", i)
		} else {
			assert.Equal(t, l.Centroid, lags.Columns[2].Float64[i], "lag %d centroid", i)
			assert.Equal(t, l.Value, lags.Columns[3].Float64[i], "lag %d value", i)
		}
		assert.Equal(t, l.Pairs, lags.Columns[4].Uint64[i], "lag %d pairs", i)
	}
	assert.Nil(t, expDoc["lags"].(map[string]any)["attributes"], "no weights attribute without declustering weights")

	// The stored variogram decodes to the reported model, which recovers
	// the range of the truth within 20 % and its sill within 25 % (a
	// single realisation of 1,500 samples).
	_, raw, _ := h.vmStored(res.Variogram.ObjectID)
	dv, err := geostat.DecodeVariogram(raw)
	require.NoError(t, err)
	assert.Empty(t, dv.Warnings)
	require.Len(t, dv.Structures, 1)
	s := dv.Structures[0]
	assert.Equal(t, geostat.Gaussian, s.Type)
	assert.Equal(t, res.Fit.Nugget, dv.Nugget)
	assert.InDelta(t, res.Fit.Sill, dv.TotalSill(), 1e-12)
	assert.Equal(t, "data", dv.ModellingSpace)
	assert.InEpsilon(t, truth.Structures[0].Ellipsoid.Major, s.Ellipsoid.Major, 0.2, "range")
	assert.InEpsilon(t, 1.0, dv.TotalSill(), 0.25, "sill")
	assert.Equal(t, s.Ellipsoid.Major, s.Ellipsoid.Minor, "isotropic")
	assert.Greater(t, res.Fit.Residual, 0.0)

	// Kriging runs with it as it is.
	tgt := h.put(b, "targets.json", b.Pointset("1.3.0", []float64{50, 50, 10, 120, 80, 5, 190, 10, 15}))
	kjob, err := h.c.RunTask(h.ctx, org, "kriging", map[string]any{
		"source":       map[string]any{"object": h.url("pts.json"), "attribute": "g"},
		"target":       map[string]any{"object": h.url("targets.json"), "attribute": map[string]any{"operation": "create", "name": "g_ok"}},
		"variogram":    res.Variogram.Reference,
		"neighborhood": neighbourhood(24),
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", kjob.Status, "%s", kjob.Error)
	obj, blobs := h.latest(tgt)
	for i, v := range h.column(obj, blobs, "g_ok") {
		assert.False(t, math.IsNaN(v), "target %d", i)
	}

	// A second run on the same targets fails without overwrite and stores
	// nothing; with overwrite it writes new versions of both objects.
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/variogram-model", vmJSON(map[string]any{"parameters": req}))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "target.experimental_variogram.reference")
	req["target"].(map[string]any)["experimental_variogram"].(map[string]any)["overwrite"] = true
	req["target"].(map[string]any)["variogram"].(map[string]any)["overwrite"] = true
	req["target"].(map[string]any)["variogram"].(map[string]any)["tags"] = map[string]any{"stage": "second"}
	job, err = h.c.RunTask(h.ctx, org, "variogram-model", req)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res2 vmResult
	require.NoError(t, json.Unmarshal(job.Results, &res2))
	assert.Equal(t, res.Variogram.ObjectID, res2.Variogram.ObjectID)
	assert.NotEqual(t, res.Variogram.VersionID, res2.Variogram.VersionID)
	assert.Equal(t, res.Fit.Structures, res2.Fit.Structures, "the same request gives the same model")
	doc2, _, _ := h.vmStored(res2.Variogram.ObjectID)
	assert.Equal(t, map[string]any{"stage": "second"}, doc2["tags"])
}

func vmJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestVariogramModelNormalScoresAndSimulation fits directional normal-score
// variograms with declustering weights and given anisotropy, checks the
// unit sill and the weights attribute, then simulates with the model.
func TestVariogramModelNormalScoresAndSimulation(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, z, _ := vmGaussianField(t, 1200)
	grade := make([]float64, len(z))
	w := make([]float64, len(z))
	rng := rand.New(rand.NewPCG(3, 4))
	for i, v := range z {
		grade[i] = math.Exp(0.5 * v)
		w[i] = 0.5 + rng.Float64()
	}
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("cu", "k-cu", grade), b.Scalar("w", "k-w", w)))
	dist, err := geostat.BuildDistribution(grade, nil, geostat.Tail{}, geostat.Tail{})
	require.NoError(t, err)
	vals, probs := make([]float64, dist.Len()), make([]float64, dist.Len())
	for j := range vals {
		vals[j], probs[j] = dist.Node(j)
	}
	h.put(b, "dist.json", b.Distribution("1.2.0", vals, probs))

	dir := func(az float64) map[string]any {
		return map[string]any{"azimuth": az, "dip": 0.0, "azimuth_tolerance": 22.5, "dip_tolerance": 10.0, "bandwidth": 20.0, "bandheight": 5.0}
	}
	req := vmRequest(h, "cu", []any{dir(0), dir(90)},
		map[string]any{"structures": []any{map[string]any{"variogram_type": "spherical"}}, "nugget": false,
			"anisotropy": map[string]any{"type": "given", "major": 0, "semi_major": 1}, "weighting": "pairs", "starts": 4, "random_seed": 7},
		"vario/ns-exp.json", "vario/ns-model.json")
	req["source"].(map[string]any)["weights"] = "w"
	req["distribution"] = h.url("dist.json")
	job, err := h.c.RunTask(h.ctx, org, "variogram-model", req)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res vmResult
	require.NoError(t, json.Unmarshal(job.Results, &res))

	expDoc, _, expBlobs := h.vmStored(res.Experimental.ObjectID)
	lagsEl := expDoc["lags"].(map[string]any)
	attrs := lagsEl["attributes"].([]any)
	require.Len(t, attrs, 1)
	wattr := attrs[0].(map[string]any)
	assert.Equal(t, "weights", wattr["name"])
	lags := vmReadTable(t, expBlobs, lagsEl, objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64, objects.TypeUint64)
	wsum := vmReadTable(t, expBlobs, wattr["values"].(map[string]any), objects.TypeFloat64)
	// Every pair weighs between 0.25 and 2.25.
	for i, n := range lags.Columns[4].Uint64 {
		sw := wsum.Columns[0].Float64[i]
		assert.True(t, sw >= 0.25*float64(n) && sw <= 2.25*float64(n), "lag %d: %d pairs weigh %v", i, n, sw)
	}

	_, raw, _ := h.vmStored(res.Variogram.ObjectID)
	dv, err := geostat.DecodeVariogram(raw)
	require.NoError(t, err)
	assert.Equal(t, "normalscore", dv.ModellingSpace)
	assert.Equal(t, 0.0, dv.Nugget, "nugget off")
	assert.InDelta(t, 1, dv.TotalSill(), 1e-9, "the sill constraint defaults to 1 for normal scores")
	e := dv.Structures[0].Ellipsoid
	m := e.Rotation.Matrix()
	assert.InDelta(t, 1, math.Abs(m[3]), 1e-9, "the major axis is the first direction (north): %v", m)
	assert.InDelta(t, 1, math.Abs(m[1]), 1e-9, "the semi-major axis is the second direction (east): %v", m)

	// The simulation runs with the model as it is.
	spec := objecttest.GridSpec{Size: [3]int{10, 10, 2}, CellSize: [3]float64{20, 20, 10}}
	h.put(b, "grid.json", b.Grid("1.3.0", spec))
	sjob, err := h.c.RunTask(h.ctx, org, "conditional-turning-bands", map[string]any{
		"source": h.url("pts.json"), "source_attribute": "cu", "target": h.url("grid.json"),
		"distribution": h.url("dist.json"), "variogram_model": res.Variogram.Reference, "realizations": 2, "number_of_lines": 50,
		"neighborhood": neighbourhood(16),
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", sjob.Status, "%s", sjob.Error)
}

// TestVariogramModelBadRequests checks that bad parameters are 422s naming
// the member, and that a task that fails stores nothing.
func TestVariogramModelBadRequests(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, z, _ := vmGaussianField(t, 60)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("g", "k-g", z)))
	h.put(b, "other.json", objecttest.Variogram("1.2.0"))
	spherical := map[string]any{"structures": []any{map[string]any{"variogram_type": "spherical"}}}
	submit := func(req map[string]any) (int, string) {
		r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/variogram-model", vmJSON(map[string]any{"parameters": req}))
		require.NoError(t, err)
		return r.Status, string(r.Body)
	}
	cases := []struct {
		name   string
		mutate func(r map[string]any)
		member string
	}{
		{"no lags", func(r map[string]any) { delete(r, "lags") }, `"name":"parameters.lags"`},
		{"zero lags", func(r map[string]any) { r["lags"].(map[string]any)["number_of_lags"] = 0 }, `"name":"parameters.lags.number_of_lags"`},
		{"zero lag distance", func(r map[string]any) { r["lags"].(map[string]any)["lag_distance"] = 0 }, `"name":"parameters.lags.lag_distance"`},
		{"azimuth tolerance", func(r map[string]any) {
			r["directions"] = []any{map[string]any{"azimuth": 10, "azimuth_tolerance": 95}}
		}, `"name":"parameters.directions[0].azimuth_tolerance"`},
		{"dip tolerance", func(r map[string]any) {
			r["directions"] = []any{map[string]any{"azimuth": 10, "dip_tolerance": 0}}
		}, `"name":"parameters.directions[0].dip_tolerance"`},
		{"no directions", func(r map[string]any) { r["directions"] = []any{} }, `"name":"parameters.directions"`},
		{"four structures", func(r map[string]any) {
			s := map[string]any{"variogram_type": "spherical"}
			r["model"] = map[string]any{"structures": []any{s, s, s, s}}
		}, `"name":"parameters.model.structures"`},
		{"alpha", func(r map[string]any) {
			r["model"] = map[string]any{"structures": []any{map[string]any{"variogram_type": "spherical", "alpha": 3}}}
		}, `"name":"parameters.model.structures[0].alpha"`},
		{"axes", func(r map[string]any) {
			r["model"] = map[string]any{"structures": spherical["structures"], "anisotropy": map[string]any{"type": "given", "major": 0, "minor": 3}}
		}, `"name":"parameters.model.anisotropy.minor"`},
		{"existing target", func(r map[string]any) {
			r["target"].(map[string]any)["variogram"] = map[string]any{"reference": h.url("other.json")}
		}, `"name":"target.variogram.reference"`},
		{"same targets", func(r map[string]any) {
			r["target"].(map[string]any)["variogram"] = map[string]any{"reference": h.url("e.json")}
		}, `"name":"parameters.target.variogram.reference"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := vmRequest(h, "g", []any{"omnidirectional"}, spherical, "e.json", "v.json")
			c.mutate(req)
			status, body := submit(req)
			assert.Equal(t, http.StatusUnprocessableEntity, status, body)
			assert.Contains(t, body, c.member)
		})
	}

	// Too few pairs for the fit: the job fails with a 422 naming
	// model.min_pairs, and neither object exists.
	req := vmRequest(h, "g", []any{"omnidirectional"}, map[string]any{
		"structures": []any{map[string]any{"variogram_type": "spherical"}, map[string]any{"variogram_type": "exponential"}},
		"min_pairs":  1000}, "e.json", "v.json")
	job, err := h.c.RunTask(h.ctx, org, "variogram-model", req)
	require.NoError(t, err)
	require.Equal(t, "failed", job.Status)
	var p struct {
		Status        int                             `json:"status"`
		InvalidParams []struct{ Name, Reason string } `json:"invalid-params"`
	}
	require.NoError(t, json.Unmarshal(job.Error, &p))
	assert.Equal(t, http.StatusUnprocessableEntity, p.Status)
	require.Len(t, p.InvalidParams, 1, "%s", job.Error)
	assert.Equal(t, "model.min_pairs", p.InvalidParams[0].Name)
	for _, path := range []string{"e.json", "v.json"} {
		r, err := h.c.Do(h.ctx, http.MethodGet, "/geoscience-object/orgs/"+org+"/workspaces/"+ws+"/objects/path/"+path, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, r.Status, "%s: %s", path, r.Body)
	}
}

// TestVariogramModelIntervals computes the experimental variogram of
// downhole intervals at their mid-points, with a source filter.
func TestVariogramModelIntervals(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	mid, z, _ := vmGaussianField(t, 300)
	keep := make([]float64, len(z))
	for i := range keep {
		keep[i] = float64(i % 2)
	}
	h.put(b, "pts.json", b.Intervals("1.3.0", mid, b.Scalar("g", "k-g", z), b.Scalar("keep", "k-keep", keep)))
	req := vmRequest(h, "g", []any{"omnidirectional"},
		map[string]any{"structures": []any{map[string]any{"variogram_type": "exponential"}}}, "i/exp.json", "i/model.json")
	req["source"].(map[string]any)["filter"] = map[string]any{"where": map[string]any{"type": "condition", "attribute": "keep", "operator": "equal", "threshold": 1}}
	job, err := h.c.RunTask(h.ctx, org, "variogram-model", req)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res vmResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	kept := append([]float64(nil), z...)
	for i := range kept {
		if keep[i] != 1 {
			kept[i] = math.NaN()
		}
	}
	want, err := variogram.Compute(context.Background(), mid, kept, nil, variogram.Params{
		Directions: []variogram.Direction{{Type: variogram.Omnidirectional}}, LagDistance: 8, NLags: 10})
	require.NoError(t, err)
	assert.Equal(t, 150, res.Samples)
	assert.Equal(t, want.DataVariance, res.DataVariance)
}

// TestVariogramModelFailedWriteStoresNothing queues two jobs behind a
// blocking one: both pass submit, the first creates the variogram path the
// second also targets, so the second fails writing its variogram and deletes
// the experimental variogram it had created.
func TestVariogramModelFailedWriteStoresNothing(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, z, _ := vmGaussianField(t, 200)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("g", "k-g", z)))
	release := make(chan struct{})
	_, err := h.jobs.Submit(context.Background(), jobs.Spec{Org: org, Topic: "test", Task: "block", User: "blocker", Workspace: ws},
		func(ctx context.Context, _ func(int, string)) (any, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		})
	require.NoError(t, err)
	model := map[string]any{"structures": []any{map[string]any{"variogram_type": "spherical"}}}
	var status []string
	for _, exp := range []string{"a/exp.json", "b/exp.json"} {
		req := vmRequest(h, "g", []any{"omnidirectional"}, model, exp, "shared/model.json")
		r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/variogram-model", vmJSON(map[string]any{"parameters": req}))
		require.NoError(t, err)
		require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
		status = append(status, r.Header.Get("Location"))
	}
	close(release)
	first, err := h.c.Follow(h.ctx, status[0])
	require.NoError(t, err)
	require.Equal(t, "succeeded", first.Status, "%s", first.Error)
	second, err := h.c.Follow(h.ctx, status[1])
	require.NoError(t, err)
	require.Equal(t, "failed", second.Status)
	assert.Contains(t, string(second.Error), "target.variogram.reference")
	for path, want := range map[string]int{"a/exp.json": http.StatusOK, "shared/model.json": http.StatusOK, "b/exp.json": http.StatusNotFound} {
		r, err := h.c.Do(h.ctx, http.MethodGet, "/geoscience-object/orgs/"+org+"/workspaces/"+ws+"/objects/path/"+path, nil)
		require.NoError(t, err)
		assert.Equal(t, want, r.Status, "%s: %s", path, r.Body)
	}
}
