package service_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
)

// ageRecord moves a finished job's finished_at back by age, in the job
// records of a stopped worker's embedded NATS server (DATA/nats).
func ageRecord(t *testing.T, dataDir, id string, age time.Duration) {
	t.Helper()
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: filepath.Join(dataDir, "nats")})
	require.NoError(t, err)
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := cluster.ConnectInProcess(ns, "test")
	require.NoError(t, err)
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := jskv.Open(ctx, nc, jskv.Config{})
	require.NoError(t, err)
	rec, _, err := st.Update(ctx, id, func(r *jobs.Record) error {
		at := time.Now().Add(-age).UTC()
		r.FinishedAt = &at
		return nil
	})
	require.NoError(t, err)
	require.True(t, rec.Status.Finished())
}

// targetVersion reads the version id of a demo object.
func targetVersion(t *testing.T, c *workertest.Client, path string) string {
	t.Helper()
	r, err := c.Do(context.Background(), http.MethodGet, "/geoscience-object/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/objects/path/"+path, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var v struct {
		VersionID string `json:"version_id"`
	}
	require.NoError(t, r.JSON(&v))
	return v.VersionID
}

// waitMessage polls a job's status through c (bounded) until its message
// contains part.
func waitMessage(t *testing.T, c *workertest.Client, statusURL, part string) {
	t.Helper()
	var last []byte
	for i := 0; i < 3000; i++ {
		r, err := c.Do(context.Background(), http.MethodGet, statusURL, nil)
		require.NoError(t, err)
		if strings.Contains(string(r.Body), part) {
			return
		}
		last = r.Body
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the job's message never contained %q through %s: %s", part, c.Base, last)
}

// waitStatus polls a job's status through c (bounded) until it reads want.
func waitStatus(t *testing.T, c *workertest.Client, statusURL, want string) {
	t.Helper()
	var last []byte
	for i := 0; i < 3000; i++ {
		r, err := c.Do(context.Background(), http.MethodGet, statusURL, nil)
		require.NoError(t, err)
		if containsStatus(r.Body, want) {
			return
		}
		last = r.Body
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the job never read %q through %s: %s", want, c.Base, last)
}

// Two api workers on one NATS server (the first embeds it and listens on
// 127.0.0.1, the second joins it and reads the objects of the first): a
// job submitted to the first runs on the second when the first is busy
// (made again from its queued request), and is polled and read through
// either; a running job is cancelled through the worker that does not run
// it, leaving its target as it was.
func TestTwoAPIWorkersShareJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two workers and a simulation")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	one := service.Options{MaxJobs: 1, Threads: 1, Options: server.Options{ShutdownTimeout: 200 * time.Millisecond}}
	optsA := one
	creds := natsCredentials(t)
	optsA.Cluster = service.ClusterOptions{Listen: natsAddr, Users: creds.Users}
	a, ca, _ := start(t, t.TempDir(), optsA)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = a.SeedDemo(ctx)
	require.NoError(t, err)

	// A long simulation starts on a, the only api worker so far.
	heavy := startHeavy(t, a, ca)

	optsB := one
	optsB.Cluster = service.ClusterOptions{NATS: "nats://" + natsAddr, Credentials: creds.API}
	optsB.ObjectsURL, optsB.ObjectsToken = ca.Base, token
	b, cb, _ := start(t, t.TempDir(), optsB)
	waitStatus(t, cb, heavy, "in progress")

	// a is busy (one job at a time): b takes the next job submitted to a.
	knn := demoCall(t, ca.Base, "geostatistics", "knn")
	status := submit(t, ca, knn.Topic, knn.Task, knn.Body)
	jb, err := cb.Follow(ctx, status)
	require.NoError(t, err)
	require.Equal(t, "succeeded", jb.Status, "%s", jb.Error)
	ja, err := ca.Follow(ctx, status)
	require.NoError(t, err)
	assert.JSONEq(t, string(ja.Results), string(jb.Results), "both workers read the same result")
	ra, _ := a.Jobs().Get(jobID(status))
	rb, _ := b.Jobs().Get(jobID(status))
	ha, _ := a.Jobs().Get(jobID(heavy))
	assert.Equal(t, rb.Owner, ra.Owner)
	assert.NotEqual(t, ha.Owner, rb.Owner, "the job submitted to busy a ran on b")

	// A synchronous submit of the seed's shape to busy a waits for the job
	// b runs and answers its result.
	seed := demoCall(t, ca.Base, "geostat", "knn")
	r, err := ca.Do(ctx, http.MethodPost, seed.Path(), seed.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "knn")

	// The simulation running on a is cancelled through b (the knn jobs
	// wrote other versions of its target; it writes none).
	before := targetVersion(t, ca, demo.GridPath)
	r, err = cb.Do(ctx, http.MethodDelete, jobURL(heavy), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	for _, c := range []*workertest.Client{ca, cb} {
		j, err := c.Follow(ctx, heavy)
		require.NoError(t, err)
		assert.Equal(t, "cancelled", j.Status)
	}
	assert.Equal(t, before, targetVersion(t, ca, demo.GridPath), "the cancelled job left its target as it was")

	// A job waiting in the shared queue is cancelled through either worker
	// at once: a runs a long job, b is given one too, a third waits.
	heavyA := submit(t, ca, "geostatistics", "conditional-turning-bands", heavySimulation(ca.Base))
	heavyB := submit(t, cb, "geostatistics", "conditional-turning-bands", heavySimulation(ca.Base))
	waitStatus(t, ca, heavyA, "in progress")
	waitStatus(t, ca, heavyB, "in progress")
	queued := submit(t, ca, knn.Topic, knn.Task, knn.Body)
	waitStatus(t, cb, queued, "requested")
	r, err = cb.Do(ctx, http.MethodDelete, jobURL(queued), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	j, err := ca.Follow(ctx, queued)
	require.NoError(t, err)
	assert.Equal(t, "cancelled", j.Status)
	for _, u := range []string{heavyA, heavyB} {
		r, err := ca.Do(ctx, http.MethodDelete, jobURL(u), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		j, err := cb.Follow(ctx, u)
		require.NoError(t, err)
		assert.Equal(t, "cancelled", j.Status)
	}
}

// A worker stopped with a job running and one queued, then started again
// over the same data directory: the finished job still answers, the
// running one reads requested again (to run again, attempt 2 of 3), the
// queued one runs.
func TestRestartRunsQueuedJobs(t *testing.T) {
	dir := t.TempDir()
	opts := service.Options{MaxJobs: 1, Threads: 1, Options: server.Options{ShutdownTimeout: 200 * time.Millisecond}}
	s, c, stop := start(t, dir, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	knn := demoCall(t, c.Base, "geostatistics", "knn")
	done := submit(t, c, knn.Topic, knn.Task, knn.Body)
	first, err := c.Follow(ctx, done)
	require.NoError(t, err)
	require.Equal(t, "succeeded", first.Status)
	running := startHeavy(t, s, c)
	queued := submit(t, c, knn.Topic, knn.Task, knn.Body)
	waitStatus(t, c, queued, "requested")
	stop()

	_, c2, _ := start(t, dir, opts)
	again, err := c2.Follow(ctx, done)
	require.NoError(t, err)
	assert.Equal(t, "succeeded", again.Status)
	assert.JSONEq(t, string(first.Results), string(again.Results))
	j, err := c2.Follow(ctx, queued)
	require.NoError(t, err)
	assert.Equal(t, "succeeded", j.Status, "the job queued when the worker stopped ran after its restart: %s", j.Error)
	requireRunAgain(t, c2, running)
	// Its queue message may come back only after the ack deadline (60 s);
	// not waited for here: cancelled.
	r, err := c2.Do(ctx, http.MethodDelete, jobURL(running), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, r.Status)
	waitStatus(t, c2, running, "cancelled")
}

// The job records of a worker of an earlier version (one JSON file each
// under DATA/jobs, as its directory store wrote them) are imported at
// start, once: a finished job still answers with its result, one left
// running or queued reads failed as interrupted (503), an unreadable file
// is skipped, and the directory is renamed jobs.imported.
func TestImportsRecordsOfAnEarlierWorker(t *testing.T) {
	dir := t.TempDir()
	jobsDir := filepath.Join(dir, "jobs")
	require.NoError(t, os.MkdirAll(jobsDir, 0o755))
	finished := time.Now().UTC().Add(-time.Hour)
	files := map[string]string{
		"5d1c2c43-9d0e-4c38-8f0a-6f4f3c1e9a01.json": `{
  "id": "5d1c2c43-9d0e-4c38-8f0a-6f4f3c1e9a01", "org": "` + demo.Org + `", "topic": "geostatistics", "task": "knn",
  "workspace": "` + demo.Workspace + `", "status": "succeeded", "progress": 100, "message": "Job succeeded",
  "error": null, "result": {"answer": 42}, "created_at": "` + finished.Format(time.RFC3339Nano) + `",
  "finished_at": "` + finished.Format(time.RFC3339Nano) + `"}`,
		"0b6f3f4e-2b1e-4a51-9a57-3f1f0c7f1a11.json": `{"id": "0b6f3f4e-2b1e-4a51-9a57-3f1f0c7f1a11", "org": "` + demo.Org + `",
  "topic": "geostatistics", "task": "knn", "workspace": "` + demo.Workspace + `", "status": "in progress", "progress": 40,
  "message": "simulating", "error": null, "created_at": "` + finished.Format(time.RFC3339Nano) + `"}`,
		"7a3e9f10-1c2d-4e5f-8a9b-0c1d2e3f4a5b.json": `{"id": "7a3e9f10-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "org": "` + demo.Org + `",
  "topic": "geostatistics", "task": "knn", "workspace": "` + demo.Workspace + `", "status": "requested", "progress": 0,
  "message": "Job requested", "error": null, "created_at": "` + finished.Format(time.RFC3339Nano) + `"}`,
		"broken.json": `{"id": `,
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(jobsDir, name), []byte(body), 0o644))
	}

	_, c, stop := start(t, dir, service.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := "/compute/orgs/" + demo.Org + "/geostatistics/knn/"
	j, err := c.Follow(ctx, base+"5d1c2c43-9d0e-4c38-8f0a-6f4f3c1e9a01/status")
	require.NoError(t, err)
	assert.Equal(t, "succeeded", j.Status)
	assert.JSONEq(t, `{"answer":42}`, string(j.Results))
	for _, id := range []string{"0b6f3f4e-2b1e-4a51-9a57-3f1f0c7f1a11", "7a3e9f10-1c2d-4e5f-8a9b-0c1d2e3f4a5b"} {
		p := jobError(t, c, base+id+"/status")
		assert.Equal(t, http.StatusServiceUnavailable, p.Status, id)
		assert.Contains(t, p.Type, "interrupted", id)
	}
	assert.DirExists(t, filepath.Join(dir, "jobs.imported"))
	assert.NoDirExists(t, filepath.Join(dir, "jobs"))

	// A restart imports nothing again: the records are those of the store.
	stop()
	_, c, _ = start(t, dir, service.Options{})
	j, err = c.Follow(ctx, base+"5d1c2c43-9d0e-4c38-8f0a-6f4f3c1e9a01/status")
	require.NoError(t, err)
	assert.Equal(t, "succeeded", j.Status)
}

// childJobAckWait is the -job-ack-wait of the worker processes and
// workers of TestKilledAPIWorkersJobRunsAgainOnAnother.
const childJobAckWait = time.Second

// An api worker process joined to another's NATS server is killed (SIGKILL
// by PID) while it runs a simulation submitted to it: after the ack
// deadline the surviving api worker takes the job's message, cancels and
// forgets the shards of the killed attempt, and runs the job again (its
// attempt 2, its cluster job named after the attempt) to success, with the
// same data as an uninterrupted run.
func TestKilledAPIWorkersJobRunsAgainOnAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a worker process and simulations")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	creds := natsCredentials(t)
	b, cb, _ := start(t, t.TempDir(), service.Options{MaxJobs: 1, Threads: 1, Options: server.Options{ShutdownTimeout: 200 * time.Millisecond},
		Cluster: service.ClusterOptions{Listen: natsAddr, Users: creds.Users, JobAckWait: childJobAckWait}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = b.SeedDemo(ctx)
	require.NoError(t, err)
	before := targetVersion(t, cb, demo.GridPath)
	// b is busy, so the simulation submitted to the child runs there.
	busy := startHeavy(t, b, cb)
	cmd, ca := startChild(t, t.TempDir(), false, childNATSEnv+"=nats://"+natsAddr, childCredentialsEnv+"="+creds.API, childObjectsEnv+"="+cb.Base)
	killed := submit(t, ca, "geostatistics", "conditional-turning-bands", heavySimulation(cb.Base))
	waitStatus(t, cb, killed, "in progress")
	waitMessage(t, cb, killed, "shards done") // its shards are queued
	rec, _ := b.Jobs().Get(jobID(killed))
	require.NotEqual(t, (func() string { r, _ := b.Jobs().Get(jobID(busy)); return r.Owner })(), rec.Owner, "the child runs it")
	require.Equal(t, 1, rec.Attempts)
	require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
	require.Error(t, cmd.Wait(), "the worker was killed")

	nc := connectNATS(t, natsAddr, creds.API, natsauth.RoleAPI)
	q, err := cluster.Open(ctx, nc, cluster.Config{})
	require.NoError(t, err)
	first := cluster.AttemptJobName("sim-", jobID(killed), 1)
	_, err = q.Status(ctx, first)
	require.NoError(t, err, "the killed attempt's cluster job exists")

	// b frees its slot; it takes the dead worker's job after the ack
	// deadline and runs it again, having forgotten the killed attempt's
	// cluster job first. The heavy simulation is cancelled once it runs
	// again (TestCrashedJobRunsAgainAfterRestart checks a rerun's data).
	r, err := cb.Do(ctx, http.MethodDelete, jobURL(busy), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, r.Status)
	var again jobs.Record
	for i := 0; ; i++ {
		again, _ = b.Jobs().Get(jobID(killed))
		if again.Attempts == 2 && again.Status == jobs.InProgress {
			break
		}
		require.Less(t, i, 3000, "the job did not run again: %+v", again)
		time.Sleep(20 * time.Millisecond)
	}
	assert.NotEqual(t, rec.Owner, again.Owner, "run again by the surviving worker")
	_, err = q.Status(ctx, first)
	assert.ErrorIs(t, err, cluster.ErrNoJob, "the killed attempt's shards and records were forgotten")
	r, err = cb.Do(ctx, http.MethodDelete, jobURL(killed), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, r.Status)
	waitStatus(t, cb, killed, "cancelled")
	assert.Equal(t, before, targetVersion(t, cb, demo.GridPath), "the target is unchanged")

	// Nothing of either attempt is left queued.
	for i := 0; ; i++ {
		pending, ackPending, err := q.Pending(ctx)
		require.NoError(t, err)
		if pending == 0 && ackPending == 0 {
			break
		}
		require.Less(t, i, 300, "shards of the interrupted job still queued: %d pending, %d held", pending, ackPending)
		time.Sleep(100 * time.Millisecond)
	}
}

// requireRunAgain checks the status of a job whose worker stopped while it
// ran, after that worker's restart: requested to run again (attempt 2 of
// 3) while its queue message has not come back, or already started again
// when it has (the server kept the message's put-back across its restart);
// never failed.
func requireRunAgain(t *testing.T, c *workertest.Client, status string) {
	t.Helper()
	st, err := c.Do(context.Background(), http.MethodGet, status, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, st.Status, "not finished: %s", st.Body)
	var got struct {
		Status  string           `json:"status"`
		Message string           `json:"message"`
		Error   *problem.Problem `json:"error"`
	}
	require.NoError(t, st.JSON(&got))
	assert.Nil(t, got.Error)
	switch got.Status {
	case "requested":
		assert.Equal(t, "Job requested: run again after its worker stopped (attempt 2 of 3)", got.Message)
	case "in progress":
	default:
		t.Fatalf("the job is %s (%s), want requested or in progress", got.Status, got.Message)
	}
}
