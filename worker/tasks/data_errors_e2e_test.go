package tasks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	prob "github.com/geostat-engine/geostat/worker/problem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// knnBody is a current-shape knn request from source to a new attribute of
// target.
func knnBody(h *harness, source, attr, target string) []byte {
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source":       map[string]any{"object": h.url(source), "attribute": attr},
		"target":       map[string]any{"object": h.url(target), "attribute": map[string]any{"operation": "create", "name": "est"}},
		"neighborhood": neighbourhood(4)}})
	return body
}

// seedKNNBody is the same request in the seed's shape.
func seedKNNBody(h *harness, source, attr, target string) []byte {
	body, _ := json.Marshal(map[string]any{
		"source": map[string]any{"type": "geoscience-object-reference", "object_reference": h.url(source),
			"object_element": []any{map[string]any{"type": "element", "path": "/locations/attributes/@name=" + attr}}},
		"target": map[string]any{"object_reference": h.url(target), "object_element": []any{map[string]any{"path": "/locations/attributes/@name=est"}}},
		"neighborhood": map[string]any{"max-samples": 4, "anisotropy": map[string]any{
			"ellipsoid_ranges": map[string]any{"major": 60, "semi_major": 40, "minor": 15}}}})
	return body
}

// invalidData asserts a 422 invalid-data problem naming the object (and the
// member when given) and returns it.
func invalidData(t *testing.T, p map[string]any, object, member string) {
	t.Helper()
	assert.Equal(t, prob.ComputeInvalidData, p["type"])
	assert.Equal(t, float64(http.StatusUnprocessableEntity), p["status"])
	assert.Contains(t, p["detail"], object)
	if member != "" {
		assert.Contains(t, p["detail"], member)
	}
}

// runFails submits body (current shape), follows the job and returns its
// error document, asserting it failed.
func runFails(t *testing.T, h *harness, task string, body []byte) map[string]any {
	t.Helper()
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/"+task, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	job, err := h.c.Follow(h.ctx, r.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "failed", job.Status)
	var p map[string]any
	require.NoError(t, json.Unmarshal(job.Error, &p))
	return p
}

