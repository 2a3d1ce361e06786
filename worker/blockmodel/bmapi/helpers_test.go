package bmapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/require"
)

const (
	devToken = "bmapi-test-token"
	org      = "4f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02"
	ws       = "91aa2a52-1b7e-4c36-9a0d-0d4b5e8f1a03"
)

// worker is a running worker and a client with its static owner token.
type worker struct {
	t   *testing.T
	svc *service.Service
	c   *workertest.Client
}

// startWorker runs a worker on 127.0.0.1 over a temporary data directory
// until the test ends.
func startWorker(t *testing.T) *worker {
	t.Helper()
	w, _ := startWorkerIn(t, t.TempDir())
	return w
}

// startWorkerIn runs a worker over dir until the test ends or the returned
// stop is called; set changes its options.
func startWorkerIn(t *testing.T, dir string, set ...func(*service.Options)) (*worker, func()) {
	t.Helper()
	opts := service.Options{}
	for _, f := range set {
		f(&opts)
	}
	opts.Addr = "127.0.0.1:0"
	opts.DataDir = dir
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Stdout = io.Discard
	opts.Getenv = func(k string) string {
		if k == server.TokenEnv {
			return devToken
		}
		return ""
	}
	s, err := service.New(opts)
	require.NoError(t, err)
	stop := workertest.Run(t, s)
	return &worker{t: t, svc: s, c: &workertest.Client{Base: s.URL(), Token: devToken, NoRetry: true}}, stop
}

// as returns a client of the worker with another token.
func (w *worker) as(token string) *workertest.Client {
	return &workertest.Client{Base: w.c.Base, Token: token, NoRetry: true}
}

// do sends body (raw bytes, a string, or a value marshalled as JSON; nil
// for none) and requires the status.
func do(t *testing.T, c *workertest.Client, method, path string, body any, want int, header ...string) *workertest.Response {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		data = b
	case string:
		data = []byte(b)
	default:
		var err error
		data, err = json.Marshal(b)
		require.NoError(t, err)
	}
	if data != nil && len(header) == 0 {
		header = []string{"Content-Type", "application/json"}
	}
	r, err := c.Do(context.Background(), method, path, data, header...)
	require.NoError(t, err)
	require.Equal(t, want, r.Status, "%s %s: %s", method, path, r.Body)
	return r
}

// problemType reads the type of a problem answer.
func problemType(t *testing.T, r *workertest.Response) string {
	t.Helper()
	var p struct {
		Type string `json:"type"`
	}
	require.NoError(t, r.JSON(&p))
	return p.Type
}

const errBase = "https://errors.geostat-engine.dev"

// bmPrefix is the prefix of a workspace's block models.
func bmPrefix(org, ws string) string {
	return "/blockmodel/orgs/" + org + "/workspaces/" + ws + "/block-models"
}

// record is the part of the block model record the tests read.
type record struct {
	BMUUID             string     `json:"bm_uuid"`
	Name               string     `json:"name"`
	Description        *string    `json:"description"`
	GeoscienceObjectID string     `json:"geoscience_object_id"`
	JobURL             string     `json:"job_url"`
	NormalizedRotation [3]float64 `json:"normalized_rotation"`
	SizeOptions        struct {
		ModelType string `json:"model_type"`
	} `json:"size_options"`
	CRS *string `json:"coordinate_reference_system"`
}

// create creates a model from a JSON body and returns its record.
func create(t *testing.T, c *workertest.Client, org, ws, body string) record {
	t.Helper()
	var rec record
	require.NoError(t, do(t, c, http.MethodPost, bmPrefix(org, ws), body, http.StatusCreated).JSON(&rec))
	return rec
}

// regularBody is the A.9.1 example with a name and folder.
func regularBody(name, folder string) string {
	b := `{"name": "` + name + `", "description": "regular SMU model", "comment": "first cut",
 "coordinate_reference_system": "EPSG:32755", "size_unit_id": "m",
 "model_origin": {"x": 1000, "y": 2000, "z": 300},
 "block_rotation": [{"axis": "z", "angle": 45}, {"axis": "x", "angle": 30}],
 "size_options": {"model_type": "regular", "n_blocks": {"nx": 4, "ny": 3, "nz": 2},
                  "block_size": {"x": 10, "y": 20, "z": 5}}`
	if folder != "" {
		b += `, "object_path": "` + folder + `"`
	}
	return b + "}"
}

// jobStatus is a job answer.
type jobStatus struct {
	JobStatus string          `json:"job_status"`
	Payload   json.RawMessage `json:"payload"`
}

// getJob reads a job by its URL.
func getJob(t *testing.T, c *workertest.Client, url string) jobStatus {
	t.Helper()
	var j jobStatus
	require.NoError(t, do(t, c, http.MethodGet, url, nil, http.StatusOK).JSON(&j))
	return j
}

// waitJob polls a job (every 10 ms, at most 20 s) until it is COMPLETE or
// FAILED.
func waitJob(t *testing.T, c *workertest.Client, url string) jobStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j := getJob(t, c, url)
		if j.JobStatus == "COMPLETE" || j.JobStatus == "FAILED" {
			return j
		}
		require.True(t, time.Now().Before(deadline), "job %s still %s", url, j.JobStatus)
		time.Sleep(10 * time.Millisecond)
	}
}

// pathOf strips the base of an absolute URL of the worker.
func pathOf(c *workertest.Client, url string) string { return strings.TrimPrefix(url, c.Base) }
