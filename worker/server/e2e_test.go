package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func blockID(offset int) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%032d", offset)))
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

func blockListXML(ids []string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList>\n")
	for _, id := range ids {
		b.WriteString("  <Latest>" + id + "</Latest>\n")
	}
	b.WriteString("</BlockList>")
	return b.String()
}

// withoutUUID returns a document as generic JSON without its uuid member.
func withoutUUID(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	delete(m, "uuid")
	return m
}

// TestEndToEnd is the "done when": a worker on 127.0.0.1 with a
// temporary directory; Parquet blobs uploaded through HTTP in both forms; a
// pointset, a grid, a variogram and a distribution posted and read back
// (documents equal, blobs byte-identical, ranges honoured); an attribute
// written as a new version that validates against the schemas.
func TestEndToEnd(t *testing.T) {
	app := startApp(t, server.Options{})
	c := newClient(t, app, testToken)
	b := objecttest.NewBlobs()
	pts := []float64{0, 0, 0, 10, 0, 1, 0, 10, 2, 10, 10, 3, 5, 5, 5}
	g := objecttest.GridSpec{Origin: [3]float64{1000, 2000, 300}, Size: [3]int{4, 3, 2}, CellSize: [3]float64{10, 20, 5},
		Rotation: &geostat.Rotation{DipAzimuth: 90}}
	docs := map[string]map[string]any{
		"data/points.json":      b.Pointset("1.3.0", pts, b.Scalar("grade", "0b9e3c0e-5c4a-4f0e-9c1e-1a2b3c4d5e6f", []float64{1.5, 2.5, 3.5, 4.5, 5.5})),
		"data/grid.json":        b.Grid("1.3.0", g),
		"models/variogram.json": objecttest.Variogram("1.2.0"),
		"models/Grade CDF.json": b.Distribution("1.2.0", []float64{1, 2, 3, 4}, []float64{0.1, 0.4, 0.7, 0.9}),
		"data/masked grid.json": b.MaskedGrid("1.2.0", g, []bool{true, false, true, true, false, true, true, true, false, false, true, true, true, false, true, true, false, true, true, true, false, false, true, true}),
		"data/drillholes.json":  b.Intervals("1.3.0", pts, b.Scalar("Au", "c0ffee00-0000-4000-8000-000000000000", []float64{1, 2, 3, 4, 5})),
	}
	c.uploadBlobs(b)
	// A second PUT data reports every blob as existing.
	body, _ := json.Marshal([]store.DataRequest{{Name: b.Keys()[0]}, {Name: strings.ToUpper(b.Keys()[1])}})
	r := c.do(http.MethodPut, wsPrefix+"/data", body)
	var again []store.DataResponse
	r.json(t, &again)
	for _, d := range again {
		assert.True(t, d.Exists)
		assert.Nil(t, d.UploadURL)
	}

	recs := map[string]store.VersionRecord{}
	for path, doc := range docs {
		raw := objecttest.JSON(doc)
		rec := c.postObject(url.PathEscape(path), raw)
		require.NotNil(t, rec.ObjectID)
		assert.Equal(t, path, *rec.ObjectPath)
		recs[path] = rec

		// Read back by id and by path: the document is what was posted
		// (plus the assigned uuid), every blob downloads byte-identical.
		for _, p := range []string{"/objects/" + *rec.ObjectID, "/objects/path/" + url.PathEscape(path)} {
			r := c.do(http.MethodGet, wsPrefix+p, nil)
			require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
			assert.Equal(t, `"`+rec.VersionID+`"`, r.header.Get("ETag"))
			var got store.VersionRecord
			r.json(t, &got)
			assert.Equal(t, withoutUUID(t, raw), withoutUUID(t, got.Object), path)
			var m map[string]any
			require.NoError(t, json.Unmarshal(got.Object, &m))
			assert.Equal(t, *rec.ObjectID, m["uuid"])
			keys, _ := objects.DataKeys(withoutUUID(t, raw))
			require.Len(t, got.Links.Data, len(keys), path)
			for _, l := range got.Links.Data {
				want, ok := b.Get(l.Name)
				require.True(t, ok)
				anon := &client{t: t, base: c.base}
				dl := anon.do(http.MethodGet, l.DownloadURL, nil)
				require.Equal(t, http.StatusOK, dl.status)
				assert.Equal(t, want, dl.body, "blob %s is byte-identical", l.Name)
				part := anon.do(http.MethodGet, l.DownloadURL, nil, "Range", "bytes=4-11")
				require.Equal(t, http.StatusPartialContent, part.status)
				assert.Equal(t, want[4:12], part.body)
			}
			assert.Contains(t, got.Links.Download, "/objects/"+*rec.ObjectID+"?version="+rec.VersionID)
		}
	}

	// Write an attribute on the grid as a new version: read the grid through
	// the worker's store, compute values per cell, upload the blob, patch the
	// document, post it by id with If-Match.
	ctx := context.Background()
	grid := recs["data/grid.json"]
	v, err := app.Store().GetObject(ctx, testWS, store.Ref{ID: *grid.ObjectID})
	require.NoError(t, err)
	o, err := objects.Decode(v.Object)
	require.NoError(t, err)
	centres, err := o.Locations(ctx, store.Blobs(app.Store(), testWS, v))
	require.NoError(t, err)
	require.Len(t, centres, 3*24)
	vals := make([]float64, 24)
	for i := range vals {
		vals[i] = centres[3*i] + centres[3*i+1]
	}
	nb := objecttest.NewBlobs()
	key := nb.Float64([][]float64{vals, vals}, objects.EnsembleColumnNames("simulation-results", 2))
	c.uploadBlobs(nb)
	a, err := o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "simulation-results"},
		objects.ContinuousValues{Data: key, Length: 24, Width: 2, Ensemble: true})
	require.NoError(t, err)
	newDoc, err := o.JSON()
	require.NoError(t, err)
	doc, err := objects.DecodeJSON(newDoc)
	require.NoError(t, err)
	require.NoError(t, objecttest.Schemas(t).Validate(doc), "the written object validates against the schemas")

	r = c.do(http.MethodPost, wsPrefix+"/objects/"+*grid.ObjectID, newDoc, "If-Match", `"`+grid.VersionID+`"`)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	var v2 store.VersionRecord
	r.json(t, &v2)
	assert.Greater(t, v2.VersionID, grid.VersionID)
	got, err := objects.Decode(v2.Object)
	require.NoError(t, err)
	ga, err := got.ResolveAttribute("cell_attributes[?name=='simulation-results']")
	require.NoError(t, err)
	assert.Equal(t, a.Key, ga.Key)
	read, err := got.ReadContinuous(ctx, store.Blobs(app.Store(), testWS, &store.Version{}), ga)
	require.NoError(t, err)
	assert.Equal(t, [][]float64{vals, vals}, read)
	// The same If-Match again is stale now.
	r = c.do(http.MethodPost, wsPrefix+"/objects/"+*grid.ObjectID, newDoc, "If-Match", grid.VersionID)
	expectProblem(t, r, http.StatusPreconditionFailed, store.TypeModified)
	// The old version is still there.
	r = c.do(http.MethodGet, wsPrefix+"/objects/"+*grid.ObjectID+"?version="+grid.VersionID+"&include_versions=true", nil)
	require.Equal(t, http.StatusOK, r.status)
	var old store.VersionRecord
	r.json(t, &old)
	assert.Equal(t, grid.VersionID, old.VersionID)
	require.Len(t, old.Versions, 2)
	// If-None-Match with the latest version: 304.
	r = c.do(http.MethodGet, wsPrefix+"/objects/"+*grid.ObjectID, nil, "If-None-Match", `"`+v2.VersionID+`"`)
	assert.Equal(t, http.StatusNotModified, r.status)

	// Variogram and distribution are usable by the numerics.
	vg, err := app.Store().GetObject(ctx, testWS, store.Ref{Path: "models/variogram.json"})
	require.NoError(t, err)
	vo, err := objects.Decode(vg.Object)
	require.NoError(t, err)
	_, err = vo.DecodeVariogram()
	require.NoError(t, err)
	dv, err := app.Store().GetObject(ctx, testWS, store.Ref{Path: "models/grade cdf.json"})
	require.NoError(t, err)
	do, err := objects.Decode(dv.Object)
	require.NoError(t, err)
	values, probs, err := do.Distribution.ReadCDF(ctx, store.Blobs(app.Store(), testWS, dv))
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4}, values)
	assert.Equal(t, []float64{0.1, 0.4, 0.7, 0.9}, probs)

	// Listings.
	r = c.do(http.MethodGet, wsPrefix+"/objects?limit=2", nil)
	require.Equal(t, http.StatusOK, r.status)
	var page store.ListPageRecord
	r.json(t, &page)
	assert.Equal(t, 6, page.Total)
	assert.Equal(t, 2, page.Count)
	require.NotNil(t, page.Links.Next)
	assert.Nil(t, page.Links.Prev)
	r = c.do(http.MethodGet, "/geoscience-object/orgs/"+org+"/objects?schema_id=like:*grid*&order_by=desc:object_name", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.json(t, &page)
	var names []string
	for _, it := range page.Objects {
		names = append(names, it.Name)
		assert.Equal(t, "owner", *it.WorkspaceAccess)
	}
	assert.Equal(t, []string{"masked grid.json", "grid.json"}, names)

	// PATCH objects: latest versions.
	body, _ = json.Marshal([]string{*grid.ObjectID, "99999999-9999-4999-8999-999999999999"})
	r = c.do(http.MethodPatch, wsPrefix+"/objects", body)
	require.Equal(t, http.StatusOK, r.status)
	var lv []store.LatestVersionRecord
	r.json(t, &lv)
	require.Len(t, lv, 2)
	assert.Equal(t, v2.VersionID, *lv[0].VersionID)
	assert.Nil(t, lv[1].VersionID)
	// A syntax error is 400 with its line and column; well-formed JSON of
	// another shape is 422 (both in one decoding pass).
	r = c.do(http.MethodPatch, wsPrefix+"/objects", []byte("[\n  \"a\",\n  }"))
	expectProblem(t, r, http.StatusBadRequest, store.TypeBadRequest)
	assert.Contains(t, string(r.body), "invalid JSON at line 3, column 3")
	expectProblem(t, c.do(http.MethodPatch, wsPrefix+"/objects", []byte(`{"a": 1}`)), http.StatusUnprocessableEntity, store.TypeValidation)
	r = c.do(http.MethodPut, wsPrefix+"/data", []byte(`[{"name": "x"} x]`))
	expectProblem(t, r, http.StatusBadRequest, store.TypeBadRequest)
	assert.Contains(t, string(r.body), "invalid JSON at line 1, column 16")

	// Soft delete and restore by id with ?deleted=false.
	r = c.do(http.MethodDelete, wsPrefix+"/objects/path/data/points.json", nil)
	require.Equal(t, http.StatusNoContent, r.status)
	pid := *recs["data/points.json"].ObjectID
	expectProblem(t, c.do(http.MethodGet, wsPrefix+"/objects/"+pid, nil), http.StatusNotFound, store.TypeNotFound)
	r = c.do(http.MethodGet, wsPrefix+"/objects/"+pid+"?deleted=true", nil)
	require.Equal(t, http.StatusOK, r.status)
	var del store.VersionRecord
	r.json(t, &del)
	require.NotNil(t, del.DeletedAt)
	r = c.do(http.MethodGet, wsPrefix+"/objects?deleted=true", nil)
	r.json(t, &page)
	assert.Equal(t, 1, page.Total)
	c.postObject("data/points.json", objecttest.JSON(docs["data/points.json"]))
	r = c.do(http.MethodPost, wsPrefix+"/objects/"+pid+"?deleted=false", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var restored store.VersionRecord
	r.json(t, &restored)
	assert.Equal(t, "data/points (1).json", *restored.ObjectPath)
	assert.Nil(t, restored.DeletedAt)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
