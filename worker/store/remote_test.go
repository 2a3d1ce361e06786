package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "remote-test-token"

var ws = store.Workspace{Org: "11111111-1111-4111-8111-111111111111", ID: "22222222-2222-4222-8222-222222222222"}

// startWorker runs the worker's own object API over real HTTP on 127.0.0.1.
func startWorker(t *testing.T) *server.App {
	t.Helper()
	app := workertest.StartApp(t, server.Options{}, token)
	return app
}

func statusType(t *testing.T, err error, status int, typ string) {
	t.Helper()
	e := store.AsError(err)
	require.NotNil(t, e, "want a store error, got %v", err)
	assert.Equal(t, status, e.Status, e.Error())
	assert.Equal(t, typ, e.Type, e.Error())
}

// TestRemoteAgainstWorker drives the remote client through the Store
// interface against the worker's object API.
func TestRemoteAgainstWorker(t *testing.T) {
	ctx := context.Background()
	app := startWorker(t)
	var s store.Store
	s, err := store.NewRemote(app.URL(), token, nil)
	require.NoError(t, err)
	defer s.Close()

	b := objecttest.NewBlobs()
	// A blob larger than one upload block exercises the block form.
	big := make([]float64, store.UploadBlockSize/8+1000)
	for i := range big {
		big[i] = float64(i%977) * 1.25
	}
	n := int64(len(big))
	xyz := make([]float64, 3*n)
	for i := range xyz {
		xyz[i] = float64(i % 1013)
	}
	doc := b.Pointset("1.3.0", xyz, b.Scalar("grade", "0b9e3c0e-5c4a-4f0e-9c1e-1a2b3c4d5e6f", big))
	for _, k := range b.Keys() {
		data, _ := b.Get(k)
		ok, err := s.BlobExists(ctx, ws, k)
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, s.PutBlob(ctx, ws, k, bytes.NewReader(data)))
		ok, err = s.BlobExists(ctx, ws, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, s.PutBlob(ctx, ws, k, bytes.NewReader(data)), "an existing blob is not uploaded again")
	}

	v1, err := s.PutObject(ctx, ws, store.PutRequest{Path: "remote/points.json", Object: objecttest.JSON(doc)})
	require.NoError(t, err)
	assert.Equal(t, "remote/points.json", v1.Path)
	assert.Len(t, v1.Links, len(b.Keys()))

	got, err := s.GetObject(ctx, ws, store.Ref{Path: "REMOTE/points.json"})
	require.NoError(t, err)
	assert.Equal(t, v1.VersionID, got.VersionID)
	assert.Equal(t, v1.ObjectID, got.ObjectID)
	assert.Equal(t, "/objects/pointset/1.3.0/pointset.schema.json", got.Schema)

	// Blobs through the links: byte-identical, decodable.
	for _, k := range b.Keys() {
		f, err := s.OpenBlob(ctx, ws, got, k)
		require.NoError(t, err)
		data := make([]byte, f.Size())
		_, err = f.ReadAt(data, 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		want, _ := b.Get(k)
		assert.Equal(t, want, data)
	}
	o, err := objects.Decode(got.Object)
	require.NoError(t, err)
	a, err := o.ResolveAttribute("grade")
	require.NoError(t, err)
	vals, err := o.ReadContinuous(ctx, store.Blobs(s, ws, got), a)
	require.NoError(t, err)
	assert.Equal(t, big, vals[0])
	// Stale links are refreshed by fetching the version again.
	stale := *got
	stale.Links = nil
	f, err := s.OpenBlob(ctx, ws, &stale, b.Keys()[0])
	require.NoError(t, err)
	f.Close()

	// New version by id with If-Match; a stale If-Match is 412.
	v2, err := s.PutObject(ctx, ws, store.PutRequest{ID: v1.ObjectID, IfMatch: v1.VersionID, Object: got.Object})
	require.NoError(t, err)
	assert.NotEqual(t, v1.VersionID, v2.VersionID)
	_, err = s.PutObject(ctx, ws, store.PutRequest{ID: v1.ObjectID, IfMatch: v1.VersionID, Object: got.Object})
	statusType(t, err, http.StatusPreconditionFailed, store.TypeModified)
	_, err = s.PutObject(ctx, ws, store.PutRequest{Path: "remote/POINTS.json", Object: objecttest.JSON(doc)})
	statusType(t, err, http.StatusConflict, store.TypeAlreadyExists)
	_, err = s.PutObject(ctx, ws, store.PutRequest{Path: "remote/ bad.json", Object: objecttest.JSON(doc), CheckWhitespace: true})
	statusType(t, err, http.StatusBadRequest, store.TypeInvalidPath)
	old, err := s.GetObject(ctx, ws, store.Ref{ID: v1.ObjectID, Version: v1.VersionID, IncludeVersions: true})
	require.NoError(t, err)
	assert.Equal(t, v1.VersionID, old.VersionID)
	assert.Len(t, old.History, 2)

	lv, err := s.LatestVersions(ctx, ws, []string{v1.ObjectID})
	require.NoError(t, err)
	assert.Equal(t, []store.LatestVersion{{ObjectID: v1.ObjectID, VersionID: v2.VersionID}}, lv)

	page, err := s.ListObjects(ctx, ws, store.ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "points.json", page.Items[0].Name)
	oq, err := store.ParseOrgQuery(url.Values{"object_name": {"po"}})
	require.NoError(t, err)
	page, err = s.ListOrgObjects(ctx, ws.Org, oq)
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "owner", page.Items[0].WorkspaceAccess)
	_, err = s.ListOrgObjects(ctx, ws.Org, store.OrgQuery{Raw: url.Values{"order_by": {"bogus"}}})
	statusType(t, err, http.StatusUnprocessableEntity, store.TypeInvalidSort)

	require.NoError(t, s.DeleteObject(ctx, ws, store.Ref{Path: "remote/points.json"}, store.User{}))
	_, err = s.GetObject(ctx, ws, store.Ref{ID: v1.ObjectID})
	statusType(t, err, http.StatusNotFound, store.TypeNotFound)
	assert.True(t, store.IsNotFound(err))
	del, err := s.GetObject(ctx, ws, store.Ref{ID: v1.ObjectID, Deleted: true})
	require.NoError(t, err)
	require.NotNil(t, del.DeletedAt)
	page, err = s.ListObjects(ctx, ws, store.ListOptions{Deleted: true})
	require.NoError(t, err)
	assert.Len(t, page.Items, 1)
	restored, err := s.RestoreObject(ctx, ws, v1.ObjectID, store.User{})
	require.NoError(t, err)
	assert.Equal(t, "remote/points.json", restored.Path)

	// Errors carry the problem's extra members.
	var m map[string]any
	require.NoError(t, json.Unmarshal(got.Object, &m))
	m["locations"].(map[string]any)["coordinates"].(map[string]any)["data"] = "bad"
	_, err = s.PutObject(ctx, ws, store.PutRequest{ID: v1.ObjectID, Object: objecttest.JSON(m)})
	statusType(t, err, http.StatusBadRequest, store.TypeInvalidKey)
	assert.NotEmpty(t, store.AsError(err).Extra["invalid"])

	// A wrong token.
	bad, err := store.NewRemote(app.URL(), "wrong", nil)
	require.NoError(t, err)
	_, err = bad.GetObject(ctx, ws, store.Ref{ID: v1.ObjectID})
	statusType(t, err, http.StatusUnauthorized, store.TypeInvalidToken)
}

