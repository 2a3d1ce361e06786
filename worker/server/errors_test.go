package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"github.com/geostat-engine/geostat/worker/problem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setupPointset uploads a pointset's blobs and returns its document.
func setupPointset(t *testing.T, c *client) map[string]any {
	b := objecttest.NewBlobs()
	doc := b.Pointset("1.3.0", []float64{0, 0, 0, 1, 1, 1}, b.Scalar("grade", "0b9e3c0e-5c4a-4f0e-9c1e-1a2b3c4d5e6f", []float64{1, 2}))
	c.uploadBlobs(b)
	return doc
}

func mutated(doc map[string]any, f func(m map[string]any)) []byte {
	var m map[string]any
	if err := json.Unmarshal(objecttest.JSON(doc), &m); err != nil {
		panic(err)
	}
	f(m)
	return objecttest.JSON(m)
}

// TestSeedErrorRows has one case per applicable row of seed 7.3.
func TestSeedErrorRows(t *testing.T) {
	app := startApp(t, server.Options{})
	c := newClient(t, app, testToken)
	doc := setupPointset(t, c)
	good := objecttest.JSON(doc)
	first := c.postObject("p.json", good)
	coords := func(m map[string]any) map[string]any {
		return m["locations"].(map[string]any)["coordinates"].(map[string]any)
	}

	t.Run("400 schemas/invalid-object", func(t *testing.T) {
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/x.json", mutated(doc, func(m map[string]any) { m["stray"] = true }))
		p := expectProblem(t, r, 400, store.TypeInvalidObject)
		assert.Equal(t, "The Geoscience Object Is Invalid.", p["title"])
		assert.Equal(t, "/stray", p["json_path"])
		assert.NotEmpty(t, p["schema_path"])
		// Non-finite numbers are validation errors too (seed 2.4 rule 5).
		r = c.do(http.MethodPost, wsPrefix+"/objects/path/x.json", bytes.Replace(good, []byte(`"max_x":1`), []byte(`"max_x":Infinity`), 1))
		expectProblem(t, r, 400, store.TypeInvalidObject)
	})
	t.Run("400 data/invalid-key", func(t *testing.T) {
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/x.json", mutated(doc, func(m map[string]any) { coords(m)["data"] = "not-a-key" }))
		p := expectProblem(t, r, 400, store.TypeInvalidKey)
		assert.Equal(t, "Data Key Not Valid.", p["title"])
		assert.Equal(t, []any{"/locations/coordinates/data: not-a-key"}, p["invalid"])
		// PUT data with a bad name.
		r = c.do(http.MethodPut, wsPrefix+"/data", []byte(`[{"name": "zz"}]`))
		expectProblem(t, r, 400, store.TypeInvalidKey)
	})
	t.Run("400 objects/data-key-not-found", func(t *testing.T) {
		missing := strings.Repeat("ab", 32)
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/x.json", mutated(doc, func(m map[string]any) { coords(m)["data"] = missing }))
		p := expectProblem(t, r, 400, store.TypeDataKeyNotFound)
		assert.Equal(t, "Data Key Not Found.", p["title"])
		assert.Equal(t, []any{missing}, p["missing"])
	})
	t.Run("400 objects/invalid-object", func(t *testing.T) {
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/x.txt", good)
		p := expectProblem(t, r, 400, store.TypeObjectError)
		assert.Equal(t, "Object Error.", p["title"])
		r = c.do(http.MethodPost, wsPrefix+"/objects/"+*first.ObjectID, objecttest.JSON(objecttest.Variogram("1.2.0")))
		expectProblem(t, r, 400, store.TypeObjectError)
	})
	t.Run("400 invalid-path", func(t *testing.T) {
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/a%7Cb.json", good)
		p := expectProblem(t, r, 400, store.TypeInvalidPath)
		assert.Equal(t, "Invalid Path.", p["title"])
		r = c.do(http.MethodPost, wsPrefix+"/objects/path/"+strings.Repeat("n", 252)+".json", good)
		p = expectProblem(t, r, 400, store.TypeInvalidPath)
		assert.Contains(t, p["detail"], "less than 256 characters")
		// Whitespace around a segment: rejected only with the preview flag.
		r = c.do(http.MethodPost, wsPrefix+"/objects/path/dir%20/ws.json", good, "API-Preview", "opt-in, "+store.PreviewWhitespaceCheck)
		p = expectProblem(t, r, 400, store.TypeInvalidPath)
		assert.Contains(t, p["detail"], "not permitted")
		c.postObject("dir%20/ws.json", good)
	})
	t.Run("400 bad-request", func(t *testing.T) {
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/x.json", []byte("{not json"))
		expectProblem(t, r, 400, store.TypeBadRequest)
		other := "99999999-9999-4999-8999-999999999999"
		r = c.do(http.MethodPost, wsPrefix+"/objects/"+*first.ObjectID, mutated(doc, func(m map[string]any) { m["uuid"] = other }))
		expectProblem(t, r, 400, store.TypeBadRequest)
	})
	t.Run("401 auth/missing-token and invalid-token", func(t *testing.T) {
		anon := newClient(t, app, "")
		p := expectProblem(t, anon.do(http.MethodGet, wsPrefix+"/objects", nil), 401, store.TypeMissingToken)
		assert.Equal(t, "Access Denied.", p["title"])
		expectProblem(t, anon.do(http.MethodGet, wsPrefix+"/objects", nil, "Authorization", "Basic abc"), 401, store.TypeMissingToken)
		bad := newClient(t, app, "wrong-token")
		expectProblem(t, bad.do(http.MethodGet, wsPrefix+"/objects", nil), 401, store.TypeInvalidToken)
		expectProblem(t, bad.do(http.MethodGet, "/geoscience-object/orgs/"+org+"/objects", nil), 401, store.TypeInvalidToken)
		// /healthz needs no token.
		assert.Equal(t, http.StatusOK, anon.do(http.MethodGet, "/healthz", nil).status)
	})
	t.Run("404 objects/not-found", func(t *testing.T) {
		ghost := "99999999-9999-4999-8999-999999999999"
		p := expectProblem(t, c.do(http.MethodGet, wsPrefix+"/objects/"+ghost, nil), 404, store.TypeNotFound)
		assert.Equal(t, "Object Not Found.", p["title"])
		assert.Equal(t, ghost, p["object_id"])
		expectProblem(t, c.do(http.MethodGet, wsPrefix+"/objects/path/nothing.json", nil), 404, store.TypeNotFound)
		expectProblem(t, c.do(http.MethodDelete, wsPrefix+"/objects/"+ghost, nil), 404, store.TypeNotFound)
		expectProblem(t, c.do(http.MethodPost, wsPrefix+"/objects/"+ghost, good), 404, store.TypeNotFound)
	})
	t.Run("404 schemas/not-found", func(t *testing.T) {
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/x.json", mutated(doc, func(m map[string]any) {
			m["schema"] = "/objects/unknown-thing/1.0.0/unknown-thing.schema.json"
		}))
		p := expectProblem(t, r, 404, store.TypeSchemaNotFound)
		assert.Equal(t, "Failed To Request Geoscience Object Schema.", p["title"])
	})
	t.Run("409 objects/already-exists", func(t *testing.T) {
		for _, path := range []string{"p.json", "P.JSON"} {
			r := c.do(http.MethodPost, wsPrefix+"/objects/path/"+path, good)
			p := expectProblem(t, r, 409, store.TypeAlreadyExists)
			assert.Equal(t, "Geoscience Object Already Exists.", p["title"])
			assert.Equal(t, *first.ObjectID, p["existing_id"])
			assert.Equal(t, "p.json", p["object_path"])
		}
	})
	t.Run("412 objects/modified", func(t *testing.T) {
		r := c.do(http.MethodPost, wsPrefix+"/objects/"+*first.ObjectID, good, "If-Match", "1")
		expectProblem(t, r, 412, store.TypeModified)
		r = c.do(http.MethodPost, wsPrefix+"/objects/path/p.json", mutated(doc, func(m map[string]any) { m["uuid"] = *first.ObjectID }), "If-Match", "1")
		expectProblem(t, r, 412, store.TypeModified)
	})
	t.Run("422 filtering, sorting, validation", func(t *testing.T) {
		orgList := "/geoscience-object/orgs/" + org + "/objects"
		p := expectProblem(t, c.do(http.MethodGet, orgList+"?created_at=yesterday", nil), 422, store.TypeInvalidFilter)
		assert.Equal(t, "Invalid Filter Params.", p["title"])
		p = expectProblem(t, c.do(http.MethodGet, orgList+"?order_by=size", nil), 422, store.TypeInvalidSort)
		assert.Equal(t, "Invalid Sorting Parameters", p["title"])
		p = expectProblem(t, c.do(http.MethodGet, wsPrefix+"/objects/not-a-uuid", nil), 422, store.TypeValidation)
		assert.Equal(t, "Validation Error.", p["title"])
		expectProblem(t, c.do(http.MethodGet, "/geoscience-object/orgs/x/workspaces/"+wsID+"/objects", nil), 422, store.TypeValidation)
		expectProblem(t, c.do(http.MethodGet, "/geoscience-object/orgs/x/objects", nil), 422, store.TypeValidation)
		expectProblem(t, c.do(http.MethodGet, wsPrefix+"/objects?limit=0", nil), 422, store.TypeValidation)
		// More than 32 names in one data request.
		var names []store.DataRequest
		for i := 0; i < server.MaxDataNames+1; i++ {
			names = append(names, store.DataRequest{Name: fmt.Sprintf("%064x", i)})
		}
		body, _ := json.Marshal(names)
		expectProblem(t, c.do(http.MethodPut, wsPrefix+"/data", body), 422, store.TypeValidation)
		body, _ = json.Marshal(names[:server.MaxDataNames])
		assert.Equal(t, http.StatusOK, c.do(http.MethodPut, wsPrefix+"/data", body).status)
		expectProblem(t, c.do(http.MethodPatch, wsPrefix+"/objects", []byte(`["nope"]`)), 422, store.TypeValidation)
		expectProblem(t, c.do(http.MethodPost, wsPrefix+"/objects/"+*first.ObjectID+"?deleted=true", nil), 422, store.TypeValidation)
	})
	t.Run("405 with Allow, 404 route", func(t *testing.T) {
		r := c.do(http.MethodPut, wsPrefix+"/objects/"+*first.ObjectID, good)
		expectProblem(t, r, 405, problem.MethodNotAllowed)
		allow := r.header.Get("Allow")
		for _, m := range []string{"GET", "POST", "DELETE"} {
			assert.Contains(t, allow, m)
		}
		expectProblem(t, c.do(http.MethodGet, "/nothing/here", nil), 404, problem.RouteNotFound)
	})
	t.Run("gzip bodies", func(t *testing.T) {
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		zw.Write(good)
		zw.Close()
		r := c.do(http.MethodPost, wsPrefix+"/objects/path/gz.json", zb.Bytes(), "Content-Encoding", "gzip")
		require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	})
}

