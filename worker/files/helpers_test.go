package files_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/require"
)

const (
	org      = "11111111-1111-4111-8111-111111111111"
	wsID     = "22222222-2222-4222-8222-222222222222"
	otherWS  = "33333333-3333-4333-8333-333333333333"
	prefix   = "/file/v2/orgs/" + org + "/workspaces/" + wsID
	ownerTok = "owner-token"
	viewTok  = "viewer-token"
	editTok  = "editor-token"
)

var (
	owner  = store.User{ID: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "Olive Owner", Email: "olive@example.com"}
	editor = store.User{ID: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", Name: "Ed Editor", Email: "ed@example.com"}
	viewer = store.User{ID: "cccccccc-cccc-4ccc-8ccc-cccccccccccc", Name: "Vi Viewer", Email: "vi@example.com"}
)

// env is a running worker with the file area registered.
type env struct {
	t     *testing.T
	app   *server.App
	store *files.Store
	dir   string
}

// start runs a worker on 127.0.0.1:0 over real HTTP with a temporary data
// directory, the file area registered with opts, and a tokens file: the
// owner of every workspace of org, an editor and a viewer of wsID only.
func start(t *testing.T, opts files.Options) *env {
	t.Helper()
	dir := t.TempDir()
	tokens := []server.TokenEntry{
		{Token: ownerTok, User: owner, Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleOwner}}},
		{Token: editTok, User: editor, Orgs: map[string]map[string]server.Role{org: {wsID: server.RoleEditor}}},
		{Token: viewTok, User: viewer, Orgs: map[string]map[string]server.Role{org: {wsID: server.RoleViewer}}},
	}
	data, err := json.Marshal(tokens)
	require.NoError(t, err)
	tokensFile := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(tokensFile, data, 0o600))
	return startWith(t, dir, server.Options{TokensFile: tokensFile}, opts)
}

func startWith(t *testing.T, dir string, so server.Options, opts files.Options) *env {
	t.Helper()
	st, err := files.Open(dir)
	require.NoError(t, err)
	so.DataDir = dir
	if so.Getenv == nil {
		so.Getenv = func(string) string { return "" }
	}
	so.ExtraRoutes = func(mux server.Router, deps server.Deps) { files.Register(mux, deps, st, opts) }
	app := workertest.StartApp(t, so, "")
	return &env{t: t, app: app, store: st, dir: dir}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request to the worker (path relative to its URL unless it is
// absolute) with a bearer token unless token is empty; hdr are header
// name/value pairs.
func (e *env) do(token, method, path string, body []byte, hdr ...string) *response {
	e.t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = e.app.URL() + path
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	require.NoError(e.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

func (r *response) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// expectProblem asserts a problem response with the status and full type
// URI, whose status member equals the HTTP status.
func expectProblem(t *testing.T, r *response, status int, typ string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"), "body: %s", r.body)
	var p map[string]any
	r.json(t, &p)
	require.Equal(t, float64(status), p["status"], "status member equals the HTTP status")
	require.Equal(t, typ, p["type"], "body: %s", r.body)
	require.NotEmpty(t, p["title"])
	return p
}

// escape escapes each segment of a file path for a URL.
func escape(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// reserve PUTs a file path (or "id:<file id>") and returns the upload
// response.
func (e *env) reserve(token, target string, hdr ...string) files.UploadResponse {
	e.t.Helper()
	path := prefix + "/files/path/" + escape(target)
	if id, ok := strings.CutPrefix(target, "id:"); ok {
		path = prefix + "/files/" + id
	}
	r := e.do(token, http.MethodPut, path, nil, hdr...)
	require.Equal(e.t, http.StatusOK, r.status, "body: %s", r.body)
	var up files.UploadResponse
	r.json(e.t, &up)
	return up
}

// put reserves a version and uploads content to its URL (without a token).
func (e *env) put(target string, content []byte, contentType string) files.UploadResponse {
	e.t.Helper()
	up := e.reserve(ownerTok, target)
	var hdr []string
	if contentType != "" {
		hdr = []string{"Content-Type", contentType}
	}
	r := e.do("", http.MethodPut, up.UploadURL, content, hdr...)
	require.Equal(e.t, http.StatusCreated, r.status, "body: %s", r.body)
	return up
}

// get reads a record (target as for reserve; query appended as is).
func (e *env) get(token, target, query string) *response {
	e.t.Helper()
	path := prefix + "/files/path/" + escape(target)
	if id, ok := strings.CutPrefix(target, "id:"); ok {
		path = prefix + "/files/" + id
	}
	if query != "" {
		path += "?" + query
	}
	return e.do(token, http.MethodGet, path, nil)
}

func (e *env) record(target, query string) files.Record {
	e.t.Helper()
	r := e.get(ownerTok, target, query)
	require.Equal(e.t, http.StatusOK, r.status, "body: %s", r.body)
	var rec files.Record
	r.json(e.t, &rec)
	return rec
}

// list reads a listing page.
func (e *env) list(query string) files.Page {
	e.t.Helper()
	r := e.do(ownerTok, http.MethodGet, prefix+"/files?"+query, nil)
	require.Equal(e.t, http.StatusOK, r.status, "body: %s", r.body)
	var p files.Page
	r.json(e.t, &p)
	return p
}
