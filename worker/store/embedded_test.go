package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	testWS = Workspace{Org: "11111111-1111-4111-8111-111111111111", ID: "22222222-2222-4222-8222-222222222222"}
	alice  = User{ID: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "Alice", Email: "alice@example.com"}
	ctx    = context.Background()
)

// frozenClock returns the same instant every time, so version ids must be
// bumped to stay strictly increasing.
func frozenClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func openTest(t *testing.T, dir string) *Embedded {
	t.Helper()
	s, err := OpenEmbedded(EmbeddedOptions{Dir: dir, Schemas: objecttest.Schemas(t), Now: frozenClock})
	require.NoError(t, err)
	return s
}

// uploadAll stores every blob of an objecttest.Blobs in the store.
func uploadAll(t *testing.T, s Store, b *objecttest.Blobs) {
	t.Helper()
	for _, k := range b.Keys() {
		data, _ := b.Get(k)
		require.NoError(t, s.PutBlob(ctx, testWS, k, bytes.NewReader(data)))
	}
}

func pointsetDoc(t *testing.T, s Store) (map[string]any, *objecttest.Blobs) {
	b := objecttest.NewBlobs()
	doc := b.Pointset("1.3.0", []float64{0, 0, 0, 1, 1, 1}, b.Scalar("grade", "0b9e3c0e-5c4a-4f0e-9c1e-1a2b3c4d5e6f", []float64{1, 2}))
	uploadAll(t, s, b)
	return doc, b
}

func put(t *testing.T, s Store, req PutRequest) *Version {
	t.Helper()
	if req.By.ID == "" {
		req.By = alice
	}
	v, err := s.PutObject(ctx, testWS, req)
	require.NoError(t, err)
	return v
}

func requireErr(t *testing.T, err error, status int, typ string) *Error {
	t.Helper()
	e := AsError(err)
	require.NotNil(t, e, "want a store error, got %v", err)
	assert.Equal(t, status, e.Status, e.Error())
	assert.Equal(t, typ, e.Type, e.Error())
	return e
}

func withUUID(doc map[string]any, id string) []byte {
	d := map[string]any{}
	for k, v := range doc {
		d[k] = v
	}
	d["uuid"] = id
	return objecttest.JSON(d)
}

func TestPutGetVersions(t *testing.T) {
	s := openTest(t, t.TempDir())
	doc, _ := pointsetDoc(t, s)
	v1 := put(t, s, PutRequest{Path: "/folder/Points.json", Object: objecttest.JSON(doc)})
	assert.Equal(t, "folder/Points.json", v1.Path)
	assert.True(t, objects.IsUUID(v1.ObjectID))
	assert.Equal(t, strconv.FormatInt(frozenClock().UnixNano(), 10), v1.VersionID, "version id is the nanosecond timestamp")
	var stored map[string]any
	require.NoError(t, json.Unmarshal(v1.Object, &stored))
	assert.Equal(t, v1.ObjectID, stored["uuid"], "the assigned id is written into the document")

	// A new version by id and one by path with the uuid; the clock is frozen,
	// so version ids are bumped to stay strictly increasing.
	v2 := put(t, s, PutRequest{ID: v1.ObjectID, Object: objecttest.JSON(doc)})
	v3 := put(t, s, PutRequest{Path: "FOLDER/points.JSON", Object: withUUID(doc, v1.ObjectID)})
	n1, _ := strconv.ParseInt(v1.VersionID, 10, 64)
	n2, _ := strconv.ParseInt(v2.VersionID, 10, 64)
	n3, _ := strconv.ParseInt(v3.VersionID, 10, 64)
	assert.Less(t, n1, n2)
	assert.Less(t, n2, n3)
	assert.Equal(t, "FOLDER/points.JSON", v3.Path, "case-preserving: the new spelling is kept")
	assert.Equal(t, v1.CreatedAt, v3.CreatedAt, "created_at is the object's")

	for _, ref := range []Ref{{ID: v1.ObjectID}, {Path: "folder/points.json"}, {Path: "/Folder/POINTS.json"}} {
		got, err := s.GetObject(ctx, testWS, ref)
		require.NoError(t, err)
		assert.Equal(t, v3.VersionID, got.VersionID, "%+v", ref)
	}
	old, err := s.GetObject(ctx, testWS, Ref{ID: v1.ObjectID, Version: v1.VersionID, IncludeVersions: true})
	require.NoError(t, err)
	assert.Equal(t, v1.VersionID, old.VersionID)
	require.Len(t, old.History, 3)
	assert.Equal(t, v3.VersionID, old.History[0].VersionID, "newest first")
	_, err = s.GetObject(ctx, testWS, Ref{ID: v1.ObjectID, Version: "12"})
	requireErr(t, err, http.StatusNotFound, TypeNotFound)

	// Reopen: the index is rebuilt from the files.
	s2 := openTest(t, s.Dir())
	got, err := s2.GetObject(ctx, testWS, Ref{Path: "folder/points.json"})
	require.NoError(t, err)
	assert.Equal(t, v3.VersionID, got.VersionID)
	assert.JSONEq(t, string(v3.Object), string(got.Object))
	v4 := put(t, s2, PutRequest{ID: v1.ObjectID, Object: objecttest.JSON(doc)})
	n4, _ := strconv.ParseInt(v4.VersionID, 10, 64)
	assert.Greater(t, n4, n3, "strictly increasing across restarts")
}

