package bmapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmapi"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateAnswer is the 202 of PATCH …/blocks.
type updateAnswer struct {
	JobURL      string  `json:"job_url"`
	JobUUID     string  `json:"job_uuid"`
	UploadURL   *string `json:"upload_url"`
	VersionUUID string  `json:"version_uuid"`
	Changes     struct {
		UpdateType string `json:"update_type"`
	} `json:"changes"`
}

// gradeCSV is an index-form CSV of the 4×3×2 regular model: cu = i + 10j
// + 100k; broken adds a row that matches no block.
func gradeCSV(broken bool) string {
	var b strings.Builder
	b.WriteString("i,j,k,cu\n")
	for k := range 2 {
		for j := range 3 {
			for i := range 4 {
				fmt.Fprintf(&b, "%d,%d,%d,%d.5\n", i, j, k, i+10*j+100*k)
			}
		}
	}
	if broken {
		b.WriteString("9,9,9,1\n")
	}
	return b.String()
}

const addCu = `{"columns": {"new": [{"title": "cu", "data_type": "Float64", "unit_id": "%[mass]"}], "update": [], "delete": [], "rename": []},
	"update_type": "replace", "geometry_change": null, "fill_subblocks": null, "comment": "assays", "input_options": {"file_format": "csv"}}`