// TestUserDataErrorsAre4xx stores objects a careless user could store and
// checks that every task answers 4xx naming the object, never 500: at submit
// where the check needs only the documents, in the job's error (with the
// same status on the seed's synchronous route) where it needs the data.
func TestUserDataErrorsAre4xx(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(30, 5)
	h.put(b, "good.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	compute := "/compute/orgs/" + org + "/geostatistics/"

	t.Run("attribute length differs from the geometry: 422 at submit", func(t *testing.T) {
		many := make([]float64, 1440) // 48 values per point
		h.put(b, "long-attr.json", b.Pointset("1.3.0", xyz, b.Scalar("cu", "k-cu", many)))
		p := problem(t, h, compute+"knn", knnBody(h, "long-attr.json", "cu", "good.json"), http.StatusUnprocessableEntity, "/invalid-data")
		invalidData(t, p, "long-attr.json", "cu")
		assert.Contains(t, p["detail"], "1440")
		assert.Equal(t, "source", p["field"])
	})

	t.Run("grid whose cell count overflows: 422 at submit", func(t *testing.T) {
		doc := b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{2, 2, 1}, CellSize: [3]float64{1, 1, 1}})
		doc["size"] = []any{3037000500, 3037000500, 1}
		h.put(b, "huge-grid.json", doc)
		p := problem(t, h, compute+"knn", knnBody(h, "good.json", "au", "huge-grid.json"), http.StatusUnprocessableEntity, "/invalid-data")
		invalidData(t, p, "huge-grid.json", "size")
		assert.Empty(t, h.jobs.List(org), "no job was created")
	})

	t.Run("corrupt Parquet under its correct SHA-256 name: the job fails 422", func(t *testing.T) {
		junk := []byte("PAR1 this is not a parquet file PAR1")
		d := sha256.Sum256(junk)
		key := hex.EncodeToString(d[:])
		b.Put(key, junk)
		doc := b.Pointset("1.3.0", xyz, b.Scalar("cu", "k-cu", grade))
		doc["locations"].(map[string]any)["attributes"].([]any)[0].(map[string]any)["values"] = objecttest.Element(key, 30, 1, "float64")
		h.put(b, "corrupt.json", doc)
		p := runFails(t, h, "knn", knnBody(h, "corrupt.json", "cu", "good.json"))
		invalidData(t, p, "corrupt.json", "values")
		// The seed's synchronous route answers the job's status.
		p = problem(t, h, "/compute/orgs/"+org+"/geostat/knn", seedKNNBody(h, "corrupt.json", "cu", "good.json"), http.StatusUnprocessableEntity, "/invalid-data")
		invalidData(t, p, "corrupt.json", "")
		assert.NotEmpty(t, p["job_id"])
	})

	t.Run("Parquet row count differs from the declared length: the job fails 422", func(t *testing.T) {
		key := b.Float64([][]float64{append(append([]float64{}, grade...), 1, 2, 3)}, []string{"cu"})
		doc := b.Pointset("1.3.0", xyz, b.Scalar("cu", "k-cu", grade))
		doc["locations"].(map[string]any)["attributes"].([]any)[0].(map[string]any)["values"] = objecttest.Element(key, 30, 1, "float64")
		h.put(b, "rows.json", doc)
		p := runFails(t, h, "knn", knnBody(h, "rows.json", "cu", "good.json"))
		invalidData(t, p, "rows.json", "")
		assert.Contains(t, p["detail"], "33")
	})

	t.Run("kriging from a point set with no finite value: the job fails 422", func(t *testing.T) {
		nan := make([]float64, 30)
		for i := range nan {
			nan[i] = math.NaN()
		}
		h.put(b, "nan.json", b.Pointset("1.3.0", xyz, b.Scalar("cu", "k-cu", nan)))
		h.put(b, "vario.json", objecttest.Variogram("1.2.0"))
		body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": h.url("nan.json"), "attribute": "cu"},
			"target":       map[string]any{"object": h.url("good.json"), "attribute": map[string]any{"operation": "create", "name": "k"}},
			"variogram":    h.url("vario.json"),
			"neighborhood": neighbourhood(8)}})
		p := runFails(t, h, "kriging", body)
		invalidData(t, p, "nan.json", "cu")
		assert.Contains(t, p["detail"], "no finite value")
	})

	// No answer above was a 500, and no failed job left a new version.
	for _, rec := range h.jobs.List(org) {
		if rec.Error != nil {
			assert.Less(t, rec.Error.Status, 500, "job %s: %+v", rec.ID, rec.Error)
			assert.False(t, strings.Contains(rec.Error.Type, "task-failed"))
		}
	}
}

// TestOutputLargerThanFreeDiskIsRefused checks the disk admission: an output
// the data directory cannot hold is 422 at submit naming both figures.
func TestOutputLargerThanFreeDiskIsRefused(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(30, 5)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	h.put(b, "grid.json", b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{100, 100, 10}, CellSize: [3]float64{1, 1, 2}}))
	// The knn output is one float64 per cell: 100 000 cells need 800 000
	// bytes; the probe reports 100 000 free.
	h.env.FreeDisk = func() (int64, error) { return 100_000, nil }
	p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/knn", knnBody(h, "pts.json", "au", "grid.json"), http.StatusUnprocessableEntity, "/insufficient-storage")
	assert.Equal(t, float64(800_000), p["needed_bytes"])
	assert.Equal(t, float64(100_000), p["free_bytes"])
	assert.Contains(t, p["detail"], "0.8 MiB")
	assert.Contains(t, p["detail"], "0.1 MiB")
	assert.Empty(t, h.jobs.List(org), "no job was created")
	// With room for it, the same request runs.
	h.env.FreeDisk = func() (int64, error) { return 800_000, nil }
	job, err := h.c.RunTask(h.ctx, org, "knn", map[string]any{
		"source":       map[string]any{"object": h.url("pts.json"), "attribute": "au"},
		"target":       map[string]any{"object": h.url("grid.json"), "attribute": map[string]any{"operation": "create", "name": "est"}},
		"neighborhood": neighbourhood(4)})
	require.NoError(t, err)
	assert.Equal(t, "succeeded", job.Status, "%s", job.Error)
}
