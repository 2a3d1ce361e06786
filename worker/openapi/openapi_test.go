package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "openapi-test-token"

// docURL is where the tests load the worker's document.
const docURL = "mem:///openapi.json"

// start runs a worker on 127.0.0.1:0 over a temporary data directory until
// the test ends.
func start(t *testing.T) (*service.Service, *workertest.Client) {
	t.Helper()
	s, err := service.New(service.Options{Options: server.Options{
		Addr:    "127.0.0.1:0",
		DataDir: t.TempDir(),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Stdout:  io.Discard,
		Getenv: func(k string) string {
			if k == server.TokenEnv {
				return token
			}
			return os.Getenv(k)
		},
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return s, &workertest.Client{Base: s.URL(), Token: token}
}

// spec is the worker's OpenAPI document, loaded for validation.
type spec struct {
	raw []byte
	doc map[string]any
	c   *jsonschema.Compiler
}

func load(t *testing.T, raw []byte) *spec {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	require.NoError(t, c.AddResource(docURL, doc))
	return &spec{raw: raw, doc: doc.(map[string]any), c: c}
}

// pointer escapes JSON-pointer tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteString("/")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// schema compiles the schema at a location of the document.
func (s *spec) schema(t *testing.T, tokens ...string) *jsonschema.Schema {
	t.Helper()
	sch, err := s.c.Compile(docURL + "#" + pointer(tokens...))
	require.NoError(t, err, "%v", tokens)
	return sch
}

// requestSchema is the request body schema of a task's submit path.
func (s *spec) requestSchema(t *testing.T, topic, task string) *jsonschema.Schema {
	return s.schema(t, "paths", "/compute/orgs/{org_id}/"+topic+"/"+task, "post", "requestBody", "content", "application/json", "schema")
}

// responseSchema is the schema of a response of an operation.
func (s *spec) responseSchema(t *testing.T, path, method string, status int, media string) *jsonschema.Schema {
	return s.schema(t, "paths", path, strings.ToLower(method), "responses", fmt.Sprint(status), "content", media, "schema")
}

func validate(sch *jsonschema.Schema, body []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// TestDocumentIsValidOpenAPI31 validates the served document against the
// OpenAPI 3.1 meta-schema with the OAS base dialect (so every Schema Object
// is checked too).
func TestDocumentIsValidOpenAPI31(t *testing.T) {
	s, c := start(t)
	r, err := c.Do(context.Background(), http.MethodGet, "/openapi.json", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, s.OpenAPI(), r.Body)

	mc := jsonschema.NewCompiler()
	for _, f := range []string{"schema.json", "schema-base.json", "dialect-base.json", "meta-base.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "oas-3.1", f))
		require.NoError(t, err)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		require.NoError(t, err)
		id, _ := doc.(map[string]any)["$id"].(string)
		require.NotEmpty(t, id, f)
		require.NoError(t, mc.AddResource(id, doc))
	}
	meta, err := mc.Compile("https://spec.openapis.org/oas/3.1/schema-base/2022-10-07")
	require.NoError(t, err)
	require.NoError(t, validate(meta, r.Body))

	// The meta-schema is not a rubber stamp: a broken document fails.
	var broken map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &broken))
	broken["paths"].(map[string]any)["/healthz"].(map[string]any)["get"].(map[string]any)["responses"] = []any{"200"}
	b, _ := json.Marshal(broken)
	assert.Error(t, validate(meta, b))

	// Every schema of the document compiles under the OAS dialect.
	sp := load(t, r.Body)
	for name := range sp.doc["components"].(map[string]any)["schemas"].(map[string]any) {
		sp.schema(t, "components", "schemas", name)
	}
}

// TestTaskPathsEnumerateTheTasks checks that each task of both topics has
// its own submit path with a request schema, and that {task} of the job
// routes lists the topic's tasks.
func TestTaskPathsEnumerateTheTasks(t *testing.T) {
	s, _ := start(t)
	sp := load(t, s.OpenAPI())
	paths := sp.doc["paths"].(map[string]any)
	for _, topic := range []string{tasks.TopicSeed, tasks.TopicCurrent} {
		names := tasks.Tasks(topic)
		require.NotEmpty(t, names)
		for _, task := range names {
			require.Contains(t, paths, "/compute/orgs/{org_id}/"+topic+"/"+task)
			sp.requestSchema(t, topic, task)
		}
		op := paths["/compute/orgs/{org_id}/"+topic+"/{task}/{job_id}/status"].(map[string]any)["get"].(map[string]any)
		var enum []any
		for _, p := range op["parameters"].([]any) {
			if p.(map[string]any)["name"] == "task" {
				enum = p.(map[string]any)["schema"].(map[string]any)["enum"].([]any)
			}
		}
		var got []string
		for _, e := range enum {
			got = append(got, e.(string))
		}
		assert.Equal(t, names, got, topic)
	}
}

// decode runs the decoder of a task on a body.
func decode(topic, task string, body []byte) error {
	shape := tasks.CurrentShape
	if topic == tasks.TopicSeed {
		shape = tasks.SeedShape
	}
	var err error
	switch task {
	case "knn":
		_, err = tasks.DecodeKNN(shape, body)
	case "break-ties":
		_, err = tasks.DecodeBreakTies(shape, body)
	case "conditional-tbsim", "conditional-turning-bands":
		_, err = tasks.DecodeSimulation(shape, body)
	case "simulation-report":
		_, err = tasks.DecodeReport(shape, body)
	case "kriging":
		_, err = tasks.DecodeKriging(body)
	case "variogram-model":
		_, err = tasks.DecodeVariogramModel(body)
	case "location-wise":
		_, err = tasks.DecodeLocationWise(body)
	case "loss-calculation", "profit-calculation":
		_, err = tasks.DecodeClassification(task, body)
	case "declustering":
		_, err = tasks.DecodeDeclustering(body)
	case "continuous-distribution":
		_, err = tasks.DecodeDistribution(body)
	case "normal-score":
		_, err = tasks.DecodeNormalScore(body)
	case "idw":
		_, err = tasks.DecodeIDW(body)
	case "consim":
		_, err = tasks.DecodeConsim(body)
	default:
		return fmt.Errorf("no decoder for %s/%s", topic, task)
	}
	return err
}

// request is a task request: where it goes and its body.
type request struct {
	topic, task string
	body        string
}

const base = "https://hub.example/geoscience-object/orgs/00000000-0000-4000-8000-000000000001/workspaces/00000000-0000-4000-8000-000000000002/objects/"

// extraValid are valid requests that the demo does not make: filters, an
// update target, simple kriging with a mean, report thresholds, a seed
// neighbourhood.
func extraValid() []request {
	return []request{
		{tasks.TopicCurrent, "knn", `{"parameters": {
		  "source": {"object": "` + base + `path/pts.json", "attribute": "locations.attributes[?name=='grade']",
		    "filter": {"where": {"type": "all_of", "filters": [
		      {"type": "condition", "attribute": "locations.attributes[?name=='domain']", "operator": "in", "values": ["ore", 3], "threshold": null},
		      {"type": "condition", "attribute": "locations.attributes[?name=='grade']", "operator": "greater_than", "threshold": 0.5, "values": null}]}}},
		  "target": {"object": "` + base + `00000000-0000-4000-8000-000000000003?version=7", "attribute": {"operation": "create", "name": "knn_grade"}, "filter": null},
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}},
		    "max_samples": 20, "min_samples": 4}}}`},
		{tasks.TopicCurrent, "kriging", `{"parameters": {"source": {"object": "` + base + `path/p.json", "attribute": "au"},
		  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "update", "reference": "cell_attributes[?key=='k1']"},
		    "filter": {"where": {"type": "condition", "attribute": "zone", "operator": "in", "values": [1], "threshold": null}},
		    "region_filter": {"attribute": "zone", "names": ["top", "mid"], "values": null}},
		  "variogram": "` + base + `path/v.json", "kriging_method": {"type": "simple", "mean": 2.5},
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}}, "max_samples": 16},
		  "block_discretization": {"nx": 3}, "outputs": ["variance", "slope"]}}`},
		{tasks.TopicCurrent, "kriging", `{"source": {"object": "` + base + `path/p.json", "attribute": "au", "filter": null},
		  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "create", "name": "est"}, "region_filter": {"attribute": "zone", "values": [1, 3]}},
		  "variogram": "` + base + `path/v.json", "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}}, "max_samples": 16}}`},
		{tasks.TopicCurrent, "knn", `{"source": {"object": "` + base + `path/p.json", "attribute": "au"},
		  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "update", "reference": "cell_attributes[?name=='est']"},
		    "filter": {"where": {"type": "condition", "attribute": "depth", "operator": "less_than", "threshold": 10, "values": null}}},
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}}, "max_samples": 4}}`},
		// consim with every member, and with the required ones only.
		{tasks.TopicCurrent, "consim", `{"parameters": {"source_object": "` + base + `path/p.json", "source_attribute": "locations.attributes[?name=='au']",
		  "target_object": "` + base + `path/g.json",
		  "filter": {"where": {"type": "condition", "attribute": "m", "operator": "equal", "threshold": 1}},
		  "source_filter": {"where": {"type": "any_of", "filters": [{"type": "condition", "attribute": "d", "operator": "in", "values": ["ore", 2]}]}},
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}, "max_samples": 24, "min_samples": 2},
		  "variogram_model": "` + base + `path/v.json", "block_discretization": {"nx": 2, "ny": 2, "nz": 1},
		  "distribution": {"weights": "locations.attributes[?name=='w']", "tail_extrapolation": {"upper": {"power": 0.5, "max": 40.0}, "lower": {"power": 1.0, "min": 0.0}}},
		  "kriging_method": "ordinary", "number_of_lines": 200, "number_of_simulations": 10, "random_seed": 7, "number_of_simulations_to_save": 3,
		  "loss_calculation": {"material_categories": [{"cutoff_grade": 0.0, "metal_price": 0.0, "label": "waste"}, {"cutoff_grade": 1.5, "metal_price": 20.0, "label": "ore"}],
		    "processing_cost": 10.0, "mining_waste_cost": 2.0, "mining_ore_cost": 3.0, "metal_recovery_fraction": 0.9,
		    "target_attribute": {"operation": "create", "name": "ore_loss_cat"}},
		  "location_wise_quantiles": [0.1, 0.5, 0.9], "probability_above_cutoff": [1.0, 2.0], "mean_above_cutoff": [1.0],
		  "perform_validation": true, "report_context": {"title": "Cu", "details": [{"label": "Domain", "value": "1"}]},
		  "report_mean_thresholds": {"acceptable": 0.05, "marginal": 0.1}}}`},
		{tasks.TopicCurrent, "consim", `{"source_object": "` + base + `path/p.json", "source_attribute": "au", "target_object": "` + base + `path/g.json",
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}}, "max_samples": 24},
		  "variogram_model": "` + base + `path/v.json", "kriging_method": {"type": "simple"},
		  "loss_calculation": {"material_categories": [{"cutoff_grade": 0, "metal_price": 0, "label": "waste"}],
		    "processing_cost": 0, "mining_waste_cost": 0, "mining_ore_cost": 0, "metal_recovery_fraction": 1,
		    "target_attribute": {"operation": "update", "reference": "cell_attributes[?name=='cat']"}}}`},
		{tasks.TopicCurrent, "simulation-report", `{"simulation_source": "` + base + `path/p.json", "source_attribute": "au",
		  "simulation_target": "` + base + `path/g.json", "point_simulations": "a", "point_simulations_normal_score": "b",
		  "block_simulations": "c", "block_simulations_normal_score": "d", "variogram_model": "` + base + `path/v.json",
		  "number_of_simulations": 3, "kriging_method": "ordinary", "distribution": {"weights": "w"},
		  "report_mean_thresholds": {"acceptable": 0.1, "marginal": 0.2}, "report_context": {"title": "t", "details": [null, {"label": "l"}]}}`},
		{tasks.TopicSeed, "knn", `{"parameters": {"source": {"type": "geoscience-object-reference", "key": "k-grade", "object_reference": "` + base + `path/pts.json",
		  "object_element": [{"type": "element", "path": "/locations/attributes/@name=grade"}]},
		 "target": {"key": null, "object_reference": "` + base + `00000000-0000-4000-8000-000000000003", "object_element": [{"path": "/cell_attributes/@name=knn"}, null]},
		 "neighborhood": {"max-samples": 12, "anisotropy": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10},
		   "rotation": {"dip_azimuth": 30, "dip": 10, "pitch": 5}}}}}`},
		{tasks.TopicCurrent, "break-ties", `{"source": {"object": "` + base + `path/p.json", "attribute": "au", "filter": null},
		  "target": {"object": "` + base + `path/p.json", "attribute": {"operation": "create", "name": "bt"}, "filter": null}, "random_seed": 5}`},
		{tasks.TopicCurrent, "break-ties", `{"source": {"object": "` + base + `path/p.json", "attribute": "au"},
		  "target": {"object": "` + base + `path/p.json", "attribute": {"operation": "update", "reference": "locations.attributes[?name=='au']"}}}`},
		// Every optional member, in each request shape.
		{tasks.TopicCurrent, "conditional-turning-bands", `{"parameters": {"source": "` + base + `path/p.json", "source_attribute": "au",
		  "source_filter": {"where": {"type": "any_of", "filters": [{"type": "condition", "attribute": "d", "operator": "not_in", "values": [1]}]}},
		  "target": "` + base + `path/g.json", "filter": {"where": {"type": "condition", "attribute": "m", "operator": "equal", "threshold": 1}},
		  "distribution": "` + base + `path/d.json", "variogram_model": "` + base + `path/v.json",
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}}, "max_samples": 24, "min_samples": 2},
		  "block_discretization": {"nx": 1, "ny": 1, "nz": 1}, "number_of_lines": 200, "random_seed": -3, "realizations": 2,
		  "variogram_reproduction": true, "kriging_method": {"type": "ordinary", "mean": null}, "normalize_variogram_model": false, "save_gaussian_results": false}}`},
		{tasks.TopicSeed, "conditional-tbsim", `{"parameters": {
		  "source": {"object_reference": "` + base + `path/p.json", "object_element": [{"type": "element", "path": "/locations/attributes/@name=au"}, {"type": "element", "path": "/x"}]},
		  "target": {"object_reference": "` + base + `path/g.json", "object_element": [{"path": "/cell_attributes/@name=sims"}, {"type": "element", "path": "/y"}]},
		  "distribution": {"key": "cdf", "object_reference": "` + base + `path/d.json", "object_element": [{"type": "element", "path": "/cdf"}, {"type": "element", "path": "/z"}]},
		  "variogram_model": {"object_reference": "` + base + `path/v.json", "object_element": []},
		  "neighborhood": {"max-samples": 40, "anisotropy": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}}},
		  "kriging_method": "ordinary", "variogram_reproduction": false, "normalize_variogram_model": true, "save_gaussian_results": true}}`},
		{tasks.TopicSeed, "simulation-report", `{"parameters": {"simulation_parameters": {
		  "source": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/locations/attributes/@name=au"}]},
		  "target": {"object_reference": "` + base + `path/g.json", "object_element": [{"path": "/cell_attributes/@name=sims"}]},
		  "distribution": {"object_reference": "` + base + `path/d.json"}, "variogram_model": {"object_reference": "` + base + `path/v.json"},
		  "neighborhood": {"max-samples": 40, "anisotropy": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}}},
		  "block_discretization": {"nx": 2}, "number_of_lines": 100, "random_seed": 11, "realisations": 3,
		  "variogram_reproduction": true, "kriging_method": {"type": "simple", "mean": 0}, "normalize_variogram_model": true, "save_gaussian_results": false},
		  "variogram_reproduction": false, "target": "reports/r.html"}}`},
		{tasks.TopicCurrent, "simulation-report", `{"parameters": {"simulation_source": "` + base + `path/p.json", "source_attribute": "au",
		  "simulation_target": "` + base + `path/g.json", "point_simulations": "a", "point_simulations_normal_score": "b",
		  "block_simulations": "c", "block_simulations_normal_score": "d", "variogram_model": "` + base + `path/v.json",
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}}, "max_samples": 24},
		  "number_of_simulations": 3, "number_of_lines": 300, "random_seed": 9, "kriging_method": {"type": "simple"}}}`},
		{tasks.TopicSeed, "break-ties", `{"parameters": {"source": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/a/@name=au"}]},
		  "target": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/a/@name=bt"}]}}}`},
		// variogram-model: every member over two bodies (range_min and
		// range_max apart, as a mutation of one could cross the other).
		{tasks.TopicCurrent, "variogram-model", `{"parameters": {
		  "source": {"object": "` + base + `path/p.json", "attribute": "cu", "weights": "w",
		    "filter": {"where": {"type": "condition", "attribute": "d", "operator": "in", "values": [1]}}},
		  "distribution": "` + base + `path/d.json",
		  "directions": [{"azimuth": 30, "dip": 0, "azimuth_tolerance": 22.5, "dip_tolerance": 10, "bandwidth": 20, "bandheight": 5},
		    {"azimuth": 120, "dip": 0}, {"azimuth": 0, "dip": 90}],
		  "lags": {"lag_distance": 10, "number_of_lags": 12, "lag_tolerance": 5},
		  "model": {"nugget": true, "structures": [{"variogram_type": "spheroidal", "alpha": 5}, {"variogram_type": "spherical", "alpha": null}],
		    "anisotropy": {"type": "given", "major": 0, "semi_major": 1, "minor": 2}, "weighting": "pairs", "sill_constraint": "unit",
		    "range_min": 2, "min_pairs": 30, "starts": 4, "random_seed": 9},
		  "target": {"experimental_variogram": {"reference": "` + base + `path/v/exp.json", "overwrite": false, "description": "d", "tags": {"k": "v"}},
		    "variogram": {"reference": "` + base + `00000000-0000-4000-8000-000000000003", "overwrite": true, "tags": {}}}}}`},
		{tasks.TopicCurrent, "variogram-model", `{"source": {"object": "` + base + `path/p.json", "attribute": "cu"},
		  "directions": ["omnidirectional"], "lags": {"lag_distance": 10, "number_of_lags": 12},
		  "model": {"structures": [{"variogram_type": "exponential"}], "anisotropy": {"type": "isotropic"}, "range_max": 200, "weighting": "cressie", "sill_constraint": "free"},
		  "target": {"experimental_variogram": {"reference": "` + base + `path/v/e.json"}, "variogram": {"reference": "` + base + `path/v/m.json", "description": "m"}}}`},
		// Every member of the ensemble post-processing tasks.
		{tasks.TopicCurrent, "location-wise", `{"parameters": {"source": {"object": "` + base + `path/g.json", "attribute": "cell_attributes[?name=='sims']", "filter": null},
		  "target": {"object": "` + base + `path/g.json", "attribute": null}, "summary": true, "quantiles": [0.1, 0.5, 0.9],
		  "probability_above_cutoff": {"cutoffs": [1.0, 2]}, "mean_above_cutoff": {"cutoffs": [1.5]}}}`},
		{tasks.TopicCurrent, "location-wise", `{"source": {"object": "` + base + `path/g.json", "attribute": "sims"}, "target": {"object": "` + base + `path/g.json"}, "quantiles": [0.5]}`},
		{tasks.TopicCurrent, "loss-calculation", `{"parameters": {"source": {"object": "` + base + `path/g.json", "attribute": "cell_attributes[?name=='sims']"},
		  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "create", "name": "class"}},
		  "material_categories": [{"cutoff_grade": 0.0, "metal_price": 0.0, "label": "waste"}, {"cutoff_grade": 1.5, "metal_price": 20.0, "label": "ore"}],
		  "processing_cost": 10.0, "mining_waste_cost": 2.0, "mining_ore_cost": 3.0, "metal_recovery_fraction": 0.9}}`},
		{tasks.TopicCurrent, "profit-calculation", `{"parameters": {"source": {"object": "` + base + `path/g.json", "attribute": "cell_attributes[?name=='sims']", "filter": null},
		  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "update", "reference": "cell_attributes[?name=='class']"}},
		  "material_categories": [{"cutoff_grade": 0, "metal_price": 0, "label": "waste"}, {"cutoff_grade": 1, "metal_price": 20, "label": "low"}, {"cutoff_grade": 2, "metal_price": 30, "label": "high"}],
		  "processing_cost": 10, "mining_waste_cost": 2, "mining_ore_cost": 3, "metal_recovery_fraction": 1}}`},
		// The client's shapes of the four inputs of a simulation.
		{tasks.TopicCurrent, "declustering", `{"parameters": {"source": {"object": "` + base + `path/p.json"}, "grid": {"object": "` + base + `path/g.json"},
		  "target": {"object": "` + base + `path/p.json", "attribute": {"operation": "update", "reference": "locations.attributes[?key=='w']"}},
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}, "max_samples": 1},
		  "power": null, "method": {"type": "influence"}}}`},
		{tasks.TopicCurrent, "declustering", `{"source": {"object": "` + base + `path/p.json", "attribute": "au"},
		  "target": {"object": "` + base + `path/p.json", "attribute": {"operation": "create", "name": "w"}}, "power": 2.0,
		  "method": {"type": "cell", "cell_size": {"min": 5, "max": 50, "steps": 9}, "anisotropy": [1, 0.5], "offsets": 25, "objective": "max"}}`},
		{tasks.TopicCurrent, "declustering", `{"source": {"object": "` + base + `path/p.json"},
		  "target": {"object": "` + base + `path/p.json", "attribute": {"operation": "create", "name": "w"}},
		  "method": {"type": "cell", "cell_size": [20]}}`},
		{tasks.TopicCurrent, "continuous-distribution", `{"parameters": {"source": {"object": "` + base + `path/p.json", "attribute": "locations.attributes[?key=='k']"},
		  "weights": {"object": "` + base + `path/p.json", "attribute": "w"},
		  "tail_extrapolation": {"upper": {"power": 0.5, "max": 100.0}, "lower": {"power": 1.0, "min": 0.0}},
		  "target": {"reference": "` + base + `path/d.json", "overwrite": true, "description": "d", "tags": {"stage": "test"}}}}`},
		{tasks.TopicCurrent, "continuous-distribution", `{"parameters": {"source": {"object": "` + base + `path/p.json", "attribute": "au"},
		  "tail_extrapolation": {"upper": {"power": 1, "max": 100}},
		  "target": {"reference": "` + base + `path/d.json", "overwrite": false, "tags": {}}}}`},
		{tasks.TopicCurrent, "normal-score", `{"parameters": {"method": "backward", "source": {"object": "` + base + `path/g.json", "attribute": "cell_attributes[0]"},
		  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "update", "reference": "cell_attributes[1]"}},
		  "distribution": "` + base + `path/d.json?version=3"}}`},
		{tasks.TopicCurrent, "idw", `{"parameters": {
		  "source": {"object": "` + base + `path/pts.json", "attribute": "grade",
		    "filter": {"where": {"type": "condition", "attribute": "domain", "operator": "in", "values": ["ore"], "threshold": null}}},
		  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "create", "name": "idw"},
		    "filter": {"where": {"type": "condition", "attribute": "z", "operator": "less_than", "threshold": 10, "values": null}}},
		  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}}, "max_samples": 20, "min_samples": 4},
		  "power": 2.5}}`},
	}
}

func demoRequests() []request {
	var out []request
	for _, c := range demo.Calls("http://127.0.0.1:8080") {
		out = append(out, request{c.Topic, c.Task, string(c.Body)})
	}
	return out
}

// TestDemoBodiesValidate checks that every request the demo prints
// validates against its route's schema, and that the decoder accepts it.
func TestDemoBodiesValidate(t *testing.T) {
	s, _ := start(t)
	sp := load(t, s.OpenAPI())
	reqs := demoRequests()
	require.NotEmpty(t, reqs)
	for _, r := range append(reqs, extraValid()...) {
		require.NoError(t, decode(r.topic, r.task, []byte(r.body)), "%s/%s: %s", r.topic, r.task, r.body)
		assert.NoError(t, validate(sp.requestSchema(t, r.topic, r.task), []byte(r.body)), "%s/%s: %s", r.topic, r.task, r.body)
	}
}

// TestSchemaAgreesWithDecoder checks hand-picked invalid bodies: each is
// refused by both the decoder and the schema.
func TestSchemaAgreesWithDecoder(t *testing.T) {
	s, _ := start(t)
	sp := load(t, s.OpenAPI())
	ell := `{"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}}`
	src := `{"object": "` + base + `path/p.json", "attribute": "au"}`
	tgt := `{"object": "` + base + `path/g.json", "attribute": {"operation": "create", "name": "x"}}`
	consim := func(member string) string {
		return `{"source_object": "` + base + `path/p.json", "source_attribute": "au", "target_object": "` + base + `path/g.json",
		  "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}, "variogram_model": "` + base + `path/v.json", ` + member + `}`
	}
	knn := func(nb string) string {
		return `{"parameters": {"source": ` + src + `, "target": ` + tgt + `, "neighborhood": ` + nb + `}}`
	}
	invalid := []request{
		{tasks.TopicCurrent, "knn", `[1, 2]`},
		{tasks.TopicCurrent, "knn", `{"parameters": {}}`},
		{tasks.TopicCurrent, "knn", knn(`{"ellipsoid": ` + ell + `, "max_samples": 0}`)},
		{tasks.TopicCurrent, "knn", knn(`{"ellipsoid": ` + ell + `, "max_samples": 10001}`)},
		{tasks.TopicCurrent, "knn", knn(`{"ellipsoid": ` + ell + `, "max_samples": 2.5}`)},
		{tasks.TopicCurrent, "knn", knn(`{"ellipsoid": {"ellipsoid_ranges": {"major": 0, "semi_major": 1, "minor": 1}}, "max_samples": 4}`)},
		{tasks.TopicCurrent, "knn", knn(`{"ellipsoid": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}, "rotation": {"dip": 181}}, "max_samples": 4}`)},
		{tasks.TopicCurrent, "knn", knn(`{"max_samples": 4}`)},
		{tasks.TopicCurrent, "knn", `{"source": {"object": "https://x/other", "attribute": "au"}, "target": ` + tgt + `, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}}`},
		{tasks.TopicCurrent, "knn", `{"source": ` + src + `, "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "update", "name": "x"}}, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}}`},
		{tasks.TopicCurrent, "knn", `{"source": {"object": "` + base + `path/p.json", "attribute": "au", "filter": {"where": {"type": "all_of", "filters": []}}}, "target": ` + tgt + `, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}}`},
		{tasks.TopicCurrent, "knn", `{"source": {"object": "` + base + `path/p.json", "attribute": "au", "filter": {"where": {"type": "condition", "attribute": "a", "operator": "in", "values": [true]}}}, "target": ` + tgt + `, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}}`},
		{tasks.TopicCurrent, "knn", `{"source": {"object": "` + base + `path/p.json", "attribute": "au", "filter": {"where": {"type": "condition", "attribute": "a", "operator": "about"}}}, "target": ` + tgt + `, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}}`},
		{tasks.TopicCurrent, "break-ties", `{"source": {"object": "` + base + `path/p.json", "attribute": "au", "filter": {"where": {"type": "condition"}}}, "target": ` + tgt + `}`},
		{tasks.TopicCurrent, "kriging", `{"parameters": {"outputs": ["bogus"], "kriging_method": {"type": "ordinary", "mean": 1}}}`},
		{tasks.TopicCurrent, "kriging", `{"source": ` + src + `, "target": ` + tgt + `, "variogram": "` + base + `path/v.json", "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}, "kriging_method": "universal"}`},
		{tasks.TopicCurrent, "kriging", `{"source": ` + src + `, "target": ` + tgt + `, "variogram": "` + base + `path/v.json", "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}, "kriging_method": {"type": "ordinary", "mean": 1}}`},
		{tasks.TopicCurrent, "kriging", `{"source": ` + src + `, "target": ` + tgt + `, "variogram": "` + base + `path/v.json", "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 513}}`},
		{tasks.TopicCurrent, "kriging", `{"source": ` + src + `, "target": ` + tgt + `, "variogram": "` + base + `path/v.json", "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}, "block_discretisation": {"nx": 10}}`},
		{tasks.TopicCurrent, "conditional-turning-bands", `{"source": "` + base + `path/p.json", "source_attribute": "grade", "target": "` + base + `path/g.json",
		  "distribution": "` + base + `bad", "variogram_model": "` + base + `path/v.json", "realizations": 101, "number_of_lines": 0, "random_seed": 1.5}`},
		{tasks.TopicCurrent, "simulation-report", `{"simulation_source": "` + base + `path/p.json", "source_attribute": "au",
		  "simulation_target": "` + base + `path/g.json", "point_simulations": "a", "point_simulations_normal_score": "b",
		  "block_simulations": "c", "block_simulations_normal_score": "", "variogram_model": "` + base + `path/v.json", "number_of_simulations": 3}`},
		{tasks.TopicSeed, "knn", `{"source": {"object_reference": "` + base + `path/p.json"}, "target": {"object_reference": "` + base + `path/g.json", "object_element": [{"path": "/cell_attributes/knn"}]},
		  "neighborhood": {"max-samples": 4, "anisotropy": ` + ell + `}}`},
		{tasks.TopicSeed, "break-ties", `{"source": {"type": "reference", "object_reference": "` + base + `path/p.json", "object_element": [{"path": "/a/@name=au"}]},
		  "target": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/a/@name=bt"}]}}`},
		{tasks.TopicSeed, "conditional-tbsim", `{"source": {"object_reference": "` + base + `path/p.json", "object_element": []},
		  "target": {"object_reference": "` + base + `path/g.json", "object_element": [{"path": "/cell_attributes/@name=sims"}]},
		  "distribution": {"object_reference": "` + base + `path/d.json"}, "variogram_model": {"object_reference": "` + base + `path/v.json"}}`},
		{tasks.TopicSeed, "simulation-report", `{"target": "reports/r.html"}`},
		// Member names match exactly, and both spellings of a member are checked.
		{tasks.TopicSeed, "break-ties", `{"source": {"object_reference": "` + base + `path/p.json", "object_element": [{"Path": "/a/@name=au"}]},
		  "target": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/a/@name=bt"}]}}`},
		{tasks.TopicCurrent, "kriging", `{"source": ` + src + `, "target": ` + tgt + `, "variogram": "` + base + `path/v.json", "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4},
		  "block_discretisation": {"nx": 2}, "block_discretization": {"nx": 10}}`},
		// The client's refusals of the four inputs of a simulation.
		{tasks.TopicCurrent, "declustering", `{"source": {"object": "` + base + `path/p.json"}, "grid": {"object": "` + base + `path/g.json"}, "target": ` + tgt + `, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}, "power": 0}`},
		{tasks.TopicCurrent, "declustering", `{"source": {"object": "` + base + `path/p.json"}, "target": ` + tgt + `, "method": {"type": "cell", "cell_size": []}}`},
		{tasks.TopicCurrent, "declustering", `{"source": {"object": "` + base + `path/p.json"}, "target": ` + tgt + `, "method": {"type": "cell", "cell_size": [5], "anisotropy": [1, 1, 1]}}`},
		{tasks.TopicCurrent, "declustering", `{"source": {"object": "` + base + `path/p.json"}, "target": ` + tgt + `, "method": {"type": "cell", "cell_size": [5], "objective": "mean"}}`},
		{tasks.TopicCurrent, "declustering", `{"source": {"object": "` + base + `path/p.json"}, "target": ` + tgt + `, "method": {"type": "voronoi"}}`},
		{tasks.TopicCurrent, "continuous-distribution", `{"source": ` + src + `, "tail_extrapolation": {"upper": {"power": 1.5, "max": 10}}, "target": {"reference": "` + base + `path/d.json"}}`},
		{tasks.TopicCurrent, "continuous-distribution", `{"source": ` + src + `, "tail_extrapolation": {"upper": {"power": 0.5, "max": 10}, "lower": {"power": 0, "min": 0}}, "target": {"reference": "` + base + `path/d.json"}}`},
		{tasks.TopicCurrent, "continuous-distribution", `{"source": ` + src + `, "tail_extrapolation": {"lower": {"power": 0.5, "min": 0}}, "target": {"reference": "` + base + `path/d.json"}}`},
		{tasks.TopicCurrent, "continuous-distribution", `{"source": ` + src + `, "target": {"reference": "` + base + `path/d.json", "tags": {"a": 1}}}`},
		{tasks.TopicCurrent, "normal-score", `{"method": "sideways", "source": ` + src + `, "target": ` + tgt + `, "distribution": "` + base + `path/d.json"}`},
		{tasks.TopicCurrent, "normal-score", `{"source": ` + src + `, "target": ` + tgt + `, "distribution": "` + base + `path/d.json"}`},
		{tasks.TopicCurrent, "idw", `{"source": ` + src + `, "target": ` + tgt + `, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}}`},
		{tasks.TopicCurrent, "idw", `{"source": ` + src + `, "target": ` + tgt + `, "neighborhood": {"ellipsoid": ` + ell + `, "max_samples": 4}, "power": -1}`},
		{tasks.TopicCurrent, "consim", consim(`"number_of_simulations_to_save": 101`)},
		{tasks.TopicCurrent, "consim", consim(`"number_of_lines": 1001`)},
		{tasks.TopicCurrent, "consim", consim(`"distribution": {"tail_extrapolation": {"upper": {"power": 1.5, "max": 4}}}`)},
		{tasks.TopicCurrent, "consim", consim(`"distribution": {"tail_extrapolation": {"lower": {"power": 0.5, "min": 0}}}`)},
		{tasks.TopicCurrent, "consim", consim(`"report_context": {"title": "t", "details": [{"label": "a", "value": "b"}, {"label": "a", "value": "b"}, {"label": "a", "value": "b"},
		  {"label": "a", "value": "b"}, {"label": "a", "value": "b"}, {"label": "a", "value": "b"}, {"label": "a", "value": "b"}, {"label": "a", "value": "b"},
		  {"label": "a", "value": "b"}, {"label": "a", "value": "b"}, {"label": "a", "value": "b"}]}`)},
		{tasks.TopicCurrent, "consim", consim(`"location_wise_quantiles": [1.5]`)},
		{tasks.TopicCurrent, "consim", consim(`"kriging_method": "universal"`)},
	}
	for _, r := range invalid {
		require.Error(t, decode(r.topic, r.task, []byte(r.body)), "the decoder accepts %s/%s: %s", r.topic, r.task, r.body)
		assert.Error(t, validate(sp.requestSchema(t, r.topic, r.task), []byte(r.body)), "the schema accepts %s/%s: %s", r.topic, r.task, r.body)
	}
}

// mutations returns copies of a JSON value with one member or element
// removed, or replaced by one of a few values of every JSON type.
func mutations(v any) []any {
	values := []any{nil, "", "x", 0.0, -1.0, 1.5, 1e9, true, map[string]any{}, []any{}}
	var out []any
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			with := func(x any, del bool) map[string]any {
				c := make(map[string]any, len(v))
				for k2, v2 := range v {
					c[k2] = v2
				}
				if del {
					delete(c, k)
				} else {
					c[k] = x
				}
				return c
			}
			out = append(out, with(nil, true))
			for _, x := range values {
				out = append(out, with(x, false))
			}
			for _, m := range mutations(v[k]) {
				out = append(out, with(m, false))
			}
		}
	case []any:
		for i := range v {
			with := func(x any) []any {
				c := append([]any(nil), v...)
				c[i] = x
				return c
			}
			for _, x := range values {
				out = append(out, with(x))
			}
			for _, m := range mutations(v[i]) {
				out = append(out, with(m))
			}
		}
	}
	return out
}

