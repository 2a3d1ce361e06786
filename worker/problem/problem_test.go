package problem_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"

	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocumentRoundTrip(t *testing.T) {
	p := problem.Problem{Type: problem.ComputeValidation, Title: "Validation Error.", Status: 422, Detail: "a <b> & c",
		Extra: map[string]any{"invalid-params": []any{map[string]any{"name": "x", "reason": "y"}}}}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"https://errors.geostat-engine.dev/compute/validation","title":"Validation Error.","status":422,
		"detail":"a <b> & c","invalid-params":[{"name":"x","reason":"y"}]}`, string(b))
	var back problem.Problem
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, p, back)
	// An empty detail is null and reads back empty.
	b, _ = json.Marshal(problem.Problem{Type: "t", Title: "T", Status: 404})
	assert.JSONEq(t, `{"type":"t","title":"T","status":404,"detail":null}`, string(b))
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, problem.Problem{Type: "t", Title: "T", Status: 404}, back)
}

func TestFrom(t *testing.T) {
	e := problem.New(http.StatusConflict, problem.ObjectBlobExists, "Blob Already Exists.", "immutable")
	assert.Equal(t, 409, problem.From(fmt.Errorf("wrapped: %w", e)).Status, "the first carrier in the chain")
	// A body over the limit is 413 whatever wraps it.
	mbe := &http.MaxBytesError{Limit: 10}
	inner := &problem.Error{Status: 500, Type: problem.FileInternal, Title: "An Error Occurred.", Err: mbe}
	p := problem.From(inner)
	assert.Equal(t, 413, p.Status)
	assert.Contains(t, p.Detail, "10 bytes")
	// Anything else is a fault of the worker, its cause not shown.
	p = problem.From(errors.New("open /secret/path: permission denied"))
	assert.Equal(t, 500, p.Status)
	assert.NotContains(t, p.Detail, "secret")
	// A server error without a detail gets a generic one.
	assert.NotEmpty(t, problem.From(&problem.Error{Status: 502, Type: problem.ObjectStorage, Err: errors.New("disk")}).Detail)
	assert.Equal(t, "disk full: x", (&problem.Error{Detail: "disk full", Err: errors.New("x")}).Error())
}

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("ETag", `"abc"`)
	rec.Header().Set("Content-Length", "99")
	problem.Write(rec, problem.Problem{Type: problem.RouteNotFound, Title: "Not Found.", Status: 404, Detail: "no route for GET /a?b=<c>&d"})
	assert.Equal(t, 404, rec.Code)
	assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
	assert.Empty(t, rec.Header().Get("ETag"), "headers of a body not sent are dropped")
	assert.Empty(t, rec.Header().Get("Content-Length"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m))
	assert.Equal(t, float64(404), m["status"])
	assert.Contains(t, rec.Body.String(), "/a?b=<c>&d", "no HTML escaping")
	// A status that is not an error status is a fault: 500.
	rec = httptest.NewRecorder()
	problem.Write(rec, problem.Problem{Type: "x", Title: "X", Status: 200})
	assert.Equal(t, 500, rec.Code)
}

// ExampleFrom turns errors into documents: an error that carries one keeps
// it, anything else is a 500 that does not show its cause.
func ExampleFrom() {
	err := fmt.Errorf("loading: %w", problem.New(http.StatusNotFound, problem.ComputeJobNotFound, "Job Not Found.", "no job 42"))
	p := problem.From(err)
	fmt.Println(p.Status, p.Type, p.Detail)
	p = problem.From(errors.New("disk on fire"))
	fmt.Println(p.Status, p.Detail)
	// Output:
	// 404 https://errors.geostat-engine.dev/compute/job-not-found no job 42
	// 500 the server could not complete the request
}

// TestUndocumentedStatus checks the lookup of the route status table.
func TestUndocumentedStatus(t *testing.T) {
	const content = "GET /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}"
	assert.False(t, problem.Undocumented(http.MethodGet, "POST /compute/orgs/{org_id}/geostatistics/{task}", http.StatusUnprocessableEntity))
	assert.True(t, problem.Undocumented(http.MethodGet, "POST /compute/orgs/{org_id}/geostatistics/{task}", http.StatusOK))
	assert.False(t, problem.Undocumented(http.MethodHead, content, http.StatusOK))
	assert.True(t, problem.Undocumented(http.MethodHead, content, http.StatusPartialContent))
	assert.False(t, problem.Undocumented(http.MethodGet, content, http.StatusPartialContent))
	assert.False(t, problem.Undocumented(http.MethodGet, "GET /not/in/the/table", http.StatusTeapot))
	// It runs on every error answer: the table is built once, not per call.
	allocs := testing.AllocsPerRun(10, func() {
		problem.Undocumented(http.MethodGet, "POST /compute/orgs/{org_id}/geostatistics/{task}", http.StatusOK)
	})
	assert.Zero(t, allocs, "allocations per lookup")
}

// TestFromFullDisk: a server error whose chain holds ENOSPC or EDQUOT,
// however wrapped, is 507 insufficient-storage of its area; an error that
// names its operation keeps its detail; client errors are kept.
func TestFromFullDisk(t *testing.T) {
	full := &os.PathError{Op: "write", Path: "/data/tmp/x", Err: syscall.ENOSPC}
	p := problem.From(&problem.Error{Status: http.StatusBadGateway, Type: problem.ObjectStorage, Err: fmt.Errorf("writing: %w", full)})
	assert.Equal(t, http.StatusInsufficientStorage, p.Status)
	assert.Equal(t, problem.ObjectInsufficientStorage, p.Type)
	assert.Equal(t, "writing data: no space left on device", p.Detail)
	p = problem.From(&problem.Error{Status: http.StatusInternalServerError, Type: problem.FileInternal, Err: full})
	assert.Equal(t, problem.FileInsufficientStorage, p.Type)
	p = problem.From(fmt.Errorf("job: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}))
	assert.Equal(t, http.StatusInsufficientStorage, p.Status)
	assert.Equal(t, "writing data: disk quota exceeded", p.Detail)
	p = problem.From(problem.InsufficientStorage(problem.ComputeInsufficientStorage, "writing the job's output", full))
	assert.Equal(t, "writing the job's output: no space left on device", p.Detail)
	assert.NotContains(t, p.Detail, "/data", "the cause is not shown")
	p = problem.From(&problem.Error{Status: http.StatusBadRequest, Type: problem.ObjectBadRequest, Detail: "bad", Err: full})
	assert.Equal(t, http.StatusBadRequest, p.Status, "a client error stays")
	assert.False(t, problem.NoSpace(errors.New("other")))
}