// An update job end to end: PATCH …/blocks (202 with an upload URL),
// GET the job (PENDING_UPLOAD with a fresh upload_url), PUT the CSV file to
// the URL, POST …/uploaded (201; again 409), the job COMPLETE with version
// 2, whose object version lists the new column. A bad file fails the job
// with an error file and leaves the latest version as it was; confirming
// without a file fails it as file-not-found.
func TestUpdateJobEndToEnd(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	rec := create(t, w.c, org, ws, regularBody("graded", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID

	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	require.NotNil(t, up.UploadURL)
	assert.Equal(t, "replace", up.Changes.UpdateType)
	assert.True(t, strings.HasSuffix(up.JobURL, "/jobs/"+up.JobUUID))
	j := getJob(t, w.c, up.JobURL)
	require.Equal(t, "PENDING_UPLOAD", j.JobStatus)
	var pending struct {
		UploadURL string `json:"upload_url"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &pending))
	require.Contains(t, pending.UploadURL, "/blobs/"+org+"/"+ws+"/")
	// The signed URL is its own credential: no token.
	anon := w.as("")
	do(t, anon, http.MethodPut, pendingURLPath(w, pending.UploadURL), gradeCSV(false), http.StatusCreated, "x-ms-blob-type", "BlockBlob")
	var confirmed struct {
		JobURL string `json:"job_url"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated).JSON(&confirmed))
	assert.Equal(t, up.JobURL, confirmed.JobURL)
	r := do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusConflict)
	assert.Equal(t, errBase+"/block-model-service/file-conflict", problemType(t, r))
	j = waitJob(t, w.c, up.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)
	var v2 struct {
		VersionID           int    `json:"version_id"`
		VersionUUID         string `json:"version_uuid"`
		GeoscienceVersionID string `json:"geoscience_version_id"`
		Comment             string `json:"comment"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &v2))
	assert.Equal(t, 2, v2.VersionID)
	assert.Equal(t, up.VersionUUID, v2.VersionUUID, "the version takes the uuid reserved at the start")
	assert.Equal(t, "assays", v2.Comment)
	obj, err := w.c.GetObject(ctx, org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	assert.Equal(t, v2.GeoscienceVersionID, obj.VersionID)
	doc, err := objects.DecodeJSON(obj.Object)
	require.NoError(t, err)
	schemas, err := objects.EmbeddedSchemas()
	require.NoError(t, err)
	require.NoError(t, schemas.Validate(doc))
	attrs := doc["attributes"].([]any)
	require.Len(t, attrs, 1)
	assert.Equal(t, "cu", attrs[0].(map[string]any)["name"])
	assert.Equal(t, v2.VersionUUID, doc["block_model_version_uuid"])
	var ch struct {
		Changes struct {
			TotalBlocks int `json:"total_blocks"`
			Columns     struct {
				New []string `json:"new"`
			} `json:"columns"`
		} `json:"changes"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions/"+v2.VersionUUID+"?include_changes=True", nil, http.StatusOK).JSON(&ch))
	assert.Equal(t, []string{"cu"}, ch.Changes.Columns.New)
	assert.Equal(t, 24, ch.Changes.TotalBlocks)

	// A bad file: FAILED with an error file naming the row; version 2 stays
	// the latest.
	var bad updateAnswer
	upd := strings.Replace(addCu, `"new": [{"title": "cu", "data_type": "Float64", "unit_id": "%[mass]"}], "update": []`, `"new": [], "update": ["cu"]`, 1)
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", upd, http.StatusAccepted).JSON(&bad))
	do(t, anon, http.MethodPut, pathOf(w.c, *bad.UploadURL), gradeCSV(true), http.StatusCreated)
	do(t, w.c, http.MethodPost, path+"/jobs/"+bad.JobUUID+"/uploaded", nil, http.StatusCreated)
	j = waitJob(t, w.c, bad.JobURL)
	require.Equal(t, "FAILED", j.JobStatus)
	var failed struct {
		Type        string `json:"type"`
		Detail      string `json:"detail"`
		DownloadURL string `json:"download_url"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &failed))
	assert.Equal(t, errBase+"/block-model-service/job/update-error", failed.Type)
	assert.Contains(t, failed.Detail, "25")
	require.NotEmpty(t, failed.DownloadURL)
	errFile := do(t, anon, http.MethodGet, pathOf(w.c, failed.DownloadURL), nil, http.StatusOK)
	assert.True(t, strings.HasPrefix(string(errFile.Body), "row,i,j,k,message\n"), "%s", errFile.Body)
	assert.Contains(t, string(errFile.Body), "25,9,9,9,")
	var versions struct {
		Total   int `json:"total"`
		Results []struct {
			VersionID int `json:"version_id"`
		} `json:"results"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions", nil, http.StatusOK).JSON(&versions))
	assert.Equal(t, 2, versions.Total)
	assert.Equal(t, 2, versions.Results[0].VersionID)

	// Confirmed without a file.
	var none updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", upd, http.StatusAccepted).JSON(&none))
	do(t, w.c, http.MethodPost, path+"/jobs/"+none.JobUUID+"/uploaded", nil, http.StatusCreated)
	j = waitJob(t, w.c, none.JobURL)
	require.Equal(t, "FAILED", j.JobStatus)
	require.NoError(t, json.Unmarshal(j.Payload, &failed))
	assert.Equal(t, errBase+"/block-model-service/job/file-not-found", failed.Type)

	// A rename needs no file: no upload URL, and /uploaded is still required.
	var ren updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", `{"columns": {"rename": [{"title": "cu", "new_title": "cu_pct"}]}}`, http.StatusAccepted).JSON(&ren))
	assert.Nil(t, ren.UploadURL)
	do(t, w.c, http.MethodPost, path+"/jobs/"+ren.JobUUID+"/uploaded", nil, http.StatusCreated)
	j = waitJob(t, w.c, ren.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)

	// Validation at the start: every failure listed.
	r = do(t, w.c, http.MethodPatch, path+"/blocks", `{"columns": {"new": [{"title": "i", "data_type": "Float64"}], "update": ["nope"]}, "geometry_change": true}`, http.StatusUnprocessableEntity)
	var p struct {
		Type          string            `json:"type"`
		InvalidParams []json.RawMessage `json:"invalid-params"`
	}
	require.NoError(t, r.JSON(&p))
	assert.Equal(t, errBase+"/block-model-service/validation", p.Type)
	assert.GreaterOrEqual(t, len(p.InvalidParams), 3)
}

// pendingURLPath strips the worker's base from a signed URL.
func pendingURLPath(w *worker, u string) string { return pathOf(w.c, u) }

// A query end to end: POST …/blocks answers the resolved query and its
// job; the job COMPLETE has a download URL of a Parquet file with the
// geometry columns and the columns asked for.
// modelWithCu creates a regular model and adds its cu column through an
// update job; it returns the model's path.
func modelWithCu(t *testing.T, w *worker) string {
	t.Helper()
	rec := create(t, w.c, org, ws, regularBody("queried", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *up.UploadURL), gradeCSV(false), http.StatusCreated)
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	require.Equal(t, "COMPLETE", waitJob(t, w.c, up.JobURL).JobStatus)
	return path
}

// queryDownload waits for a query job to be COMPLETE and returns its
// download URL, as given and parsed.
func queryDownload(t *testing.T, w *worker, jobURL string) (string, *url.URL) {
	t.Helper()
	j := waitJob(t, w.c, jobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)
	var dl struct {
		DownloadURL string `json:"download_url"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &dl))
	u, err := url.Parse(dl.DownloadURL)
	require.NoError(t, err)
	return dl.DownloadURL, u
}

func TestQueryEndToEnd(t *testing.T) {
	w := startWorker(t)
	path := modelWithCu(t, w)

	var res struct {
		BMUUID    string   `json:"bm_uuid"`
		VersionID int      `json:"version_id"`
		Columns   []string `json:"columns"`
		JobURL    string   `json:"job_url"`
		BBox      struct {
			IMinMax struct{ Min, Max int } `json:"i_minmax"`
		} `json:"bbox"`
	}
	q := `{"columns": ["cu", "version_id"], "geometry_columns": "indices", "bbox": {"i_minmax": {"min": 0, "max": 1}, "j_minmax": {"min": 0, "max": 2}, "k_minmax": {"min": 0, "max": 0}},
		"version_uuid": null, "output_options": {"file_format": "parquet", "column_headers": "name", "exclude_null_rows": false}}`
	require.NoError(t, do(t, w.c, http.MethodPost, path+"/blocks", q, http.StatusOK).JSON(&res))
	assert.Equal(t, path[strings.LastIndex(path, "/")+1:], res.BMUUID)
	assert.Equal(t, 2, res.VersionID)
	assert.Equal(t, []string{"cu", "version_id"}, res.Columns)
	assert.Equal(t, 1, res.BBox.IMinMax.Max)
	dl, u := queryDownload(t, w, res.JobURL)
	se, err := strconv.ParseInt(u.Query().Get("se"), 10, 64)
	require.NoError(t, err)
	assert.InDelta(t, time.Now().Add(30*time.Minute).Unix(), se, 60, "the download URL is valid for 30 minutes")
	file := do(t, w.as(""), http.MethodGet, pathOf(w.c, dl), nil, http.StatusOK)
	pf, err := parquet.OpenFile(bytes.NewReader(file.Body), int64(len(file.Body)))
	require.NoError(t, err)
	var names []string
	for _, f := range pf.Schema().Fields() {
		names = append(names, f.Name())
	}
	assert.Equal(t, []string{"i", "j", "k", "cu", "version_id"}, names)
	require.Equal(t, int64(6), pf.NumRows())
	rows := make([]parquet.Row, 6)
	rg := pf.RowGroups()[0].Rows()
	n, _ := rg.ReadRows(rows)
	require.NoError(t, rg.Close())
	require.Equal(t, 6, n)
	for _, row := range rows {
		i, jj, cu := row[0].Uint32(), row[1].Uint32(), row[3].Double()
		assert.Equal(t, float64(i)+10*float64(jj)+0.5, cu)
		assert.Equal(t, int64(2), row[4].Int64())
	}
	// Each read of the job signs a new download URL; an unknown column is
	// a 422 naming it.
	r := do(t, w.c, http.MethodPost, path+"/blocks", `{"columns": ["nope"]}`, http.StatusUnprocessableEntity)
	assert.Equal(t, errBase+"/block-model-service/validation", problemType(t, r))
	do(t, w.c, http.MethodPost, path+"/blocks", `{"columns": ["cu"], "bbox": {"i_minmax": {"min": 0, "max": 9}, "j_minmax": {"min": 0, "max": 0}, "k_minmax": {"min": 0, "max": 0}}}`, http.StatusUnprocessableEntity)
}

// The delta check: 304 when nothing changed after a version, 200 listing
// the version that added a column, and only updates within the box count.
func TestDelta(t *testing.T) {
	w := startWorker(t)
	rec := create(t, w.c, org, ws, regularBody("delta", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	var v1 struct {
		Results []struct {
			VersionUUID string `json:"version_uuid"`
		} `json:"results"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions?filter=latest", nil, http.StatusOK).JSON(&v1))
	first := v1.Results[0].VersionUUID
	body := `{"bbox": {"i_minmax": {"min": 0, "max": 3}, "j_minmax": {"min": 0, "max": 2}, "k_minmax": {"min": 0, "max": 1}}, "columns": ["*"]}`
	r := do(t, w.c, http.MethodPost, path+"/versions/"+first+"/delta", body, http.StatusNotModified)
	assert.Empty(t, r.Body)
	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *up.UploadURL), gradeCSV(false), http.StatusCreated)
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	require.Equal(t, "COMPLETE", waitJob(t, w.c, up.JobURL).JobStatus)
	var d struct {
		NewDeltas    []string          `json:"new_deltas"`
		UpdateDeltas []string          `json:"update_deltas"`
		VersionData  []json.RawMessage `json:"version_data"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, path+"/versions/"+first+"/delta", body[:len(body)-1]+`, "verbose": true}`, http.StatusOK).JSON(&d))
	assert.Equal(t, []string{up.VersionUUID}, d.NewDeltas)
	assert.Len(t, d.VersionData, 1)
	do(t, w.c, http.MethodPost, path+"/versions/"+up.VersionUUID+"/delta", body, http.StatusNotModified)
	do(t, w.c, http.MethodPost, path+"/versions/"+first+"/delta", `{"columns": ["*"]}`, http.StatusUnprocessableEntity)
}

// splitUpload creates a fully sub-blocked model of two parents of 2 × 2 × 1
// sub-cells and starts a geometry-change update whose file (uploaded, not
// confirmed) splits the first parent into its four sub-blocks with a new
// column au; it returns the model's path and the update's answer.
func splitUpload(t *testing.T, w *worker) (string, updateAnswer) {
	t.Helper()
	rec := create(t, w.c, org, ws, `{"name": "split", "model_origin": {"x": 0, "y": 0, "z": 0}, "block_rotation": [],
		"size_options": {"model_type": "fully-sub-blocked", "n_parent_blocks": {"nx": 2, "ny": 1, "nz": 1},
		"n_subblocks_per_parent": {"nx": 2, "ny": 2, "nz": 1}, "parent_block_size": {"x": 10, "y": 10, "z": 10}}}`)
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", `{"columns": {"new": [{"title": "au", "data_type": "Float64"}]},
		"geometry_change": true, "update_type": "merge", "input_options": {"file_format": "csv"}}`, http.StatusAccepted).JSON(&up))
	file := "x,y,z,dx,dy,dz,au\n2.5,2.5,5,5,5,10,1\n7.5,2.5,5,5,5,10,2\n2.5,7.5,5,5,5,10,3\n7.5,7.5,5,5,5,10,4\n"
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *up.UploadURL), file, http.StatusCreated)
	return path, up
}

// A sub-blocked model over HTTP: a geometry-change update splits a parent
// of a fully sub-blocked model into its four sub-blocks (coordinate form,
// CSV), and a query lists the new rows by index with their sidx.
func TestSubBlockedUpdateAndQuery(t *testing.T) {
	w := startWorker(t)
	path, up := splitUpload(t, w)
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	j := waitJob(t, w.c, up.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)

	var res struct {
		JobURL string `json:"job_url"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, path+"/blocks", `{"columns": ["au"], "output_options": {"file_format": "csv", "exclude_null_rows": false}}`, http.StatusOK).JSON(&res))
	dl, _ := queryDownload(t, w, res.JobURL)
	out := do(t, w.as(""), http.MethodGet, pathOf(w.c, dl), nil, http.StatusOK)
	assert.Equal(t, "i,j,k,sidx,au\n0,0,0,0,1\n0,0,0,1,2\n0,0,0,2,3\n0,0,0,3,4\n1,0,0,0,\n", string(out.Body))
}

