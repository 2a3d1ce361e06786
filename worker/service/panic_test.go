package service_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPanicFailsJobWorkerKeepsServing injects a panic into a goroutine of
// a running computation (a worker goroutine of geostat.ForChunks, through
// the progress hook): the job fails with 500 internal, the answer carries
// neither the panic nor the stack (the log does), the worker answers the
// next request and runs the next job, and after a restart over the same
// data directory the job is still failed after one attempt, not run again.
// Before, the panic crashed the worker process, and the job ran again
// after each restart until its attempts were spent.
func TestPanicFailsJobWorkerKeepsServing(t *testing.T) {
	dir := t.TempDir()
	var armed, fired atomic.Bool
	armed.Store(true)
	hook := func(id, task string, percent int) {
		// Only from a goroutine of the computation, never the job's own.
		if armed.Load() && strings.Contains(string(debug.Stack()), "geostat.ForChunks.func") {
			fired.Store(true)
			var s []int
			_ = s[percent+1] // index out of range, as a bug would
		}
	}
	logs := &syncBuffer{}
	opts := testOptions(dir, service.Options{OnJobProgress: hook})
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, stop := run(t, opts)
	c := &workertest.Client{Base: s.URL(), Token: token}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)

	call := demoCall(t, c.Base, "geostatistics", "knn")
	status := submit(t, c, call.Topic, call.Task, call.Body, "Prefer", "respond-async")
	job, err := c.Follow(ctx, status)
	require.NoError(t, err)
	require.True(t, fired.Load(), "the hook panicked in a goroutine of ForChunks")
	require.Equal(t, "failed", job.Status)
	var p problem.Problem
	require.NoError(t, json.Unmarshal(job.Error, &p))
	assert.Equal(t, problem.ComputeInternal, p.Type)
	assert.Equal(t, http.StatusInternalServerError, p.Status)
	r, err := c.Do(ctx, http.MethodGet, status, nil)
	require.NoError(t, err)
	for _, leak := range []string{"goroutine", "index out of range", "ForChunks", ".go:"} {
		assert.NotContains(t, string(r.Body), leak, "the status document leaks the panic")
		assert.NotContains(t, string(job.Error), leak)
	}
	assert.Contains(t, logs.String(), "job failed: internal error (panic)")
	assert.Contains(t, logs.String(), "geostat.ForChunks", "the stack is in the log")

	// The worker keeps serving: the next job of the same request succeeds.
	armed.Store(false)
	next := submit(t, c, call.Topic, call.Task, call.Body, "Prefer", "respond-async")
	job, err = c.Follow(ctx, next)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)

	// After a restart over the same directory the job is not run again.
	id := jobID(status)
	rec, ok := s.Jobs().Get(id)
	require.True(t, ok)
	require.Equal(t, 1, rec.Attempts)
	stop()
	s2, c2, _ := start(t, dir, service.Options{OnJobProgress: hook})
	rec, ok = s2.Jobs().Get(id)
	require.True(t, ok)
	assert.Equal(t, "failed", string(rec.Status))
	assert.Equal(t, 1, rec.Attempts, "not started again")
	require.NotNil(t, rec.Error)
	assert.Equal(t, problem.ComputeInternal, rec.Error.Type)
	// A job submitted after the restart runs (and finds nothing of the
	// failed one in the queue before it).
	after := submit(t, c2, call.Topic, call.Task, call.Body, "Prefer", "respond-async")
	job, err = c2.Follow(ctx, after)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	rec, _ = s2.Jobs().Get(id)
	assert.Equal(t, 1, rec.Attempts, "not started again")
	assert.Equal(t, "failed", string(rec.Status))
}