// TestRemoteUpstreamFailures maps an unusable upstream to 502 errors.
func TestRemoteUpstreamFailures(t *testing.T) {
	ctx := context.Background()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("<html>not json</html>"))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("down"))
	}))
	defer up.Close()
	s, err := store.NewRemote(up.URL, token, nil)
	require.NoError(t, err)
	_, err = s.GetObject(ctx, ws, store.Ref{ID: "99999999-9999-4999-8999-999999999999"})
	statusType(t, err, http.StatusBadGateway, store.TypeBadGateway)
	_, err = s.PutObject(ctx, ws, store.PutRequest{Path: "a.json", Object: []byte("{}")})
	statusType(t, err, http.StatusServiceUnavailable, store.TypeBadGateway)

	up.Close()
	_, err = s.GetObject(ctx, ws, store.Ref{ID: "99999999-9999-4999-8999-999999999999"})
	statusType(t, err, http.StatusBadGateway, store.TypeStorage)

	_, err = store.NewRemote("ftp://x", token, nil)
	assert.Error(t, err)
	_, err = store.NewRemote("http://x", "", nil)
	assert.Error(t, err)
}

// TestRemoteUpstreamInsufficientStorage keeps an upstream 507 (its disk is
// full) a 507 of type insufficient-storage, with the upstream's problem
// document or without one.
func TestRemoteUpstreamInsufficientStorage(t *testing.T) {
	ctx := context.Background()
	var plain atomic.Bool
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if plain.Load() {
			w.WriteHeader(http.StatusInsufficientStorage)
			w.Write([]byte("disk full"))
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusInsufficientStorage)
		json.NewEncoder(w).Encode(map[string]any{"type": "https://upstream.example/geoscienceobject/insufficient-storage",
			"title": "Insufficient Storage.", "status": 507, "detail": "writing the object version: no space left on device"})
	}))
	defer up.Close()
	s, err := store.NewRemote(up.URL, token, nil)
	require.NoError(t, err)
	_, err = s.PutObject(ctx, ws, store.PutRequest{Path: "a.json", Object: []byte("{}")})
	statusType(t, err, http.StatusInsufficientStorage, store.TypeInsufficientStorage)
	assert.Equal(t, "writing the object version: no space left on device", store.AsError(err).Detail)
	plain.Store(true)
	err = s.PutBlob(ctx, ws, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", bytes.NewReader([]byte("hello")))
	statusType(t, err, http.StatusInsufficientStorage, store.TypeInsufficientStorage)
}
