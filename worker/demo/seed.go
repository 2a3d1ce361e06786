package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/worker/store"
)

// Org and Workspace are the ids of the demo organisation and workspace.
const (
	Org       = "00000000-0000-4000-8000-00000000d001"
	Workspace = "00000000-0000-4000-8000-00000000d002"
)

// Case is the synthetic case the demo is built from: 1,500 drill-hole
// samples under a 60 × 60 × 12 grid of 1000 × 1000 × 200 m.
func Case() (*synthetic.Case, error) {
	s := synthetic.Simulation(synthetic.Small, synthetic.DefaultSeed)
	s.Samples = 1500
	s.GridSize = [3]int{60, 60, 12}
	return synthetic.New(s)
}

// Seed stores the demo set in a workspace: every blob, then every object by
// path. An object that already exists at its path is kept as it is (with
// whatever earlier demo runs wrote into it), so seeding again reuses the
// workspace. It returns the number of objects it stored (0 when the whole
// demo was there already).
func Seed(ctx context.Context, st store.Store, ws store.Workspace, by store.User, set *Set) (int, error) {
	var missing []Object
	for _, o := range set.Objects {
		_, err := st.GetObject(ctx, ws, store.Ref{Path: o.Path})
		if err == nil {
			continue
		}
		if e := store.AsError(err); e == nil || e.Status != 404 {
			return 0, fmt.Errorf("demo: reading %s: %w", o.Path, err)
		}
		missing = append(missing, o)
	}
	if len(missing) == 0 {
		return 0, nil
	}
	for _, k := range set.Keys {
		if err := st.PutBlob(ctx, ws, k, bytes.NewReader(set.Blobs[k])); err != nil {
			return 0, fmt.Errorf("demo: storing blob %s: %w", k, err)
		}
	}
	for i, o := range missing {
		if _, err := st.PutObject(ctx, ws, store.PutRequest{Path: o.Path, Object: o.Doc, By: by}); err != nil {
			return i, fmt.Errorf("demo: storing %s: %w", o.Path, err)
		}
	}
	return len(missing), nil
}

// The workflow's outputs: the declustering weights (an attribute of the
// samples) and the declustered distribution object.
const (
	WorkflowWeights             = "cu_declus_w"
	DeclusteredDistributionPath = "demo/grade-distribution-declustered.json"
)

// The variogram-model task's outputs: the experimental variograms and the
// fitted model.
const (
	ExperimentalVariogramPath = "demo/grade-experimental-variogram.json"
	FittedVariogramPath       = "demo/grade-variogram-fitted.json"
)

// Call is one compute-task request on the demo workspace.
type Call struct {
	Title string
	// Topic is "geostat" (the seed's shapes) or "geostatistics".
	Topic, Task string
	Body        []byte
	// View is true when the task stores a validation report: its result
	// has links.view, which run prints as a line starting with ViewLine.
	View bool
}

// Path is the route the call is posted to.
func (c Call) Path() string { return "/compute/orgs/" + Org + "/" + c.Topic + "/" + c.Task }

// Commands returns ready-to-paste shell commands that run every compute
// task on the demo workspace of a worker at base, with token as the shell
// expression of the bearer token. A small function, run, posts a task with
// curl and, when the answer is a 303 to a job, polls the job status until
// it finishes and prints the results, so that the commands can be pasted
// at once. run keeps its answers in temporary files of its own (mktemp),
// gives up with a message when the worker stops answering (10 failed polls
// in a row, or a request without an answer for 5 minutes) or a job is not
// done after an hour, prints the report page's view URL (links.view) when
// a result has one, and returns non-zero (after a message) when the task
// was refused or its job did not succeed.
func Commands(base, token string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "export GEOSTAT=%s TOKEN=%s\n", base, token)
	b.WriteString(runFunction)
	for _, c := range Calls(base) {
		fmt.Fprintf(&b, "\n# %s\n", c.Title)
		// Single-quote the body for the shell: quotes inside become '\'' and
		// the base URL becomes "$GEOSTAT".
		quoted := strings.ReplaceAll(string(c.Body), "'", `'\''`)
		quoted = strings.ReplaceAll(quoted, base, `'"$GEOSTAT"'`)
		fmt.Fprintf(&b, "run %s '%s'\n", c.Path(), quoted)
	}
	return b.String()
}

