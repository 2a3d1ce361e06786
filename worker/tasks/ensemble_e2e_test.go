package tasks_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
)

// finiteValues returns the finite realisations of cell i, in realisation
// order.
func finiteValues(cols [][]float64, i int) []float64 {
	var v []float64
	for _, c := range cols {
		if x := c[i]; !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	return v
}

// bruteLocationWise computes the location-wise outputs of every cell from
// their definitions: sorting for the quantiles, plain loops for the rest.
func bruteLocationWise(cols [][]float64, quantiles, prob, meanAbove []float64) map[string][]float64 {
	cells := len(cols[0])
	out := map[string][]float64{}
	put := func(name string, i int, v float64) {
		if out[name] == nil {
			out[name] = make([]float64, cells)
		}
		out[name][i] = v
	}
	nan := math.NaN()
	for i := range cells {
		v := finiteValues(cols, i)
		n := float64(len(v))
		if len(v) == 0 {
			for _, name := range []string{"min", "max", "mean", "variance"} {
				put(name, i, nan)
			}
			for _, q := range quantiles {
				put("Quantile: "+pyFloat(q), i, nan)
			}
			for _, c := range prob {
				put("Prob>"+pyFloat(c), i, nan)
			}
			for _, c := range meanAbove {
				put("Mean>"+pyFloat(c), i, nan)
			}
			continue
		}
		s := slices.Sorted(slices.Values(v))
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		m := sum / n
		ss := 0.0
		for _, x := range v {
			ss += (x - m) * (x - m)
		}
		put("min", i, s[0])
		put("max", i, s[len(s)-1])
		put("mean", i, m)
		put("variance", i, ss/n)
		for _, q := range quantiles {
			h := q * (n - 1)
			k := int(math.Floor(h))
			val := s[k]
			if k+1 < len(s) {
				val += (h - float64(k)) * (s[k+1] - s[k])
			}
			put("Quantile: "+pyFloat(q), i, val)
		}
		above := func(c float64) (int, float64) {
			cnt, sm := 0, 0.0
			for _, x := range v {
				if x > c {
					cnt++
					sm += x
				}
			}
			return cnt, sm
		}
		for _, c := range prob {
			cnt, _ := above(c)
			put("Prob>"+pyFloat(c), i, float64(cnt)/n)
		}
		for _, c := range meanAbove {
			cnt, sm := above(c)
			val := nan
			if cnt > 0 {
				val = sm / float64(cnt)
			}
			put("Mean>"+pyFloat(c), i, val)
		}
	}
	return out
}

// pyFloat writes a number as Python's repr of a float, for the plain
// numbers of these tests (a decimal point always).
func pyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".e") {
		s += ".0"
	}
	return s
}

type category struct {
	cutoff, price float64
	label         string
}

type economics struct {
	processing, miningWaste, miningOre, recovery float64
	cats                                         []category
}

func (e economics) members() map[string]any {
	cats := make([]any, len(e.cats))
	for i, c := range e.cats {
		cats[i] = map[string]any{"cutoff_grade": c.cutoff, "metal_price": c.price, "label": c.label}
	}
	return map[string]any{"material_categories": cats, "processing_cost": e.processing, "mining_waste_cost": e.miningWaste,
		"mining_ore_cost": e.miningOre, "metal_recovery_fraction": e.recovery}
}

// bruteClassify is the decision rule of docs/ensemble.md written per
// realisation: the expected loss (or profit) of including and of excluding
// the block, as the mean over the realisations of each decision's loss (or
// profit); the last category that qualifies, else the first; -1 without a
// finite realisation.
func bruteClassify(e economics, profit bool, z []float64) int64 {
	if len(z) == 0 {
		return -1
	}
	n := float64(len(z))
	C := e.processing + e.miningOre - e.miningWaste
	key := int64(0)
	for k, c := range e.cats {
		v := e.recovery * c.price
		var incl, excl float64
		for _, x := range z {
			if profit {
				incl += (v*x - e.processing - e.miningOre) / n
				excl += -e.miningWaste / n
				continue
			}
			if x > c.cutoff {
				excl += math.Max(0, v*x-C) / n
			} else {
				incl += math.Max(0, C-v*x) / n
			}
		}
		if (profit && incl > excl) || (!profit && incl < excl) {
			key = int64(k)
		}
	}
	return key
}

