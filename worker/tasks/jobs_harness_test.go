package tasks_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
	"github.com/geostat-engine/geostat/worker/tasks"
)

// testWorkerID names the tests' worker in the job records (jobs.Options.ID).
const testWorkerID = "tasks-test-worker"

// testJobs is the job manager of a test worker as production runs it
// (worker/service New): its records and queue in NATS JetStream, an
// embedded server with its state under a test directory, and a job's Func
// made from its queued request by the tasks' Rebuilder once the compute
// routes are registered.
type testJobs struct {
	mgr        *jobs.Manager
	st         *jskv.Store
	logger     *slog.Logger
	registered chan struct{}
	rebuilder  func(jobs.Record, []byte) (jobs.Func, error)
}

// startJobs starts an embedded NATS server with its state in natsDir, opens
// the job records and queue in it (jskv) and a manager over them running at
// most maxJobs jobs at once. The server and connection stop at the test's
// cleanup; the caller shuts the manager down before (a cleanup registered
// after this call runs first). Call register with the compute options
// once the routes are registered.
func startJobs(t testing.TB, natsDir string, maxJobs int, logger *slog.Logger) *testJobs {
	t.Helper()
	ns, err := cluster.StartServer(cluster.ServerOptions{Name: "geostat", Dir: natsDir})
	require.NoError(t, err)
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	nc, err := cluster.ConnectInProcess(ns, "geostat-api")
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := jskv.Open(ctx, nc, jskv.Config{})
	require.NoError(t, err)
	tj := &testJobs{st: st, logger: logger, registered: make(chan struct{})}
	tj.mgr, err = jobs.NewManager(jobs.Options{Shared: st, ID: testWorkerID, Rebuild: tj.rebuild, MaxJobs: maxJobs, Logger: logger})
	require.NoError(t, err)
	return tj
}

// register makes the manager's jobs from their queued requests with the
// compute routes registered with co (tasks.Rebuilder), as the service does.
func (tj *testJobs) register(co tasks.ComputeOptions) {
	tj.rebuilder = tasks.Rebuilder(co)
	close(tj.registered)
}

// rebuild is the jobs.Options.Rebuild: the Func waits until the compute
// routes are registered (a job may be taken from the queue before), then
// prepares and runs the task from its queued request.
func (tj *testJobs) rebuild(rec jobs.Record, request []byte) (jobs.Func, error) {
	return func(ctx context.Context, progress func(int, string)) (any, error) {
		select {
		case <-tj.registered:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		fn, err := tj.rebuilder(rec, request)
		if err != nil {
			return nil, err
		}
		return fn(ctx, progress)
	}, nil
}

// another starts a second api worker's manager, named id, on the same
// job records and queue, running at most maxJobs jobs: it runs the jobs it
// takes from the queue from their queued requests (Rebuild), as an api
// worker that did not accept them does. It shuts down at the test's
// cleanup, before the server.
func (tj *testJobs) another(t testing.TB, id string, maxJobs int) *jobs.Manager {
	t.Helper()
	m, err := jobs.NewManager(jobs.Options{Shared: tj.st, ID: id, Rebuild: tj.rebuild, MaxJobs: maxJobs, Logger: tj.logger})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Shutdown(ctx)
	})
	return m
}