// ViewLine is how the line run prints for a result with a report page
// (links.view) begins; the URL follows it.
const ViewLine = "The report page, to open in a browser (the link works for an hour): "

// Footer is the text printed after the commands: which of them print a
// report page's URL (the calls with View set), and how to open it.
func Footer() string {
	var views []string
	for _, c := range Calls("") {
		if c.View {
			views = append(views, c.Topic+"/"+c.Task)
		}
	}
	return fmt.Sprintf("%d of these commands store a validation report (%s) and print a line %q:\n"+
		"open that URL in a browser (it needs no token and works for an hour; it is links.view of the job's results).\n",
		len(views), strings.Join(views, ", "), strings.TrimSuffix(ViewLine, ": ")+": URL")
}

// runFunction is the shell helper of Commands (POSIX sh with local, as in
// bash, dash and zsh; sleep with a fraction of a second, as GNU, BusyBox
// and BSD sleep take it). It polls a job every 0.2 s for its first 5 s,
// then every second.
const runFunction = `run() {  # run PATH BODY: submit a task, wait for its job, print the result
  local out hdr code loc view status start fails=0 polls=0
  out=$(mktemp) || return 1
  hdr=$(mktemp) || { rm -f "$out"; return 1; }
  code=$(curl -sS --max-time 300 -o "$out" -D "$hdr" -w '%{http_code}' -X POST "$GEOSTAT$1" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "$2")
  loc=$(tr -d '\r' < "$hdr" | sed -n 's/^[Ll]ocation: //p')
  rm -f "$hdr"
  status=succeeded
  if [ "$code" = 303 ] && [ -n "$loc" ]; then
    start=$(date +%s)
    while :; do
      if curl -sSf --max-time 30 -o "$out" "$GEOSTAT$loc" -H "Authorization: Bearer $TOKEN"; then
        fails=0
        status=$(sed -nE 's/.*"status": *"(succeeded|failed|cancelled)".*/\1/p' "$out" | head -n 1)
        [ -n "$status" ] && break
      else
        fails=$((fails + 1))
        if [ "$fails" -ge 10 ]; then
          echo "run: the worker at $GEOSTAT stopped answering; giving up on $GEOSTAT$loc" >&2; rm -f "$out"; return 1
        fi
      fi
      if [ $(($(date +%s) - start)) -ge 3600 ]; then
        echo "run: the job is not done after an hour; giving up (follow it with: curl -H \"Authorization: Bearer \$TOKEN\" $GEOSTAT$loc)" >&2; rm -f "$out"; return 1
      fi
      polls=$((polls + 1))
      if [ "$polls" -le 25 ]; then sleep 0.2; else sleep 1; fi
    done
    curl -sS --max-time 30 -o "$out" "$GEOSTAT${loc%/status}" -H "Authorization: Bearer $TOKEN"
  elif [ "$code" != 200 ]; then
    status="refused (HTTP $code)"
  fi
  cat "$out"; echo
  view=$(sed -n 's/.*"view": *"\([^"]*\)".*/\1/p' "$out" | head -n 1)
  if [ -n "$view" ]; then printf '%s\n\n' "` + ViewLine + `$view"; fi
  rm -f "$out"
  if [ "$status" != succeeded ]; then echo "run: $1: $status" >&2; return 1; fi
}
`

