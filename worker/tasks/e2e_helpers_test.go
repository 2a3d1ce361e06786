package tasks_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/require"
)

const (
	token       = "tasks-test-token"
	viewerToken = "tasks-test-viewer"
	org         = "11111111-1111-4111-8111-111111111111"
	ws          = "22222222-2222-4222-8222-222222222222"
)

type harness struct {
	t    testing.TB
	app  *server.App
	jobs *jobs.Manager
	tj   *testJobs
	env  *tasks.Env
	c    *workertest.Client
	ctx  context.Context
}

// start runs a worker with the compute routes on 127.0.0.1:0 and a
// temporary data directory, its jobs in an embedded NATS JetStream server
// as in production (startJobs).
func start(t testing.TB, maxJobs int) *harness {
	t.Helper()
	objecttest.Schemas(t) // the store validates what the tasks write against them
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tj := startJobs(t, filepath.Join(dir, "nats"), maxJobs, logger)
	mgr := tj.mgr
	entries := []server.TokenEntry{
		{Token: token, User: store.User{ID: "00000000-0000-4000-8000-0000000000aa", Name: "Owner"}, Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleOwner}}},
		{Token: viewerToken, User: store.User{ID: "00000000-0000-4000-8000-0000000000bb", Name: "Viewer"}, Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleViewer}}},
	}
	tokens, err := json.Marshal(entries)
	require.NoError(t, err)
	tokensFile := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(tokensFile, tokens, 0o600))
	var env *tasks.Env
	app := workertest.StartApp(t, server.Options{
		DataDir: dir, Logger: logger, TokensFile: tokensFile,
		ExtraRoutes: func(mux server.Router, deps server.Deps) {
			env = &tasks.Env{Store: &tasks.StoreAdapter{Store: deps.Store, TempDir: dir}, Logger: logger}
			co := tasks.ComputeOptions{Env: env, Jobs: mgr, SyncWait: 30 * time.Second, Roles: staticRoles(entries)}
			tasks.Register(mux, deps, co)
			tj.register(co)
		},
	}, "")
	t.Cleanup(func() { // runs before the app stops: jobs end first
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		mgr.Shutdown(sctx)
	})
	return &harness{t: t, app: app, jobs: mgr, tj: tj, env: env, c: &workertest.Client{Base: app.URL(), Token: token}, ctx: context.Background()}
}

// put uploads the blobs of b and posts doc at path, returning the version
// record.
func (h *harness) put(b *objecttest.Blobs, path string, doc map[string]any) string {
	h.t.Helper()
	require.NoError(h.t, h.c.UploadBlobs(h.ctx, org, ws, b, 1))
	rec, err := h.c.PostObject(h.ctx, org, ws, path, objecttest.JSON(doc))
	require.NoError(h.t, err)
	require.NotNil(h.t, rec.ObjectID)
	return *rec.ObjectID
}

func (h *harness) url(path string) string { return h.c.ObjectURL(org, ws, path) }

// latest reads the latest version of an object and decodes it.
func (h *harness) latest(id string) (*objects.Object, *objecttest.Blobs) {
	h.t.Helper()
	rec, err := h.c.GetObject(h.ctx, org, ws, id, "")
	require.NoError(h.t, err)
	doc, err := json.Marshal(rec.Object)
	require.NoError(h.t, err)
	// Every object a task writes validates against the evo schemas.
	parsed, err := objects.DecodeJSON(doc)
	require.NoError(h.t, err)
	require.NoError(h.t, objecttest.Schemas(h.t).Validate(parsed), "the written object validates against its schema")
	obj, err := objects.Decode(doc)
	require.NoError(h.t, err)
	blobs := objecttest.NewBlobs()
	for _, l := range rec.Links.Data {
		data, err := h.c.Download(h.ctx, rec, l.Name)
		require.NoError(h.t, err)
		blobs.Put(l.Name, data)
	}
	return obj, blobs
}

// column reads the single column of the attribute an expression names.
func (h *harness) column(obj *objects.Object, blobs *objecttest.Blobs, expr string) []float64 {
	h.t.Helper()
	a, err := obj.ResolveAttribute(expr)
	require.NoError(h.t, err)
	cols, err := obj.ReadContinuous(h.ctx, blobs, a)
	require.NoError(h.t, err)
	return cols[0]
}

// staticRoles answers the jobs' role re-checks from the harness's static
// token entries, as the worker's identity store answers them for static
// principals (by user id, from the configured grants).
func staticRoles(entries []server.TokenEntry) tasks.JobRoles {
	r := staticRoleTable{}
	for _, e := range entries {
		r[e.User.ID] = server.PrincipalOf(e.User, e.Orgs)
	}
	return r
}

type staticRoleTable map[string]*server.Principal

func (r staticRoleTable) RoleOfUser(userID, org, ws string) server.Access {
	p, ok := r[userID]
	if !ok {
		return server.Access{}
	}
	a, err := p.Resolve(context.Background(), org, ws)
	if err != nil {
		return server.Access{}
	}
	return a
}
