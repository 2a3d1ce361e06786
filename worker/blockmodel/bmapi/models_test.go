package bmapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The four kinds, created with the client's bodies (A.9.1, nulls for what
// the caller left out): 201 with the record, a job_url whose job is
// COMPLETE with version 1, and a linked block-model object that the
// embedded schema accepts, whose version is version 1's
// geoscience_version_id.
func TestCreateFourKindsWithTheirObjects(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	schemas, err := objects.EmbeddedSchemas()
	require.NoError(t, err)
	sizes := map[string]string{
		"regular":           `{"model_type": "regular", "n_blocks": {"nx": 4, "ny": 3, "nz": 2}, "block_size": {"x": 10, "y": 20, "z": 5}}`,
		"fully-sub-blocked": `{"model_type": "fully-sub-blocked", "n_parent_blocks": {"nx": 4, "ny": 3, "nz": 2}, "n_subblocks_per_parent": {"nx": 2, "ny": 2, "nz": 1}, "parent_block_size": {"x": 10, "y": 20, "z": 5.0}}`,
		"flexible":          `{"model_type": "flexible", "n_parent_blocks": {"nx": 4, "ny": 3, "nz": 2}, "n_subblocks_per_parent": {"nx": 3, "ny": 3, "nz": 3}, "parent_block_size": {"x": 10, "y": 20, "z": 5}}`,
		"variable-octree":   `{"model_type": "variable-octree", "n_parent_blocks": {"nx": 40, "ny": 40, "nz": 20}, "n_subblocks_per_parent": {"nx": 8, "ny": 8, "nz": 4}, "parent_block_size": {"x": 20, "y": 20, "z": 10}}`,
	}
	for kind, size := range sizes {
		body := fmt.Sprintf(`{"name": "model %s", "description": null, "object_path": null, "coordinate_reference_system": null,
			"size_unit_id": null, "comment": null, "fill_subblocks": false, "model_origin": {"x": 1000, "y": 2000.5, "z": 300},
			"block_rotation": [{"axis": "z", "angle": 45}], "size_options": %s}`, kind, size)
		rec := create(t, w.c, org, ws, body)
		assert.Equal(t, kind, rec.SizeOptions.ModelType)
		assert.Equal(t, [3]float64{45, 0, 0}, rec.NormalizedRotation)
		require.NotEmpty(t, rec.GeoscienceObjectID)
		require.Contains(t, rec.JobURL, "/block-models/"+rec.BMUUID+"/jobs/")
		j := getJob(t, w.c, rec.JobURL)
		require.Equal(t, "COMPLETE", j.JobStatus)
		var v struct {
			VersionID           int     `json:"version_id"`
			VersionUUID         string  `json:"version_uuid"`
			GeoscienceVersionID string  `json:"geoscience_version_id"`
			BaseVersionID       *int    `json:"base_version_id"`
			BBox                *string `json:"bbox"`
			Mapping             struct {
				Columns []struct {
					ColID string `json:"col_id"`
				} `json:"columns"`
			} `json:"mapping"`
		}
		require.NoError(t, json.Unmarshal(j.Payload, &v))
		assert.Equal(t, 1, v.VersionID)
		assert.Nil(t, v.BaseVersionID)
		assert.Nil(t, v.BBox)
		assert.Equal(t, "i", v.Mapping.Columns[0].ColID, "system columns are listed with col_id = title")

		obj, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
		require.NoError(t, err)
		assert.Equal(t, v.GeoscienceVersionID, obj.VersionID)
		assert.Equal(t, "model "+kind+".json", *obj.ObjectPath)
		doc, err := objects.DecodeJSON(obj.Object)
		require.NoError(t, err)
		require.NoError(t, schemas.Validate(doc), "the linked object of a %s model", kind)
		assert.Equal(t, rec.BMUUID, doc["block_model_uuid"])
		assert.Equal(t, v.VersionUUID, doc["block_model_version_uuid"])
		assert.Equal(t, "unspecified", doc["coordinate_reference_system"])
		geom := doc["geometry"].(map[string]any)
		assert.Equal(t, kind, geom["model_type"])
		assert.Equal(t, map[string]any{"dip_azimuth": json.Number("45"), "dip": json.Number("0"), "pitch": json.Number("0")}, geom["rotation"])
	}
	// The A.9.1 example: EPSG code, rotation, description in the object.
	rec := create(t, w.c, org, ws, regularBody("Pit A SMU 10x20x5", "/models/pit-a"))
	obj, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	assert.Equal(t, "models/pit-a/Pit A SMU 10x20x5.json", *obj.ObjectPath)
	doc, err := objects.DecodeJSON(obj.Object)
	require.NoError(t, err)
	require.NoError(t, schemas.Validate(doc))
	assert.Equal(t, map[string]any{"epsg_code": json.Number("32755")}, doc["coordinate_reference_system"])
	assert.Equal(t, "regular SMU model", doc["description"])
}

