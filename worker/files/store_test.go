package files_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, rc io.ReadSeekCloser) []byte {
	t.Helper()
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	return data
}

func TestGoAPI(t *testing.T) {
	dir := t.TempDir()
	st, err := files.Open(dir)
	require.NoError(t, err)
	ctx := t.Context()
	body := content(10_000, 3)

	rec, err := st.Put(ctx, org, wsID, "/Reports/sim.HTML", bytes.NewReader(body), "", owner)
	require.NoError(t, err)
	assert.Equal(t, "Reports/sim.HTML", rec.Path, "without the leading slash")
	assert.Equal(t, "sim.HTML", rec.Name)
	assert.Equal(t, "text/html; charset=utf-8", rec.ContentType, "from the extension")
	assert.Equal(t, int64(len(body)), rec.Size)
	assert.Equal(t, owner, rec.CreatedBy)
	assert.Equal(t, org, rec.Org)
	assert.Equal(t, wsID, rec.Workspace)
	require.Len(t, rec.Versions, 1)

	// Visible at once, by path (any case) and by id.
	got, rc, err := st.Get(ctx, org, wsID, "", "reports/SIM.html", "")
	require.NoError(t, err)
	assert.Equal(t, body, readAll(t, rc))
	assert.Equal(t, rec.ID, got.ID)
	got, rc, err = st.Get(ctx, strings.ToUpper(org), wsID, strings.ToUpper(rec.ID), "", rec.VersionID)
	require.NoError(t, err)
	// Seekable, for range serving.
	_, err = rc.Seek(9990, io.SeekStart)
	require.NoError(t, err)
	assert.Equal(t, body[9990:], readAll(t, rc))
	assert.Equal(t, rec.VersionID, got.VersionID)

	// A second Put to the path (other case) is a new version of the file.
	rec2, err := st.Put(ctx, org, wsID, "reports/SIM.html", strings.NewReader("v2"), "text/plain", editor)
	require.NoError(t, err)
	assert.Equal(t, rec.ID, rec2.ID)
	v1, _ := strconv.ParseInt(rec.VersionID, 10, 64)
	v2, _ := strconv.ParseInt(rec2.VersionID, 10, 64)
	assert.Greater(t, v2, v1)
	require.Len(t, rec2.Versions, 2)
	assert.Equal(t, rec2.VersionID, rec2.Versions[0].VersionID)
	_, rc, err = st.Get(ctx, org, wsID, rec.ID, "", "")
	require.NoError(t, err)
	assert.Equal(t, "v2", string(readAll(t, rc)))
	_, rc, err = st.Get(ctx, org, wsID, rec.ID, "", rec.VersionID)
	require.NoError(t, err)
	assert.Equal(t, body, readAll(t, rc), "versions are immutable")

	_, err = st.Put(ctx, org, wsID, "other/x.txt", strings.NewReader("x"), "", owner)
	require.NoError(t, err)
	page, err := st.List(ctx, org, wsID, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	assert.Equal(t, files.DefaultListLimit, page.Limit)
	require.Len(t, page.Files, 2)
	assert.Equal(t, "other/x.txt", page.Files[0].Path)
	page, err = st.List(ctx, org, wsID, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	require.Len(t, page.Files, 1)
	assert.Equal(t, "reports/SIM.html", page.Files[0].Path)

	// URLs.
	assert.Equal(t, "http://h:1/file/v2/orgs/"+org+"/workspaces/"+wsID+"/files/"+rec.ID, files.FileURL("http://h:1/", rec))
	assert.True(t, strings.HasPrefix(st.DownloadURL("http://h:1", rec, 0), "http://h:1/file/v2/content/"+org+"/"+wsID+"/"+rec.ID+"/"+rec.VersionID+"?"))

	// Soft delete.
	require.NoError(t, st.Delete(ctx, org, wsID, "", "REPORTS/sim.html", owner))
	_, _, err = st.Get(ctx, org, wsID, rec.ID, "", "")
	assert.True(t, files.IsNotFound(err), "%v", err)
	err = st.Delete(ctx, org, wsID, rec.ID, "", owner)
	assert.True(t, files.IsNotFound(err), "%v", err)
	page, err = st.List(ctx, org, wsID, 10, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total)
}

func TestGoAPIErrors(t *testing.T) {
	dir := t.TempDir()
	st, err := files.Open(dir)
	require.NoError(t, err)
	ctx := t.Context()
	status := func(err error) int {
		var fe *files.Error
		require.ErrorAs(t, err, &fe)
		return fe.Status
	}
	for _, p := range []string{"", "a//b.txt", "a/../b.txt", "./b", "a/b:c", strings.Repeat("x", 256)} {
		_, err := st.Put(ctx, org, wsID, p, strings.NewReader("x"), "", owner)
		var fe *files.Error
		require.ErrorAs(t, err, &fe, "path %q", p)
		assert.Equal(t, http.StatusBadRequest, fe.Status)
		assert.Equal(t, files.TypeInvalidPath, fe.Type)
	}
	_, err = st.Put(ctx, "acme", wsID, "a.txt", strings.NewReader("x"), "", owner)
	assert.Equal(t, http.StatusUnprocessableEntity, status(err))
	assert.Contains(t, err.Error(), "org_id")
	_, err = st.Put(ctx, org, "../../etc", "a.txt", strings.NewReader("x"), "", owner)
	assert.Contains(t, err.Error(), "workspace_id")
	_, _, err = st.Get(ctx, org, wsID, "nope", "", "")
	assert.Equal(t, http.StatusUnprocessableEntity, status(err))
	_, _, err = st.Get(ctx, org, wsID, "", "missing.txt", "")
	assert.True(t, files.IsNotFound(err))
	_, err = st.List(ctx, org, wsID, files.MaxListLimit+1, 0)
	assert.Equal(t, http.StatusUnprocessableEntity, status(err))
	_, err = st.List(ctx, org, wsID, 10, -1)
	assert.Equal(t, http.StatusUnprocessableEntity, status(err))

	// A failing reader or a cancelled context keeps nothing.
	_, err = st.Put(ctx, org, wsID, "broken.txt", iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader("abc"))), "", owner)
	require.Error(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = st.Put(cctx, org, wsID, "cancelled.txt", strings.NewReader("abc"), "", owner)
	require.ErrorIs(t, err, context.Canceled)
	page, err := st.List(ctx, org, wsID, 10, 0)
	require.NoError(t, err)
	assert.Equal(t, 0, page.Total)
	assertNoTempFiles(t, dir)
}

func TestPutKeepsUsersApart(t *testing.T) {
	st, err := files.Open(t.TempDir())
	require.NoError(t, err)
	a, err := st.Put(t.Context(), org, wsID, "same.txt", strings.NewReader("ws"), "", owner)
	require.NoError(t, err)
	b, err := st.Put(t.Context(), org, otherWS, "same.txt", strings.NewReader("other ws"), "", store.User{ID: "x"})
	require.NoError(t, err)
	assert.NotEqual(t, a.ID, b.ID, "workspaces have their own files")
	_, _, err = st.Get(t.Context(), org, otherWS, a.ID, "", "")
	assert.True(t, files.IsNotFound(err))
}