func TestBodyLimits(t *testing.T) {
	app := startApp(t, server.Options{MaxObjectBytes: 1000, MaxBlobBytes: 64})
	c := newClient(t, app, testToken)
	big := append([]byte(`{"schema": "x", "pad": "`), bytes.Repeat([]byte("x"), 2000)...)
	big = append(big, `"}`...)
	p := expectProblem(t, c.do(http.MethodPost, wsPrefix+"/objects/path/big.json", big), 413, problem.PayloadTooLarge)
	assert.Contains(t, p["detail"], "1000")
	// A gzip bomb is cut at the decompressed limit.
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(big)
	zw.Close()
	expectProblem(t, c.do(http.MethodPost, wsPrefix+"/objects/path/big.json", zb.Bytes(), "Content-Encoding", "gzip"), 413, problem.PayloadTooLarge)

	data := bytes.Repeat([]byte("z"), 100)
	name := sha256Hex(data)
	body, _ := json.Marshal([]store.DataRequest{{Name: name}})
	var resp []store.DataResponse
	c.do(http.MethodPut, wsPrefix+"/data", body).json(t, &resp)
	anon := &client{t: t, base: c.base}
	expectProblem(t, anon.do(http.MethodPut, *resp[0].UploadURL, data), 413, problem.PayloadTooLarge)
	expectProblem(t, anon.do(http.MethodPut, *resp[0].UploadURL+"&comp=block&blockid=QUFB", data), 413, problem.PayloadTooLarge)
}