// Calls returns the demo's task requests for a worker at base, at least one
// for every task of both topics, in an order that works (the report, the
// location-wise statistics and the loss and profit classifications follow
// the simulation whose ensemble they read), ending with
// the workflow from raw samples to a validated simulation: declustering →
// continuous-distribution weighted by the declustering weights →
// normal-score → conditional-turning-bands with that distribution →
// simulation-report weighted by the same weights.
func Calls(base string) []Call {
	url := func(p string) string {
		return base + "/geoscience-object/orgs/" + Org + "/workspaces/" + Workspace + "/objects/path/" + p
	}
	ell := map[string]any{"ellipsoid_ranges": map[string]any{"major": 300, "semi_major": 200, "minor": 60},
		"rotation": map[string]any{"dip_azimuth": 30, "dip": 20, "pitch": 10}}
	legacy := func(p, element string) map[string]any {
		r := map[string]any{"type": "geoscience-object-reference", "object_reference": url(p)}
		if element != "" {
			r["object_element"] = []any{map[string]any{"type": "element", "path": element}}
		}
		return r
	}
	orebodyEnsemble := map[string]any{"object": url(MaskedGridPath), "attribute": "cell_attributes[?name=='simulation-results']"}
	// economics adds the demo's material categories and costs to m.
	economics := func(m map[string]any) map[string]any {
		m["material_categories"] = []any{
			map[string]any{"cutoff_grade": 0.0, "metal_price": 0.0, "label": "waste"},
			map[string]any{"cutoff_grade": 0.5, "metal_price": 20.0, "label": "low grade"},
			map[string]any{"cutoff_grade": 1.0, "metal_price": 25.0, "label": "ore"}}
		m["processing_cost"], m["mining_waste_cost"], m["mining_ore_cost"], m["metal_recovery_fraction"] = 10.0, 2.0, 3.0, 0.9
		return m
	}
	type call struct {
		title, topic, task string
		body               any
	}
	calls := []call{
		{"KNN estimate onto the block grid (seed shape, synchronous)", "geostat", "knn", map[string]any{
			"source":       legacy(PointsPath, "/locations/attributes/@name=cu"),
			"target":       legacy(GridPath, "/cell_attributes/@name=cu_knn"),
			"neighborhood": map[string]any{"max-samples": 16, "anisotropy": ell}}},
		{"KNN estimate from the intervals onto the orebody grid (current shape)", "geostatistics", "knn", map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": url(IntervalsPath), "attribute": "attributes[?name=='cu']"},
			"target":       map[string]any{"object": url(MaskedGridPath), "attribute": map[string]any{"operation": "create", "name": "cu_knn"}},
			"neighborhood": map[string]any{"ellipsoid": ell, "max_samples": 16, "min_samples": 4}}}},
		{"Ordinary block kriging with diagnostics", "geostatistics", "kriging", map[string]any{"parameters": map[string]any{
			"source":               map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='cu']"},
			"target":               map[string]any{"object": url(GridPath), "attribute": map[string]any{"operation": "create", "name": "cu_ok"}},
			"variogram":            url(VariogramPath),
			"neighborhood":         map[string]any{"ellipsoid": ell, "max_samples": 32},
			"kriging_method":       map[string]any{"type": "ordinary"},
			"block_discretisation": map[string]any{"nx": 2, "ny": 2, "nz": 2},
			"outputs":              []string{"variance", "samples", "slope", "efficiency"}}}},
		{"Ordinary kriging into the demo's block model (a new column cu_ok, a new model version)", "geostatistics", "kriging", map[string]any{"parameters": map[string]any{
			"source":         map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='cu']"},
			"target":         map[string]any{"object": url(BlockModelPath), "attribute": map[string]any{"operation": "create", "name": "cu_ok"}},
			"variogram":      url(VariogramPath),
			"neighborhood":   map[string]any{"ellipsoid": ell, "max_samples": 32},
			"kriging_method": map[string]any{"type": "ordinary"}}}},
		{"Conditional turning-bands simulation, 10 realisations (seed shape)", "geostat", "conditional-tbsim", map[string]any{
			"source": legacy(PointsPath, "/locations/attributes/@name=cu"), "target": legacy(GridPath, "/cell_attributes/@name=cu_sims"),
			"distribution": legacy(DistributionPath, ""), "variogram_model": legacy(VariogramPath, ""),
			"realizations": 10, "number_of_lines": 500, "random_seed": 38239342, "block_discretization": map[string]any{"nx": 2, "ny": 2, "nz": 1}}},
		{"Conditional turning bands on the orebody, with the Gaussian results (current shape)", "geostatistics", "conditional-turning-bands", map[string]any{"parameters": map[string]any{
			"source": url(PointsPath), "source_attribute": "locations.attributes[?name=='cu']", "target": url(MaskedGridPath),
			"distribution": url(DistributionPath), "variogram_model": url(VariogramPath), "realizations": 5,
			"block_discretization": map[string]any{"nx": 2, "ny": 2, "nz": 2}, "save_gaussian_results": true}}},
		{"Validation report of the simulation above (current shape)", "geostatistics", "simulation-report", map[string]any{"parameters": map[string]any{
			"simulation_source": url(PointsPath), "source_attribute": "locations.attributes[?name=='cu']", "simulation_target": url(MaskedGridPath),
			"block_simulations": "cell_attributes[?name=='simulation-results']", "block_simulations_normal_score": "cell_attributes[?name=='simulation-results_normal_score']",
			"point_simulations": "cell_attributes[?name=='simulation-results_point']", "point_simulations_normal_score": "cell_attributes[?name=='simulation-results_point_normal_score']",
			"variogram_model": url(VariogramPath), "block_discretization": map[string]any{"nx": 2, "ny": 2, "nz": 2}, "number_of_simulations": 5,
			"report_context": map[string]any{"title": "Demo orebody, Cu", "details": []any{map[string]any{"label": "Project", "value": "geostat demo"}}}}}},
		{"Simulate and report in one go (seed shape)", "geostat", "simulation-report", map[string]any{
			"simulation_parameters": map[string]any{"source": legacy(PointsPath, "/locations/attributes/@name=cu"), "target": legacy(GridPath, "/cell_attributes/@name=cu_report_sims"),
				"distribution": legacy(DistributionPath, ""), "variogram_model": legacy(VariogramPath, ""), "realisations": 5},
			"variogram_reproduction": true, "target": "reports/demo-validation.html"}},
		{"Break ties with local means (current shape)", "geostatistics", "break-ties", map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='cu']"},
			"target":       map[string]any{"object": url(PointsPath), "attribute": map[string]any{"operation": "create", "name": "cu_despiked"}},
			"neighborhood": map[string]any{"ellipsoid": ell, "max_samples": 8}, "seed": 38239342}}},
		{"Break ties randomly (seed shape)", "geostat", "break-ties", map[string]any{
			"source": legacy(PointsPath, "/locations/attributes/@name=cu"), "target": legacy(PointsPath, "/locations/attributes/@name=cu_random_bt"), "random_seed": 7}},
		{"Inverse-distance estimate onto the block grid, power 2 (current shape)", "geostatistics", "idw", map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='cu']", "filter": nil},
			"target":       map[string]any{"object": url(GridPath), "attribute": map[string]any{"operation": "create", "name": "cu_idw"}, "filter": nil},
			"neighborhood": map[string]any{"ellipsoid": ell, "max_samples": 16, "min_samples": 4}, "power": 2.0}}},

		// The variogram of the normal scores, fitted.
		{"Variogram model: experimental normal-score variograms along strike, across it and down the holes, two spherical structures fitted to them", "geostatistics", "variogram-model", map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='cu']"},
			"distribution": url(DistributionPath),
			"directions": []any{
				map[string]any{"azimuth": 30.0, "dip": 0.0, "azimuth_tolerance": 22.5, "dip_tolerance": 10.0, "bandheight": 20.0},
				map[string]any{"azimuth": 120.0, "dip": 0.0, "azimuth_tolerance": 22.5, "dip_tolerance": 10.0, "bandheight": 20.0},
				map[string]any{"azimuth": 0.0, "dip": 90.0, "dip_tolerance": 10.0}},
			"lags": map[string]any{"lag_distance": 25.0, "number_of_lags": 16},
			"model": map[string]any{"structures": []any{map[string]any{"variogram_type": "spherical"}, map[string]any{"variogram_type": "spherical"}},
				"nugget": true, "anisotropy": map[string]any{"type": "given", "major": 0, "semi_major": 1, "minor": 2}},
			"target": map[string]any{
				"experimental_variogram": map[string]any{"reference": url(ExperimentalVariogramPath), "overwrite": true},
				"variogram":              map[string]any{"reference": url(FittedVariogramPath), "overwrite": true}}}}},

		// The outputs of the orebody simulation above (its ensemble
		// simulation-results on the orebody grid).
		{"Location-wise statistics of the orebody simulation: summary, P10, P50, P90, probability and mean above 0.5 and 1.0 % Cu", "geostatistics", "location-wise", map[string]any{"parameters": map[string]any{
			"source": orebodyEnsemble, "target": map[string]any{"object": url(MaskedGridPath)},
			"summary": true, "quantiles": []any{0.1, 0.5, 0.9},
			"probability_above_cutoff": map[string]any{"cutoffs": []any{0.5, 1.0}},
			"mean_above_cutoff":        map[string]any{"cutoffs": []any{0.5, 1.0}}}}},
		{"Loss calculation: each orebody block classified as waste, low grade or ore by the expected loss of its realisations", "geostatistics", "loss-calculation", map[string]any{"parameters": economics(map[string]any{
			"source": orebodyEnsemble,
			"target": map[string]any{"object": url(MaskedGridPath), "attribute": map[string]any{"operation": "create", "name": "cu_loss_class"}}})}},
		{"Profit calculation: the same classification by the expected profit", "geostatistics", "profit-calculation", map[string]any{"parameters": economics(map[string]any{
			"source": orebodyEnsemble,
			"target": map[string]any{"object": url(MaskedGridPath), "attribute": map[string]any{"operation": "create", "name": "cu_profit_class"}}})}},
		{"Conditional simulation workflow in one job (consim): ties broken, distribution, 5 realisations on the block grid, statistics, loss classification and validation report", "geostatistics", "consim", map[string]any{"parameters": map[string]any{
			"source_object": url(PointsPath), "source_attribute": "locations.attributes[?name=='cu']", "target_object": url(GridPath),
			"variogram_model": url(VariogramPath), "neighborhood": map[string]any{"ellipsoid": ell, "max_samples": 16},
			"block_discretization": map[string]any{"nx": 2, "ny": 2, "nz": 1},
			"distribution":         map[string]any{"tail_extrapolation": map[string]any{"upper": map[string]any{"power": 0.5, "max": 30.0}, "lower": map[string]any{"power": 1.0, "min": 0.0}}},
			"number_of_lines":      200, "number_of_simulations": 5, "random_seed": 38239342, "number_of_simulations_to_save": 2,
			"probability_above_cutoff": []any{0.5, 1.0},
			"loss_calculation":         economics(map[string]any{"target_attribute": map[string]any{"operation": "create", "name": "cu_consim_loss_class"}}),
			"perform_validation":       true,
			"report_context":           map[string]any{"title": "Demo block grid, Cu (consim)", "details": []any{map[string]any{"label": "Project", "value": "geostat demo"}}}}}},

		// The workflow from raw samples to a validated simulation, each
		// task reading what the one before wrote.
		{"Workflow 1/5: declustering weights of the samples (KNN over the block grid's cells)", "geostatistics", "declustering", map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": url(PointsPath)},
			"grid":         map[string]any{"object": url(GridPath)},
			"target":       map[string]any{"object": url(PointsPath), "attribute": map[string]any{"operation": "create", "name": WorkflowWeights}},
			"neighborhood": map[string]any{"ellipsoid": ell, "max_samples": 8}, "power": nil}}},
		{"Workflow 2/5: the declustered distribution of cu, weighted by those weights, with power-model tails", "geostatistics", "continuous-distribution", map[string]any{"parameters": map[string]any{
			"source":             map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='cu']"},
			"weights":            map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='" + WorkflowWeights + "']"},
			"tail_extrapolation": map[string]any{"upper": map[string]any{"power": 0.5, "max": 30.0}, "lower": map[string]any{"power": 1.0, "min": 0.0}},
			"target":             map[string]any{"reference": url(DeclusteredDistributionPath), "overwrite": true, "description": "Declustered Cu distribution", "tags": map[string]any{}}}}},
		{"Workflow 3/5: normal scores of cu through the declustered distribution", "geostatistics", "normal-score", map[string]any{"parameters": map[string]any{
			"method":       "forward",
			"source":       map[string]any{"object": url(PointsPath), "attribute": "locations.attributes[?name=='cu']"},
			"target":       map[string]any{"object": url(PointsPath), "attribute": map[string]any{"operation": "create", "name": "cu_ns"}},
			"distribution": url(DeclusteredDistributionPath)}}},
		{"Workflow 4/5: conditional simulation of the orebody back-transformed with the declustered distribution", "geostatistics", "conditional-turning-bands", map[string]any{"parameters": map[string]any{
			"source": url(PointsPath), "source_attribute": "locations.attributes[?name=='cu']", "target": url(MaskedGridPath),
			"distribution": url(DeclusteredDistributionPath), "variogram_model": url(VariogramPath), "realizations": 5,
			"block_discretization": map[string]any{"nx": 2, "ny": 2, "nz": 2}, "save_gaussian_results": true}}},
		{"Workflow 5/5: validation report of that simulation against the declustered data", "geostatistics", "simulation-report", map[string]any{"parameters": map[string]any{
			"simulation_source": url(PointsPath), "source_attribute": "locations.attributes[?name=='cu']", "simulation_target": url(MaskedGridPath),
			"block_simulations": "cell_attributes[?name=='simulation-results']", "block_simulations_normal_score": "cell_attributes[?name=='simulation-results_normal_score']",
			"point_simulations": "cell_attributes[?name=='simulation-results_point']", "point_simulations_normal_score": "cell_attributes[?name=='simulation-results_point_normal_score']",
			"variogram_model": url(VariogramPath), "block_discretization": map[string]any{"nx": 2, "ny": 2, "nz": 2}, "number_of_simulations": 5,
			"distribution":   map[string]any{"weights": "locations.attributes[?name=='" + WorkflowWeights + "']"},
			"report_context": map[string]any{"title": "Demo orebody, Cu, declustered", "details": []any{map[string]any{"label": "Workflow", "value": "declustering → distribution → normal score → simulation"}}}}}},
	}
	out := make([]Call, len(calls))
	for i, c := range calls {
		body, err := json.Marshal(c.body)
		if err != nil {
			panic("demo: " + err.Error())
		}
		out[i] = Call{Title: c.title, Topic: c.topic, Task: c.task, Body: body, View: storesReport(c.task, c.body)}
	}
	return out
}

// storesReport tells whether a demo call stores a validation report, so
// that its result has links.view: simulation-report always does, consim
// when its parameters ask for perform_validation.
func storesReport(task string, body any) bool {
	switch task {
	case "simulation-report":
		return true
	case "consim":
		p, _ := body.(map[string]any)["parameters"].(map[string]any)
		v, _ := p["perform_validation"].(bool)
		return v
	}
	return false
}
