package openapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notProvoked are the documented statuses this walk does not provoke, each
// with where it is tested instead. Every other documented status of every
// route must be answered during the walk.
var notProvoked = map[int]string{
	http.StatusInternalServerError: "a failure of the worker itself; worker/server errors_test.go",
	http.StatusServiceUnavailable:  "a worker shutting down; worker/service tests",
	http.StatusTooManyRequests:     "a caller over its job quota: worker/tasks and worker/jobs tests",
	http.StatusNotImplemented:      "a worker built without a file area; the service always has one",
	http.StatusInsufficientStorage: "a full disk: worker/tasks TestFullDiskIs507 on a tmpfs, which checks each 507 it gets against this table",
}

// notProvokedOn are route-specific exceptions.
var notProvokedOn = map[string]map[int]string{
	"POST /compute/orgs/{org_id}/geostat/{task}":                      {http.StatusConflict: "a job cancelled while the request waits; worker/tasks tests"},
	"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}":              {http.StatusAccepted: stillRunning},
	"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}/status":       {http.StatusAccepted: stillRunning},
	"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}":        {http.StatusAccepted: stillRunning},
	"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}/status": {http.StatusAccepted: stillRunning},
}

// stillRunning: a job's routes answer 202 only while it runs, which a
// quick job leaves to chance (the walk records it when it happens); the
// worker/tasks tests follow running jobs.
const stillRunning = "a job still running"

// statusRecorder collects the statuses each route answered.
type statusRecorder struct {
	mu   sync.Mutex
	seen map[string]map[int]bool
	// last is the pattern of the last request answered.
	last string
}

func (s *statusRecorder) record(method, pattern string, status int, _ time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rest, ok := strings.CutPrefix(pattern, "GET "); ok && method == http.MethodHead {
		pattern = "HEAD " + rest // GET patterns serve HEAD too
	}
	s.last = pattern
	if s.seen[pattern] == nil {
		s.seen[pattern] = map[int]bool{}
	}
	s.seen[pattern][status] = true
}