func TestUploadDigestAndSignature(t *testing.T) {
	app := startApp(t, server.Options{})
	c := newClient(t, app, testToken)
	data := []byte("the real bytes of a parquet file")
	name := sha256Hex(data)
	body, _ := json.Marshal([]store.DataRequest{{Name: name}})
	var resp []store.DataResponse
	c.do(http.MethodPut, wsPrefix+"/data", body).json(t, &resp)
	u := *resp[0].UploadURL
	anon := &client{t: t, base: c.base}

	// Wrong bytes: 400, nothing kept.
	expectProblem(t, anon.do(http.MethodPut, u, []byte("other bytes")), 400, store.TypeBadRequest)
	c.do(http.MethodPut, wsPrefix+"/data", body).json(t, &resp)
	assert.False(t, resp[0].Exists)
	// Blocks in the wrong order: 400, nothing kept, staged blocks dropped.
	ids := []string{blockID(0), blockID(10)}
	require.Equal(t, 201, anon.do(http.MethodPut, u+"&comp=block&blockid="+urlQueryEscape(ids[0]), data[:10]).status)
	require.Equal(t, 201, anon.do(http.MethodPut, u+"&comp=block&blockid="+urlQueryEscape(ids[1]), data[10:]).status)
	expectProblem(t, anon.do(http.MethodPut, u+"&comp=blocklist", []byte(blockListXML([]string{ids[1], ids[0]}))), 400, store.TypeBadRequest)
	expectProblem(t, anon.do(http.MethodPut, u+"&comp=blocklist", []byte(blockListXML(ids))), 400, store.TypeBadRequest)
	c.do(http.MethodPut, wsPrefix+"/data", body).json(t, &resp)
	assert.False(t, resp[0].Exists)
	// Bad block list XML, bad block id, unknown comp.
	expectProblem(t, anon.do(http.MethodPut, u+"&comp=blocklist", []byte("<nope")), 400, store.TypeBadRequest)
	expectProblem(t, anon.do(http.MethodPut, u+"&comp=block&blockid=%25%25", data), 400, store.TypeBadRequest)
	expectProblem(t, anon.do(http.MethodPut, u+"&comp=appendblock", data), 400, store.TypeBadRequest)

	// Tampered or mismatched signatures: 403.
	expectProblem(t, anon.do(http.MethodPut, strings.Replace(u, "sig=", "sig=0", 1), data), 403, problem.BadSignature)
	expectProblem(t, anon.do(http.MethodPut, strings.Replace(u, name, strings.Repeat("0", 64), 1), data), 403, problem.BadSignature)
	expectProblem(t, anon.do(http.MethodGet, u, nil), 403, problem.BadSignature) // an upload URL does not download
	expectProblem(t, anon.do(http.MethodPut, strings.Replace(u, "se=", "se=1", 1), data), 403, problem.BadSignature)

	// The right bytes: stored.
	require.Equal(t, http.StatusCreated, anon.do(http.MethodPut, u, data).status)
	c.do(http.MethodPut, wsPrefix+"/data", body).json(t, &resp)
	assert.True(t, resp[0].Exists)
}