// Create refuses invalid bodies (422 naming every member), a name taken
// in the workspace case-insensitively (409 name-conflict) and an object
// path taken by another object (409, nothing stored).
func TestCreateRefusals(t *testing.T) {
	w := startWorker(t)
	r := do(t, w.c, http.MethodPost, bmPrefix(org, ws), `{"name": "a/", "model_origin": {"x": 0}, "size_options": {"model_type": "regular", "n_blocks": {"nx": 0, "ny": 1, "nz": 1}, "block_size": {"x": 1, "y": 1, "z": 1}}}`, http.StatusUnprocessableEntity)
	assert.Equal(t, errBase+"/block-model-service/validation", problemType(t, r))
	var p struct {
		InvalidParams []struct {
			Name string `json:"name"`
		} `json:"invalid-params"`
	}
	require.NoError(t, r.JSON(&p))
	var names []string
	for _, ip := range p.InvalidParams {
		names = append(names, ip.Name)
	}
	assert.Contains(t, names, "name")
	assert.Contains(t, names, "model_origin.y")
	assert.Contains(t, names, "size_options.n_blocks.nx")
	do(t, w.c, http.MethodPost, bmPrefix(org, ws), `not json`, http.StatusUnprocessableEntity)
	// The name is the linked object's file name: symbols a path refuses
	// are refused before anything is stored.
	r = do(t, w.c, http.MethodPost, bmPrefix(org, ws), regularBody("a:b<c>|d", ""), http.StatusUnprocessableEntity)
	require.NoError(t, r.JSON(&p))
	assert.Equal(t, "name", p.InvalidParams[0].Name)
	var deleted struct {
		Total int `json:"total"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"?deleted=true", nil, http.StatusOK).JSON(&deleted))
	assert.Equal(t, 0, deleted.Total)

	first := create(t, w.c, org, ws, regularBody("Alpha", "f"))
	r = do(t, w.c, http.MethodPost, bmPrefix(org, ws), regularBody("ALPHA", "g"), http.StatusConflict)
	assert.Equal(t, errBase+"/block-model-service/name-conflict", problemType(t, r))
	// Renamed, the model keeps its object path: a new "Alpha" in the same
	// folder would take it.
	do(t, w.c, http.MethodPatch, bmPrefix(org, ws)+"/"+first.BMUUID, `{"name": "Beta"}`, http.StatusOK)
	r = do(t, w.c, http.MethodPost, bmPrefix(org, ws), regularBody("Alpha", "f"), http.StatusConflict)
	assert.Equal(t, errBase+"/block-model-service/name-conflict", problemType(t, r))
	var page struct {
		Total int `json:"total"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws), nil, http.StatusOK).JSON(&page))
	assert.Equal(t, 1, page.Total, "nothing was stored for the refused creates")
	// Another folder is free; the same name in another workspace too.
	create(t, w.c, org, ws, regularBody("Alpha", "g"))
	create(t, w.c, org, "91aa2a52-1b7e-4c36-9a0d-0d4b5e8f1a09", regularBody("Beta", "f"))
}

