package openapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmapi"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/require"
)

// walkBlockModels provokes the statuses of the block model area's routes:
// owner may write every workspace of demo.Org, viewer only read, stranger
// has no role in demo.Workspace; goneWS is a deleted workspace.
func walkBlockModels(t *testing.T, do doFunc, as map[string]*workertest.Client, goneWS string) {
	t.Helper()
	const noSuchID = "00000000-0000-4000-8000-00000000beef"
	org := "/blockmodel/orgs/" + demo.Org
	prefix := org + "/workspaces/" + demo.Workspace + "/block-models"
	huge := []byte(`{"pad": "` + strings.Repeat("x", bmapi.MaxBodyBytes) + `"}`)
	body := func(name string) []byte {
		return []byte(`{"name": "` + name + `", "model_origin": {"x": 0, "y": 0, "z": 0}, "block_rotation": [],
			"size_options": {"model_type": "regular", "n_blocks": {"nx": 2, "ny": 2, "nz": 1}, "block_size": {"x": 1, "y": 1, "z": 1}}}`)
	}
	// ws provokes 401 (anonymous), 404 (stranger), 410 (deleted workspace)
	// and 422 (a workspace id that is not a UUID) on a workspace route.
	ws := func(method, path string, b []byte) {
		do("anonymous", method, path, b)
		do("stranger", method, path, b)
		do("owner", method, strings.Replace(path, demo.Workspace, goneWS, 1), b)
		do("owner", method, strings.Replace(path, demo.Workspace, "not-a-uuid", 1), b)
	}
	r := do("owner", http.MethodPost, prefix, body("walk-model"))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var rec struct {
		BMUUID   string `json:"bm_uuid"`
		JobURL   string `json:"job_url"`
		ObjectID string `json:"geoscience_object_id"`
	}
	require.NoError(t, r.JSON(&rec))
	bm := prefix + "/" + rec.BMUUID
	do("owner", http.MethodPost, prefix, body("WALK-MODEL"))
	do("owner", http.MethodPost, prefix, []byte(`{"name": "x"}`))
	do("owner", http.MethodPost, prefix, huge)
	do("viewer", http.MethodPost, prefix, body("viewer's"))
	ws(http.MethodPost, prefix, body("other"))

	do("owner", http.MethodGet, prefix, nil)
	ws(http.MethodGet, prefix, nil)
	do("owner", http.MethodGet, org+"/block-models", nil)
	do("anonymous", http.MethodGet, org+"/block-models", nil)
	do("owner", http.MethodGet, "/blockmodel/orgs/not-a-uuid/block-models", nil)
	do("owner", http.MethodGet, org+"/units", nil)
	do("anonymous", http.MethodGet, org+"/units", nil)
	do("owner", http.MethodGet, "/blockmodel/orgs/not-a-uuid/units", nil)

	do("owner", http.MethodGet, bm, nil)
	do("owner", http.MethodGet, prefix+"/"+noSuchID, nil)
	ws(http.MethodGet, bm, nil)
	do("owner", http.MethodPatch, bm, []byte(`{"description": "walked"}`))
	do("owner", http.MethodPost, prefix, body("taken"))
	do("owner", http.MethodPatch, bm, []byte(`{"name": "taken"}`))
	do("owner", http.MethodPatch, bm, huge)
	do("viewer", http.MethodPatch, bm, []byte(`{}`))
	ws(http.MethodPatch, bm, []byte(`{}`))

	// An update job: started, uploaded, confirmed twice.
	update := []byte(`{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}, "input_options": {"file_format": "csv"}}`)
	r = do("owner", http.MethodPatch, bm+"/blocks", update)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	var up struct {
		JobURL    string `json:"job_url"`
		JobUUID   string `json:"job_uuid"`
		UploadURL string `json:"upload_url"`
	}
	require.NoError(t, r.JSON(&up))
	do("owner", http.MethodPatch, bm+"/blocks", []byte(`{"columns": {"update": ["nope"]}}`))
	do("owner", http.MethodPatch, bm+"/blocks", huge)
	do("viewer", http.MethodPatch, bm+"/blocks", update)
	ws(http.MethodPatch, bm+"/blocks", update)
	do("anonymous", http.MethodPut, up.UploadURL, []byte("i,j,k,cu\n0,0,0,1\n1,1,0,2\n"))
	uploaded := bm + "/jobs/" + up.JobUUID + "/uploaded"
	do("viewer", http.MethodPost, uploaded, nil)
	ws(http.MethodPost, uploaded, nil)
	do("owner", http.MethodPost, bm+"/jobs/"+noSuchID+"/uploaded", nil)
	do("owner", http.MethodPost, uploaded, nil)
	do("owner", http.MethodPost, uploaded, nil)
	job := strings.TrimPrefix(up.JobURL, as["owner"].Base)
	deadline := time.Now().Add(20 * time.Second)
	var version struct {
		VersionUUID string `json:"version_uuid"`
	}
	for {
		r = do("owner", http.MethodGet, job, nil)
		var j struct {
			JobStatus string          `json:"job_status"`
			Payload   json.RawMessage `json:"payload"`
		}
		require.NoError(t, r.JSON(&j))
		if j.JobStatus == "COMPLETE" {
			require.NoError(t, json.Unmarshal(j.Payload, &version))
			break
		}
		require.NotEqual(t, "FAILED", j.JobStatus, "%s", j.Payload)
		require.True(t, time.Now().Before(deadline), "the walk's update job is still %s", j.JobStatus)
		time.Sleep(10 * time.Millisecond)
	}
	ws(http.MethodGet, job, nil)
	do("owner", http.MethodGet, bm+"/jobs/"+noSuchID, nil)

	query := []byte(`{"columns": ["cu"]}`)
	do("owner", http.MethodPost, bm+"/blocks", query)
	do("owner", http.MethodPost, bm+"/blocks", []byte(`{"columns": ["nope"]}`))
	do("owner", http.MethodPost, bm+"/blocks", huge)
	ws(http.MethodPost, bm+"/blocks", query)

	do("owner", http.MethodGet, bm+"/versions", nil)
	do("owner", http.MethodGet, bm+"/versions?limit=0", nil)
	ws(http.MethodGet, bm+"/versions", nil)
	v := bm + "/versions/" + version.VersionUUID
	do("owner", http.MethodGet, v+"?include_changes=true", nil)
	do("owner", http.MethodGet, bm+"/versions/"+noSuchID, nil)
	ws(http.MethodGet, v, nil)
	delta := []byte(`{"bbox": {"i_minmax": {"min": 0, "max": 1}, "j_minmax": {"min": 0, "max": 1}, "k_minmax": {"min": 0, "max": 0}}, "columns": ["*"]}`)
	do("owner", http.MethodPost, v+"/delta", delta)
	r = do("owner", http.MethodGet, bm+"/versions", nil)
	var versions struct {
		Results []struct {
			VersionUUID string `json:"version_uuid"`
		} `json:"results"`
	}
	require.NoError(t, r.JSON(&versions))
	first := versions.Results[len(versions.Results)-1].VersionUUID
	do("owner", http.MethodPost, bm+"/versions/"+first+"/delta", delta)
	do("owner", http.MethodPost, v+"/delta", []byte(`{}`))
	do("owner", http.MethodPost, v+"/delta", huge)
	ws(http.MethodPost, v+"/delta", delta)

	rs := bm + "/report-specifications"
	spec := rs + "/" + noSuchID
	for _, rt := range []struct{ method, path string }{
		{http.MethodPost, rs}, {http.MethodGet, rs}, {http.MethodGet, spec}, {http.MethodPatch, spec}, {http.MethodDelete, spec},
		{http.MethodPost, spec + "/results"}, {http.MethodGet, spec + "/results"}, {http.MethodGet, spec + "/results/" + noSuchID},
	} {
		do("owner", rt.method, rt.path, nil)
		do("anonymous", rt.method, rt.path, nil)
		do("owner", rt.method, strings.Replace(rt.path, rec.BMUUID, "not-a-uuid", 1), nil)
	}

	// The block model's object cannot be deleted through the object routes.
	objects := "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects"
	do("owner", http.MethodDelete, objects+"/"+rec.ObjectID, nil)
	do("owner", http.MethodDelete, objects+"/path/walk-model.json", nil)

	// Delete and restore last.
	do("viewer", http.MethodDelete, bm, nil)
	ws(http.MethodDelete, bm, nil)
	do("viewer", http.MethodPost, bm+"?deleted=false", nil)
	ws(http.MethodPost, bm+"?deleted=false", nil)
	do("owner", http.MethodDelete, bm, nil)
	do("owner", http.MethodDelete, bm, nil)
	do("owner", http.MethodPost, bm, nil)
	do("owner", http.MethodPost, bm+"?deleted=False", nil)
}
