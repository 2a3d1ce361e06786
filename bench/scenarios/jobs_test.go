package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
)

// jobs-overhead at small size: every job checked, and the details report
// the latencies and the NATS messages of the worker's connection per job.
func TestJobsOverheadSmall(t *testing.T) {
	s, ok := Lookup("jobs-overhead")
	require.True(t, ok)
	res, err := harness.Measure(context.Background(), s, harness.Config{Size: synthetic.Small, Seed: 1}, harness.Options{Runs: 1})
	require.NoError(t, err)
	d := res.Details
	assert.Equal(t, float64(jobsCount(synthetic.Small)), d["jobs"], "the timed run's jobs only, not the warm-up's")
	assert.Equal(t, "jobs", res.Throughput.Name)
	assert.Greater(t, d["submit_to_done_p50_ms"], 0.0)
	assert.LessOrEqual(t, d["submit_to_done_p50_ms"], d["submit_to_done_p99_ms"])
	assert.LessOrEqual(t, d["submit_to_done_p99_ms"], d["submit_to_done_max_ms"])
	assert.GreaterOrEqual(t, d["status_polls_per_job"], 1.0)
	// A job is recorded, queued, taken and finished through JetStream.
	assert.GreaterOrEqual(t, d["nats_msgs_out_per_job"], 2.0)
	assert.GreaterOrEqual(t, d["nats_msgs_in_per_job"], 2.0)
	assert.Greater(t, d["nats_bytes_out_per_job"], 0.0)
}

// The sanity check of jobs-overhead is a real oracle: it accepts the
// worker's results and catches a wrong value and a job whose version is
// another's.
func TestJobsOverheadCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jc, err := newJobsCase(3)
	require.NoError(t, err)
	_, client, closeWorker, err := startService("geostat-bench-jobs-test-")
	require.NoError(t, err)
	defer closeWorker()
	const ws = "00000000-0000-4000-8000-0000000000aa"
	body, err := tinyJobsRequest(ctx, client, ws, jc)
	require.NoError(t, err)
	var statuses []string
	for range 3 {
		status, polls, err := runTinyJob(ctx, client, body)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, polls, 1)
		statuses = append(statuses, status)
	}
	require.NoError(t, checkTinyJobs(ctx, client, ws, statuses, jc.want))

	wrong := append([]float64(nil), jc.want...)
	wrong[3] += 1e-9
	assert.ErrorContains(t, checkTinyJobs(ctx, client, ws, statuses, wrong), "cell 3")
	assert.ErrorContains(t, checkTinyJobs(ctx, client, ws, append(statuses, statuses[0]), jc.want), "version of its own")

}