// Get, list (paging, order_by, deleted, the organisation-wide listing),
// delete (soft, cascading to the object), get of a deleted model,
// restore with the client's ?deleted=False and its rename on a clash.
func TestListDeleteRestore(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	a := create(t, w.c, org, ws, regularBody("b-model", ""))
	create(t, w.c, org, ws, regularBody("a-model", ""))
	create(t, w.c, org, ws, regularBody("c-model", ""))
	other := "91aa2a52-1b7e-4c36-9a0d-0d4b5e8f1a04"
	create(t, w.c, org, other, regularBody("d-model", ""))

	type page struct {
		Count, Limit, Offset, Total int
		Results                     []record
	}
	var p page
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"?order_by=asc:name&limit=2", nil, http.StatusOK).JSON(&p))
	assert.Equal(t, 3, p.Total)
	assert.Equal(t, 2, p.Count)
	assert.Equal(t, []string{"a-model", "b-model"}, []string{p.Results[0].Name, p.Results[1].Name})
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"?order_by=desc:name&offset=2", nil, http.StatusOK).JSON(&p))
	assert.Equal(t, "a-model", p.Results[0].Name)
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws), nil, http.StatusOK).JSON(&p))
	assert.Equal(t, "c-model", p.Results[0].Name, "default order: desc:last_updated_at")
	for _, q := range []string{"?limit=0", "?limit=101", "?offset=-1", "?order_by=size", "?order_by=name,desc:name", "?deleted=maybe"} {
		r := do(t, w.c, http.MethodGet, bmPrefix(org, ws)+q, nil, http.StatusUnprocessableEntity)
		assert.Equal(t, errBase+"/block-model-service/validation", problemType(t, r), q)
	}
	require.NoError(t, do(t, w.c, http.MethodGet, "/blockmodel/orgs/"+org+"/block-models?order_by=name", nil, http.StatusOK).JSON(&p))
	assert.Equal(t, 4, p.Total, "every workspace of the organisation")

	path := bmPrefix(org, ws) + "/" + a.BMUUID
	do(t, w.c, http.MethodDelete, path, nil, http.StatusNoContent)
	do(t, w.c, http.MethodDelete, path, nil, http.StatusNotFound)
	r := do(t, w.c, http.MethodGet, path, nil, http.StatusNotFound)
	assert.Equal(t, errBase+"/block-model-service/not-found", problemType(t, r))
	do(t, w.c, http.MethodGet, path+"?deleted=True", nil, http.StatusOK)
	require.NoError(t, do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"?deleted=true", nil, http.StatusOK).JSON(&p))
	require.Equal(t, 1, p.Total)
	assert.Equal(t, a.BMUUID, p.Results[0].BMUUID)
	_, err := w.c.GetObject(ctx, org, ws, a.GeoscienceObjectID, "")
	require.Error(t, err, "the object is deleted with the model")

	// The name is free again; restoring the first model renames it.
	create(t, w.c, org, ws, regularBody("B-MODEL", "elsewhere"))
	r = do(t, w.c, http.MethodPost, path, nil, http.StatusBadRequest)
	assert.Equal(t, errBase+"/block-model-service/invalid-query-parameters", problemType(t, r))
	do(t, w.c, http.MethodPost, path+"?deleted=true", nil, http.StatusBadRequest)
	do(t, w.c, http.MethodPost, path+"?deleted=nope", nil, http.StatusBadRequest)
	var rec record
	require.NoError(t, do(t, w.c, http.MethodPost, path+"?deleted=False", nil, http.StatusAccepted).JSON(&rec))
	assert.Equal(t, "b-model (1)", rec.Name)
	do(t, w.c, http.MethodGet, path, nil, http.StatusOK)
	obj, err := w.c.GetObject(ctx, org, ws, a.GeoscienceObjectID, "")
	require.NoError(t, err, "the object is restored with the model")
	assert.Contains(t, string(obj.Object), `"name":"b-model (1)"`)
	// Restoring a live model answers its record, unchanged.
	require.NoError(t, do(t, w.c, http.MethodPost, path+"?deleted=false", nil, http.StatusAccepted).JSON(&rec))
	assert.Equal(t, "b-model (1)", rec.Name)
}

