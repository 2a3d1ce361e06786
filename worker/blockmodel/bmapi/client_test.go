package bmapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pyRow is a row of the Parquet file the client writes (pyarrow: i, j, k
// cast to uint32, one column per new or updated title).
type pyRow struct {
	I  uint32  `parquet:"i"`
	J  uint32  `parquet:"j"`
	K  uint32  `parquet:"k"`
	Au float64 `parquet:"au"`
}

// The client's forms at the HTTP level (A.15b): a size_options without
// model_type, the headers it adds, an update without input_options (a
// Parquet file, uploaded in the block form), a new column's unit_id null,
// the older CSV mapping shape, a unit cleared with unit_id null, and the
// client's query defaults (coordinates, id headers).
func TestClientForms(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	hdr := []string{"Content-Type", "application/json", "Api-Preview", "opt-in", "Evo-Sdk-Source", "evo-blockmodels/0.1"}
	r := do(t, w.c, http.MethodPost, bmPrefix(org, ws), `{"name": "client", "description": null, "object_path": null, "coordinate_reference_system": null,
		"size_unit_id": null, "comment": null, "fill_subblocks": false, "model_origin": {"x": 0, "y": 0, "z": 0}, "block_rotation": [],
		"size_options": {"n_blocks": {"nx": 2, "ny": 2, "nz": 1}, "block_size": {"x": 10.0, "y": 10, "z": 5}}}`, http.StatusCreated, hdr...)
	var rec record
	require.NoError(t, r.JSON(&rec))
	assert.Equal(t, "regular", rec.SizeOptions.ModelType)
	path := bmPrefix(org, ws) + "/" + rec.BMUUID

	// Parquet, uploaded as blocks and a block list.
	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", `{"columns": {"new": [{"title": "au", "data_type": "Float64", "unit_id": null, "tags": null}],
		"update": [], "delete": [], "rename": []}, "update_type": "replace", "geometry_change": null, "fill_subblocks": null, "comment": null}`,
		http.StatusAccepted, hdr...).JSON(&up))
	var buf bytes.Buffer
	rows := []pyRow{{0, 0, 0, 1}, {1, 0, 0, 2}, {0, 1, 0, 3}, {1, 1, 0, 4}}
	require.NoError(t, parquet.Write(&buf, rows))
	require.NoError(t, w.as("").Upload(ctx, *up.UploadURL, buf.Bytes(), 3))
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated, hdr[2:]...)
	j := waitJob(t, w.c, up.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)

	// The older CSV mapping shape; a unit set then cleared with null.
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", `{"columns": {"new": [{"title": "grade", "data_type": "Float32", "unit_id": "g/t"}]},
		"input_options": {"file_format": "csv", "column_name_mapping": [{"csv_name": "g", "new_title": "grade"}]}}`, http.StatusAccepted).JSON(&up))
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *up.UploadURL), "i,j,k,g\n0,0,0,1.5\n1,1,0,2.5\n", http.StatusCreated)
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	j = waitJob(t, w.c, up.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", `{"columns": {"update_metadata": [{"title": "grade", "values": {"unit_id": null, "tags": null}}]}}`, http.StatusAccepted).JSON(&up))
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	j = waitJob(t, w.c, up.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)
	var v struct {
		Mapping struct {
			Columns []struct {
				ColID  string  `json:"col_id"`
				Title  string  `json:"title"`
				UnitID *string `json:"unit_id"`
			} `json:"columns"`
		} `json:"mapping"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &v))
	ids := map[string]string{}
	for _, c := range v.Mapping.Columns {
		ids[c.Title] = c.ColID
		if c.Title == "grade" {
			assert.Nil(t, c.UnitID, "unit_id null clears the unit")
		}
	}
	require.Contains(t, ids, "grade")

	// The client's query: coordinates, id headers, nulls.
	var res struct {
		JobURL  string   `json:"job_url"`
		Columns []string `json:"columns"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, path+"/blocks", `{"columns": ["*"], "geometry_columns": "coordinates", "bbox": null, "version_uuid": null,
		"output_options": {"column_headers": "id", "exclude_null_rows": true}}`, http.StatusOK, hdr...).JSON(&res))
	assert.Equal(t, []string{"au", "grade"}, res.Columns)
	dl, _ := queryDownload(t, w, res.JobURL)
	file := do(t, w.as(""), http.MethodGet, pathOf(w.c, dl), nil, http.StatusOK)
	pf, err := parquet.OpenFile(bytes.NewReader(file.Body), int64(len(file.Body)))
	require.NoError(t, err)
	var names []string
	for _, f := range pf.Schema().Fields() {
		names = append(names, f.Name())
	}
	assert.Equal(t, []string{"x", "y", "z", ids["au"], ids["grade"]}, names)
	assert.Equal(t, int64(4), pf.NumRows())
}