func TestRolesFromTokensFile(t *testing.T) {
	const ws2 = "33333333-3333-4333-8333-333333333333"
	const org2 = "55555555-5555-4555-8555-555555555555"
	tokens := []server.TokenEntry{
		{Token: "owner-tok", User: store.User{ID: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "Olive"}, Orgs: map[string]map[string]server.Role{org: {"*": server.RoleOwner}}},
		{Token: "editor-tok", User: store.User{ID: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", Name: "Ed"}, Orgs: map[string]map[string]server.Role{org: {wsID: server.RoleEditor}}},
		{Token: "viewer-tok", User: store.User{ID: "cccccccc-cccc-4ccc-8ccc-cccccccccccc", Name: "Vi"}, Orgs: map[string]map[string]server.Role{org: {wsID: server.RoleViewer, ws2: server.RoleEditor}}},
		{Token: "other-tok", User: store.User{ID: "dddddddd-dddd-4ddd-8ddd-dddddddddddd"}, Orgs: map[string]map[string]server.Role{org2: {"*": server.RoleOwner}}},
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.json")
	data, _ := json.Marshal(tokens)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	app := startApp(t, server.Options{TokensFile: path})

	owner := newClient(t, app, "owner-tok")
	doc := setupPointset(t, owner)
	rec := owner.postObject("p.json", objecttest.JSON(doc))
	assert.Equal(t, "Olive", rec.CreatedBy.Name)

	editor := newClient(t, app, "editor-tok")
	r := editor.do(http.MethodPost, wsPrefix+"/objects/"+*rec.ObjectID, objecttest.JSON(doc))
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	var v2 store.VersionRecord
	r.json(t, &v2)
	assert.Equal(t, "Ed", v2.ModifiedBy.Name)
	assert.Equal(t, "Olive", v2.CreatedBy.Name)

	viewer := newClient(t, app, "viewer-tok")
	assert.Equal(t, http.StatusOK, viewer.do(http.MethodGet, wsPrefix+"/objects/"+*rec.ObjectID, nil).status)
	for _, req := range []struct{ method, path string }{
		{http.MethodPost, "/objects/" + *rec.ObjectID},
		{http.MethodPost, "/objects/path/v.json"},
		{http.MethodDelete, "/objects/" + *rec.ObjectID},
		{http.MethodPut, "/data"},
	} {
		r := viewer.do(req.method, wsPrefix+req.path, objecttest.JSON(doc))
		p := expectProblem(t, r, http.StatusForbidden, store.TypeInsufficient)
		assert.Equal(t, "Insufficient Role.", p["title"])
		assert.Equal(t, "viewer", p["your_role"])
		assert.Equal(t, []any{"owner", "editor"}, p["permitted_roles"])
	}
	// A workspace the token has no role in looks like it does not exist.
	other := newClient(t, app, "other-tok")
	expectProblem(t, other.do(http.MethodGet, wsPrefix+"/objects/"+*rec.ObjectID, nil), 404, store.TypeNotFound)
	expectProblem(t, editor.do(http.MethodGet, "/geoscience-object/orgs/"+org+"/workspaces/"+ws2+"/objects", nil), 404, store.TypeNotFound)
	expectProblem(t, other.do(http.MethodGet, "/geoscience-object/orgs/"+org+"/objects", nil), 404, store.TypeNotFound)
	// The organisation listing shows each workspace's role.
	var page store.ListPageRecord
	viewer.do(http.MethodGet, "/geoscience-object/orgs/"+org+"/objects", nil).json(t, &page)
	require.Len(t, page.Objects, 1)
	assert.Equal(t, "viewer", *page.Objects[0].WorkspaceAccess)
	// GEOSTAT_TOKEN is not used when a tokens file is given.
	expectProblem(t, newClient(t, app, testToken).do(http.MethodGet, wsPrefix+"/objects", nil), 401, store.TypeInvalidToken)
}

func TestTokensFileValidation(t *testing.T) {
	cases := map[string]string{
		"bad role":   `[{"token": "t", "user": {"id": "u"}, "orgs": {"11111111-1111-4111-8111-111111111111": {"*": "admin"}}}]`,
		"bad org":    `[{"token": "t", "user": {"id": "u"}, "orgs": {"acme": {"*": "owner"}}}]`,
		"bad ws":     `[{"token": "t", "user": {"id": "u"}, "orgs": {"11111111-1111-4111-8111-111111111111": {"ws1": "owner"}}}]`,
		"no token":   `[{"token": "", "user": {"id": "u"}, "orgs": {}}]`,
		"no user":    `[{"token": "t", "user": {}, "orgs": {}}]`,
		"duplicate":  `[{"token": "t", "user": {"id": "u"}}, {"token": "t", "user": {"id": "v"}}]`,
		"empty list": `[]`,
		"not json":   `{`,
	}
	for name, content := range cases {
		path := filepath.Join(t.TempDir(), "tokens.json")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		_, err := server.New(server.Options{Addr: "127.0.0.1:0", DataDir: t.TempDir(), TokensFile: path, Stdout: &bytes.Buffer{}})
		assert.Error(t, err, name)
	}
}

func TestDevToken(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	noEnv := func(string) string { return "" }
	app := startApp(t, server.Options{DataDir: dir, Getenv: noEnv, Stdout: &out})
	path := filepath.Join(dir, server.DevTokenFile)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	tokenBytes, err := os.ReadFile(path)
	require.NoError(t, err)
	token := strings.TrimSpace(string(tokenBytes))
	assert.Len(t, token, 64)
	assert.Contains(t, out.String(), "Authorization: Bearer $(cat ")
	assert.NotContains(t, out.String(), token, "the token itself is never printed")
	assert.Equal(t, http.StatusOK, newClient(t, app, token).do(http.MethodGet, wsPrefix+"/objects", nil).status)

	// A second start on the same directory reuses the token. While the first
	// App runs, the directory is locked.
	_, err = server.New(server.Options{Addr: "127.0.0.1:0", DataDir: dir, Getenv: noEnv, Stdout: &out, Logger: app.Deps().Logger})
	require.ErrorIs(t, err, server.ErrDataDirInUse)
	assert.ErrorContains(t, err, fmt.Sprintf("(pid %d)", os.Getpid()))
	require.NoError(t, app.Stop(t.Context()))
	out.Reset()
	app3, err := server.New(server.Options{Addr: "127.0.0.1:0", DataDir: dir, Getenv: noEnv, Stdout: &out, Logger: app.Deps().Logger})
	require.NoError(t, err)
	again, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, tokenBytes, again)
	require.NoError(t, app3.Stop(t.Context()))
	require.NoError(t, app3.Stop(t.Context()), "Stop is idempotent")
}

// TestBlobsAreImmutable uploads a UUID-named blob, then other bytes under
// the same name (whole and in blocks): 409 and the first bytes kept; the
// same bytes again are accepted.
func TestBlobsAreImmutable(t *testing.T) {
	app := startApp(t, server.Options{})
	c := newClient(t, app, testToken)
	name := "7a3c2a9e-5b1f-4c4e-9d7e-3f2a1b0c9d8e"
	body, _ := json.Marshal([]store.DataRequest{{Name: name}})
	var resp []store.DataResponse
	c.do(http.MethodPut, wsPrefix+"/data", body).json(t, &resp)
	require.NotNil(t, resp[0].UploadURL)
	u := *resp[0].UploadURL
	anon := &client{t: t, base: c.base}
	first, other := []byte("the first bytes"), []byte("other bytes, same name")
	require.Equal(t, http.StatusCreated, anon.do(http.MethodPut, u, first).status)
	p := expectProblem(t, anon.do(http.MethodPut, u, other), http.StatusConflict, store.TypeBlobExists)
	assert.Contains(t, p["detail"], "immutable")
	id := blockID(0)
	require.Equal(t, 201, anon.do(http.MethodPut, u+"&comp=block&blockid="+urlQueryEscape(id), other).status)
	expectProblem(t, anon.do(http.MethodPut, u+"&comp=blocklist", []byte(blockListXML([]string{id}))), http.StatusConflict, store.TypeBlobExists)
	require.Equal(t, http.StatusCreated, anon.do(http.MethodPut, u, first).status, "the same bytes again are a no-op")
	rc, err := app.Store().OpenBlob(context.Background(), testWS, nil, name)
	require.NoError(t, err)
	defer rc.Close()
	got := make([]byte, rc.Size())
	_, err = rc.ReadAt(got, 0)
	require.NoError(t, err)
	assert.Equal(t, first, got, "the first bytes are kept")
}