func TestPutConflictsAndPreconditions(t *testing.T) {
	s := openTest(t, t.TempDir())
	doc, _ := pointsetDoc(t, s)
	v1 := put(t, s, PutRequest{Path: "a.json", Object: objecttest.JSON(doc)})

	// 409: create at a taken path, also differing only in case.
	for _, p := range []string{"a.json", "A.JSON"} {
		_, err := s.PutObject(ctx, testWS, PutRequest{Path: p, Object: objecttest.JSON(doc), By: alice})
		e := requireErr(t, err, http.StatusConflict, TypeAlreadyExists)
		assert.Equal(t, v1.ObjectID, e.Extra["existing_id"])
		assert.Equal(t, "a.json", e.Extra["object_path"])
	}
	// 409: moving another object onto a taken path.
	v2 := put(t, s, PutRequest{Path: "b.json", Object: objecttest.JSON(doc)})
	_, err := s.PutObject(ctx, testWS, PutRequest{Path: "A.json", Object: withUUID(doc, v2.ObjectID), By: alice})
	requireErr(t, err, http.StatusConflict, TypeAlreadyExists)
	// Moving to a free path works and frees the old one.
	moved := put(t, s, PutRequest{Path: "c/b.json", Object: withUUID(doc, v2.ObjectID)})
	assert.Equal(t, v2.ObjectID, moved.ObjectID)
	_, err = s.GetObject(ctx, testWS, Ref{Path: "b.json"})
	requireErr(t, err, http.StatusNotFound, TypeNotFound)

	// 412: stale If-Match, by id and by path; quoted etags are accepted.
	_, err = s.PutObject(ctx, testWS, PutRequest{ID: v1.ObjectID, IfMatch: "123", Object: objecttest.JSON(doc), By: alice})
	requireErr(t, err, http.StatusPreconditionFailed, TypeModified)
	_, err = s.PutObject(ctx, testWS, PutRequest{Path: "a.json", IfMatch: "123", Object: withUUID(doc, v1.ObjectID), By: alice})
	requireErr(t, err, http.StatusPreconditionFailed, TypeModified)
	put(t, s, PutRequest{ID: v1.ObjectID, IfMatch: `"` + v1.VersionID + `"`, Object: objecttest.JSON(doc)})

	// 404: unknown uuid, unknown id.
	const ghost = "99999999-9999-4999-8999-999999999999"
	_, err = s.PutObject(ctx, testWS, PutRequest{Path: "x.json", Object: withUUID(doc, ghost), By: alice})
	e := requireErr(t, err, http.StatusNotFound, TypeNotFound)
	assert.Equal(t, ghost, e.Extra["object_id"])
	_, err = s.PutObject(ctx, testWS, PutRequest{ID: ghost, Object: objecttest.JSON(doc), By: alice})
	requireErr(t, err, http.StatusNotFound, TypeNotFound)
	// 400: body uuid differs from the id of the URL.
	_, err = s.PutObject(ctx, testWS, PutRequest{ID: v1.ObjectID, Object: withUUID(doc, v2.ObjectID), By: alice})
	requireErr(t, err, http.StatusBadRequest, TypeBadRequest)

	// 400 Object Error: schema type change (a version change is fine).
	vg := objecttest.Variogram("1.2.0")
	_, err = s.PutObject(ctx, testWS, PutRequest{ID: v1.ObjectID, Object: objecttest.JSON(vg), By: alice})
	requireErr(t, err, http.StatusBadRequest, TypeObjectError)
	old := map[string]any{}
	for k, v := range doc {
		old[k] = v
	}
	old["schema"] = "/objects/pointset/1.2.0/pointset.schema.json"
	put(t, s, PutRequest{ID: v1.ObjectID, Object: objecttest.JSON(old)})
}

