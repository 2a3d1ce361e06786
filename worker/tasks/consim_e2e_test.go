package tasks_test

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consimCase stores tied, weighted data, a variogram and two identical
// grids: one for consim, one for the chain of single tasks.
type consimCase struct {
	h                 *harness
	xyz, grade, w     []float64
	ptsID, gID, g2ID  string
	pts, g, g2, vario string
}

func newConsimCase(t *testing.T, h *harness) *consimCase {
	b := objecttest.NewBlobs()
	c := &consimCase{h: h, pts: "cs/pts.json", g: "cs/grid.json", g2: "cs/grid2.json", vario: "cs/vario.json"}
	c.xyz, c.grade = sampleData(90, 41)
	c.w = make([]float64, len(c.grade))
	for i := range c.grade {
		c.grade[i] = math.Round(c.grade[i]*c.grade[i]*4) / 4 // skewed, positive, many ties
		c.w[i] = 1 + float64(i%4)
	}
	c.ptsID = h.put(b, c.pts, b.Pointset("1.3.0", c.xyz, b.Scalar("cu", "k-cu", c.grade), b.Scalar("w", "k-w", c.w)))
	h.put(b, c.vario, objecttest.Variogram("1.2.0"))
	spec := objecttest.GridSpec{Size: [3]int{10, 8, 3}, CellSize: [3]float64{10, 12.5, 6.5}}
	// zone is 1 on two thirds of the cells, 0 on the others (a target
	// filter keeps zone > 0.5).
	zone := make([]float64, 10*8*3)
	for i := range zone {
		if i%3 != 0 {
			zone[i] = 1
		}
	}
	c.gID = h.put(b, c.g, b.Grid("1.3.0", spec, b.Scalar("zone", "k-zone", zone)))
	c.g2ID = h.put(b, c.g2, b.Grid("1.3.0", spec, b.Scalar("zone", "k-zone", zone)))
	return c
}

// ensembleFlat reads an ensemble attribute as its columns.
func ensembleColumns(t *testing.T, h *harness, obj *objects.Object, blobs *objecttest.Blobs, name string) [][]float64 {
	t.Helper()
	a, err := obj.ResolveAttribute(name)
	require.NoError(t, err, name)
	cols, err := obj.ReadContinuous(h.ctx, blobs, a)
	require.NoError(t, err, name)
	return cols
}

type consimResult struct {
	Target struct {
		Reference         string
		SchemaID          string                                      `json:"schema_id"`
		SummaryAttributes map[string]struct{ Reference, Name string } `json:"summary_attributes"`
		Quantiles         []struct {
			Reference, Name string
			Quantile        float64
		} `json:"quantile_attributes"`
		Probabilities []struct {
			Reference, Name string
			Cutoff          float64
		} `json:"probability_above_cutoff_attributes"`
		Means []struct {
			Reference, Name string
			Cutoff          float64
		} `json:"mean_above_cutoff_attributes"`
		Simulations                 *struct{ Reference, Name string }
		SimulationsNormalScore      *struct{ Reference, Name string } `json:"simulations_normal_score"`
		PointSimulations            *struct{ Reference, Name string } `json:"point_simulations"`
		PointSimulationsNormalScore *struct{ Reference, Name string } `json:"point_simulations_normal_score"`
		Loss                        *struct{ Reference, Name string } `json:"loss_calculation_attribute"`
	}
	Links   map[string]any
	Message *string
}

