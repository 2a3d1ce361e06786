package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExposition(t *testing.T) {
	m := New()
	m.JobFinished("geostatistics", "knn", "succeeded", 1500*time.Millisecond)
	m.JobFinished("geostatistics", "knn", "failed", time.Second)
	m.Submitted("geostat", "knn", 200)
	m.Request("GET", "GET /healthz", 200, time.Millisecond)
	m.Request("GET", "", 404, time.Millisecond)
	m.WatchCluster(func() uint64 { return 3 })
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	assert.Contains(t, body, `geostat_jobs_total{status="succeeded",task="knn",topic="geostatistics"} 1`)
	assert.Contains(t, body, `geostat_job_duration_seconds_count{task="knn",topic="geostatistics"} 2`)
	assert.Contains(t, body, `geostat_task_submissions_total{code="200",task="knn",topic="geostat"} 1`)
	assert.Contains(t, body, `geostat_http_requests_total{code="200",method="GET",route="GET /healthz"} 1`)
	assert.Contains(t, body, `route="unmatched"`)
	assert.Contains(t, body, "geostat_cluster_cleanup_failures_total 3")
	assert.Contains(t, body, "go_goroutines")
}
