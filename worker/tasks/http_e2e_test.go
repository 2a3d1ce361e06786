package tasks_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// problem asserts a problem-details answer with the given status and type
// suffix, and returns it.
func problem(t *testing.T, h *harness, path string, body []byte, status int, typeSuffix string) map[string]any {
	t.Helper()
	r, err := h.c.Do(h.ctx, http.MethodPost, path, body)
	require.NoError(t, err)
	require.Equal(t, status, r.Status, "%s", r.Body)
	assert.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	var p map[string]any
	require.NoError(t, r.JSON(&p))
	assert.Equal(t, float64(status), p["status"])
	assert.True(t, strings.HasSuffix(p["type"].(string), typeSuffix), "type %v", p["type"])
	return p
}

func TestSubmitErrors(t *testing.T) {
	h := start(t, 1)
	base := "/compute/orgs/" + org
	problem(t, h, base+"/geostatistics/nope", []byte(`{}`), http.StatusNotFound, "/unknown-task")
	problem(t, h, base+"/geostat/conditional-turning-bands", []byte(`{}`), http.StatusNotFound, "/unknown-task")
	problem(t, h, base+"/geostatistics/knn", []byte(`{"parameters": `), http.StatusBadRequest, "/bad-request")
	big := []byte(`{"parameters": {"pad": "` + strings.Repeat("x", 1<<20) + `"}}`)
	problem(t, h, base+"/geostatistics/knn", big, http.StatusRequestEntityTooLarge, "/payload-too-large")
	p := problem(t, h, base+"/geostatistics/conditional-turning-bands", []byte(`{"parameters": {"realizations": 0, "number_of_lines": 1001,
		"block_discretization": {"nx": 10}, "random_seed": "x"}}`), http.StatusUnprocessableEntity, "/validation")
	var names []string
	for _, ip := range p["invalid-params"].([]any) {
		names = append(names, ip.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"parameters.realizations", "parameters.number_of_lines", "parameters.block_discretization.nx",
		"parameters.random_seed", "parameters.source", "parameters.target", "parameters.distribution", "parameters.variogram_model"} {
		assert.Contains(t, names, want)
	}
	// Another organisation's object is refused, naming the field.
	other := strings.Replace(h.url("x.json"), org, "33333333-3333-4333-8333-333333333333", 1)
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source":       map[string]any{"object": other, "attribute": "a"},
		"target":       map[string]any{"object": h.url("y.json"), "attribute": map[string]any{"operation": "create", "name": "z"}},
		"neighborhood": neighbourhood(4)}})
	p = problem(t, h, base+"/geostatistics/knn", body, http.StatusUnprocessableEntity, "/validation")
	assert.Contains(t, p["detail"], "source")
	// Job routes for an unknown job.
	r, err := h.c.Do(h.ctx, http.MethodGet, base+"/geostatistics/knn/00000000-0000-4000-8000-000000000000/status", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, r.Status)
}

func TestMemoryLimitRefusesAtSubmit(t *testing.T) {
	h := start(t, 1)
	h.env.MaxMemory = 1 << 20 // 1 MiB: a 40 × 40 × 10 simulation of 100 realisations needs more
	c := newSimCase(t, h, [3]int{40, 40, 10})
	_ = c
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": h.url("sim/points.json"), "source_attribute": "cu", "target": h.url("sim/grid.json"),
		"distribution": h.url("sim/dist.json"), "variogram_model": h.url("sim/vario.json"), "realizations": 100}})
	p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/conditional-turning-bands", body, http.StatusUnprocessableEntity, "/validation")
	assert.Contains(t, p["detail"], "GiB of memory")
	assert.Empty(t, h.jobs.List(org), "no job was created")
}

func TestViewerCannotWriteTarget(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(30, 2)
	h.put(b, "p.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k", grade)))
	viewer := *h.c
	viewer.Token = viewerToken
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source":       map[string]any{"object": h.url("p.json"), "attribute": "au"},
		"target":       map[string]any{"object": h.url("p.json"), "attribute": map[string]any{"operation": "create", "name": "z"}},
		"neighborhood": neighbourhood(4)}})
	r, err := viewer.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/knn", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "insufficient-role")
	assert.Contains(t, string(r.Body), `"your_role":"viewer"`)
}
