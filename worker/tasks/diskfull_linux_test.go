package tasks_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	prob "github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallDisk mounts a tmpfs of size bytes on a new directory and returns it
// (unmounted at cleanup); the test is skipped when mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file in dir until the disk is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for i := 0; ; i++ {
		require.Less(t, i, 1<<16, "the disk never filled")
		if _, err := f.Write(chunk); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
			break
		}
	}
	// The last bytes (less than a chunk) too.
	for _, n := range []int{4096, 1} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// problemOf decodes a problem document and checks its status, type and
// detail.
func problemOf(t *testing.T, body []byte, status int, typ, detail string) {
	t.Helper()
	var p prob.Problem
	require.NoError(t, json.Unmarshal(body, &p), "%s", body)
	assert.Equal(t, status, p.Status, "%s", body)
	assert.Equal(t, typ, p.Type, "%s", body)
	assert.Equal(t, detail, p.Detail, "%s", body)
}

// prob507 checks a 507 of type typ whose detail names op.
func prob507(t *testing.T, body []byte, typ, op string) {
	t.Helper()
	problemOf(t, body, http.StatusInsufficientStorage, typ, op+": no space left on device")
}

// TestFullDiskIs507 runs a worker whose data directory is a small tmpfs,
// fills the disk and checks every write path: a blob upload, an object
// version, a file upload and reservation, and a job writing its output
// answer 507 insufficient-storage naming the operation (never 500 or 502),
// leave nothing half-written (no blob, the object's latest version, the
// file listing unchanged), the admission check still answers 422 for a
// job whose output does not fit, and once space is freed every path works.
func TestFullDiskIs507(t *testing.T) {
	disk := smallDisk(t, "16m")
	var admit atomic.Bool // the admission check sees the disk (else unbounded)
	h := serveOver(t, disk, filepath.Join(t.TempDir(), "nats"), func(env *tasks.Env) {
		env.FreeDisk = func() (int64, error) {
			if !admit.Load() {
				return math.MaxInt64 / 4, nil
			}
			var st syscall.Statfs_t
			if err := syscall.Statfs(disk, &st); err != nil {
				return 0, err
			}
			return int64(st.Bavail) * st.Bsize, nil
		}
	})
	ctx := context.Background()
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(200, 3)
	h.put(b, "full/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	spec := objecttest.GridSpec{Size: [3]int{20, 20, 10}, CellSize: [3]float64{5, 5, 2}}
	gid := h.put(b, "full/grid.json", b.Grid("1.3.0", spec))
	before, err := h.c.GetObject(ctx, org, ws, gid, "")
	require.NoError(t, err)
	filesPrefix := "/file/v2/orgs/" + org + "/workspaces/" + ws
	reserve := func(p string) *workertest.Response {
		r, err := h.c.Do(ctx, http.MethodPut, filesPrefix+"/files/path/"+p, nil)
		require.NoError(t, err)
		return r
	}
	r := reserve("notes/a.txt")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var res struct {
		UploadURL string `json:"upload_url"`
	}
	require.NoError(t, r.JSON(&res))
	listing := func() []byte {
		r, err := h.c.Do(ctx, http.MethodGet, filesPrefix+"/files", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.Body
	}
	filesBefore := listing()
	content := make([]byte, 256<<10)
	_, _ = rand.Read(content)
	sum := sha256.Sum256(content)
	blobName := hex.EncodeToString(sum[:])
	dataReq, _ := json.Marshal([]store.DataRequest{{Name: blobName}})
	uploadURL := func() string {
		r, err := h.c.Do(ctx, http.MethodPut, workertest.WorkspacePrefix(org, ws)+"/data", dataReq)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var d []store.DataResponse
		require.NoError(t, r.JSON(&d))
		require.Len(t, d, 1)
		require.False(t, d[0].Exists, "the blob is not stored")
		return *d[0].UploadURL
	}
	knn := func() map[string]any {
		return map[string]any{
			"source":       map[string]any{"object": h.url("full/pts.json"), "attribute": "locations.attributes[?name=='au']"},
			"target":       map[string]any{"object": h.url("full/grid.json"), "attribute": map[string]any{"operation": "create", "name": "au_knn"}},
			"neighborhood": neighbourhood(8)}
	}
	anon := &workertest.Client{Base: h.c.Base}

	filler := fill(t, disk)

	// Every 507 below is a status the route table documents.
	for _, pattern := range []string{
		"PUT /blobs/{org_id}/{workspace_id}/{name}",
		"POST /geoscience-object/orgs/{org_id}/workspaces/{workspace_id}/objects/path/{path...}",
		"PUT /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}",
		"PUT /file/v2/orgs/{org_id}/workspaces/{workspace_id}/files/path/{file_path...}",
		"POST /compute/orgs/{org_id}/geostat/{task}",
	} {
		method, _, _ := strings.Cut(pattern, " ")
		_, listed := prob.RouteStatuses()[pattern]
		require.True(t, listed, pattern)
		assert.False(t, prob.Undocumented(method, pattern, http.StatusInsufficientStorage), "%s documents 507", pattern)
	}

	// A blob upload (signed URL, one PUT).
	r, err = anon.Do(ctx, http.MethodPut, uploadURL(), content, "x-ms-blob-type", "BlockBlob")
	require.NoError(t, err)
	problemOf(t, r.Body, http.StatusInsufficientStorage, prob.ObjectInsufficientStorage, "blob upload: no space left on device")
	// The block form: a staged block.
	blockID := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%032d", 0)))
	r, err = anon.Do(ctx, http.MethodPut, uploadURL()+"&comp=block&blockid="+url.QueryEscape(blockID), content)
	require.NoError(t, err)
	prob507(t, r.Body, prob.ObjectInsufficientStorage, "block upload")
	uploadURL() // still not stored
	leftovers, err := os.ReadDir(filepath.Join(disk, "tmp"))
	require.NoError(t, err)
	assert.Empty(t, leftovers, "no temporary file is left")

	// A new version of an object.
	doc := map[string]any{}
	raw, _ := json.Marshal(before.Object)
	require.NoError(t, json.Unmarshal(raw, &doc))
	doc["name"] = "renamed on a full disk"
	body, _ := json.Marshal(doc)
	r, err = h.c.Do(ctx, http.MethodPost, workertest.WorkspacePrefix(org, ws)+"/objects/path/full/grid.json", body)
	require.NoError(t, err)
	problemOf(t, r.Body, http.StatusInsufficientStorage, prob.ObjectInsufficientStorage, "writing the object version: no space left on device")
	now, err := h.c.GetObject(ctx, org, ws, gid, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, now.VersionID, "the object's latest version is unchanged")

	// A file upload to a reserved version, and a new reservation.
	r, err = anon.Do(ctx, http.MethodPut, res.UploadURL, content)
	require.NoError(t, err)
	problemOf(t, r.Body, http.StatusInsufficientStorage, prob.FileInsufficientStorage, "file upload: no space left on device")
	r = reserve("notes/b.txt")
	problemOf(t, r.Body, http.StatusInsufficientStorage, prob.FileInsufficientStorage, "writing the reservation: no space left on device")
	assert.JSONEq(t, string(filesBefore), string(listing()), "the file listing is unchanged")

	// A job writing its output.
	job, err := h.c.RunTask(ctx, org, "knn", knn())
	require.NoError(t, err)
	require.Equal(t, "failed", job.Status)
	problemOf(t, job.Error, http.StatusInsufficientStorage, prob.ComputeInsufficientStorage, "writing the job's output: no space left on device")
	now, err = h.c.GetObject(ctx, org, ws, gid, "")
	require.NoError(t, err)
	assert.Equal(t, before.VersionID, now.VersionID, "the target is unchanged")

	// The admission check answers 422 before a job whose output does not
	// fit starts.
	admit.Store(true)
	sub, _ := json.Marshal(map[string]any{"parameters": knn()})
	r, err = h.c.Do(ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/knn", sub)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	var p prob.Problem
	require.NoError(t, json.Unmarshal(r.Body, &p))
	assert.Equal(t, prob.ComputeInsufficientStorage, p.Type)

	// Space freed, the worker writes again.
	require.NoError(t, os.Remove(filler))
	require.NoError(t, anon.Upload(ctx, uploadURL(), content, 1))
	require.NoError(t, anon.Upload(ctx, res.UploadURL, content, 1))
	job, err = h.c.RunTask(ctx, org, "knn", knn())
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	now, err = h.c.GetObject(ctx, org, ws, gid, "")
	require.NoError(t, err)
	assert.NotEqual(t, before.VersionID, now.VersionID)
}