func TestPutValidation(t *testing.T) {
	s := openTest(t, t.TempDir())
	doc, b := pointsetDoc(t, s)
	good := objecttest.JSON(doc)
	mutate := func(f func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(good, &m))
		f(m)
		return objecttest.JSON(m)
	}
	coords := func(m map[string]any) map[string]any {
		return m["locations"].(map[string]any)["coordinates"].(map[string]any)
	}
	cases := []struct {
		name   string
		path   string
		body   []byte
		ws     bool
		status int
		typ    string
	}{
		{"schema invalid", "a.json", mutate(func(m map[string]any) { m["extra"] = 1 }), false, 400, TypeInvalidObject},
		{"no schema", "a.json", mutate(func(m map[string]any) { delete(m, "schema") }), false, 400, TypeInvalidObject},
		{"unknown schema", "a.json", mutate(func(m map[string]any) { m["schema"] = "/objects/nothing/1.0.0/nothing.schema.json" }), false, 404, TypeSchemaNotFound},
		{"NaN", "a.json", bytes.Replace(good, []byte(`"max_x":1`), []byte(`"max_x":NaN`), 1), false, 400, TypeInvalidObject},
		{"Infinity", "a.json", bytes.Replace(good, []byte(`"max_x":1`), []byte(`"max_x":-Infinity`), 1), false, 400, TypeInvalidObject},
		{"overflow", "a.json", bytes.Replace(good, []byte(`"max_x":1`), []byte(`"max_x":1e400`), 1), false, 400, TypeInvalidObject},
		{"invalid key", "a.json", mutate(func(m map[string]any) { coords(m)["data"] = "abc" }), false, 400, TypeInvalidKey},
		{"missing blob", "a.json", mutate(func(m map[string]any) { coords(m)["data"] = strings.Repeat("ab", 32) }), false, 400, TypeDataKeyNotFound},
		{"not json", "a.json", []byte("{"), false, 400, TypeBadRequest},
		{"no .json", "a.txt", good, false, 400, TypeObjectError},
		{"bare .json", "dir/.json", good, false, 400, TypeObjectError},
		{"invalid symbol", "a|b.json", good, false, 400, TypeInvalidPath},
		{"backslash", `a\b.json`, good, false, 400, TypeInvalidPath},
		{"control", "a\x01.json", good, false, 400, TypeInvalidPath},
		{"empty segment", "a//b.json", good, false, 400, TypeInvalidPath},
		{"dot dot", "../b.json", good, false, 400, TypeInvalidPath},
		{"too long", strings.Repeat("n", 251) + ".json", good, false, 400, TypeInvalidPath},
		{"whitespace checked", "dir /a.json", good, true, 400, TypeInvalidPath},
		{"trailing space checked", "dir/a.json ", good, true, 400, TypeInvalidPath},
		{"trailing space unchecked", "dir/a.json ", good, false, 400, TypeObjectError},
	}
	for _, c := range cases {
		_, err := s.PutObject(ctx, testWS, PutRequest{Path: c.path, Object: c.body, By: alice, CheckWhitespace: c.ws})
		e := requireErr(t, err, c.status, c.typ)
		assert.NotEmpty(t, e.Detail, c.name)
	}
	_, err := s.PutObject(ctx, testWS, PutRequest{Path: "a.json", Object: mutate(func(m map[string]any) { m["extra"] = 1 }), By: alice})
	e := AsError(err)
	assert.Equal(t, "/extra", e.Extra["json_path"])
	assert.NotEmpty(t, e.Extra["schema_path"])
	_, err = s.PutObject(ctx, testWS, PutRequest{Path: "a.json", Object: mutate(func(m map[string]any) { coords(m)["data"] = "abc" }), By: alice})
	assert.Equal(t, []string{"/locations/coordinates/data: abc"}, AsError(err).Extra["invalid"])

	// Without the preview flag whitespace around segments is accepted, as
	// the seed says; a 255-character name is accepted.
	put(t, s, PutRequest{Path: " dir /a.json", Object: good})
	put(t, s, PutRequest{Path: strings.Repeat("n", 250) + ".json", Object: good})
	_ = b
}