// TestSchemaAgreesWithDecoderOnMutations mutates every valid request one
// member at a time (removed, null, empty, wrong type, out of range) and
// checks that the decoder and the schema give the same verdict, except
// where the decoder's only objections are checks across members, which
// JSON Schema cannot state (the schema's descriptions say them).
func TestSchemaAgreesWithDecoderOnMutations(t *testing.T) {
	s, _ := start(t)
	sp := load(t, s.OpenAPI())
	n, refused, across := 0, 0, 0
	for _, r := range append(demoRequests(), extraValid()...) {
		sch := sp.requestSchema(t, r.topic, r.task)
		var v any
		require.NoError(t, json.Unmarshal([]byte(r.body), &v))
		for _, m := range mutations(v) {
			body, err := json.Marshal(m)
			require.NoError(t, err)
			derr := decode(r.topic, r.task, body)
			serr := validate(sch, body)
			n++
			if derr != nil {
				refused++
			}
			if derr != nil && serr == nil && crossMember(derr) {
				across++
				continue
			}
			if (derr == nil) != (serr == nil) {
				t.Errorf("%s/%s disagree on %s\n  decoder: %v\n  schema: %v", r.topic, r.task, body, derr, serr)
			}
		}
	}
	t.Logf("%d mutations, %d refused (%d of them only by a check across members)", n, refused, across)
	assert.Greater(t, refused, n/3, "the mutations exercise refusals")
	assert.Less(t, refused, n, "the mutations exercise acceptances")
}