// TestConsimEqualsTheChainOfTasks runs consim, then the same workflow as
// single tasks with the same seed and target filter (break-ties over HTTP, the distribution
// built by the library and stored, conditional-turning-bands over HTTP,
// location-wise statistics and the loss classification computed by the
// library on the stored ensemble), and checks that every output is bit
// for bit the same, and that the saved realisations are the first ones of
// conditional-turning-bands.
func TestConsimEqualsTheChainOfTasks(t *testing.T) {
	h := start(t, 2)
	c := newConsimCase(t, h)
	const seed, reals, save = 12345, 4, 2
	nb := map[string]any{"max_samples": 12, "min_samples": 0, "ellipsoid": map[string]any{
		"ellipsoid_ranges": map[string]any{"major": 80, "semi_major": 60, "minor": 15},
		"rotation":         map[string]any{"dip_azimuth": 0, "dip": 0, "pitch": 0}}}
	disc := map[string]any{"nx": 2, "ny": 2, "nz": 1}
	loss := map[string]any{
		"material_categories": []any{
			map[string]any{"cutoff_grade": 0.0, "metal_price": 0.0, "label": "waste"},
			map[string]any{"cutoff_grade": 1.0, "metal_price": 10.0, "label": "low"},
			map[string]any{"cutoff_grade": 2.5, "metal_price": 12.0, "label": "ore"},
		},
		"processing_cost": 8.0, "mining_waste_cost": 1.0, "mining_ore_cost": 2.0, "metal_recovery_fraction": 0.9,
		"target_attribute": map[string]any{"operation": "create", "name": "ore_loss_cat"},
	}
	quantiles, probs, means := []float64{0.25, 0.5}, []float64{1.0, 2.5}, []float64{2.0}
	zoneFilter := map[string]any{"where": map[string]any{"type": "condition", "attribute": "cell_attributes[?name=='zone']", "operator": "greater_than", "threshold": 0.5}}
	job, err := h.c.RunTask(h.ctx, org, "consim", map[string]any{
		"source_object": h.url(c.pts), "source_attribute": "locations.attributes[?name=='cu']",
		"target_object": h.url(c.g), "variogram_model": h.url(c.vario), "neighborhood": nb,
		"block_discretization": disc,
		"distribution": map[string]any{"weights": "locations.attributes[?name=='w']", "tail_extrapolation": map[string]any{
			"upper": map[string]any{"power": 0.5, "max": 40.0}, "lower": map[string]any{"power": 0.5, "min": -0.5}}},
		"kriging_method": "simple", "number_of_lines": 60, "number_of_simulations": reals, "random_seed": seed,
		"number_of_simulations_to_save": save, "loss_calculation": loss,
		"location_wise_quantiles": quantiles, "probability_above_cutoff": probs, "mean_above_cutoff": means,
		"perform_validation": false, "filter": zoneFilter,
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res consimResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Nil(t, res.Message, "no message in consim's result")
	assert.NotNil(t, res.Links, "links is always present")
	assert.Equal(t, "mean", res.Target.SummaryAttributes["mean"].Name)
	assert.Equal(t, "cell_attributes[?name=='variance']", res.Target.SummaryAttributes["variance"].Reference)
	require.Len(t, res.Target.Quantiles, 2)
	assert.Equal(t, 0.25, res.Target.Quantiles[0].Quantile)
	assert.Equal(t, "Quantile: 0.25", res.Target.Quantiles[0].Name)
	require.Len(t, res.Target.Probabilities, 2)
	assert.Equal(t, "Prob>2.5", res.Target.Probabilities[1].Name)
	require.Len(t, res.Target.Means, 1)
	require.NotNil(t, res.Target.Simulations)
	require.NotNil(t, res.Target.PointSimulationsNormalScore)
	require.NotNil(t, res.Target.Loss)
	assert.Equal(t, "ore_loss_cat", res.Target.Loss.Name)

	// The chain. 1. break-ties with the same neighbourhood and seed.
	job, err = h.c.RunTask(h.ctx, org, "break-ties", map[string]any{
		"source":       map[string]any{"object": h.url(c.pts), "attribute": "locations.attributes[?name=='cu']"},
		"target":       map[string]any{"object": h.url(c.pts), "attribute": map[string]any{"operation": "create", "name": "cu_bt"}},
		"neighborhood": nb, "seed": seed,
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	pobj, pblobs := h.latest(c.ptsID)
	tied := h.column(pobj, pblobs, "cu_bt")
	distinct := map[float64]bool{}
	for _, v := range c.grade {
		distinct[v] = true
	}
	require.Less(t, len(distinct), len(c.grade), "the data have ties")

	// 2. The distribution, by the library, stored as an object.
	lower, err := geostat.LowerPowerTail(-0.5, 0.5)
	require.NoError(t, err)
	upper, err := geostat.UpperPowerTail(40, 0.5)
	require.NoError(t, err)
	dist, err := geostat.BuildDistribution(tied, c.w, lower, upper)
	require.NoError(t, err)
	z, p := make([]float64, dist.Len()), make([]float64, dist.Len())
	for j := range z {
		z[j], p[j] = dist.Node(j)
	}
	b := objecttest.NewBlobs()
	ddoc := b.Distribution("1.2.0", z, p)
	cdf := ddoc["cdf"].(map[string]any)
	cdf["lower_tail_extrapolation"] = map[string]any{"power_model": map[string]any{"min": lower.Bound, "power": lower.Power}}
	cdf["upper_tail_extrapolation"] = map[string]any{"power_model": map[string]any{"max": upper.Bound, "power": upper.Power}}
	h.put(b, "cs/dist.json", ddoc)

	// 3. conditional-turning-bands on the tied values.
	job, err = h.c.RunTask(h.ctx, org, "conditional-turning-bands", map[string]any{
		"source": h.url(c.pts), "source_attribute": "locations.attributes[?name=='cu_bt']",
		"target": h.url(c.g2), "distribution": h.url("cs/dist.json"), "variogram_model": h.url(c.vario),
		"neighborhood": nb, "block_discretization": disc, "kriging_method": "simple",
		"number_of_lines": 60, "realizations": reals, "random_seed": seed, "save_gaussian_results": true, "filter": zoneFilter,
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	cobj, cblobs := h.latest(c.g2ID)
	block := ensembleColumns(t, h, cobj, cblobs, "simulation-results")

	// 4. location-wise statistics and the loss classification by the
	// library on the stored ensemble.
	want, err := ensemble.Compute(h.ctx, ensemble.NewColumnsSource(block, 17),
		ensemble.Operations{Summary: true, Quantiles: quantiles, ProbabilityAbove: probs, MeanAbove: means})
	require.NoError(t, err)
	econ := ensemble.Economics{Categories: []ensemble.Category{{Label: "waste"}, {Label: "low", CutoffGrade: 1, MetalPrice: 10}, {Label: "ore", CutoffGrade: 2.5, MetalPrice: 12}},
		ProcessingCost: 8, MiningWasteCost: 1, MiningOreCost: 2, MetalRecoveryFraction: 0.9}
	cls, err := ensemble.NewClassifier(ensemble.MinimiseLoss, econ, len(block[0]), reals)
	require.NoError(t, err)
	keys, err := cls.Run(h.ctx, ensemble.NewColumnsSource(block, 0))
	require.NoError(t, err)

	obj, blobs := h.latest(c.gID)
	assertSameFloats(t, want.Mean, h.column(obj, blobs, "mean"), "mean")
	assertSameFloats(t, want.Variance, h.column(obj, blobs, "variance"), "variance")
	assertSameFloats(t, want.Min, h.column(obj, blobs, "min"), "min")
	assertSameFloats(t, want.Max, h.column(obj, blobs, "max"), "max")
	for k, q := range res.Target.Quantiles {
		assertSameFloats(t, want.Quantiles[k], h.column(obj, blobs, q.Reference), q.Name)
	}
	for k, a := range res.Target.Probabilities {
		assertSameFloats(t, want.ProbabilityAbove[k], h.column(obj, blobs, a.Reference), a.Name)
	}
	assertSameFloats(t, want.MeanAbove[0], h.column(obj, blobs, res.Target.Means[0].Reference), "mean above")
	la, err := obj.ResolveAttribute(res.Target.Loss.Reference)
	require.NoError(t, err)
	cat, err := obj.ReadCategory(h.ctx, blobs, la)
	require.NoError(t, err)
	used := map[int64]bool{}
	for i, k := range keys {
		if i%3 == 0 { // filtered out: no realisation, no category
			require.Equal(t, ensemble.NoCategory, k, "cell %d", i)
			require.False(t, cat.Valid[i], "cell %d has no category", i)
			require.True(t, math.IsNaN(want.Mean[i]), "cell %d has no mean", i)
			continue
		}
		require.True(t, cat.Valid[i], "cell %d has a category", i)
		require.Equal(t, int64(k), cat.Keys[i], "cell %d", i)
		used[cat.Keys[i]] = true
	}
	assert.Greater(t, len(used), 1, "the classification is not uniform")
	assert.Equal(t, map[int64]string{0: "waste", 1: "low", 2: "ore"}, cat.Names)

	// consim streams its statistics and categories into their blobs tile
	// by tile: the blobs are byte for byte those of the columns written
	// whole (the location-wise and loss-calculation tasks' writes).
	blobKey := func(cols []objects.Column) string {
		// Every attribute blob's column is named "values", whatever the
		// attribute's name (column names are internal).
		_, blob, err := objects.EncodeTable(cols, []string{"values"}, nil)
		require.NoError(t, err)
		return blob.Key
	}
	for name, col := range map[string][]float64{"mean": want.Mean, "variance": want.Variance, "min": want.Min, "max": want.Max,
		"Quantile: 0.25": want.Quantiles[0], "Prob>2.5": want.ProbabilityAbove[1], "Mean>2.0": want.MeanAbove[0]} {
		a, err := obj.ResolveAttribute(name)
		require.NoError(t, err, name)
		assert.Equal(t, blobKey([]objects.Column{{Type: objects.TypeFloat64, Float64: col}}), a.Values.Data, name)
	}
	k64 := make([]int64, len(keys))
	for i, k := range keys {
		k64[i] = int64(k)
	}
	assert.Equal(t, blobKey([]objects.Column{{Type: objects.TypeInt32, Int64: k64}}), la.Values.Data, "categories")

	// The saved realisations are the first ones of the chain's, in all
	// four ensembles.
	for name, chain := range map[string]string{"simulations": "simulation-results", "simulations_normal_score": "simulation-results_normal_score",
		"point_simulations": "simulation-results_point", "point_simulations_normal_score": "simulation-results_point_normal_score"} {
		got := ensembleColumns(t, h, obj, blobs, name)
		all := ensembleColumns(t, h, cobj, cblobs, chain)
		require.Len(t, got, save, name)
		for r := range got {
			assertSameFloats(t, all[r], got[r], name)
		}
	}
}

// TestConsimRefusals checks that each client-side refusal is a 422 naming
// the member, and that a job failing on its data leaves the target as it
// was.
func TestConsimRefusals(t *testing.T) {
	h := start(t, 1)
	c := newConsimCase(t, h)
	base := func() map[string]any {
		return map[string]any{
			"source_object": h.url(c.pts), "source_attribute": "cu", "target_object": h.url(c.g),
			"variogram_model": h.url(c.vario), "neighborhood": neighbourhood(8),
		}
	}
	cases := []struct {
		key    string
		value  any
		member string
	}{
		{"number_of_lines", 0, "number_of_lines"},
		{"number_of_lines", 1001, "number_of_lines"},
		{"number_of_simulations", 101, "number_of_simulations"},
		{"number_of_simulations", 2.5, "number_of_simulations"},
		{"number_of_simulations_to_save", -1, "number_of_simulations_to_save"},
		{"block_discretization", map[string]any{"nx": 10, "ny": 1, "nz": 1}, "block_discretization.nx"},
		{"kriging_method", "universal", "kriging_method"},
		{"distribution", map[string]any{"tail_extrapolation": map[string]any{"upper": map[string]any{"power": 1.5, "max": 40}}}, "distribution.tail_extrapolation.upper.power"},
		{"distribution", map[string]any{"tail_extrapolation": map[string]any{"lower": map[string]any{"power": 0.5, "min": 0}}}, "distribution.tail_extrapolation.upper"},
		{"report_context", map[string]any{"title": "t", "details": []any{}}, "report_context.details"},
		{"report_context", map[string]any{"title": "t", "details": make([]any, 11)}, "report_context.details"},
		{"report_mean_thresholds", map[string]any{"acceptable": -0.1}, "report_mean_thresholds.acceptable"},
		{"location_wise_quantiles", []any{0.5, 1.5}, "location_wise_quantiles[1]"},
		{"probability_above_cutoff", []any{1, 1}, "probability_above_cutoff[1]"},
		{"loss_calculation", map[string]any{"material_categories": []any{map[string]any{"cutoff_grade": -1, "metal_price": 1, "label": "w"}},
			"processing_cost": 1, "mining_waste_cost": 1, "mining_ore_cost": 1, "metal_recovery_fraction": 0.5,
			"target_attribute": map[string]any{"operation": "create", "name": "x"}}, "loss_calculation.material_categories[0].cutoff_grade"},
		{"loss_calculation", map[string]any{"material_categories": []any{map[string]any{"cutoff_grade": 0, "metal_price": 1, "label": "w"}},
			"processing_cost": 1, "mining_waste_cost": 1, "mining_ore_cost": 1, "metal_recovery_fraction": 1.5,
			"target_attribute": map[string]any{"operation": "create", "name": "x"}}, "loss_calculation.metal_recovery_fraction"},
		{"source_object", "not-a-url", "source_object"},
	}
	for _, tc := range cases {
		p := base()
		p[tc.key] = tc.value
		body, err := json.Marshal(map[string]any{"parameters": p})
		require.NoError(t, err)
		r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/consim", body)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", tc.key, r.Body)
		assert.Contains(t, string(r.Body), `"name":"parameters.`+tc.member+`"`, "%s", r.Body)
	}
	// A tail bound inside the data fails the job (the data are read by the
	// job): the target keeps its version.
	before, err := h.c.GetObject(h.ctx, org, ws, c.gID, "")
	require.NoError(t, err)
	p := base()
	p["distribution"] = map[string]any{"tail_extrapolation": map[string]any{"upper": map[string]any{"power": 0.5, "max": 0.5}}}
	job, err := h.c.RunTask(h.ctx, org, "consim", p)
	require.NoError(t, err)
	require.Equal(t, "failed", job.Status)
	assert.Contains(t, string(job.Error), "distribution")
	after, err := h.c.GetObject(h.ctx, org, ws, c.gID, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, after.VersionID, "the target is untouched")
}

// TestConsimDefaultsAndLossUpdate runs consim with the required members
// and a loss classification, then again updating that category attribute:
// the default quantiles (P10, P50, P90), the number saved clamped to the
// realisations, links {} without validation; the update keeps the
// attribute's key, and updating a continuous attribute is refused.
func TestConsimDefaultsAndLossUpdate(t *testing.T) {
	h := start(t, 1)
	c := newConsimCase(t, h)
	loss := func(target map[string]any) map[string]any {
		return map[string]any{
			"material_categories": []any{map[string]any{"cutoff_grade": 0.0, "metal_price": 0.0, "label": "waste"},
				map[string]any{"cutoff_grade": 1.5, "metal_price": 10.0, "label": "ore"}},
			"processing_cost": 5.0, "mining_waste_cost": 1.0, "mining_ore_cost": 1.0, "metal_recovery_fraction": 1.0,
			"target_attribute": target,
		}
	}
	params := func(target map[string]any) map[string]any {
		return map[string]any{
			"source_object": h.url(c.pts), "source_attribute": "cu", "target_object": h.url(c.g),
			"variogram_model": h.url(c.vario), "neighborhood": neighbourhood(8),
			"number_of_simulations": 2, "number_of_lines": 20, "loss_calculation": loss(target),
		}
	}
	job, err := h.c.RunTask(h.ctx, org, "consim", params(map[string]any{"operation": "create", "name": "cat"}))
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res consimResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Equal(t, map[string]any{}, res.Links)
	require.Len(t, res.Target.Quantiles, 3)
	for k, q := range []float64{0.1, 0.5, 0.9} {
		assert.Equal(t, q, res.Target.Quantiles[k].Quantile)
	}
	assert.Nil(t, res.Target.Probabilities)
	assert.Contains(t, string(job.Results), `"links":{}`)
	assert.NotContains(t, string(job.Results), "probability_above_cutoff_attributes")
	obj, blobs := h.latest(c.gID)
	require.Len(t, ensembleColumns(t, h, obj, blobs, "simulations"), 2, "5 saved, clamped to 2 realisations")
	before, err := obj.ResolveAttribute("cat")
	require.NoError(t, err)
	assert.Equal(t, objects.AttributeCategory, before.Type)

	job, err = h.c.RunTask(h.ctx, org, "consim", params(map[string]any{"operation": "update", "reference": "cell_attributes[?name=='cat']"}))
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Equal(t, "cat", res.Target.Loss.Name)
	obj, _ = h.latest(c.gID)
	after, err := obj.ResolveAttribute("cat")
	require.NoError(t, err)
	assert.Equal(t, before.Key, after.Key)
	named := 0
	for _, a := range obj.Attributes("cell_attributes") {
		if a.Name == "cat" {
			named++
		}
	}
	assert.Equal(t, 1, named, "the update replaced the attribute")

	body, err := json.Marshal(map[string]any{"parameters": params(map[string]any{"operation": "update", "reference": "cell_attributes[?name=='mean']"})})
	require.NoError(t, err)
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/consim", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), `"name":"loss_calculation.target_attribute.reference"`)
}