func TestDeleteRestore(t *testing.T) {
	s := openTest(t, t.TempDir())
	doc, _ := pointsetDoc(t, s)
	v1 := put(t, s, PutRequest{Path: "d/p.json", Object: objecttest.JSON(doc)})
	require.NoError(t, s.DeleteObject(ctx, testWS, Ref{ID: v1.ObjectID}, alice))
	_, err := s.GetObject(ctx, testWS, Ref{ID: v1.ObjectID})
	requireErr(t, err, http.StatusNotFound, TypeNotFound)
	_, err = s.GetObject(ctx, testWS, Ref{Path: "d/p.json"})
	requireErr(t, err, http.StatusNotFound, TypeNotFound)
	got, err := s.GetObject(ctx, testWS, Ref{ID: v1.ObjectID, Deleted: true})
	require.NoError(t, err)
	require.NotNil(t, got.DeletedAt)
	assert.Equal(t, alice.ID, got.DeletedBy.ID)
	requireErr(t, s.DeleteObject(ctx, testWS, Ref{ID: v1.ObjectID}, alice), http.StatusNotFound, TypeNotFound)
	_, err = s.PutObject(ctx, testWS, PutRequest{ID: v1.ObjectID, Object: objecttest.JSON(doc), By: alice})
	requireErr(t, err, http.StatusNotFound, TypeNotFound)

	page, err := s.ListObjects(ctx, testWS, ListOptions{Deleted: true})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	page, err = s.ListObjects(ctx, testWS, ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, page.Items)

	// The path is free again; two more objects take it and its " (1)".
	v2 := put(t, s, PutRequest{Path: "d/P.json", Object: objecttest.JSON(doc)})
	require.NoError(t, s.DeleteObject(ctx, testWS, Ref{Path: "d/p.json"}, alice))
	put(t, s, PutRequest{Path: "d/p.json", Object: objecttest.JSON(doc)})
	put(t, s, PutRequest{Path: "d/p (1).json", Object: objecttest.JSON(doc)})

	r1, err := s.RestoreObject(ctx, testWS, v1.ObjectID, alice)
	require.NoError(t, err)
	assert.Equal(t, "d/p (2).json", r1.Path)
	assert.Nil(t, r1.DeletedAt)
	r2, err := s.RestoreObject(ctx, testWS, v2.ObjectID, alice)
	require.NoError(t, err)
	assert.Equal(t, "d/P (3).json", r2.Path, "case preserved in the suffixed name")

	// State survives a reopen.
	s2 := openTest(t, s.Dir())
	page, err = s2.ListObjects(ctx, testWS, ListOptions{})
	require.NoError(t, err)
	var paths []string
	for _, it := range page.Items {
		paths = append(paths, it.Path)
	}
	assert.Equal(t, []string{"d/p (1).json", "d/p (2).json", "d/P (3).json", "d/p.json"}, paths)
	page, err = s2.ListObjects(ctx, testWS, ListOptions{Limit: 2, Offset: 1})
	require.NoError(t, err)
	assert.Equal(t, 4, page.Total)
	require.Len(t, page.Items, 2)
	assert.Equal(t, "d/p (2).json", page.Items[0].Path)

	// Restoring in place when the path is free keeps the version.
	v5 := put(t, s2, PutRequest{Path: "e.json", Object: objecttest.JSON(doc)})
	require.NoError(t, s2.DeleteObject(ctx, testWS, Ref{ID: v5.ObjectID}, alice))
	r5, err := s2.RestoreObject(ctx, testWS, v5.ObjectID, alice)
	require.NoError(t, err)
	assert.Equal(t, v5.VersionID, r5.VersionID)
	assert.Equal(t, "e.json", r5.Path)

	lv, err := s2.LatestVersions(ctx, testWS, []string{v5.ObjectID, "99999999-9999-4999-8999-999999999999"})
	require.NoError(t, err)
	assert.Equal(t, []LatestVersion{{ObjectID: v5.ObjectID, VersionID: v5.VersionID}, {ObjectID: "99999999-9999-4999-8999-999999999999"}}, lv)
}

