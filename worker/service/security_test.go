package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The callers of the security tests: roles in the demo workspace, in
// another workspace of the demo organisation, in another organisation.
const (
	ownerTok    = "owner-of-the-demo-org"
	editorTok   = "editor-of-the-demo-workspace"
	viewerTok   = "viewer-of-the-demo-workspace"
	strangerTok = "owner-of-another-workspace"
	outsiderTok = "owner-of-another-org"
	metricsTok  = "the-metrics-scraper"
	otherWS     = "00000000-0000-4000-8000-00000000d0ff"
	otherOrg    = "00000000-0000-4000-8000-00000000e001"
)

// startRoles runs a Service over dir with the role tokens above and returns
// a client per token.
func startRoles(t *testing.T, dir string, opts service.Options) (*service.Service, map[string]*workertest.Client, func()) {
	t.Helper()
	user := func(n int, name string) store.User {
		return store.User{ID: fmt.Sprintf("00000000-0000-4000-8000-0000000000%02d", n), Name: name}
	}
	roles := func(org, ws string, r server.Role) map[string]map[string]server.Role {
		return map[string]map[string]server.Role{org: {ws: r}}
	}
	entries := []server.TokenEntry{
		{Token: ownerTok, User: user(1, "owner"), Orgs: roles(demo.Org, server.Any, server.RoleOwner)},
		{Token: editorTok, User: user(2, "editor"), Orgs: roles(demo.Org, demo.Workspace, server.RoleEditor)},
		{Token: viewerTok, User: user(3, "viewer"), Orgs: roles(demo.Org, demo.Workspace, server.RoleViewer)},
		{Token: strangerTok, User: user(4, "stranger"), Orgs: roles(demo.Org, otherWS, server.RoleOwner)},
		{Token: outsiderTok, User: user(5, "outsider"), Orgs: roles(otherOrg, server.Any, server.RoleOwner)},
	}
	b, err := json.Marshal(entries)
	require.NoError(t, err)
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(tokens, b, 0o600))
	opts.TokensFile = tokens
	opts.MetricsToken = metricsTok
	opts.Getenv = func(string) string { return "" }
	s, stop := run(t, testOptions(dir, opts))
	clients := map[string]*workertest.Client{}
	for _, tok := range []string{ownerTok, editorTok, viewerTok, strangerTok, outsiderTok, metricsTok, ""} {
		clients[tok] = &workertest.Client{Base: s.URL(), Token: tok}
	}
	return s, clients, stop
}

// demoURL is the reference URL of a demo object.
func demoURL(base, path string) string {
	return base + "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + path
}

// heavySimulation is a simulation of the demo grid that runs for far longer
// than any test waits (the tests cancel or interrupt it).
func heavySimulation(base string) []byte {
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": demoURL(base, demo.PointsPath), "source_attribute": "cu", "target": demoURL(base, demo.GridPath),
		"distribution": demoURL(base, demo.DistributionPath), "variogram_model": demoURL(base, demo.VariogramPath),
		"realizations": 100, "number_of_lines": 1000, "block_discretization": map[string]any{"nx": 4, "ny": 4, "nz": 4}}})
	return body
}

// demoCall returns the demo's call of a topic and task.
func demoCall(t testing.TB, base, topic, task string) demo.Call {
	t.Helper()
	for _, call := range demo.Calls(base) {
		if call.Topic == topic && call.Task == task {
			return call
		}
	}
	t.Fatalf("the demo has no %s/%s call", topic, task)
	return demo.Call{}
}

// startHeavy submits heavySimulation and waits (bounded) for the event of
// its job starting; it returns the job status URL.
func startHeavy(t *testing.T, s *service.Service, c *workertest.Client) string {
	t.Helper()
	status := submit(t, c, "geostatistics", "conditional-turning-bands", heavySimulation(c.Base))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, started := s.Jobs().WaitStarted(ctx, jobID(status))
	require.True(t, started, "the job did not start")
	require.Equal(t, jobs.InProgress, rec.Status)
	return status
}

// knnBothTopics runs the demo's knn task on both topics (asynchronously)
// and returns the status URLs of the two succeeded jobs.
func knnBothTopics(t *testing.T, c *workertest.Client) []string {
	t.Helper()
	var out []string
	for _, topic := range []string{"geostat", "geostatistics"} {
		call := demoCall(t, c.Base, topic, "knn")
		u := submit(t, c, call.Topic, call.Task, call.Body, "Prefer", "respond-async")
		job, err := c.Follow(context.Background(), u)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
		out = append(out, u)
	}
	return out
}

