package bmapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The object routes may edit a block model's object (tags, description)
// but not the members that mirror the model (400), nor delete it (409).
func TestObjectRoutesKeepTheLinkedMembers(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	rec := create(t, w.c, org, ws, regularBody("linked", "f"))
	obj, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(obj.Object, &doc))
	objects := workertest.WorkspacePrefix(org, ws) + "/objects/"

	doc["tags"] = map[string]any{"stage": "reviewed"}
	do(t, w.c, http.MethodPost, objects+rec.GeoscienceObjectID, doc, http.StatusCreated)
	doc["geometry"].(map[string]any)["origin"] = []any{0, 0, 0}
	r := do(t, w.c, http.MethodPost, objects+rec.GeoscienceObjectID, doc, http.StatusBadRequest)
	assert.Equal(t, errBase+"/geoscienceobject/schemas/invalid-object", problemType(t, r))
	require.NoError(t, json.Unmarshal(obj.Object, &doc))
	doc["attributes"] = []any{}
	doc["block_model_version_uuid"] = "5f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02"
	do(t, w.c, http.MethodPost, objects+"path/f/linked.json", doc, http.StatusBadRequest)

	r = do(t, w.c, http.MethodDelete, objects+rec.GeoscienceObjectID, nil, http.StatusConflict)
	assert.Equal(t, errBase+"/geoscienceobject/objects/block-model-linked", problemType(t, r))
	do(t, w.c, http.MethodDelete, objects+"path/f/linked.json", nil, http.StatusConflict)
	_, err = w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
}

// Deleting a model fails its jobs waiting for an upload (job/model-deleted).
func TestDeleteFailsPendingJobs(t *testing.T) {
	w := startWorker(t)
	rec := create(t, w.c, org, ws, regularBody("pending", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	do(t, w.c, http.MethodDelete, path, nil, http.StatusNoContent)
	do(t, w.c, http.MethodPost, path+"?deleted=false", nil, http.StatusAccepted)
	j := getJob(t, w.c, up.JobURL)
	require.Equal(t, "FAILED", j.JobStatus)
	var p struct {
		Type string `json:"type"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &p))
	assert.Equal(t, errBase+"/block-model-service/job/model-deleted", p.Type)
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusConflict)
}

// A compute task's column (Area.WriteColumn) makes a version and an object
// version recorded on it; a version committed without its object version
// (a worker stopped in between) gets it at the next start.
func TestTaskColumnAndObjectRepair(t *testing.T) {
	dir := t.TempDir()
	w, stop := startWorkerIn(t, dir)
	ctx := context.Background()
	rec := create(t, w.c, org, ws, regularBody("estimated", ""))
	area := w.svc.BlockModels()
	require.NotNil(t, area)
	g, err := area.OpenModel(org, ws, rec.BMUUID)
	require.NoError(t, err)
	values := make([]float64, g.NumParents())
	for i := range values {
		values[i] = float64(i)
	}
	v, objID, objVersion, err := area.WriteColumn(ctx, bmjob.ColumnWrite{ModelID: rec.BMUUID, Rows: g.WholeBlocks(), Operation: bmjob.OpCreate,
		Title: "cu_ok", Values: values, Comment: "kriging"}, store.User{ID: "someone"})
	require.NoError(t, err)
	assert.Equal(t, rec.GeoscienceObjectID, objID)
	var got struct {
		GeoscienceVersionID string `json:"geoscience_version_id"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"/"+rec.BMUUID+"/versions/"+v.VersionUUID, nil, http.StatusOK).JSON(&got))
	assert.Equal(t, objVersion, got.GeoscienceVersionID)
	_, err = area.OpenModel(org, "5f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02", rec.BMUUID)
	require.Error(t, err, "another workspace's model")

	// A version written straight to the store: no object version yet.
	v3, err := bmjob.WriteColumn(ctx, area.Store(), bmjob.ColumnWrite{ModelID: rec.BMUUID, Rows: g.WholeBlocks(), Operation: bmjob.OpCreate,
		Title: "cu_id", Values: values})
	require.NoError(t, err)
	stop()
	w, _ = startWorkerIn(t, dir)
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"/"+rec.BMUUID+"/versions/"+v3.VersionUUID, nil, http.StatusOK).JSON(&got))
	require.NotEmpty(t, got.GeoscienceVersionID)
	obj, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	assert.Equal(t, got.GeoscienceVersionID, obj.VersionID)
	assert.Contains(t, string(obj.Object), `"cu_id"`)
}
