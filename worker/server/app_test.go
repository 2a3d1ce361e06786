package server_test

import (
	"context"
	"encoding/json"
	"github.com/geostat-engine/geostat/worker/problem"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExtraRoutesAndLimiter(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	var deps server.Deps
	app := startApp(t, server.Options{
		MaxConcurrent: 1,
		ExtraRoutes: func(mux server.Router, d server.Deps) {
			deps = d
			mux.Handle("POST /compute/orgs/{org_id}/geostatistics/{task}", d.Auth.RequireOrg(http.HandlerFunc(
				func(w http.ResponseWriter, r *http.Request) {
					if r.PathValue("task") == "slow" {
						entered <- struct{}{}
						<-release
					}
					if r.PathValue("task") == "fail" {
						server.WriteProblem(w, r, d.Logger, store.ErrValidation("bad parameters"))
						return
					}
					server.WriteJSON(w, http.StatusOK, map[string]string{"base": d.BaseURL(r)})
				})))
		},
	})
	require.NotNil(t, deps.Store)
	assert.Same(t, app.Store(), deps.Store)
	assert.Same(t, app.Auth(), deps.Auth)
	c := newClient(t, app, testToken)
	const compute = "/compute/orgs/" + org + "/geostatistics/"

	r := c.do(http.MethodPost, compute+"knn", nil)
	require.Equal(t, http.StatusOK, r.status)
	var got map[string]string
	r.json(t, &got)
	assert.Equal(t, app.URL(), got["base"])
	expectProblem(t, c.do(http.MethodPost, compute+"fail", nil), 422, store.TypeValidation)
	// Auth failures on a compute route carry compute problem types.
	expectProblem(t, newClient(t, app, "").do(http.MethodPost, compute+"knn", nil), 401, problem.ComputeBase+"/auth/missing-token")
	expectProblem(t, newClient(t, app, "wrong-token").do(http.MethodPost, compute+"knn", nil), 401, problem.ComputeBase+"/auth/invalid-token")
	expectProblem(t, c.do(http.MethodPost, "/compute/orgs/acme/geostatistics/knn", nil), 422, problem.ComputeBase+"/validation")
	// The same failure on an object route keeps the object area's type.
	expectProblem(t, newClient(t, app, "wrong-token").do(http.MethodGet, wsPrefix+"/objects", nil), 401, store.TypeInvalidToken)
	expectProblem(t, c.do(http.MethodGet, compute+"knn", nil), 405, problem.MethodNotAllowed)

	// With the one slot taken, the same caller is at its share (429) and
	// another caller gets 503: there are more callers than slots, so no
	// share is left for it. /healthz still answers.
	done := make(chan *response)
	go func() { done <- c.do(http.MethodPost, compute+"slow", nil) }()
	<-entered
	r = c.do(http.MethodGet, wsPrefix+"/objects", nil)
	expectProblem(t, r, http.StatusTooManyRequests, problem.TooManyRequests)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	r = newClient(t, app, "another-caller").do(http.MethodGet, wsPrefix+"/objects", nil)
	expectProblem(t, r, http.StatusServiceUnavailable, problem.Unavailable)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.Equal(t, http.StatusOK, c.do(http.MethodGet, "/healthz", nil).status)
	close(release)
	assert.Equal(t, http.StatusOK, (<-done).status)
}

func TestRunStop(t *testing.T) {
	app, err := server.New(server.Options{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Stdout: io.Discard,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- app.Run(context.Background()) }()
	require.Eventually(t, func() bool {
		resp, err := http.Get(app.URL() + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 5*time.Second, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, app.Stop(ctx))
	select {
	case err := <-done:
		assert.NoError(t, err, "Run returns nil after Stop")
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	_, err = http.Get(app.URL() + "/healthz")
	assert.Error(t, err, "the listener is closed")

	_, err = server.New(server.Options{Addr: "nonsense", DataDir: t.TempDir()})
	assert.ErrorContains(t, err, "addr")
	_, err = server.New(server.Options{Addr: "127.0.0.1:0", DataDir: t.TempDir(), ObjectsURL: "http://x"})
	assert.ErrorContains(t, err, "objects-token")
}

// TestRemoteStoreMode runs the worker with -objects-url pointing at another
// worker: it serves no object routes itself and its Store is the remote
// client.
func TestRemoteStoreMode(t *testing.T) {
	upstream := startApp(t, server.Options{})
	c := newClient(t, upstream, testToken)
	doc := setupPointset(t, c)
	rec := c.postObject("p.json", mustJSON(doc))

	app := startApp(t, server.Options{ObjectsURL: upstream.URL(), ObjectsToken: testToken})
	expectProblem(t, newClient(t, app, testToken).do(http.MethodGet, wsPrefix+"/objects", nil), 404, problem.RouteNotFound)
	v, err := app.Store().GetObject(t.Context(), testWS, store.Ref{ID: *rec.ObjectID})
	require.NoError(t, err)
	assert.Equal(t, rec.VersionID, v.VersionID)
}

func mustJSON(doc map[string]any) []byte { return objecttest.JSON(doc) }

// TestPerCallerLimitAndDetach: one token holding its two slots gets 429 for
// a third request while another token is served; a handler that detaches
// gives its slots back.
func TestPerCallerLimitAndDetach(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	tokens := writeTokens(t, []server.TokenEntry{
		{Token: "alice", User: store.User{ID: "00000000-0000-4000-8000-0000000000a1"}, Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleOwner}}},
		{Token: "bob", User: store.User{ID: "00000000-0000-4000-8000-0000000000b1"}, Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleOwner}}},
	})
	app := startApp(t, server.Options{
		MaxConcurrent: 8, MaxPerPrincipal: 2, TokensFile: tokens,
		ExtraRoutes: func(mux server.Router, d server.Deps) {
			mux.Handle("POST /compute/orgs/{org_id}/geostatistics/{task}", d.Auth.RequireOrg(http.HandlerFunc(
				func(w http.ResponseWriter, r *http.Request) {
					if r.PathValue("task") == "detached" {
						server.Detach(r)
					}
					entered <- struct{}{}
					<-release
					w.WriteHeader(http.StatusNoContent)
				})))
		},
	})
	alice, bob := newClient(t, app, "alice"), newClient(t, app, "bob")
	const compute = "/compute/orgs/" + org + "/geostatistics/"
	done := make(chan *response, 4)
	for range 2 {
		go func() { done <- alice.do(http.MethodPost, compute+"slow", nil) }()
		<-entered
	}
	r := alice.do(http.MethodGet, wsPrefix+"/objects", nil)
	expectProblem(t, r, http.StatusTooManyRequests, problem.TooManyRequests)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.Equal(t, http.StatusOK, bob.do(http.MethodGet, wsPrefix+"/objects", nil).status, "another token is served")
	// Detached handlers hold no slot: bob can have two waiting and still
	// be served.
	for range 2 {
		go func() { done <- bob.do(http.MethodPost, compute+"detached", nil) }()
		<-entered
	}
	assert.Equal(t, http.StatusOK, bob.do(http.MethodGet, wsPrefix+"/objects", nil).status, "detached requests hold no slot")
	close(release)
	for range 4 {
		assert.Equal(t, http.StatusNoContent, (<-done).status)
	}
	assert.Equal(t, http.StatusOK, alice.do(http.MethodGet, wsPrefix+"/objects", nil).status, "slots are given back")
}

// writeTokens writes a tokens file and returns its path.
func writeTokens(t *testing.T, entries []server.TokenEntry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.json")
	data, err := json.Marshal(entries)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}