// Metadata update: an empty body (the client's empty update) changes
// nothing but last_updated; null members are absent; a name or description
// change gives the object a version and makes no model version; a name
// clash is 409.
func TestMetadataUpdate(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	rec := create(t, w.c, org, ws, regularBody("meta", ""))
	create(t, w.c, org, ws, regularBody("taken", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	before, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)

	var got record
	require.NoError(t, do(t, w.c, http.MethodPatch, path, []byte{}, http.StatusOK, "Content-Type", "application/json").JSON(&got))
	assert.Equal(t, "meta", got.Name)
	require.NoError(t, do(t, w.c, http.MethodPatch, path, `{"name": null, "description": null, "coordinate_reference_system": null}`, http.StatusOK).JSON(&got))
	assert.Equal(t, "regular SMU model", *got.Description)
	same, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, same.VersionID, "no object version without a change of name, description or CRS")

	require.NoError(t, do(t, w.c, http.MethodPatch, path, `{"name": "  renamed  ", "description": "new words", "fill_subblocks": true}`, http.StatusOK).JSON(&got))
	assert.Equal(t, "renamed", got.Name)
	after, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	assert.NotEqual(t, before.VersionID, after.VersionID)
	assert.Contains(t, string(after.Object), `"description":"new words"`)
	assert.Contains(t, string(after.Object), `"name":"renamed"`)

	r := do(t, w.c, http.MethodPatch, path, `{"name": "TAKEN"}`, http.StatusConflict)
	assert.Equal(t, errBase+"/block-model-service/name-conflict", problemType(t, r))
	do(t, w.c, http.MethodPatch, path, `{"name": "x"}`, http.StatusUnprocessableEntity)
	do(t, w.c, http.MethodPatch, path, `{"coordinate_reference_system": "EPSG:1"}`, http.StatusUnprocessableEntity)

	var versions struct {
		Total int `json:"total"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions", nil, http.StatusOK).JSON(&versions))
	assert.Equal(t, 1, versions.Total, "metadata updates make no version")
}

// Units, the report routes (501) and ids that are not UUIDs (422).
func TestUnitsReportsAndIDs(t *testing.T) {
	w := startWorker(t)
	var units []struct {
		UnitID   string `json:"unit_id"`
		UnitType string `json:"unit_type"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, "/blockmodel/orgs/"+org+"/units", nil, http.StatusOK).JSON(&units))
	ids := map[string]string{}
	for _, u := range units {
		ids[u.UnitID] = u.UnitType
	}
	assert.Equal(t, "LENGTH", ids["m"])
	assert.Equal(t, "MASS_PER_MASS", ids["g/t"])

	rec := create(t, w.c, org, ws, regularBody("reports", ""))
	rs := bmPrefix(org, ws) + "/" + rec.BMUUID + "/report-specifications"
	spec := rs + "/5f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02"
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, rs + "?run_now=True"}, {http.MethodGet, rs}, {http.MethodGet, spec}, {http.MethodPatch, spec},
		{http.MethodDelete, spec}, {http.MethodPost, spec + "/results"}, {http.MethodGet, spec + "/results"},
		{http.MethodGet, spec + "/results/6f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02"},
	} {
		r := do(t, w.c, c.method, c.path, nil, http.StatusNotImplemented)
		assert.Equal(t, errBase+"/block-model-service/not-implemented", problemType(t, r))
	}
	r := do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"/not-a-uuid", nil, http.StatusUnprocessableEntity)
	assert.Equal(t, errBase+"/block-model-service/validation", problemType(t, r))
	do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"/5f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02", nil, http.StatusNotFound)
	do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"/"+rec.BMUUID+"/jobs/5f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02", nil, http.StatusNotFound)
	do(t, w.c, http.MethodGet, bmPrefix(org, ws)+"/"+rec.BMUUID+"/versions/5f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02", nil, http.StatusNotFound)
}

// Restore renames up to "<name> (99)"; with every one of those names taken
// it answers 500 restore-error and the model stays deleted.
func TestRestoreWithoutAFreeName(t *testing.T) {
	w := startWorker(t)
	rec := create(t, w.c, org, ws, regularBody("full", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	do(t, w.c, http.MethodDelete, path, nil, http.StatusNoContent)
	create(t, w.c, org, ws, regularBody("full", "a"))
	for n := 1; n <= 99; n++ {
		create(t, w.c, org, ws, regularBody(fmt.Sprintf("full (%d)", n), "a"))
	}
	r := do(t, w.c, http.MethodPost, path+"?deleted=false", nil, http.StatusInternalServerError)
	assert.Equal(t, errBase+"/block-model-service/restore-error", problemType(t, r))
	do(t, w.c, http.MethodGet, path, nil, http.StatusNotFound)
}