// submit posts a task and returns the job status URL of its 303.
func submit(t *testing.T, c *workertest.Client, topic, task string, body []byte, header ...string) string {
	t.Helper()
	r, err := c.Do(context.Background(), http.MethodPost, "/compute/orgs/"+demo.Org+"/"+topic+"/"+task, body, header...)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	return r.Header.Get("Location")
}

// expectStatus sends a request and asserts the answer's status; problem
// answers must be problem JSON with the same status member.
func expectStatus(t *testing.T, c *workertest.Client, method, path string, want int, msg string) *workertest.Response {
	t.Helper()
	r, err := c.Do(context.Background(), method, path, nil)
	require.NoError(t, err)
	require.Equal(t, want, r.Status, "%s: %s", msg, r.Body)
	if want >= 400 {
		assert.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), msg)
		var p struct{ Status int }
		require.NoError(t, r.JSON(&p), msg)
		assert.Equal(t, want, p.Status, msg)
	}
	return r
}

// TestJobRoutesCheckWorkspaceRole: a job belongs to its target's workspace.
// Status and results need a role there (404 otherwise, as for objects);
// cancel needs editor or owner (a viewer gets 403). Both topics; the report
// route answers 4xx for malformed and unknown ids.
func TestJobRoutesCheckWorkspaceRole(t *testing.T) {
	s, cs, _ := startRoles(t, t.TempDir(), service.Options{})
	ctx := context.Background()
	_, seedErr := s.SeedDemo(ctx)
	require.NoError(t, seedErr)
	owner := cs[ownerTok]
	for _, status := range knnBothTopics(t, owner) {
		results := strings.TrimSuffix(status, "/status")
		for _, tok := range []string{ownerTok, editorTok, viewerTok} {
			expectStatus(t, cs[tok], http.MethodGet, status, http.StatusOK, tok+" reads the status")
			expectStatus(t, cs[tok], http.MethodGet, results, http.StatusOK, tok+" reads the results")
		}
		for _, tok := range []string{strangerTok, outsiderTok} {
			expectStatus(t, cs[tok], http.MethodGet, status, http.StatusNotFound, tok+" does not see the job")
			expectStatus(t, cs[tok], http.MethodGet, results, http.StatusNotFound, tok+" does not see the results")
			expectStatus(t, cs[tok], http.MethodDelete, results, http.StatusNotFound, tok+" cannot cancel")
		}
		r := expectStatus(t, cs[viewerTok], http.MethodDelete, results, http.StatusForbidden, "a viewer cannot cancel")
		assert.Contains(t, string(r.Body), "insufficient-role")
		assert.Contains(t, string(r.Body), `"your_role":"viewer"`)
		expectStatus(t, cs[editorTok], http.MethodDelete, results, http.StatusNoContent, "an editor may cancel")
		expectStatus(t, cs[""], http.MethodGet, status, http.StatusUnauthorized, "no token")
	}

	// A running job: the viewer's cancel is refused and the job keeps
	// running; the editor's cancels it.
	status := startHeavy(t, s, owner)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	expectStatus(t, cs[viewerTok], http.MethodDelete, strings.TrimSuffix(status, "/status"), http.StatusForbidden, "a viewer cannot cancel a running job")
	rec, _ := s.Jobs().Get(jobID(status))
	assert.Equal(t, "in progress", string(rec.Status))
	expectStatus(t, cs[editorTok], http.MethodDelete, strings.TrimSuffix(status, "/status"), http.StatusNoContent, "an editor cancels")
	job, err := owner.Follow(wctx, status)
	require.NoError(t, err)
	assert.Equal(t, "cancelled", job.Status)

	// The report page: malformed and unknown ids are 4xx, other
	// workspaces 404.
	reports := "/compute/orgs/" + demo.Org + "/reports/" + demo.Workspace + "/"
	expectStatus(t, owner, http.MethodGet, reports+"abc", http.StatusUnprocessableEntity, "malformed file id")
	expectStatus(t, owner, http.MethodGet, reports+"00000000-0000-4000-8000-000000000123", http.StatusNotFound, "unknown file id")
	expectStatus(t, cs[strangerTok], http.MethodGet, reports+"abc", http.StatusNotFound, "no role in the workspace")
	expectStatus(t, cs[strangerTok], http.MethodGet, "/file/v2/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/files", http.StatusNotFound, "files of another workspace")
}