// A job waiting for its upload fails as expired 24 hours after its start
// (read or confirmed then): FAILED job/expired, and /uploaded is 409.
func TestPendingJobExpires(t *testing.T) {
	w := startWorker(t)
	rec := create(t, w.c, org, ws, regularBody("expiring", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	var up, later updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&later))
	bmapi.SetClock(w.svc.BlockModels(), func() time.Time { return time.Now().Add(bmapi.PendingLifetime + time.Minute) })
	j := getJob(t, w.c, up.JobURL)
	require.Equal(t, "FAILED", j.JobStatus)
	var p struct {
		Type string `json:"type"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &p))
	assert.Equal(t, errBase+"/block-model-service/job/expired", p.Type)
	r := do(t, w.c, http.MethodPost, path+"/jobs/"+later.JobUUID+"/uploaded", nil, http.StatusConflict)
	assert.Equal(t, errBase+"/block-model-service/file-conflict", problemType(t, r))
	assert.Equal(t, "FAILED", getJob(t, w.c, later.JobURL).JobStatus)
}

// Update jobs of one model confirmed together each apply to the latest
// version in turn: three jobs adding one column each end as three new
// versions, the last holding every column.
func TestConcurrentUpdatesKeepEveryColumn(t *testing.T) {
	w := startWorker(t)
	rec := create(t, w.c, org, ws, regularBody("busy", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	titles := []string{"a", "b", "c"}
	ups := make([]updateAnswer, len(titles))
	for n, title := range titles {
		body := strings.ReplaceAll(addCu, `"cu"`, `"`+title+`"`)
		require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", body, http.StatusAccepted).JSON(&ups[n]))
		do(t, w.as(""), http.MethodPut, pathOf(w.c, *ups[n].UploadURL), strings.Replace(gradeCSV(false), "cu", title, 1), http.StatusCreated)
	}
	for _, up := range ups {
		do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	}
	versions := map[int]bool{}
	for _, up := range ups {
		j := waitJob(t, w.c, up.JobURL)
		require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)
		var v struct {
			VersionID int `json:"version_id"`
		}
		require.NoError(t, json.Unmarshal(j.Payload, &v))
		versions[v.VersionID] = true
	}
	assert.Equal(t, map[int]bool{2: true, 3: true, 4: true}, versions)
	var latest struct {
		Results []struct {
			Mapping struct {
				Columns []struct {
					Title string `json:"title"`
				} `json:"columns"`
			} `json:"mapping"`
		} `json:"results"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions?filter=latest", nil, http.StatusOK).JSON(&latest))
	var got []string
	for _, c := range latest.Results[0].Mapping.Columns {
		got = append(got, c.Title)
	}
	assert.Subset(t, got, titles)
	// The object's latest version mirrors the latest model version.
	obj, err := w.c.GetObject(context.Background(), org, ws, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	var doc struct {
		VersionUUID string `json:"block_model_version_uuid"`
		Attributes  []struct {
			Name string `json:"name"`
		} `json:"attributes"`
	}
	require.NoError(t, json.Unmarshal(obj.Object, &doc))
	var v4 struct {
		Results []struct {
			VersionUUID         string `json:"version_uuid"`
			GeoscienceVersionID string `json:"geoscience_version_id"`
		} `json:"results"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions?filter=latest", nil, http.StatusOK).JSON(&v4))
	assert.Equal(t, v4.Results[0].VersionUUID, doc.VersionUUID)
	assert.Equal(t, v4.Results[0].GeoscienceVersionID, obj.VersionID)
	assert.Len(t, doc.Attributes, 3)
}

// An update job run again after its worker stopped while it ran (found
// PROCESSING, its version already committed under the reserved uuid)
// completes with that version instead of applying the update twice.
func TestUpdateRunAgainAfterItsCommit(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	rec := create(t, w.c, org, ws, regularBody("rerun", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	area := w.svc.BlockModels()
	st := area.Store()
	_, err := st.TransitionJob(up.JobUUID, bmstore.PendingUpload, bmstore.Queued, mustPayload(t, st, up.JobUUID))
	require.NoError(t, err)
	_, err = st.TransitionJob(up.JobUUID, bmstore.Queued, bmstore.Processing, mustPayload(t, st, up.JobUUID))
	require.NoError(t, err)
	// The worker committed the version, then stopped.
	g, err := area.OpenModel(org, ws, rec.BMUUID)
	require.NoError(t, err)
	latest, err := st.Latest(rec.BMUUID)
	require.NoError(t, err)
	v1, err := st.Version(rec.BMUUID, latest)
	require.NoError(t, err)
	u, err := bmwire.DecodeUpdate([]byte(addCu), bmjob.ModelInfo(g, v1))
	require.NoError(t, err)
	file := gradeCSV(false)
	_, err = bmjob.ApplyUpdate(ctx, st, bmjob.UpdateInput{ModelID: rec.BMUUID, Geometry: g, Update: u, File: strings.NewReader(file),
		FileSize: int64(len(file)), VersionUUID: up.VersionUUID, CreatedBy: "someone"})
	require.NoError(t, err)

	fn, err := area.Rebuild(jobs.Record{ID: "layer-job", Topic: bmapi.Topic}, []byte(`{"job_id": "`+up.JobUUID+`"}`))
	require.NoError(t, err)
	_, err = fn(ctx, func(int, string) {})
	require.NoError(t, err)
	j := getJob(t, w.c, up.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)
	var v struct {
		VersionID           int    `json:"version_id"`
		GeoscienceVersionID string `json:"geoscience_version_id"`
	}
	require.NoError(t, json.Unmarshal(j.Payload, &v))
	assert.Equal(t, 2, v.VersionID)
	assert.NotEmpty(t, v.GeoscienceVersionID)
	n, err := st.Latest(rec.BMUUID)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the update was not applied twice")
}

// mustPayload reads a job record's payload.
func mustPayload(t *testing.T, st *bmstore.Store, id string) json.RawMessage {
	t.Helper()
	j, err := st.GetJob(id)
	require.NoError(t, err)
	return j.Payload
}

// A query job's output is the blob itself: the bytes downloaded are the
// file under the workspace's blobs, and no temporary file of the output
// (written in the store's tmp, committed by a rename) is left behind.
func TestQueryOutputIsTheBlob(t *testing.T) {
	dir := t.TempDir()
	w, _ := startWorkerIn(t, dir)
	path := modelWithCu(t, w)

	var res struct {
		JobURL string `json:"job_url"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, path+"/blocks", `{"columns": ["cu"]}`, http.StatusOK).JSON(&res))
	dl, u := queryDownload(t, w, res.JobURL)
	name := u.Path[strings.LastIndex(u.Path, "/")+1:]
	file := do(t, w.as(""), http.MethodGet, pathOf(w.c, dl), nil, http.StatusOK)
	stored, err := os.ReadFile(filepath.Join(dir, "blobs", org, ws, name[:2], name))
	require.NoError(t, err)
	assert.Equal(t, stored, file.Body)
	pf, err := parquet.OpenFile(bytes.NewReader(file.Body), int64(len(file.Body)))
	require.NoError(t, err)
	assert.Equal(t, int64(24), pf.NumRows())
	left, err := os.ReadDir(filepath.Join(dir, "tmp"))
	require.NoError(t, err)
	for _, e := range left {
		assert.False(t, strings.HasPrefix(e.Name(), "blob-") || strings.HasPrefix(e.Name(), "query-"), "temporary file %s left", e.Name())
	}
}

// The update jobs of one model waiting for their upload are bounded: past
// MaxOpenJobs a PATCH …/blocks answers 429 and records nothing; jobs past
// their lifetime are expired by the next PATCH, which then goes through,
// and confirmed ones no longer count.
func TestOpenJobsBounded(t *testing.T) {
	w := startWorker(t)
	rec := create(t, w.c, org, ws, regularBody("crowded", ""))
	path := bmPrefix(org, ws) + "/" + rec.BMUUID
	ups := make([]updateAnswer, bmapi.MaxOpenJobs)
	for n := range ups {
		require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&ups[n]))
	}
	r := do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusTooManyRequests)
	assert.Equal(t, errBase+"/block-model-service/service", problemType(t, r))
	assert.Contains(t, string(r.Body), "256 update jobs")
	// One confirmed (it runs and fails: nothing was uploaded) makes room
	// for one.
	do(t, w.c, http.MethodPost, path+"/jobs/"+ups[0].JobUUID+"/uploaded", nil, http.StatusCreated)
	assert.Equal(t, "FAILED", waitJob(t, w.c, ups[0].JobURL).JobStatus)
	var more updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted).JSON(&more))
	do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusTooManyRequests)
	// A day later every pending job is expired by the next PATCH.
	bmapi.SetClock(w.svc.BlockModels(), func() time.Time { return time.Now().Add(bmapi.PendingLifetime + time.Minute) })
	do(t, w.c, http.MethodPatch, path+"/blocks", addCu, http.StatusAccepted)
	var p struct {
		Type string `json:"type"`
	}
	j := getJob(t, w.c, ups[1].JobURL)
	require.Equal(t, "FAILED", j.JobStatus)
	require.NoError(t, json.Unmarshal(j.Payload, &p))
	assert.Equal(t, errBase+"/block-model-service/job/expired", p.Type)
}

