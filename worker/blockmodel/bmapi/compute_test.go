package bmapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A compute task writes into a model created over HTTP (the service wires
// the area into the tasks): knn from the demo's drill-hole samples onto the
// model's object adds a column as version 2, whose object version is the
// version's geoscience_version_id; a query reads the estimates back.
func TestKnnIntoABlockModel(t *testing.T) {
	w := startWorker(t)
	ctx := context.Background()
	_, err := w.svc.SeedDemo(ctx)
	require.NoError(t, err)
	r := do(t, w.c, http.MethodGet, "/geoscience-object/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/objects/path/"+demo.GridPath, nil, http.StatusOK)
	var gr struct {
		Object struct {
			Origin [3]float64 `json:"origin"`
		} `json:"object"`
	}
	require.NoError(t, r.JSON(&gr))
	o := gr.Object.Origin
	rec := create(t, w.c, demo.Org, demo.Workspace, fmt.Sprintf(`{"name": "knn target", "model_origin": {"x": %g, "y": %g, "z": %g},
		"block_rotation": [], "size_options": {"model_type": "regular", "n_blocks": {"nx": 5, "ny": 4, "nz": 2}, "block_size": {"x": 20, "y": 20, "z": 10}}}`, o[0], o[1], o[2]))
	objURL := w.c.Base + "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/" + rec.GeoscienceObjectID
	job, err := w.c.RunTask(ctx, demo.Org, "knn", map[string]any{
		"source":       map[string]any{"object": w.c.ObjectURL(demo.Org, demo.Workspace, demo.PointsPath), "attribute": "locations.attributes[?name=='cu']"},
		"target":       map[string]any{"object": objURL, "attribute": map[string]any{"operation": "create", "name": "cu_knn"}},
		"neighborhood": map[string]any{"ellipsoid": map[string]any{"ellipsoid_ranges": map[string]any{"major": 100000, "semi_major": 100000, "minor": 100000}}, "max_samples": 8},
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)

	path := bmPrefix(demo.Org, demo.Workspace) + "/" + rec.BMUUID
	var versions struct {
		Results []struct {
			VersionID           int    `json:"version_id"`
			GeoscienceVersionID string `json:"geoscience_version_id"`
		} `json:"results"`
	}
	require.NoError(t, do(t, w.c, http.MethodGet, path+"/versions?filter=latest", nil, http.StatusOK).JSON(&versions))
	require.Equal(t, 2, versions.Results[0].VersionID)
	obj, err := w.c.GetObject(ctx, demo.Org, demo.Workspace, rec.GeoscienceObjectID, "")
	require.NoError(t, err)
	assert.Equal(t, versions.Results[0].GeoscienceVersionID, obj.VersionID)
	assert.Contains(t, string(obj.Object), `"name":"cu_knn"`)

	var res struct {
		JobURL string `json:"job_url"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, path+"/blocks", `{"columns": ["cu_knn"], "output_options": {"file_format": "csv", "exclude_null_rows": false}}`, http.StatusOK).JSON(&res))
	dl, _ := queryDownload(t, w, res.JobURL)
	out := do(t, w.as(""), http.MethodGet, pathOf(w.c, dl), nil, http.StatusOK)
	lines := 0
	for _, b := range out.Body {
		if b == '\n' {
			lines++
		}
	}
	assert.Equal(t, 41, lines, "a header and 40 blocks")
	assert.NotContains(t, string(out.Body), ",\n", "every block has an estimate")
}
