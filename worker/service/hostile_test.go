package service_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileInputsStayAnswered sends the probe corpus (malformed JSON,
// NaN and Infinity, huge bodies, gzip bombs, path tricks, wrong kinds,
// unknown tasks) to a real worker: every answer is a 4xx problem document
// whose status member equals the HTTP status.
func TestHostileInputsStayAnswered(t *testing.T) {
	s, c, _ := start(t, t.TempDir(), service.Options{})
	ctx := context.Background()
	_, seedErr := s.SeedDemo(ctx)
	require.NoError(t, seedErr)
	compute := "/compute/orgs/" + demo.Org + "/geostatistics/"
	seed := "/compute/orgs/" + demo.Org + "/geostat/"
	objects := "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/"
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte(" "), 70<<20)) // decompresses past the 64 MiB object limit
	zw.Close()
	knnFrom := func(source string) []byte {
		b, _ := json.Marshal(map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": demoURL(c.Base, source), "attribute": "cu"},
			"target":       map[string]any{"object": demoURL(c.Base, demo.GridPath), "attribute": map[string]any{"operation": "create", "name": "x"}},
			"neighborhood": map[string]any{"max_samples": 4, "ellipsoid": map[string]any{"ellipsoid_ranges": map[string]any{"major": 1, "semi_major": 1, "minor": 1}}}}})
		return b
	}
	cases := []struct {
		name, method, path string
		body               []byte
		header             []string
	}{
		{"malformed JSON", http.MethodPost, compute + "knn", []byte(`{"parameters": {`), nil},
		{"NaN literal", http.MethodPost, compute + "knn", []byte(`{"parameters": {"neighborhood": {"max_samples": NaN}}}`), nil},
		{"Infinity literal", http.MethodPost, seed + "knn", []byte(`{"neighborhood": {"max-samples": Infinity}}`), nil},
		{"number out of range", http.MethodPost, compute + "kriging", []byte(`{"parameters": {"neighborhood": {"max_samples": 1e400}}}`), nil},
		{"body over 1 MiB", http.MethodPost, compute + "knn", []byte(`{"parameters": {"x": "` + strings.Repeat("a", 2<<20) + `"}}`), nil},
		{"gzip bomb to a task", http.MethodPost, compute + "knn", bomb.Bytes(), []string{"Content-Encoding", "gzip"}},
		{"gzip bomb to an object", http.MethodPost, objects + "bomb.json", bomb.Bytes(), []string{"Content-Encoding", "gzip"}},
		{"wrong kind", http.MethodPost, compute + "knn", knnFrom(demo.VariogramPath), nil},
		{"unknown task", http.MethodPost, compute + "nope", []byte(`{}`), nil},
		{"array body", http.MethodPost, compute + "knn", []byte(`[1, 2, 3]`), nil},
		{"job id with dots", http.MethodGet, compute + "knn/..%2F..%2Fjobs/status", nil, nil},
		{"job id traversal", http.MethodGet, compute + "knn/%2e%2e/status", nil, nil},
		{"job id not a uuid", http.MethodDelete, compute + "knn/' OR 1=1", nil, nil},
		{"org not a uuid", http.MethodGet, "/compute/orgs/..%2F/geostatistics/knn/x/status", nil, nil},
		{"report traversal", http.MethodGet, "/compute/orgs/" + demo.Org + "/reports/" + demo.Workspace + "/..%2F..%2Fdev-token", nil, nil},
		{"report bad workspace", http.MethodGet, "/compute/orgs/" + demo.Org + "/reports/nope/abc", nil, nil},
		{"object path trick", http.MethodGet, objects + "..%2F..%2Fdev-token", nil, nil},
		{"file path trick", http.MethodPut, "/file/v2/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/files/path/a%2F..%2F..%2Fb.txt", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.Do(ctx, tc.method, tc.path, tc.body, tc.header...)
			require.NoError(t, err)
			require.GreaterOrEqual(t, r.Status, 400, "%s", r.Body)
			require.Less(t, r.Status, 500, "%s", r.Body)
			assert.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
			var p struct{ Status int }
			require.NoError(t, r.JSON(&p))
			assert.Equal(t, r.Status, p.Status)
		})
	}
}

// FuzzJobAndReportRoutes drives the job routes (status, results, cancel) of
// both topics and the report page with arbitrary ids, in-process: no answer
// is a server error, every error is problem JSON, and the one real job
// answers.
func FuzzJobAndReportRoutes(f *testing.F) {
	s, c := startFuzz(f)
	h := s.App().Handler()
	call := func(method, path string) *httptest.ResponseRecorder {
		req, err := http.NewRequest(method, path, nil)
		if err != nil {
			return nil
		}
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	f.Add("00000000-0000-4000-8000-000000000000", uint8(0))
	f.Add(c, uint8(0))
	f.Add(c, uint8(1))
	f.Add("abc", uint8(3))
	f.Add("../../jobs", uint8(2))
	f.Add("%2e%2e", uint8(4))
	f.Add("a b\x00c", uint8(5))
	f.Fuzz(func(t *testing.T, id string, route uint8) {
		topic := []string{"geostatistics", "geostat"}[route%2]
		esc := id
		if route&8 != 0 {
			esc = url.PathEscape(id)
		}
		job := "/compute/orgs/" + demo.Org + "/" + topic + "/knn/" + esc
		var rec *httptest.ResponseRecorder
		switch route / 2 % 4 {
		case 0:
			rec = call(http.MethodGet, job+"/status")
		case 1:
			rec = call(http.MethodGet, job)
		case 2:
			rec = call(http.MethodDelete, job)
		default:
			rec = call(http.MethodGet, "/compute/orgs/"+demo.Org+"/reports/"+demo.Workspace+"/"+esc)
		}
		if rec == nil {
			return // not a request URL at all
		}
		if id == c && route&8 == 0 && route/2%4 != 3 && rec.Code != http.StatusOK && !(route%2 == 1 || route/2%4 == 2) {
			t.Fatalf("the real job %s: HTTP %d %s", id, rec.Code, rec.Body)
		}
		if rec.Code >= 500 {
			t.Fatalf("%s: HTTP %d %s", id, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("%s: HTTP %d with Content-Type %q", id, rec.Code, ct)
			}
			var p struct{ Status int }
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != rec.Code {
				t.Fatalf("%s: HTTP %d, problem %s", id, rec.Code, rec.Body)
			}
		}
	})
}

// startFuzz builds a worker (not serving: the fuzz target calls its handler)
// with the demo seeded and one finished knn job, whose id it returns.
func startFuzz(f *testing.F) (*service.Service, string) {
	s, err := service.New(testOptions(f.TempDir(), service.Options{}))
	require.NoError(f, err)
	f.Cleanup(func() { s.Stop(context.Background()) })
	_, seedErr := s.SeedDemo(context.Background())
	require.NoError(f, seedErr)
	knn := demoCall(f, "http://example.test", "geostatistics", "knn")
	req := httptest.NewRequest(http.MethodPost, knn.Path(), bytes.NewReader(knn.Body))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	s.App().Handler().ServeHTTP(rec, req)
	require.Equal(f, http.StatusSeeOther, rec.Code, rec.Body.String())
	id := jobID(rec.Header().Get("Location"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, done := s.Jobs().Wait(ctx, id)
	require.True(f, done)
	require.Equal(f, jobs.Succeeded, r.Status, "%+v", r.Error)
	return s, id
}
