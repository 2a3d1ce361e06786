package tasks_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueuedTaskRunsOnAnotherWorker submits an idw task to a worker whose
// only slot is taken, so that a second api worker on the same job queue
// takes it: that worker never saw the submit and runs the task from its
// queued request (tasks.Rebuilder: the body and the caller, whose roles it resolves then). The job
// answers through the worker it was submitted to, owned by the other, and
// writes the same values as the same task run by the submitting worker.
func TestQueuedTaskRunsOnAnotherWorker(t *testing.T) {
	h := start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(150, 7)
	h.put(b, "q/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	spec := objecttest.GridSpec{Size: [3]int{6, 6, 2}, CellSize: [3]float64{15, 15, 10}}
	gid := h.put(b, "q/grid.json", b.Grid("1.3.0", spec))

	// The submitting worker's only slot is held by a job of its own.
	release := make(chan struct{})
	blocker, err := h.jobs.Submit(context.Background(), jobs.Spec{Org: org, Topic: "test", Task: "block", User: "blocker", Workspace: ws},
		func(ctx context.Context, _ func(int, string)) (any, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		})
	require.NoError(t, err)
	rec, started := h.jobs.WaitStarted(ctx, blocker.ID)
	require.True(t, started)
	require.Equal(t, testWorkerID, rec.Owner)
	other := h.tj.another(t, "tasks-test-worker-b", 1)

	idw := func(name string) (jobID string) {
		body, err := json.Marshal(map[string]any{"parameters": map[string]any{
			"source": map[string]any{"object": h.url("q/pts.json"), "attribute": "locations.attributes[?name=='au']"},
			"target": map[string]any{"object": h.url("q/grid.json"), "attribute": map[string]any{"operation": "create", "name": name}},
			"neighborhood": map[string]any{"max_samples": 8, "ellipsoid": map[string]any{
				"ellipsoid_ranges": map[string]any{"major": 60, "semi_major": 40, "minor": 15}}},
			"power": 2}})
		require.NoError(t, err)
		r, err := h.c.Do(ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/idw", body)
		require.NoError(t, err)
		require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
		status := r.Header.Get("Location")
		jobID = status[strings.LastIndex(strings.TrimSuffix(status, "/status"), "/")+1 : len(status)-len("/status")]
		j, err := h.c.Follow(ctx, status)
		require.NoError(t, err)
		require.Equal(t, "succeeded", j.Status, "%s", j.Error)
		return jobID
	}

	id := idw("au_b")
	rec, ok := h.jobs.Get(id)
	require.True(t, ok)
	assert.Equal(t, "tasks-test-worker-b", rec.Owner, "the other worker ran the job")
	assert.Equal(t, 1, rec.Attempts)
	// The owner stores the outcome before it applies it to its own record,
	// so the submitting worker may see the job succeed a moment before the
	// owner's run has ended: wait for that end.
	orec, ok := other.Wait(ctx, id)
	require.True(t, ok)
	assert.Equal(t, jobs.Succeeded, orec.Status)

	// The same task run by the submitting worker, from its own Func.
	ctxStop, stop := context.WithTimeout(ctx, 5*time.Second)
	other.Shutdown(ctxStop)
	stop()
	close(release)
	done, finished := h.jobs.Wait(ctx, blocker.ID)
	require.True(t, finished)
	require.Equal(t, jobs.Succeeded, done.Status)
	id = idw("au_a")
	rec, ok = h.jobs.Get(id)
	require.True(t, ok)
	assert.Equal(t, testWorkerID, rec.Owner, "the submitting worker ran the job")

	obj, blobs := h.latest(gid)
	viaQueue := h.column(obj, blobs, "cell_attributes[?name=='au_b']")
	local := h.column(obj, blobs, "cell_attributes[?name=='au_a']")
	require.Len(t, viaQueue, 72)
	finite := 0
	for _, v := range viaQueue {
		if !math.IsNaN(v) {
			finite++
		}
	}
	assert.Greater(t, finite, 36, "most cells have an estimate")
	assert.Equal(t, local, viaQueue, "the task run from its queued request writes what the submitting worker writes")
}