func TestBlobs(t *testing.T) {
	s := openTest(t, t.TempDir())
	data := []byte("some parquet bytes")
	sum := sha256.Sum256(data)
	key := hex.EncodeToString(sum[:])
	ok, err := s.BlobExists(ctx, testWS, key)
	require.NoError(t, err)
	assert.False(t, ok)

	err = s.PutBlob(ctx, testWS, key, bytes.NewReader([]byte("other bytes")))
	requireErr(t, err, http.StatusBadRequest, TypeBadRequest)
	ok, _ = s.BlobExists(ctx, testWS, key)
	assert.False(t, ok, "nothing kept on a digest mismatch")
	entries, _ := os.ReadDir(filepath.Join(s.Dir(), "tmp"))
	assert.Empty(t, entries, "no temporary files left")

	require.NoError(t, s.PutBlob(ctx, testWS, strings.ToUpper(key), bytes.NewReader(data)))
	ok, _ = s.BlobExists(ctx, testWS, key)
	assert.True(t, ok)
	require.NoError(t, s.PutBlob(ctx, testWS, key, bytes.NewReader(data)), "idempotent")
	f, err := s.OpenBlob(ctx, testWS, nil, key)
	require.NoError(t, err)
	buf := make([]byte, f.Size())
	_, err = f.ReadAt(buf, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, data, buf)

	_, err = s.BlobExists(ctx, testWS, "nope")
	requireErr(t, err, http.StatusBadRequest, TypeInvalidKey)

	// Block uploads: blocks staged out of order, committed in list order.
	big := make([]byte, 10000)
	for i := range big {
		big[i] = byte(i * i % 251)
	}
	sum = sha256.Sum256(big)
	bkey := hex.EncodeToString(sum[:])
	ids := [][]byte{[]byte("b0"), []byte("b1"), []byte("b2")}
	require.NoError(t, s.StageBlock(ctx, testWS, bkey, ids[2], bytes.NewReader(big[6000:])))
	require.NoError(t, s.StageBlock(ctx, testWS, bkey, ids[0], bytes.NewReader(big[:3000])))
	require.NoError(t, s.StageBlock(ctx, testWS, bkey, ids[1], bytes.NewReader(big[3000:6000])))
	// Wrong order: digest mismatch, nothing kept, staging cleared.
	err = s.CommitBlocks(ctx, testWS, bkey, [][]byte{ids[1], ids[0], ids[2]})
	requireErr(t, err, http.StatusBadRequest, TypeBadRequest)
	ok, _ = s.BlobExists(ctx, testWS, bkey)
	assert.False(t, ok)
	err = s.CommitBlocks(ctx, testWS, bkey, ids)
	requireErr(t, err, http.StatusBadRequest, TypeBadRequest)
	for i, id := range ids {
		require.NoError(t, s.StageBlock(ctx, testWS, bkey, id, bytes.NewReader(big[3000*i:min(len(big), 3000*(i+1)+1000*(i/2))])))
	}
	require.NoError(t, s.CommitBlocks(ctx, testWS, bkey, ids))
	ok, _ = s.BlobExists(ctx, testWS, bkey)
	assert.True(t, ok)
}