// TestFloodFromOneTokenKeepsOthersServed: with 8 request slots in all and 4
// per token, 70 synchronous submits from one token wait for their jobs
// (queued behind a long simulation) while another token's GETs all answer
// 200: waiting for a job holds no request slot, and one token cannot take
// every slot.
func TestFloodFromOneTokenKeepsOthersServed(t *testing.T) {
	const flood = 70
	s, cs, stop := startRoles(t, t.TempDir(), service.Options{MaxJobs: 1, Threads: 1, SyncWait: 5 * time.Minute,
		Options: server.Options{MaxConcurrent: 8, MaxPerPrincipal: 4, ShutdownTimeout: 2 * time.Second}})
	ctx := context.Background()
	_, seedErr := s.SeedDemo(ctx)
	require.NoError(t, seedErr)
	owner := cs[ownerTok]
	startHeavy(t, s, owner)
	knn := demoCall(t, owner.Base, "geostat", "knn")
	floodCtx, stopFlood := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var answered atomic.Int64
	for i := 0; i < flood; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := cs[editorTok].Do(floodCtx, http.MethodPost, knn.Path(), knn.Body)
			if err == nil && r.Status != http.StatusSeeOther {
				answered.Add(1) // anything but the 303 of an abandoned wait
			}
		}()
	}
	// Every flood request is accepted and waits for its job (bounded).
	for i := 0; ; i++ {
		_, queued := s.Jobs().Counts()
		if queued == flood {
			break
		}
		require.Less(t, i, 3000, "the flood was not queued: %d of %d", queued, flood)
		time.Sleep(10 * time.Millisecond)
	}
	// Another token is served throughout.
	get := "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + demo.GridPath
	viewer := *cs[viewerTok]
	viewer.NoRetry = true
	var gwg sync.WaitGroup
	statuses := make([]int, 40)
	for i := range statuses {
		gwg.Add(1)
		go func() {
			defer gwg.Done()
			r, err := viewer.Do(ctx, http.MethodGet, get, nil)
			if err == nil {
				statuses[i] = r.Status
			}
		}()
		if i%4 == 3 {
			gwg.Wait() // four at a time: the viewer's own limit
		}
	}
	gwg.Wait()
	for i, st := range statuses {
		assert.Equal(t, http.StatusOK, st, "GET %d of the other token", i)
	}
	assert.Zero(t, answered.Load(), "no flood request was answered yet")
	stopFlood()
	wg.Wait()
	stop()
}