// An update whose memory estimate exceeds what the worker gives a job is
// refused when its upload is confirmed: 422 job/update-error naming the
// memory, the job FAILED with the same problem, the latest version kept.
// Here the worker gives a job 64 MiB and 1 KiB; a geometry change of a
// five-line file needs more (bmjob.UpdateMemory), an update of a column of
// the model's two rows does not.
func TestUpdateBeyondMemoryRefused(t *testing.T) {
	w, _ := startWorkerIn(t, t.TempDir(), func(o *service.Options) { o.MaxMemory = 64<<20 + 1<<10 })
	path, up := splitUpload(t, w)
	r := do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusUnprocessableEntity)
	assert.Equal(t, errBase+"/block-model-service/job/update-error", problemType(t, r))
	assert.Contains(t, string(r.Body), "MiB of memory, more than the 64 MiB the worker gives a job")
	j := getJob(t, w.c, up.JobURL)
	require.Equal(t, "FAILED", j.JobStatus)
	assert.Contains(t, string(j.Payload), "block-model-service/job/update-error")
	assert.Contains(t, string(j.Payload), "more than the 64 MiB the worker gives a job")
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusConflict)

	var vs struct {
		Total int `json:"total"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions", nil, http.StatusOK).JSON(&vs))
	assert.Equal(t, 1, vs.Total, "the latest version is kept")

	// An update of the model's rows as they are fits.
	require.NoError(t, do(t, w.c, http.MethodPatch, path+"/blocks", `{"columns": {"new": [{"title": "au", "data_type": "Float64"}]},
		"update_type": "replace", "input_options": {"file_format": "csv"}}`, http.StatusAccepted).JSON(&up))
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *up.UploadURL), "i,j,k,sidx,au\n0,0,0,0,1\n1,0,0,0,2\n", http.StatusCreated)
	do(t, w.c, http.MethodPost, path+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	j = waitJob(t, w.c, up.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus, "%s", j.Payload)
}

// blobName is the blob a signed upload or download URL names.
func blobName(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return path.Base(u.Path)
}

// The area's files are private blobs it deletes: an update's upload once
// the job has ended (the worker's sweeps wait an hour here: the job's end
// sets it off), a query's output OutputLifetime after its job's end (its
// download_url is null from then on), and the upload of a job left
// waiting past PendingLifetime on a model nobody touches again (Sweep).
func TestJobFilesSwept(t *testing.T) {
	w, _ := startWorkerIn(t, t.TempDir(), func(o *service.Options) { o.BlockModelSweep = time.Hour })
	objs := w.svc.App().Store()
	area := w.svc.BlockModels()
	wsp := store.Workspace{Org: org, ID: ws}
	exists := func(name string) bool {
		t.Helper()
		ok, err := objs.BlobExists(context.Background(), wsp, name)
		require.NoError(t, err)
		return ok
	}
	rec := create(t, w.c, org, ws, regularBody("swept", ""))
	mpath := bmPrefix(org, ws) + "/" + rec.BMUUID
	var up, waiting updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, mpath+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *up.UploadURL), gradeCSV(false), http.StatusCreated)
	upload := blobName(t, *up.UploadURL)
	require.True(t, exists(upload))
	do(t, w.c, http.MethodPost, mpath+"/jobs/"+up.JobUUID+"/uploaded", nil, http.StatusCreated)
	require.Equal(t, "COMPLETE", waitJob(t, w.c, up.JobURL).JobStatus)
	deadline := time.Now().Add(20 * time.Second)
	for exists(upload) {
		require.True(t, time.Now().Before(deadline), "the upload is deleted once the job has ended")
		time.Sleep(5 * time.Millisecond)
	}

	// A job left waiting, its file uploaded but never confirmed.
	require.NoError(t, do(t, w.c, http.MethodPatch, mpath+"/blocks", strings.Replace(addCu, `"cu"`, `"cu2"`, 1), http.StatusAccepted).JSON(&waiting))
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *waiting.UploadURL), gradeCSV(false), http.StatusCreated)
	left := blobName(t, *waiting.UploadURL)
	// A query and its output.
	var res struct {
		JobURL string `json:"job_url"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, mpath+"/blocks", `{"columns": ["cu"], "output_options": {"file_format": "csv"}}`, http.StatusOK).JSON(&res))
	dl, _ := queryDownload(t, w, res.JobURL)
	output := blobName(t, dl)
	require.True(t, exists(output))
	require.True(t, exists(left))

	// A day later: the output is no longer offered, then deleted; the
	// waiting job expires without anyone reading it.
	bmapi.SetClock(area, func() time.Time { return time.Now().Add(bmapi.OutputLifetime + bmapi.PendingLifetime) })
	j := getJob(t, w.c, res.JobURL)
	require.Equal(t, "COMPLETE", j.JobStatus)
	assert.JSONEq(t, `{"download_url": null}`, string(j.Payload))
	n, err := area.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the waiting job expired, the query's output deleted")
	assert.False(t, exists(output))
	assert.False(t, exists(left))
	stored, err := area.Store().GetJob(waiting.JobUUID)
	require.NoError(t, err)
	assert.Equal(t, bmstore.Failed, stored.Status)
	assert.Contains(t, string(stored.Payload), "block-model-service/job/expired")
	n, err = area.Sweep(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "a second sweep finds nothing to do")
	for _, id := range []string{up.JobUUID, waiting.JobUUID} {
		stored, err := area.Store().GetJob(id)
		require.NoError(t, err)
		assert.NotContains(t, string(stored.Payload), `"upload"`, "job %s forgot its upload", id)
	}
	assert.JSONEq(t, `{"download_url": null}`, string(getJob(t, w.c, res.JobURL).Payload))
}

