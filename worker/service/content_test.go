package service_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptPage is an HTML page whose script marks the page when it runs.
const scriptPage = `<!DOCTYPE html><html><head><title>notes</title></head><body><h1 id="t">notes</h1>` +
	`<script>document.getElementById('t').setAttribute('data-script-ran', 'yes')</script></body></html>`

// postBlobObject stores content as a blob with c and posts, at path, a
// pointset whose one attribute's values are that blob; it returns the
// blob's key and the download URL the object's record links it with.
func postBlobObject(t *testing.T, c *workertest.Client, path, content string) (key, downloadURL string) {
	t.Helper()
	ctx := context.Background()
	sum := sha256.Sum256([]byte(content))
	key = hex.EncodeToString(sum[:])
	b := objecttest.NewBlobs()
	b.Put(key, []byte(content))
	doc := b.Pointset("1.3.0", []float64{0, 0, 0, 1, 1, 1}, map[string]any{
		"name": "v", "key": "0b9e3c0e-5c4a-4f0e-9c1e-1a2b3c4d5e6f", "attribute_type": "scalar",
		"nan_description": map[string]any{"values": []any{}}, "values": objecttest.Element(key, 2, 1, "float64")})
	require.NoError(t, c.UploadBlobs(ctx, demo.Org, demo.Workspace, b, 1))
	obj, err := c.PostObject(ctx, demo.Org, demo.Workspace, path, objecttest.JSON(doc))
	require.NoError(t, err)
	for _, l := range obj.Links.Data {
		if l.Name == key {
			downloadURL = l.DownloadURL
		}
	}
	require.NotEmpty(t, downloadURL, "the object links its blob")
	return key, downloadURL
}

// TestStoredContentIsInert (issue 27 item 8): an editor stores an HTML page
// with a script in the file area and as a blob of an object; the report
// route (which served it as a page with neither header), the file download
// and the blob download all serve it with nosniff and a policy that runs no
// script, and the download routes as an attachment. The API's own JSON
// answers carry nosniff and a policy that loads nothing. (The file view URL
// is checked in the files package: TestViewURL, TestContentHeaders.)
func TestStoredContentIsInert(t *testing.T) {
	s, cs, stop := startRoles(t, t.TempDir(), service.Options{})
	defer stop()
	ctx := context.Background()
	editor, viewer := cs[editorTok], cs[viewerTok]
	anon := &workertest.Client{Base: s.URL()}

	// The page in the file area, uploaded by the editor.
	filesPrefix := "/file/v2/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/files"
	r := expectStatus(t, editor, http.MethodPut, filesPrefix+"/path/notes.html", http.StatusOK, "reserve")
	var up files.UploadResponse
	require.NoError(t, r.JSON(&up))
	r, err := anon.Do(ctx, http.MethodPut, up.UploadURL, []byte(scriptPage), "Content-Type", "text/html; charset=utf-8")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var rec files.Record
	require.NoError(t, r.JSON(&rec))

	// The page as a blob of an object.
	_, blobURL := postBlobObject(t, editor, "notes.json", scriptPage)

	for _, c := range []struct {
		name, url   string
		client      *workertest.Client
		disposition server.Disposition
	}{
		{"the report route", "/compute/orgs/" + demo.Org + "/reports/" + demo.Workspace + "/" + rec.ID, viewer, server.Inline},
		{"a file download URL", rec.DownloadURL, anon, server.Attachment},
		{"a blob download URL", blobURL, anon, server.Attachment},
	} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			r, err := c.client.Do(ctx, method, c.url, nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, r.Status, "%s %s: %s", method, c.name, r.Body)
			if method == http.MethodGet {
				assert.Equal(t, scriptPage, string(r.Body), c.name)
			}
			assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), "%s %s", method, c.name)
			assert.Equal(t, server.StoredContentCSP, r.Header.Get("Content-Security-Policy"), "%s %s", method, c.name)
			assert.True(t, strings.HasPrefix(r.Header.Get("Content-Disposition"), string(c.disposition)),
				"%s %s: Content-Disposition %q", method, c.name, r.Header.Get("Content-Disposition"))
		}
	}
	csp := server.StoredContentCSP
	assert.Contains(t, csp, "default-src 'none'")
	assert.NotContains(t, csp, "script-src", "no script source is allowed")
	assert.Contains(t, csp, "sandbox")

	// The API's own answers: JSON and problem documents.
	for _, u := range []string{filesPrefix + "/" + rec.ID, filesPrefix + "/00000000-0000-4000-8000-000000000404"} {
		r, err := viewer.Do(ctx, http.MethodGet, u, nil)
		require.NoError(t, err)
		assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), u)
		assert.Equal(t, "default-src 'none'; frame-ancestors 'none'", r.Header.Get("Content-Security-Policy"), u)
	}
}
