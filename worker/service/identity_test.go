package service_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const identityOrg = "4f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02"

// jsonCall sends body as JSON and requires the status.
func jsonCall(t *testing.T, c *workertest.Client, method, path string, body any, want int) *workertest.Response {
	t.Helper()
	var data []byte
	if body != nil {
		var err error
		data, err = json.Marshal(body)
		require.NoError(t, err)
	}
	r, err := c.Do(context.Background(), method, path, data)
	require.NoError(t, err)
	require.Equal(t, want, r.Status, "%s %s: %s", method, path, r.Body)
	return r
}

// userWithToken creates a user of org and a token for it through the
// admin routes of the worker admin talks to.
func userWithToken(t *testing.T, admin *workertest.Client, org, email string) (userID, tokenID string, c *workertest.Client) {
	t.Helper()
	var u struct {
		ID string `json:"id"`
	}
	require.NoError(t, jsonCall(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users", map[string]string{"email": email}, http.StatusCreated).JSON(&u))
	var tok struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	require.NoError(t, jsonCall(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+u.ID+"/tokens", map[string]string{"name": "t"}, http.StatusCreated).JSON(&tok))
	return u.ID, tok.ID, &workertest.Client{Base: admin.Base, Token: tok.Token, NoRetry: true}
}

// eventually polls check every 10 ms until it holds, at most within.
func eventually(t *testing.T, within time.Duration, check func() bool, msg string) time.Duration {
	t.Helper()
	start := time.Now()
	for !check() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %v", msg, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// Two api workers on one NATS server share one identity store: a user, a
// token, a workspace and a grant made on one hold on the other, and a
// revoke or a removed grant on one is refused on the other within 1 s.
func TestTwoAPIWorkersShareIdentity(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	creds := natsCredentials(t)
	optsA := service.Options{Cluster: service.ClusterOptions{Listen: natsAddr, Users: creds.Users}}
	_, ca, _ := start(t, t.TempDir(), optsA)
	optsB := service.Options{Cluster: service.ClusterOptions{NATS: "nats://" + natsAddr, Credentials: creds.API}}
	_, cb, _ := start(t, t.TempDir(), optsB)

	anaID, anaToken, anaA := userWithToken(t, ca, identityOrg, "ana@mine.example")
	anaB := &workertest.Client{Base: cb.Base, Token: anaA.Token, NoRetry: true}
	bobID, _, bobA := userWithToken(t, ca, identityOrg, "bob@mine.example")
	bobB := &workertest.Client{Base: cb.Base, Token: bobA.Token, NoRetry: true}
	var ws struct {
		ID string `json:"id"`
	}
	require.NoError(t, jsonCall(t, anaA, http.MethodPost, "/workspace/orgs/"+identityOrg+"/workspaces", map[string]string{"name": "shared"}, http.StatusCreated).JSON(&ws))
	jsonCall(t, anaA, http.MethodPost, "/workspace/orgs/"+identityOrg+"/workspaces/"+ws.ID+"/users", map[string]string{"user_id": bobID, "role": "viewer"}, http.StatusCreated)
	files := "/file/v2/orgs/" + identityOrg + "/workspaces/" + ws.ID + "/files"
	status := func(c *workertest.Client, path string) int {
		r, err := c.Do(context.Background(), http.MethodGet, path, nil)
		require.NoError(t, err)
		return r.Status
	}
	// Made on a, in effect on b (the watch brings it within milliseconds).
	eventually(t, time.Second, func() bool { return status(bobB, files) == http.StatusOK }, "b sees the grant made on a")
	require.Equal(t, http.StatusOK, status(anaB, "/workspace/orgs/"+identityOrg+"/workspaces/"+ws.ID))

	// A grant removed on b is refused on a within 1 s.
	jsonCall(t, anaB, http.MethodDelete, "/workspace/orgs/"+identityOrg+"/workspaces/"+ws.ID+"/users/"+bobID, nil, http.StatusNoContent)
	took := eventually(t, time.Second, func() bool { return status(bobA, files) == http.StatusNotFound }, "a refuses the removed grant")
	t.Logf("grant removal seen by the other worker after %v", took)

	// A token revoked on b is refused on a within 1 s.
	jsonCall(t, cb, http.MethodDelete, "/workspace/admin/orgs/"+identityOrg+"/users/"+anaID+"/tokens/"+anaToken, nil, http.StatusNoContent)
	require.Equal(t, http.StatusUnauthorized, status(anaB, files), "refused at once on the worker that revoked it")
	took = eventually(t, time.Second, func() bool { return status(anaA, files) == http.StatusUnauthorized }, "a refuses the revoked token")
	t.Logf("revoke seen by the other worker after %v", took)
}

// Users, tokens, workspaces and grants created over HTTP survive a restart
// of the worker over the same data directory; the first start registered
// the workspaces of the data already there, and later starts do not
// register more.
func TestIdentitySurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	// Data of a worker from before the identity store: a file in one
	// workspace, written straight into the file area.
	const oldWS = "7a1d3c5e-9b2f-4d6a-8c0e-1f3a5b7d9e02"
	putFile(t, dir, oldWS)

	_, admin, stop := start(t, dir, service.Options{})
	userID, _, user := userWithToken(t, admin, identityOrg, "eve@mine.example")
	jsonCall(t, admin, http.MethodPatch, "/workspace/orgs/"+identityOrg+"/members/users/"+userID, map[string][]string{"roles": {"admin"}}, http.StatusOK)
	// The old workspace was registered on the first start: the stored
	// admin sees it and its object.
	r := jsonCall(t, user, http.MethodGet, "/workspace/orgs/"+identityOrg+"/workspaces/"+oldWS, nil, http.StatusOK)
	assert.Contains(t, string(r.Body), "workspace-"+oldWS[:8])
	jsonCall(t, user, http.MethodGet, "/file/v2/orgs/"+identityOrg+"/workspaces/"+oldWS+"/files/path/old.txt", nil, http.StatusOK)
	var ws struct {
		ID string `json:"id"`
	}
	require.NoError(t, jsonCall(t, user, http.MethodPost, "/workspace/orgs/"+identityOrg+"/workspaces", map[string]string{"name": "kept"}, http.StatusCreated).JSON(&ws))
	stop()

	// Another file written while no worker runs, in a new workspace: not
	// registered by the second start.
	const laterWS = "7a1d3c5e-9b2f-4d6a-8c0e-1f3a5b7d9e03"
	putFile(t, dir, laterWS)

	_, admin, _ = start(t, dir, service.Options{})
	user.Base = admin.Base
	r = jsonCall(t, user, http.MethodGet, "/workspace/orgs/"+identityOrg+"/workspaces/"+ws.ID, nil, http.StatusOK)
	assert.Contains(t, string(r.Body), `"name":"kept"`)
	assert.Contains(t, string(r.Body), `"current_user_role":"owner"`)
	jsonCall(t, user, http.MethodGet, "/workspace/orgs/"+identityOrg+"/workspaces/"+laterWS, nil, http.StatusNotFound)
	jsonCall(t, user, http.MethodGet, "/file/v2/orgs/"+identityOrg+"/workspaces/"+laterWS+"/files", nil, http.StatusNotFound)
}

// putFile writes old.txt into a workspace of the file area in dir, with no
// worker running.
func putFile(t *testing.T, dir, ws string) {
	t.Helper()
	fs, err := files.Open(dir)
	require.NoError(t, err)
	_, err = fs.Put(context.Background(), identityOrg, ws, "old.txt", strings.NewReader("old"), "text/plain", store.User{ID: "someone"})
	require.NoError(t, err)
}

// A stored user's roles hold in the compute area as in the others: a
// viewer of the demo workspace may not submit a task writing to it (403),
// an editor may, and the job runs with the editor's roles; a workspace
// deleted meanwhile is refused at the next submit; /metrics is for
// instance admins.
func TestStoredUsersInComputeAndMetrics(t *testing.T) {
	s, admin, _ := start(t, t.TempDir(), service.Options{})
	ctx := context.Background()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	// The static owner's first use registers the demo workspace.
	jsonCall(t, admin, http.MethodGet, workertest.WorkspacePrefix(demo.Org, demo.Workspace)+"/objects", nil, http.StatusOK)
	gilID, _, gil := userWithToken(t, admin, demo.Org, "gil@mine.example")
	grants := "/workspace/admin/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/users"
	knn := demoCall(t, admin.Base, "geostatistics", "knn")

	jsonCall(t, gil, http.MethodPost, knn.Path(), json.RawMessage(knn.Body), http.StatusNotFound)
	jsonCall(t, admin, http.MethodPost, grants, map[string]string{"user_id": gilID, "role": "viewer"}, http.StatusCreated)
	jsonCall(t, gil, http.MethodPost, knn.Path(), json.RawMessage(knn.Body), http.StatusForbidden)
	jsonCall(t, admin, http.MethodPost, grants, map[string]string{"user_id": gilID, "role": "editor"}, http.StatusCreated)
	status := submit(t, gil, knn.Topic, knn.Task, knn.Body)
	job, err := gil.Follow(ctx, status)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)

	jsonCall(t, gil, http.MethodGet, "/metrics", nil, http.StatusForbidden)
	jsonCall(t, admin, http.MethodPatch, "/workspace/orgs/"+demo.Org+"/members/users/"+gilID, map[string][]string{"roles": {"admin"}}, http.StatusOK)
	jsonCall(t, gil, http.MethodGet, "/metrics", nil, http.StatusOK)

	jsonCall(t, admin, http.MethodDelete, "/workspace/orgs/"+demo.Org+"/workspaces/"+demo.Workspace, nil, http.StatusNoContent)
	jsonCall(t, gil, http.MethodPost, knn.Path(), json.RawMessage(knn.Body), http.StatusGone)
	jsonCall(t, gil, http.MethodGet, workertest.WorkspacePrefix(demo.Org, demo.Workspace)+"/objects", nil, http.StatusGone)
}

// latestVersion returns the version id of the latest version of the object
// at path in the demo workspace.
func latestVersion(t *testing.T, c *workertest.Client, path string) string {
	t.Helper()
	var rec struct {
		VersionID string `json:"version_id"`
	}
	require.NoError(t, jsonCall(t, c, http.MethodGet, workertest.WorkspacePrefix(demo.Org, demo.Workspace)+"/objects/path/"+path, nil, http.StatusOK).JSON(&rec))
	require.NotEmpty(t, rec.VersionID)
	return rec.VersionID
}

// A job resolves its submitter's roles again when it starts, from the
// identity store rather than from grants carried with the request: a
// grant lowered to viewer while the job waits for the only slot fails it
// with 403, and a workspace deleted while the next one waits fails that one
// with 410; neither target gets a version. Before, both jobs ran with the
// roles of their submit.
func TestQueuedJobsRecheckRoles(t *testing.T) {
	s, admin, _ := start(t, t.TempDir(), service.Options{MaxJobs: 1, Threads: 2})
	ctx := context.Background()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	jsonCall(t, admin, http.MethodGet, workertest.WorkspacePrefix(demo.Org, demo.Workspace)+"/objects", nil, http.StatusOK)
	anaID, _, ana := userWithToken(t, admin, demo.Org, "ana@mine.example")
	grants := "/workspace/admin/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/users"
	jsonCall(t, admin, http.MethodPost, grants, map[string]string{"user_id": anaID, "role": "editor"}, http.StatusCreated)
	knn := demoCall(t, admin.Base, "geostatistics", "knn")
	before := latestVersion(t, admin, demo.MaskedGridPath)

	// Revoked while queued: 403 at the start.
	blocker := startHeavy(t, s, admin)
	queued := submit(t, ana, knn.Topic, knn.Task, knn.Body)
	rec, ok := s.Jobs().Get(jobID(queued))
	require.True(t, ok)
	require.Equal(t, jobs.Requested, rec.Status, "the only slot is taken: the job must wait")
	jsonCall(t, admin, http.MethodPost, grants, map[string]string{"user_id": anaID, "role": "viewer"}, http.StatusCreated)
	jsonCall(t, admin, http.MethodDelete, jobURL(blocker), nil, http.StatusNoContent)
	job, err := ana.Follow(ctx, queued)
	require.NoError(t, err)
	require.Equal(t, "failed", job.Status, "%s", job.Results)
	var p struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(job.Error, &p))
	assert.Equal(t, http.StatusForbidden, p.Status, "%s", job.Error)
	assert.Contains(t, p.Detail, "nothing was written")
	assert.Equal(t, before, latestVersion(t, admin, demo.MaskedGridPath), "the target got a version")

	// Workspace deleted while queued: 410 at the start.
	jsonCall(t, admin, http.MethodPost, grants, map[string]string{"user_id": anaID, "role": "editor"}, http.StatusCreated)
	blocker = startHeavy(t, s, admin)
	queued = submit(t, ana, knn.Topic, knn.Task, knn.Body)
	jsonCall(t, admin, http.MethodDelete, "/workspace/orgs/"+demo.Org+"/workspaces/"+demo.Workspace, nil, http.StatusNoContent)
	require.True(t, s.Jobs().Cancel(jobID(blocker)), "the blocker's workspace is deleted: its route answers 404, the manager cancels")
	final, finished := s.Jobs().Wait(ctx, jobID(queued))
	require.True(t, finished)
	require.Equal(t, jobs.Failed, final.Status)
	require.NotNil(t, final.Error)
	assert.Equal(t, http.StatusGone, final.Error.Status, "%+v", final.Error)
	jsonCall(t, admin, http.MethodPost, "/workspace/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"?deleted=false", nil, http.StatusNoContent)
	assert.Equal(t, before, latestVersion(t, admin, demo.MaskedGridPath), "the target got a version")
}