// locationWiseResult is the result document of location-wise.
type locationWiseResult struct {
	Message string
	Target  struct {
		Reference, Name string
		SchemaID        string `json:"schema_id"`
		Attributes      []struct{ Reference, Name string }
	}
}

// TestEnsembleTasksOnHandMadeBlocks runs the three tasks on a 2 × 2 × 1
// grid whose four blocks are computed by hand: the worked example of
// docs/ensemble.md, a block without finite values, ties at a cutoff and a
// constant block.
func TestEnsembleTasksOnHandMadeBlocks(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	nan := math.NaN()
	reals := [][]float64{ // reals[r][cell]
		{1.5, nan, 2, 0},
		{1.5, nan, 2, 0},
		{1.5, nan, 3, 0},
		{0.5, nan, nan, 0},
	}
	spec := objecttest.GridSpec{Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}}
	id := h.put(b, "hand/grid.json", b.Grid("1.3.0", spec, b.Ensemble("sims", "k-sims", reals)))
	src := map[string]any{"object": h.url("hand/grid.json"), "attribute": "cell_attributes[?name=='sims']"}

	job, err := h.c.RunTask(h.ctx, org, "location-wise", map[string]any{
		"source": src, "target": map[string]any{"object": h.url("hand/grid.json")},
		"summary": true, "quantiles": []any{0.5}, "probability_above_cutoff": map[string]any{"cutoffs": []any{2}},
		"mean_above_cutoff": map[string]any{"cutoffs": []any{2.0}},
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res locationWiseResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	var names []string
	for _, a := range res.Target.Attributes {
		names = append(names, a.Name)
		assert.Equal(t, "cell_attributes[?name=='"+a.Name+"']", a.Reference)
	}
	assert.Equal(t, []string{"min", "max", "mean", "variance", "Quantile: 0.5", "Prob>2.0", "Mean>2.0"}, names)
	obj, blobs := h.latest(id)
	want := map[string][]float64{
		"min":           {0.5, nan, 2, 0},
		"max":           {1.5, nan, 3, 0},
		"mean":          {1.25, nan, 7.0 / 3, 0},
		"variance":      {0.1875, nan, 2.0 / 9, 0},
		"Quantile: 0.5": {1.5, nan, 2, 0},
		"Prob>2.0":      {0, nan, 1.0 / 3, 0}, // strictly greater: the two 2s are not above
		"Mean>2.0":      {nan, nan, 3, nan},
	}
	for name, w := range want {
		got := h.column(obj, blobs, "cell_attributes[?name=='"+name+"']")
		for i := range w {
			if math.IsNaN(w[i]) {
				assert.True(t, math.IsNaN(got[i]), "%s cell %d: %v", name, i, got[i])
			} else {
				assert.InDelta(t, w[i], got[i], 1e-15, "%s cell %d", name, i)
			}
		}
	}

	// Loss and profit: the worked example of docs/ensemble.md.
	econ := economics{processing: 10, miningWaste: 2, miningOre: 3, recovery: 0.9,
		cats: []category{{0, 0, "waste"}, {1, 10, "low grade"}, {2, 20, "ore"}}}
	for task, keys := range map[string][]int64{"loss-calculation": {1, -1, 2, 0}, "profit-calculation": {2, -1, 2, 0}} {
		params := econ.members()
		params["source"] = src
		params["target"] = map[string]any{"object": h.url("hand/grid.json"), "attribute": map[string]any{"operation": "create", "name": task}}
		job, err := h.c.RunTask(h.ctx, org, task, params)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
		var r struct {
			Message string
			Target  struct {
				Attribute struct{ Reference, Name string }
			}
		}
		require.NoError(t, json.Unmarshal(job.Results, &r))
		assert.NotEmpty(t, r.Message)
		assert.Equal(t, task, r.Target.Attribute.Name)
		obj, blobs := h.latest(id)
		a, err := obj.ResolveAttribute(r.Target.Attribute.Reference)
		require.NoError(t, err)
		cat, err := obj.ReadCategory(h.ctx, blobs, a)
		require.NoError(t, err)
		assert.Equal(t, keys, cat.Keys, task)
		assert.Equal(t, []bool{true, false, true, true}, cat.Valid, "the block without realisations has no category")
		assert.Equal(t, map[int64]string{0: "waste", 1: "low grade", 2: "ore"}, cat.Names)
		for i, k := range keys {
			assert.Equal(t, k, bruteClassify(econ, task == "profit-calculation", finiteValues(reals, i)), "the oracle agrees, cell %d", i)
		}
	}
}

// TestEnsembleTasksAfterSimulation simulates an ensemble with the
// conditional-turning-bands task, runs the three tasks on it and compares
// every written attribute with a brute-force pass over the stored ensemble.
func TestEnsembleTasksAfterSimulation(t *testing.T) {
	h := start(t, 2)
	c := newSimCase(t, h, [3]int{10, 8, 4})
	job, err := h.c.RunTask(h.ctx, org, "conditional-turning-bands", map[string]any{
		"source": h.url("sim/points.json"), "source_attribute": "locations.attributes[?name=='cu']",
		"target": h.url("sim/grid.json"), "distribution": h.url("sim/dist.json"), "variogram_model": h.url("sim/vario.json"),
		"realizations": 9, "number_of_lines": 60, "random_seed": 3,
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	obj, blobs := h.latest(c.gridID)
	a, err := obj.ResolveAttribute("simulation-results")
	require.NoError(t, err)
	cols, err := obj.ReadContinuous(h.ctx, blobs, a)
	require.NoError(t, err)
	require.Len(t, cols, 9)
	// Cutoffs inside the simulated range.
	all := slices.Concat(cols...)
	slices.Sort(all)
	c1, c2 := all[len(all)/2], all[len(all)*9/10]
	quantiles := []float64{0.1, 0.5, 0.9}

	// A separate target grid with as many cells receives the statistics.
	b := objecttest.NewBlobs()
	tid := h.put(b, "sim/stats.json", b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{4, 8, 10}, CellSize: [3]float64{1, 1, 1}}))
	job, err = h.c.RunTask(h.ctx, org, "location-wise", map[string]any{
		"source": map[string]any{"object": h.url("sim/grid.json"), "attribute": "cell_attributes[?name=='simulation-results']"},
		"target": map[string]any{"object": h.url("sim/stats.json")}, "summary": true, "quantiles": quantiles,
		"probability_above_cutoff": map[string]any{"cutoffs": []any{c1, c2}}, "mean_above_cutoff": map[string]any{"cutoffs": []any{c1, c2}},
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res locationWiseResult
	require.NoError(t, json.Unmarshal(job.Results, &res))
	require.Len(t, res.Target.Attributes, 4+3+2+2)
	want := bruteLocationWise(cols, quantiles, []float64{c1, c2}, []float64{c1, c2})
	tobj, tblobs := h.latest(tid)
	for _, attr := range res.Target.Attributes {
		w, ok := want[attr.Name]
		require.True(t, ok, "unexpected output %q", attr.Name)
		got := h.column(tobj, tblobs, attr.Reference)
		for i := range w {
			if math.IsNaN(w[i]) {
				require.True(t, math.IsNaN(got[i]), "%s cell %d: %v", attr.Name, i, got[i])
				continue
			}
			require.InDelta(t, w[i], got[i], 1e-12*math.Max(1, math.Abs(w[i])), "%s cell %d", attr.Name, i)
		}
	}

	econ := economics{processing: 2, miningWaste: 0.5, miningOre: 1, recovery: 0.85,
		cats: []category{{0, 0, "waste"}, {c1, 3, "low"}, {c2, 5, "high"}}}
	for _, task := range []string{"loss-calculation", "profit-calculation"} {
		params := econ.members()
		params["source"] = map[string]any{"object": h.url("sim/grid.json"), "attribute": "simulation-results"}
		params["target"] = map[string]any{"object": h.url("sim/grid.json"), "attribute": map[string]any{"operation": "create", "name": "class"}}
		job, err := h.c.RunTask(h.ctx, org, task, params)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
		obj, blobs := h.latest(c.gridID)
		a, err := obj.ResolveAttribute("cell_attributes[?name=='class']")
		require.NoError(t, err)
		cat, err := obj.ReadCategory(h.ctx, blobs, a)
		require.NoError(t, err)
		counts := map[int64]int{}
		for i, k := range cat.Keys {
			require.Equal(t, bruteClassify(econ, task == "profit-calculation", finiteValues(cols, i)), k, "%s cell %d", task, i)
			counts[k]++
		}
		assert.Greater(t, len(counts), 1, "%s: more than one category is used (%v)", task, counts)
	}
	// The second classification replaced the first one's attribute.
	obj, _ = h.latest(c.gridID)
	n := 0
	for _, a := range obj.Attributes("cell_attributes") {
		if a.Name == "class" {
			n++
		}
	}
	assert.Equal(t, 1, n)
}

// invalidParamNames returns the names of a validation problem's
// invalid-params.
func invalidParamNames(t *testing.T, p map[string]any) []string {
	t.Helper()
	list, ok := p["invalid-params"].([]any)
	require.True(t, ok, "%v", p)
	var out []string
	for _, x := range list {
		out = append(out, x.(map[string]any)["name"].(string))
	}
	return out
}

// TestEnsembleTasksRefuseBadRequests checks the client's refusals and the
// worker's own checks: each a 4xx naming the member, at submit; a
// corrupt ensemble fails the job with 422; the target keeps its version.
func TestEnsembleTasksRefuseBadRequests(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	reals := [][]float64{{1, 2, 3, 4}, {2, 3, 4, 5}}
	spec := objecttest.GridSpec{Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}}
	gid := h.put(b, "bad/grid.json", b.Grid("1.3.0", spec, b.Ensemble("sims", "k-sims", reals), b.Scalar("au", "k-au", []float64{1, 2, 3, 4})))
	h.put(b, "bad/big.json", b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{3, 2, 1}, CellSize: [3]float64{1, 1, 1}}))
	xyz, grade := sampleData(4, 1)
	h.put(b, "bad/points.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	before, err := h.c.GetObject(h.ctx, org, ws, gid, "")
	require.NoError(t, err)
	compute := "/compute/orgs/" + org + "/geostatistics/"
	src := map[string]any{"object": h.url("bad/grid.json"), "attribute": "sims"}
	lw := func(mod map[string]any) []byte {
		p := map[string]any{"source": src, "target": map[string]any{"object": h.url("bad/grid.json")}, "summary": true}
		for k, v := range mod {
			if v == nil {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		body, _ := json.Marshal(map[string]any{"parameters": p})
		return body
	}
	econ := economics{processing: 1, miningWaste: 1, miningOre: 1, recovery: 0.5, cats: []category{{0, 0, "waste"}, {2, 10, "ore"}}}
	cl := func(mod map[string]any) []byte {
		p := econ.members()
		p["source"] = src
		p["target"] = map[string]any{"object": h.url("bad/grid.json"), "attribute": map[string]any{"operation": "create", "name": "class"}}
		for k, v := range mod {
			if v == nil {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		body, _ := json.Marshal(map[string]any{"parameters": p})
		return body
	}
	cats := func(list ...map[string]any) []any {
		out := make([]any, len(list))
		for i, c := range list {
			out[i] = c
		}
		return out
	}
	cases := []struct {
		task  string
		body  []byte
		names []string
	}{
		{"location-wise", lw(map[string]any{"summary": nil}), []string{"parameters.summary", "parameters.quantiles", "parameters.probability_above_cutoff", "parameters.mean_above_cutoff"}},
		{"location-wise", lw(map[string]any{"summary": false, "quantiles": []any{}}), []string{"parameters.summary", "parameters.quantiles", "parameters.probability_above_cutoff", "parameters.mean_above_cutoff"}},
		{"location-wise", lw(map[string]any{"probability_above_cutoff": map[string]any{"cutoffs": []any{}}}), []string{"parameters.probability_above_cutoff.cutoffs"}},
		{"location-wise", lw(map[string]any{"mean_above_cutoff": map[string]any{}}), []string{"parameters.mean_above_cutoff.cutoffs"}},
		{"location-wise", lw(map[string]any{"quantiles": []any{0.5, 1.5}}), []string{"parameters.quantiles[1]"}},
		{"location-wise", lw(map[string]any{"quantiles": []any{0.5, 0.5}}), []string{"parameters.quantiles[1]"}},
		{"location-wise", lw(map[string]any{"quantiles": []any{0.5, nil}}), []string{"parameters.quantiles[1]"}},
		{"location-wise", lw(map[string]any{"mean_above_cutoff": map[string]any{"cutoffs": []any{1, 1.0}}}), []string{"parameters.mean_above_cutoff.cutoffs[1]"}},
		{"location-wise", lw(map[string]any{"target": map[string]any{"object": h.url("bad/grid.json"), "attribute": map[string]any{"operation": "create", "name": "x"}}}), []string{"parameters.target.attribute"}},
		{"location-wise", lw(map[string]any{"target": map[string]any{"object": "grid"}}), []string{"parameters.target.object"}},
		{"location-wise", lw(map[string]any{"summary": "yes"}), []string{"parameters.summary"}},
		{"loss-calculation", cl(map[string]any{"processing_cost": -1}), []string{"parameters.processing_cost"}},
		{"loss-calculation", cl(map[string]any{"mining_waste_cost": -0.5, "mining_ore_cost": nil}), []string{"parameters.mining_waste_cost", "parameters.mining_ore_cost"}},
		{"profit-calculation", cl(map[string]any{"metal_recovery_fraction": 1.5}), []string{"parameters.metal_recovery_fraction"}},
		{"profit-calculation", cl(map[string]any{"material_categories": []any{}}), []string{"parameters.material_categories"}},
		{"profit-calculation", cl(map[string]any{"material_categories": nil}), []string{"parameters.material_categories"}},
		{"loss-calculation", cl(map[string]any{"material_categories": cats(map[string]any{"cutoff_grade": -1, "metal_price": 0, "label": "w"})}), []string{"parameters.material_categories[0].cutoff_grade"}},
		{"loss-calculation", cl(map[string]any{"material_categories": cats(map[string]any{"cutoff_grade": 0, "metal_price": -3, "label": "w"})}), []string{"parameters.material_categories[0].metal_price"}},
		{"loss-calculation", cl(map[string]any{"material_categories": cats(map[string]any{"cutoff_grade": 2, "label": "a"}, map[string]any{"cutoff_grade": 1, "label": "b"})}), []string{"parameters.material_categories[1].cutoff_grade"}},
		{"profit-calculation", cl(map[string]any{"material_categories": cats(map[string]any{"cutoff_grade": 0}, map[string]any{"cutoff_grade": 1})}), []string{"parameters.material_categories[1].label"}},
		{"profit-calculation", cl(map[string]any{"material_categories": []any{nil}}), []string{"parameters.material_categories[0]"}},
		{"loss-calculation", cl(map[string]any{"target": map[string]any{"object": h.url("bad/grid.json"), "attribute": map[string]any{"operation": "update", "reference": "au"}}}), []string{"target.attribute.reference"}},
		{"loss-calculation", cl(map[string]any{"target": map[string]any{"object": h.url("bad/grid.json"), "attribute": map[string]any{"operation": "update", "reference": "nope"}}}), []string{"target.attribute.reference"}},
		{"location-wise", lw(map[string]any{"source": map[string]any{"object": h.url("bad/points.json"), "attribute": "au"}}), []string{"source"}},
		{"location-wise", lw(map[string]any{"source": map[string]any{"object": h.url("bad/grid.json"), "attribute": "nope"}}), []string{"source.attribute"}},
		{"location-wise", lw(map[string]any{"target": map[string]any{"object": h.url("bad/big.json")}}), []string{"target"}},
		{"location-wise", lw(map[string]any{"target": map[string]any{"object": h.url("bad/points.json")}}), []string{"target"}},
		{"profit-calculation", cl(map[string]any{"target": map[string]any{"object": h.url("bad/big.json"), "attribute": map[string]any{"operation": "create", "name": "c"}}}), []string{"target"}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s", i, c.task), func(t *testing.T) {
			p := problem(t, h, compute+c.task, c.body, http.StatusUnprocessableEntity, "/validation")
			assert.Equal(t, c.names, invalidParamNames(t, p), "%s", c.body)
		})
	}
	// A corrupt ensemble blob (its page data overwritten, the footer
	// intact): the job fails with 422 invalid-data naming the source, and
	// the target keeps its version.
	data, _, err := objects.EncodeFloat64(reals, objects.EnsembleColumnNames("sims", 2), nil)
	require.NoError(t, err)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	md := f.Metadata().RowGroups[0].Columns[1].MetaData
	for k := md.DataPageOffset; k < md.DataPageOffset+md.TotalCompressedSize; k++ {
		data[k] = 0xff
	}
	d := sha256.Sum256(data)
	key := hex.EncodeToString(d[:])
	b.Put(key, data)
	ens := b.Ensemble("broken", "k-broken", reals)
	ens["values"] = objecttest.Element(key, 4, 2, "float64")
	h.put(b, "bad/broken.json", b.Grid("1.3.0", spec, ens))
	for _, task := range []string{"location-wise", "loss-calculation"} {
		var body []byte
		broken := map[string]any{"object": h.url("bad/broken.json"), "attribute": "broken"}
		if task == "location-wise" {
			body = lw(map[string]any{"source": broken})
		} else {
			body = cl(map[string]any{"source": broken})
		}
		p := runFails(t, h, task, body)
		invalidData(t, p, "bad/broken.json", "cell_attributes[0].values")
		assert.Equal(t, "source", p["field"])
	}
	after, err := h.c.GetObject(h.ctx, org, ws, gid, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, after.VersionID, "the target is untouched by the failed and refused jobs")
}

// TestEnsembleTasksEstimates checks the estimates at submit: a job whose
// tile of realisations and outputs exceed the worker's memory limit, or
// whose outputs exceed the free disk, is refused before it exists; the
// recorded memory of an admitted job covers one tile of the ensemble.
func TestEnsembleTasksEstimates(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	const R, cells = 20, 40 * 40 * 10
	reals := make([][]float64, R)
	for r := range reals {
		reals[r] = make([]float64, cells)
		for i := range reals[r] {
			reals[r][i] = float64((i*7+r*3)%11) / 3
		}
	}
	spec := objecttest.GridSpec{Size: [3]int{40, 40, 10}, CellSize: [3]float64{1, 1, 1}}
	h.put(b, "est/grid.json", b.Grid("1.3.0", spec, b.Ensemble("sims", "k-sims", reals)))
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": map[string]any{"object": h.url("est/grid.json"), "attribute": "sims"},
		"target": map[string]any{"object": h.url("est/grid.json")}, "summary": true}})
	econ := economics{processing: 1, miningWaste: 1, miningOre: 1, recovery: 0.5, cats: []category{{0, 0, "waste"}, {2, 10, "ore"}}}
	cp := econ.members()
	cp["source"] = map[string]any{"object": h.url("est/grid.json"), "attribute": "sims"}
	cp["target"] = map[string]any{"object": h.url("est/grid.json"), "attribute": map[string]any{"operation": "create", "name": "class"}}
	clBody, _ := json.Marshal(map[string]any{"parameters": cp})
	compute := "/compute/orgs/" + org + "/geostatistics/"

	h.env.MaxMemory = 1 << 20 // one tile alone is 40 × 40 × 10 × 20 × 8 bytes = 2.4 MiB
	for task, b := range map[string][]byte{"location-wise": body, "loss-calculation": clBody} {
		p := problem(t, h, compute+task, b, http.StatusUnprocessableEntity, "/validation")
		assert.Contains(t, p["detail"], "GiB of memory", task)
	}
	h.env.MaxMemory = 0
	h.env.FreeDisk = func() (int64, error) { return 1000, nil }
	for task, b := range map[string][]byte{"location-wise": body, "profit-calculation": clBody} {
		p := problem(t, h, compute+task, b, http.StatusUnprocessableEntity, "/insufficient-storage")
		assert.Contains(t, p["detail"], "disk", task)
	}
	assert.Empty(t, h.jobs.List(org), "no job was created")
	h.env.FreeDisk = nil

	job, err := h.c.RunTask(h.ctx, org, "location-wise", map[string]any{
		"source": map[string]any{"object": h.url("est/grid.json"), "attribute": "sims"},
		"target": map[string]any{"object": h.url("est/grid.json")}, "summary": true})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	recs := h.jobs.List(org)
	require.Len(t, recs, 1)
	assert.GreaterOrEqual(t, recs[0].Memory, int64(cells*R*8+4*cells*8), "one tile of the ensemble and the four summary outputs")
}

// TestEnsembleTasksOnMaskedGrid runs the tasks on a masked grid, whose
// attributes have one value per active cell.
func TestEnsembleTasksOnMaskedGrid(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	reals := [][]float64{{1, 4, 0.5}, {2, 5, 0.5}, {3, 9, 0.5}}
	spec := objecttest.GridSpec{Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}}
	id := h.put(b, "mask/grid.json", b.MaskedGrid("1.3.0", spec, []bool{true, false, true, true}, b.Ensemble("sims", "k-sims", reals)))
	src := map[string]any{"object": h.url("mask/grid.json"), "attribute": "sims"}
	job, err := h.c.RunTask(h.ctx, org, "location-wise", map[string]any{"source": src, "target": map[string]any{"object": h.url("mask/grid.json")},
		"quantiles": []any{0.25}, "probability_above_cutoff": map[string]any{"cutoffs": []any{3}}})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	obj, blobs := h.latest(id)
	assert.Equal(t, []float64{1.5, 4.5, 0.5}, h.column(obj, blobs, "Quantile: 0.25"), "position 0.25 × 2 = 0.5 between the two smallest")
	assert.Equal(t, []float64{0, 1, 0}, h.column(obj, blobs, "Prob>3.0"), "the 3 of the first cell is not above 3")

	econ := economics{processing: 10, miningWaste: 2, miningOre: 3, recovery: 1, cats: []category{{0, 0, "waste"}, {3, 4, "ore"}}}
	params := econ.members()
	params["source"] = src
	params["target"] = map[string]any{"object": h.url("mask/grid.json"), "attribute": map[string]any{"operation": "create", "name": "class"}}
	job, err = h.c.RunTask(h.ctx, org, "profit-calculation", params)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	obj, blobs = h.latest(id)
	a, err := obj.ResolveAttribute("class")
	require.NoError(t, err)
	cat, err := obj.ReadCategory(h.ctx, blobs, a)
	require.NoError(t, err)
	// Profit: ore when 4·mean > 13: means 2, 6, 0.5.
	assert.Equal(t, []int64{0, 1, 0}, cat.Keys)
}