// crossMember reports whether every problem of a validation error is a
// check across members.
func crossMember(err error) bool {
	var ve *tasks.ValidationError
	if !errors.As(err, &ve) || len(ve.Params) == 0 {
		return false
	}
	for _, p := range ve.Params {
		// Across items of a list: categories in cutoff order, a level, a
		// cutoff or a label given once; at least one location-wise operation.
		if strings.HasSuffix(p.Reason, "categories go from the lowest to the highest cutoff") || strings.Contains(p.Reason, " repeats ") ||
			strings.HasPrefix(p.Reason, "no operation requested") {
			continue
		}
		if p.Reason != "must be at least the acceptable threshold" && !strings.HasPrefix(p.Reason, "must not exceed max_samples") &&
			!strings.HasPrefix(p.Reason, "is required by the influence method") && !strings.HasPrefix(p.Reason, "is required to choose among several cell sizes") &&
			p.Reason != "exactly one of names and values is required" {
			return false
		}
	}
	return true
}

// TestResponsesMatchTheirSchemas runs real requests against a worker with
// the demo workspace and validates each answer against the schema of its
// status: the seed shape's 200 task result, a job's status and results, a
// 422 with invalid-params, a 404 job and a 401.
func TestResponsesMatchTheirSchemas(t *testing.T) {
	s, c := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	sp := load(t, s.OpenAPI())
	check := func(path, method string, r *workertest.Response, media string) {
		t.Helper()
		assert.Equal(t, media, strings.Split(r.Header.Get("Content-Type"), ";")[0], "%s %s", method, path)
		assert.NoError(t, validate(sp.responseSchema(t, path, method, r.Status, media), r.Body), "%s %s %d: %s", method, path, r.Status, r.Body)
	}
	seedCall, currentCall := breakTiesCalls(t, c.Base)

	// The seed shape answers 200 with the task result.
	r, err := c.Do(ctx, http.MethodPost, seedCall.Path(), seedCall.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	check("/compute/orgs/{org_id}/geostat/break-ties", http.MethodPost, r, "application/json")

	// The current shape answers 303 to the job status.
	r, err = c.Do(ctx, http.MethodPost, currentCall.Path(), currentCall.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	status := r.Header.Get("Location")
	id := strings.TrimSuffix(status[strings.LastIndex(strings.TrimSuffix(status, "/status"), "/")+1:], "/status")
	statusPath := "/compute/orgs/{org_id}/geostatistics/{task}/{job_id}/status"
	resultsPath := "/compute/orgs/{org_id}/geostatistics/{task}/{job_id}"
	r, err = c.Do(ctx, http.MethodGet, status, nil)
	require.NoError(t, err)
	check(statusPath, http.MethodGet, r, "application/json") // 202 or 200
	r, err = c.Do(ctx, http.MethodGet, strings.TrimSuffix(status, "/status"), nil)
	require.NoError(t, err)
	check(resultsPath, http.MethodGet, r, "application/json")
	final, ok := s.Jobs().Wait(ctx, id)
	require.True(t, ok, "job %s", id)
	require.Equal(t, "succeeded", string(final.Status), "%+v", final.Error)
	r, err = c.Do(ctx, http.MethodGet, status, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
	check(statusPath, http.MethodGet, r, "application/json")
	r, err = c.Do(ctx, http.MethodGet, strings.TrimSuffix(status, "/status"), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
	check(resultsPath, http.MethodGet, r, "application/json")

	// Invalid parameters: 422 with invalid-params.
	r, err = c.Do(ctx, http.MethodPost, "/compute/orgs/"+demo.Org+"/geostatistics/knn", []byte(`{"parameters": {}}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status)
	check("/compute/orgs/{org_id}/geostatistics/knn", http.MethodPost, r, "application/problem+json")
	var p struct {
		InvalidParams []tasks.InvalidParam `json:"invalid-params"`
	}
	require.NoError(t, r.JSON(&p))
	assert.Len(t, p.InvalidParams, 3)

	// No such job: 404; no token: 401.
	r, err = c.Do(ctx, http.MethodGet, "/compute/orgs/"+demo.Org+"/geostatistics/knn/no-such-job/status", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, r.Status)
	check(statusPath, http.MethodGet, r, "application/problem+json")
	anon := &workertest.Client{Base: c.Base}
	r, err = anon.Do(ctx, http.MethodPost, "/compute/orgs/"+demo.Org+"/geostatistics/knn", []byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, r.Status)
	check("/compute/orgs/{org_id}/geostatistics/knn", http.MethodPost, r, "application/problem+json")
}

// coverage walks request bodies through the document's schemas, recording
// the members (schema locations of properties) that they exercise.
type coverage struct {
	t        *testing.T
	sp       *spec
	seen     map[string]bool
	compiled map[string]*jsonschema.Schema
}

// node returns the schema at a JSON pointer of the document.
func (cv *coverage) node(ptr string) map[string]any {
	var n any = cv.sp.doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := n.(type) {
		case map[string]any:
			n = v[tok]
		case []any:
			var i int
			fmt.Sscan(tok, &i)
			n = v[i]
		}
	}
	m, _ := n.(map[string]any)
	return m
}

func (cv *coverage) valid(ptr string, v any) bool {
	sch, ok := cv.compiled[ptr]
	if !ok {
		var err error
		sch, err = cv.sp.c.Compile(docURL + "#" + ptr)
		require.NoError(cv.t, err, ptr)
		cv.compiled[ptr] = sch
	}
	return sch.Validate(v) == nil
}

// walk records the members of v that the schema at ptr describes; of the
// alternatives (oneOf, anyOf, if/then/else) it follows those v satisfies.
func (cv *coverage) walk(ptr string, v any) {
	n := cv.node(ptr)
	if ref, ok := n["$ref"].(string); ok {
		cv.walk(strings.TrimPrefix(ref, "#"), v)
	}
	if _, ok := n["if"]; ok {
		branch := "else"
		if cv.valid(ptr+"/if", v) {
			branch = "then"
		}
		if _, ok := n[branch]; ok {
			cv.walk(ptr+"/"+branch, v)
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := n[k].([]any)
		for i := range alts {
			p := fmt.Sprintf("%s/%s/%d", ptr, k, i)
			if k == "allOf" || cv.valid(p, v) {
				cv.walk(p, v)
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := n["properties"].(map[string]any)
		for key := range props {
			if x, ok := v[key]; ok {
				p := ptr + pointer("properties", key)
				cv.seen[p] = true
				cv.walk(p, x)
			}
		}
	case []any:
		prefix, _ := n["prefixItems"].([]any)
		for i, x := range v {
			switch {
			case i < len(prefix):
				cv.walk(fmt.Sprintf("%s/prefixItems/%d", ptr, i), x)
			case n["items"] != nil:
				cv.walk(ptr+"/items", x)
			}
		}
	}
}

// members lists every property location reachable from the schema at ptr.
func (cv *coverage) members(ptr string, visited map[string]bool, out map[string]bool) {
	if visited[ptr] {
		return
	}
	visited[ptr] = true
	n := cv.node(ptr)
	if ref, ok := n["$ref"].(string); ok {
		cv.members(strings.TrimPrefix(ref, "#"), visited, out)
	}
	for _, k := range []string{"if", "then", "else", "items"} {
		if _, ok := n[k].(map[string]any); ok {
			cv.members(ptr+"/"+k, visited, out)
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "prefixItems"} {
		alts, _ := n[k].([]any)
		for i := range alts {
			cv.members(fmt.Sprintf("%s/%s/%d", ptr, k, i), visited, out)
		}
	}
	props, _ := n["properties"].(map[string]any)
	for key := range props {
		p := ptr + pointer("properties", key)
		out[p] = true
		cv.members(p, visited, out)
	}
}

// TestCorpusCoversEveryMember checks that the valid requests of the
// agreement tests use every member of every request schema (each variant
// too), so that the mutations exercise every rule the decoder enforces.
func TestCorpusCoversEveryMember(t *testing.T) {
	s, _ := start(t)
	sp := load(t, s.OpenAPI())
	cv := &coverage{t: t, sp: sp, seen: map[string]bool{}, compiled: map[string]*jsonschema.Schema{}}
	all := map[string]bool{}
	visited := map[string]bool{}
	for _, topic := range []string{tasks.TopicSeed, tasks.TopicCurrent} {
		for _, task := range tasks.Tasks(topic) {
			cv.members(pointer("paths", "/compute/orgs/{org_id}/"+topic+"/"+task, "post", "requestBody", "content", "application/json", "schema"), visited, all)
		}
	}
	for _, r := range append(demoRequests(), extraValid()...) {
		var v any
		require.NoError(t, json.Unmarshal([]byte(r.body), &v))
		cv.walk(pointer("paths", "/compute/orgs/{org_id}/"+r.topic+"/"+r.task, "post", "requestBody", "content", "application/json", "schema"), v)
	}
	var missing []string
	for p := range all {
		if !cv.seen[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	t.Logf("%d members, %d used", len(all), len(all)-len(missing))
	assert.Empty(t, missing, "members no valid request uses")
}

// breakTiesCalls returns the demo's break-ties calls of the seed and the
// current topic, the cheapest task with a call on each.
func breakTiesCalls(t *testing.T, base string) (seed, current *demo.Call) {
	t.Helper()
	for _, call := range demo.Calls(base) {
		if call.Task == "break-ties" {
			if call.Topic == tasks.TopicSeed {
				seed = &call
			} else {
				current = &call
			}
		}
	}
	require.NotNil(t, seed)
	require.NotNil(t, current)
	return seed, current
}