// TestMemoryAdmissionAndMetrics: a job that fits alone but not beside the
// running one waits queued, saying why, and starts when memory frees;
// /metrics shows the running and queued gauges and the per-task duration
// histogram, for owner tokens and the -metrics-token only.
func TestMemoryAdmissionAndMetrics(t *testing.T) {
	ctx := context.Background()
	// The estimate of the simulation, from a first worker.
	s0, cs0, stop0 := startRoles(t, t.TempDir(), service.Options{Threads: 1})
	_, seedErr := s0.SeedDemo(ctx)
	require.NoError(t, seedErr)
	first := submit(t, cs0[ownerTok], "geostatistics", "conditional-turning-bands", heavySimulation(cs0[ownerTok].Base))
	rec, ok := s0.Jobs().Get(jobID(first))
	require.True(t, ok)
	need := rec.Memory
	require.Positive(t, need)
	expectStatus(t, cs0[ownerTok], http.MethodDelete, strings.TrimSuffix(first, "/status"), http.StatusNoContent, "cancel")
	stop0()

	// Room for one and a half: the second waits although a slot is free.
	s, cs, _ := startRoles(t, t.TempDir(), service.Options{Threads: 1, MaxJobs: 2, MaxMemory: need + need/2})
	_, seedErr = s.SeedDemo(ctx)
	require.NoError(t, seedErr)
	owner := cs[ownerTok]
	a := startHeavy(t, s, owner)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b := submit(t, owner, "geostatistics", "conditional-turning-bands", heavySimulation(owner.Base))
	// Until the worker takes the job from the shared queue, its message
	// is the submit's "waiting for a free slot"; then it says why it waits.
	waitMessage(t, owner, b, "waiting for memory")
	r := expectStatus(t, owner, http.MethodGet, b, http.StatusAccepted, "the second job waits")
	var st struct{ Status, Message string }
	require.NoError(t, r.JSON(&st))
	assert.Equal(t, "requested", st.Status)
	assert.Contains(t, st.Message, "waiting for memory")

	m := expectStatus(t, owner, http.MethodGet, "/metrics", http.StatusOK, "an owner reads the metrics")
	assert.Contains(t, string(m.Body), "\ngeostat_jobs_running 1\n")
	assert.Contains(t, string(m.Body), "\ngeostat_jobs_queued 1\n")
	expectStatus(t, cs[metricsTok], http.MethodGet, "/metrics", http.StatusOK, "the metrics token reads the metrics")
	expectStatus(t, cs[editorTok], http.MethodGet, "/metrics", http.StatusForbidden, "an editor does not")
	expectStatus(t, cs[""], http.MethodGet, "/metrics", http.StatusUnauthorized, "no token")

	// The first ends: the second starts.
	expectStatus(t, owner, http.MethodDelete, strings.TrimSuffix(a, "/status"), http.StatusNoContent, "cancel the first")
	_, started := s.Jobs().WaitStarted(wctx, jobID(b))
	require.True(t, started)
	recB, _ := s.Jobs().Get(jobID(b))
	assert.NotEqual(t, "requested", string(recB.Status))
	expectStatus(t, owner, http.MethodDelete, strings.TrimSuffix(b, "/status"), http.StatusNoContent, "cancel the second")
	for _, u := range []string{a, b} {
		job, err := owner.Follow(wctx, u)
		require.NoError(t, err)
		assert.Equal(t, "cancelled", job.Status)
	}
	m = expectStatus(t, cs[metricsTok], http.MethodGet, "/metrics", http.StatusOK, "metrics")
	assert.Contains(t, string(m.Body), `geostat_job_duration_seconds_count{task="conditional-turning-bands",topic="geostatistics"} 2`)
	assert.Contains(t, string(m.Body), "\ngeostat_jobs_running 0\n")
}

// TestJobRecordsArePrunedAfterRetention: a finished job older than the
// retention no longer answers after a restart; a recent one does.
func TestJobRecordsArePrunedAfterRetention(t *testing.T) {
	dir := t.TempDir()
	s, cs, stop := startRoles(t, dir, service.Options{JobRetention: 30 * 24 * time.Hour})
	ctx := context.Background()
	_, seedErr := s.SeedDemo(ctx)
	require.NoError(t, seedErr)
	statusURLs := knnBothTopics(t, cs[ownerTok])
	stop()
	// Age the first record: finished 31 days ago (in the job records of the
	// worker's embedded NATS server, opened here while the worker is down).
	id := jobID(statusURLs[0])
	ageRecord(t, dir, id, 31*24*time.Hour)

	_, cs2, _ := startRoles(t, dir, service.Options{JobRetention: 30 * 24 * time.Hour})
	expectStatus(t, cs2[ownerTok], http.MethodGet, statusURLs[0], http.StatusNotFound, "pruned")
	expectStatus(t, cs2[ownerTok], http.MethodGet, statusURLs[1], http.StatusOK, "kept")
}

// TestJobsPerUserBounded: one user's unfinished jobs are bounded (429
// beyond -max-jobs-per-user); another user still submits.
func TestJobsPerUserBounded(t *testing.T) {
	s, cs, _ := startRoles(t, t.TempDir(), service.Options{MaxJobs: 1, Threads: 1, MaxJobsPerUser: 2,
		Options: server.Options{ShutdownTimeout: 200 * time.Millisecond}})
	_, seedErr := s.SeedDemo(context.Background())
	require.NoError(t, seedErr)
	owner := cs[ownerTok]
	startHeavy(t, s, owner)
	knn := demoCall(t, owner.Base, "geostatistics", "knn")
	submit(t, owner, knn.Topic, knn.Task, knn.Body) // queued: the owner's second
	once := *owner
	once.NoRetry = true
	r, err := once.Do(context.Background(), http.MethodPost, knn.Path(), knn.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	assert.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	assert.Contains(t, string(r.Body), "too many jobs")
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	submit(t, cs[editorTok], knn.Topic, knn.Task, knn.Body) // another user
}
