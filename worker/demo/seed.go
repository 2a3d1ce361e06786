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
// path. It fails when an object already exists there (seed an empty data
// directory).
func Seed(ctx context.Context, st store.Store, ws store.Workspace, by store.User, set *Set) error {
	for _, k := range set.Keys {
		if err := st.PutBlob(ctx, ws, k, bytes.NewReader(set.Blobs[k])); err != nil {
			return fmt.Errorf("demo: storing blob %s: %w", k, err)
		}
	}
	for _, o := range set.Objects {
		if _, err := st.GetObject(ctx, ws, store.Ref{Path: o.Path}); err == nil {
			return fmt.Errorf("demo: %s already exists: -demo seeds an empty data directory", o.Path)
		}
		if _, err := st.PutObject(ctx, ws, store.PutRequest{Path: o.Path, Object: o.Doc, By: by}); err != nil {
			return fmt.Errorf("demo: storing %s: %w", o.Path, err)
		}
	}
	return nil
}

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
// at once.
func Commands(base, token string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "export GEOSTAT=%s TOKEN=%s\n", base, token)
	b.WriteString(`run() {  # run PATH BODY: submit a task, wait for its job, print the result
  local loc
  loc=$(curl -s -o /tmp/geostat-answer -D - -X POST "$GEOSTAT$1" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -d "$2" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
  if [ -z "$loc" ]; then cat /tmp/geostat-answer; echo; return; fi
  until curl -s "$GEOSTAT$loc" -H "Authorization: Bearer $TOKEN" | grep -qE '"status": *"(succeeded|failed|cancelled)"'; do sleep 1; done
  curl -s "$GEOSTAT${loc%/status}" -H "Authorization: Bearer $TOKEN"; echo
}
`)
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

// Calls returns the demo's task requests for a worker at base, in an order
// that works (the report follows the simulation it validates).
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