// TestEveryDocumentedStatusIsAnswered walks the worker's routes on a real
// worker, provoking each status problem.RouteStatuses documents (and the
// OpenAPI document lists), and checks that no route answered a status the
// table does not list, nor a problem type the table does not list for that
// status.
func TestEveryDocumentedStatusIsAnswered(t *testing.T) {
	const (
		owner, viewer, stranger = "owner-token", "viewer-token", "stranger-token"
		otherWS                 = "00000000-0000-4000-8000-00000000d0ff"
	)
	dir := t.TempDir()
	tokens, err := json.Marshal([]server.TokenEntry{
		{Token: owner, User: store.User{ID: "00000000-0000-4000-8000-0000000000aa", Name: "Owner"}, Orgs: map[string]map[string]server.Role{demo.Org: {server.Any: server.RoleOwner}}},
		{Token: viewer, User: store.User{ID: "00000000-0000-4000-8000-0000000000bb", Name: "Viewer"}, Orgs: map[string]map[string]server.Role{demo.Org: {server.Any: server.RoleViewer}}},
		{Token: stranger, User: store.User{ID: "00000000-0000-4000-8000-0000000000cc", Name: "Stranger"}, Orgs: map[string]map[string]server.Role{demo.Org: {otherWS: server.RoleOwner}}},
	})
	require.NoError(t, err)
	tokensFile := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(tokensFile, tokens, 0o600))
	rec := &statusRecorder{seen: map[string]map[int]bool{}}
	s, err := service.New(service.Options{Options: server.Options{
		Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), TokensFile: tokensFile,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stdout: io.Discard, OnRequest: rec.record,
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	defer func() { stop(); require.NoError(t, <-done) }()
	_, err = s.SeedDemo(ctx)
	require.NoError(t, err)

	c := &workertest.Client{Base: s.URL(), Token: owner, NoRetry: true}
	as := map[string]*workertest.Client{
		"owner": c, "viewer": {Base: s.URL(), Token: viewer, NoRetry: true},
		"stranger": {Base: s.URL(), Token: stranger, NoRetry: true}, "anonymous": {Base: s.URL(), NoRetry: true},
	}
	do := func(who, method, path string, body []byte, header ...string) *workertest.Response {
		t.Helper()
		r, err := as[who].Do(ctx, method, path, body, header...)
		require.NoError(t, err, "%s %s", method, path)
		// A problem's type is one the table lists for the route and status.
		rec.mu.Lock()
		pattern := rec.last
		rec.mu.Unlock()
		var p struct {
			Type string `json:"type"`
		}
		if r.Status >= 400 && method != http.MethodHead && json.Unmarshal(r.Body, &p) == nil && pattern != "" {
			for _, st := range problem.RouteStatuses()[pattern] {
				if st.Code == r.Status && len(st.Types) > 0 {
					assert.Contains(t, st.Types, p.Type, "%s %s answered %d", method, pattern, r.Status)
				}
			}
		}
		return r
	}
	ws := workertest.WorkspacePrefix(demo.Org, demo.Workspace)
	badWS := "/geoscience-object/orgs/" + demo.Org + "/workspaces/not-a-uuid"
	noSuchID := "00000000-0000-4000-8000-00000000beef"
	// A deleted workspace: every workspace route of every area answers 410.
	goneWS := deletedWorkspace(t, do)
	gone := workertest.WorkspacePrefix(demo.Org, goneWS)

	// Operations.
	do("owner", http.MethodGet, "/healthz", nil)
	for _, p := range []string{"/metrics", "/openapi.json"} {
		do("owner", http.MethodGet, p, nil)
		do("anonymous", http.MethodGet, p, nil)
	}

	// Objects of the organisation.
	orgList := "/geoscience-object/orgs/" + demo.Org + "/objects"
	do("owner", http.MethodGet, orgList, nil)
	do("anonymous", http.MethodGet, orgList, nil)
	do("owner", http.MethodGet, "/geoscience-object/orgs/"+noSuchID+"/objects", nil)
	do("owner", http.MethodGet, orgList+"?limit=-1", nil)

	// An object to read, write and delete.
	b := objecttest.NewBlobs()
	xyz := []float64{0, 0, 0, 1, 1, 1}
	doc := objecttest.JSON(b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", []float64{1, 2})))
	require.NoError(t, c.UploadBlobs(ctx, demo.Org, demo.Workspace, b, 1))
	created := do("owner", http.MethodPost, ws+"/objects/path/walk/p.json", doc)
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	var vrec store.VersionRecord
	require.NoError(t, created.JSON(&vrec))
	require.NotNil(t, vrec.ObjectID)
	id := *vrec.ObjectID
	etag := created.Header.Get("ETag")

	// Workspace routes: every one answers 401, 404 (no role), 422 (bad
	// id), and the writes 403 (viewer).
	type wsRoute struct {
		method, path string
		write        bool
		body         []byte
	}
	for _, rt := range []wsRoute{
		{http.MethodGet, "/objects", false, nil},
		{http.MethodPatch, "/objects", false, []byte(`[]`)},
		{http.MethodGet, "/objects/" + id, false, nil},
		{http.MethodPost, "/objects/" + id, true, doc},
		{http.MethodDelete, "/objects/" + noSuchID, true, nil},
		{http.MethodGet, "/objects/path/walk/p.json", false, nil},
		{http.MethodPost, "/objects/path/walk/q.json", true, doc},
		{http.MethodDelete, "/objects/path/walk/none.json", true, nil},
		{http.MethodPut, "/data", true, []byte(`[]`)},
	} {
		do("anonymous", rt.method, ws+rt.path, rt.body)
		do("stranger", rt.method, ws+rt.path, rt.body)
		do("owner", rt.method, badWS+rt.path, rt.body)
		do("owner", rt.method, gone+rt.path, rt.body)
		if rt.write {
			do("viewer", rt.method, ws+rt.path, rt.body)
		}
	}
	bad := []byte("{\n  \"a\": 1,}")
	do("owner", http.MethodGet, ws+"/objects", nil)
	do("owner", http.MethodPatch, ws+"/objects", []byte(`["`+id+`"]`))
	do("owner", http.MethodPatch, ws+"/objects", bad)
	do("owner", http.MethodGet, ws+"/objects/"+id, nil)
	do("owner", http.MethodGet, ws+"/objects/"+id, nil, "If-None-Match", etag)
	do("owner", http.MethodGet, ws+"/objects/path/walk/p.json", nil)
	do("owner", http.MethodGet, ws+"/objects/path/walk/p.json", nil, "If-None-Match", etag)
	do("owner", http.MethodPost, ws+"/objects/"+id, bad)
	do("owner", http.MethodPost, ws+"/objects/"+id, doc, "If-Match", `"stale"`)
	do("owner", http.MethodPost, ws+"/objects/"+id, doc)
	do("owner", http.MethodPost, ws+"/objects/path/walk/r.json", bad)
	other := objecttest.JSON(b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", []float64{1, 2})))
	do("owner", http.MethodPost, ws+"/objects/path/walk/s.json", other)
	var m map[string]any
	require.NoError(t, json.Unmarshal(other, &m))
	m["uuid"] = noSuchID
	clash, _ := json.Marshal(m)
	do("owner", http.MethodPost, ws+"/objects/path/walk/p.json", clash)
	do("owner", http.MethodPost, ws+"/objects/path/walk/p.json", doc) // no uuid: a create, and the path is taken
	do("owner", http.MethodDelete, ws+"/objects/path/walk/s.json", nil)
	do("owner", http.MethodDelete, ws+"/objects/"+id, nil)
	do("owner", http.MethodPost, ws+"/objects/"+id+"?deleted=false", nil)
	do("owner", http.MethodPut, ws+"/data", bad)
	names := make([]string, 33)
	for i := range names {
		names[i] = fmt.Sprintf(`{"name": "%064x"}`, i)
	}
	do("owner", http.MethodPut, ws+"/data", []byte("["+strings.Join(names, ",")+"]"))

	// Blobs, through signed URLs.
	content := []byte("blob content")
	name := fmt.Sprintf("%x", sha256Sum(content))
	r := do("owner", http.MethodPut, ws+"/data", []byte(`[{"name": "`+name+`"}]`))
	var up []struct {
		UploadURL string `json:"upload_url"`
	}
	require.NoError(t, r.JSON(&up))
	require.NotEmpty(t, up)
	do("anonymous", http.MethodPut, up[0].UploadURL, []byte("not the content"))
	do("anonymous", http.MethodPut, up[0].UploadURL, content)
	do("anonymous", http.MethodPut, up[0].UploadURL+"x", content)
	// A blob named by a UUID takes any bytes once: different bytes again
	// conflict.
	r = do("owner", http.MethodPut, ws+"/data", []byte(`[{"name": "`+noSuchID+`"}]`))
	require.NoError(t, r.JSON(&up))
	require.NotEmpty(t, up)
	do("anonymous", http.MethodPut, up[0].UploadURL, []byte("first"))
	do("anonymous", http.MethodPut, up[0].UploadURL, []byte("second"))
	r = do("owner", http.MethodGet, ws+"/objects/path/walk/p.json", nil)
	require.NoError(t, r.JSON(&vrec))
	require.NotEmpty(t, vrec.Links.Data)
	download := vrec.Links.Data[0].DownloadURL
	do("anonymous", http.MethodGet, download, nil)
	do("anonymous", http.MethodGet, download, nil, "Range", "bytes=0-3")
	do("anonymous", http.MethodGet, download+"x", nil)

	// Files.
	files := "/file/v2/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/files"
	r = do("owner", http.MethodPut, files+"/path/walk/report.html", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var fr struct {
		FileID    string `json:"file_id"`
		VersionID string `json:"version_id"`
		UploadURL string `json:"upload_url"`
	}
	require.NoError(t, r.JSON(&fr))
	do("anonymous", http.MethodPut, fr.UploadURL, []byte("<html>report</html>"))
	do("anonymous", http.MethodPut, fr.UploadURL+"x", []byte("<html>report</html>"))
	r = do("owner", http.MethodGet, files+"/path/walk/report.html", nil)
	var got struct {
		DownloadURL string `json:"download"`
	}
	var gm map[string]any
	require.NoError(t, r.JSON(&gm))
	for _, k := range []string{"download", "download_url"} {
		if u, ok := gm[k].(string); ok {
			got.DownloadURL = u
		}
	}
	require.NotEmpty(t, got.DownloadURL, "%s", r.Body)
	do("anonymous", http.MethodGet, got.DownloadURL, nil)
	do("anonymous", http.MethodGet, got.DownloadURL, nil, "Range", "bytes=0-3")
	do("anonymous", http.MethodGet, got.DownloadURL+"x", nil)
	do("anonymous", http.MethodHead, got.DownloadURL, nil)
	do("anonymous", http.MethodHead, got.DownloadURL+"x", nil)
	do("owner", http.MethodPut, files+"/path/bad%00path", nil)
	report := "/compute/orgs/" + demo.Org + "/reports/" + demo.Workspace + "/" + fr.FileID
	for _, rt := range []wsRoute{
		{http.MethodGet, files, false, nil},
		{http.MethodPut, files + "/path/walk/new.txt", true, nil},
		{http.MethodPut, files + "/" + fr.FileID, true, nil},
		{http.MethodGet, files + "/path/walk/report.html", false, nil},
		{http.MethodGet, files + "/" + fr.FileID, false, nil},
		{http.MethodDelete, files + "/path/walk/new.txt", true, nil},
		{http.MethodDelete, files + "/" + noSuchID, true, nil},
		{http.MethodGet, report, false, nil},
	} {
		do("owner", rt.method, rt.path, nil)
		do("anonymous", rt.method, rt.path, nil)
		do("stranger", rt.method, rt.path, nil)
		do("owner", rt.method, strings.Replace(rt.path, demo.Workspace, "not-a-uuid", 1), nil)
		do("owner", rt.method, strings.Replace(rt.path, demo.Workspace, goneWS, 1), nil)
		if rt.write {
			do("viewer", rt.method, rt.path, nil)
		}
	}
	do("owner", http.MethodDelete, files+"/path/walk/report.html", nil)
	r = do("owner", http.MethodPut, files+"/path/walk/two.txt", nil)
	require.NoError(t, r.JSON(&fr))
	do("anonymous", http.MethodPut, fr.UploadURL, []byte("two"))
	do("owner", http.MethodDelete, files+"/"+fr.FileID, nil)

	// The workspace area.
	walkWorkspaces(t, do, as, goneWS)

	// The block model area.
	walkBlockModels(t, do, as, goneWS)

	// Compute: both topics.
	seedCall, currentCall := breakTiesCalls(t, c.Base)
	var location string
	for _, call := range []*demo.Call{seedCall, currentCall} {
		path := call.Path()
		r := do("owner", http.MethodPost, path, call.Body, "Prefer", "respond-async")
		require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
		location = r.Header.Get("Location")
		if call.Topic == tasks.TopicSeed {
			r = do("owner", http.MethodPost, path, call.Body)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		do("owner", http.MethodPost, path, []byte("{\n  \"parameters\": {,}}"))
		do("anonymous", http.MethodPost, path, call.Body)
		do("viewer", http.MethodPost, path, call.Body)
		do("stranger", http.MethodPost, path, call.Body)
		do("owner", http.MethodPost, path, []byte(strings.ReplaceAll(string(call.Body), demo.Workspace, goneWS)))
		do("owner", http.MethodPost, strings.Replace(path, "break-ties", "no-such-task", 1), call.Body)
		do("owner", http.MethodPost, path, []byte(`{"pad": "`+strings.Repeat("x", tasks.MaxRequestBytes)+`"}`))
		do("owner", http.MethodPost, path, []byte(`{"parameters": {"bogus": 1}}`))

		// The job routes: 202 while running is raced by the job; the
		// status is polled until it is 200.
		jobURL := strings.TrimSuffix(location, "/status")
		job, err := c.Follow(ctx, location)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status)
		for _, p := range []string{location, jobURL} {
			do("owner", http.MethodGet, p, nil)
			do("anonymous", http.MethodGet, p, nil)
			do("owner", http.MethodGet, strings.Replace(p, "break-ties", "knn", 1), nil)
		}
		do("viewer", http.MethodDelete, jobURL, nil)
		do("anonymous", http.MethodDelete, jobURL, nil)
		do("owner", http.MethodDelete, strings.Replace(jobURL, "break-ties", "knn", 1), nil)
		do("owner", http.MethodDelete, jobURL, nil)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	table := problem.RouteStatuses()
	for pattern, codes := range rec.seen {
		list, ok := table[pattern]
		if !assert.True(t, ok, "route %q answered %v but has no statuses in the table", pattern, codes) {
			continue
		}
		for code := range codes {
			assert.True(t, slices.ContainsFunc(list, func(s problem.Status) bool { return s.Code == code }),
				"%s answered %d, which problem.RouteStatuses does not list", pattern, code)
		}
	}
	for pattern, list := range table {
		for _, st := range list {
			if _, ok := notProvoked[st.Code]; ok {
				continue
			}
			if _, ok := notProvokedOn[pattern][st.Code]; ok {
				continue
			}
			assert.True(t, rec.seen[pattern][st.Code], "%s documents %d (%s) but the walk did not provoke it", pattern, st.Code, st.Meaning)
		}
	}
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }
