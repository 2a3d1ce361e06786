package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
)

func TestJobNameFollowsTheWorkerJobAndItsAttempt(t *testing.T) {
	assert.Equal(t, "sim-abc", cluster.AttemptJobName("sim-", "abc", 1), "the first attempt keeps the plain name")
	assert.Equal(t, "sim-abc", cluster.AttemptJobName("sim-", "abc", 0), "a record from before attempts were counted")
	assert.Equal(t, "tile-abc-2", cluster.AttemptJobName("tile-", "abc", 2))
	assert.Equal(t, "lw-abc-3", cluster.AttemptJobName("lw-", "abc", 3))

	// Inside a job's Func: named after the job (its first attempt).
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir()})
	require.NoError(t, err)
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := cluster.ConnectInProcess(ns, "test")
	require.NoError(t, err)
	defer nc.Close()
	st, err := jskv.Open(context.Background(), nc, jskv.Config{})
	require.NoError(t, err)
	m, err := jobs.NewManager(jobs.Options{Shared: st, ID: "w-test"})
	require.NoError(t, err)
	defer m.Shutdown(context.Background())
	rec, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "k"}, func(ctx context.Context, _ func(int, string)) (any, error) {
		return cluster.JobName(ctx, "sim-")
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done, ok := m.Wait(ctx, rec.ID)
	require.True(t, ok)
	assert.JSONEq(t, `"sim-`+rec.ID+`"`, string(done.Result))
	assert.Equal(t, 1, done.Attempts)

	// Outside a job: at random.
	a, err := cluster.JobName(context.Background(), "sim-")
	require.NoError(t, err)
	b, err := cluster.JobName(context.Background(), "sim-")
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	assert.Regexp(t, `^sim-[0-9a-f]{24}$`, a)
}
