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

// Call is one compute-task request on the demo workspace.
type Call struct {
	Title string
	// Topic is "geostat" (the seed's shapes) or "geostatistics".
	Topic, Task string
	Body        []byte
}

// Path is the route the call is posted to.
func (c Call) Path() string { return "/compute/orgs/" + Org + "/" + c.Topic + "/" + c.Task }

// Commands returns ready-to-paste shell commands that run every compute
// task on the demo workspace of a worker at base, with token as the shell
// expression of the bearer token. A small function, run, posts a task with
// curl and, when the answer is a 303 to a job, polls the job status until
// it finishes and prints the results, so that the commands can be pasted
// at once. run keeps its answers in a temporary file of its own (mktemp),
// gives up with a message when the worker stops answering (10 failed polls
// in a row, or a request without an answer for 5 minutes) or a job is not
// done after an hour, and prints the report page's view URL (links.view)
// when a result has one.
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

// runFunction is the shell helper of Commands (POSIX sh with local, as in
// bash, dash and zsh).
const runFunction = `run() {  # run PATH BODY: submit a task, wait for its job, print the result
  local out loc view fails=0 polls=0
  out=$(mktemp) || return 1
  loc=$(curl -sS --max-time 300 -o "$out" -D - -X POST "$GEOSTAT$1" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -d "$2" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
  if [ -n "$loc" ]; then
    while :; do
      if curl -sSf --max-time 30 -o "$out" "$GEOSTAT$loc" -H "Authorization: Bearer $TOKEN"; then
        fails=0
        grep -qE '"status": *"(succeeded|failed|cancelled)"' "$out" && break
      else
        fails=$((fails + 1))
        if [ "$fails" -ge 10 ]; then
          echo "run: the worker at $GEOSTAT stopped answering; giving up on $GEOSTAT$loc" >&2; rm -f "$out"; return 1
        fi
      fi
      polls=$((polls + 1))
      if [ "$polls" -ge 3600 ]; then
        echo "run: the job is not done after an hour; giving up (follow it with: curl -H \"Authorization: Bearer \$TOKEN\" $GEOSTAT$loc)" >&2; rm -f "$out"; return 1
      fi
      sleep 1
    done
    curl -sS --max-time 30 -o "$out" "$GEOSTAT${loc%/status}" -H "Authorization: Bearer $TOKEN"
  fi
  cat "$out"; echo
  view=$(sed -n 's/.*"view": *"\([^"]*\)".*/\1/p' "$out" | head -n 1)
  if [ -n "$view" ]; then printf '%s\n\n' "The report page, to open in a browser (the link works for an hour): $view"; fi
  rm -f "$out"
}
`

// Calls returns the demo's task requests for a worker at base, in an order
// that works (the report follows the simulation it validates), ending with
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
		out[i] = Call{Title: c.title, Topic: c.topic, Task: c.task, Body: body}
	}
	return out
}