// The worker sweeps on its own: a job left waiting for its upload on a
// model nobody reads or changes expires, and its file goes.
func TestSweepsRunOnTheirOwn(t *testing.T) {
	w, _ := startWorkerIn(t, t.TempDir(), func(o *service.Options) { o.BlockModelSweep = 20 * time.Millisecond })
	area := w.svc.BlockModels()
	rec := create(t, w.c, org, ws, regularBody("forgotten", ""))
	var up updateAnswer
	require.NoError(t, do(t, w.c, http.MethodPatch, bmPrefix(org, ws)+"/"+rec.BMUUID+"/blocks", addCu, http.StatusAccepted).JSON(&up))
	do(t, w.as(""), http.MethodPut, pathOf(w.c, *up.UploadURL), gradeCSV(false), http.StatusCreated)
	upload := blobName(t, *up.UploadURL)
	bmapi.SetClock(area, func() time.Time { return time.Now().Add(bmapi.PendingLifetime + time.Minute) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		stored, err := area.Store().GetJob(up.JobUUID)
		require.NoError(t, err)
		kept, err := w.svc.App().Store().BlobExists(context.Background(), store.Workspace{Org: org, ID: ws}, upload)
		require.NoError(t, err)
		if stored.Status == bmstore.Failed && !kept {
			assert.Contains(t, string(stored.Payload), "block-model-service/job/expired")
			return
		}
		require.True(t, time.Now().Before(deadline), "a sweep expired the job and deleted its upload")
		time.Sleep(10 * time.Millisecond)
	}
}
