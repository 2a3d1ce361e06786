package files_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContentHeaders: a page with a script that an editor uploads is served
// inert by both content URLs, on GET and HEAD: nosniff and the stored-content
// policy (no script), inline for a view URL, as an attachment for a
// download URL. The file's record (JSON) carries nosniff and a policy that
// loads nothing.
func TestContentHeaders(t *testing.T) {
	e := start(t, files.Options{})
	page := `<!DOCTYPE html><html><body><h1 id="t">x</h1><script>document.getElementById('t').setAttribute('data-script-ran','yes')</script></body></html>`
	up := e.reserve(editTok, "notes/page.html")
	r := e.do("", http.MethodPut, up.UploadURL, []byte(page), "Content-Type", "text/html; charset=utf-8")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	rec := e.record("notes/page.html", "")
	view, err := e.store.ViewURL(e.app.URL(), org, wsID, up.FileID, up.VersionID, time.Minute)
	require.NoError(t, err)

	assert.Equal(t, server.StoredContentCSP, files.ViewCSP)
	for _, c := range []struct {
		name, url, disposition string
	}{{"download", rec.DownloadURL, "attachment"}, {"view", view, "inline"}} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			r := e.do("", method, c.url, nil)
			require.Equal(t, http.StatusOK, r.status, "%s %s: %s", method, c.name, r.body)
			assert.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"), "%s %s", method, c.name)
			assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"), "%s %s", method, c.name)
			assert.Equal(t, server.StoredContentCSP, r.header.Get("Content-Security-Policy"), "%s %s", method, c.name)
			assert.Equal(t, c.disposition+`; filename=page.html`, r.header.Get("Content-Disposition"), "%s %s", method, c.name)
		}
	}
	r = e.get(viewTok, "notes/page.html", "")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
	assert.True(t, strings.HasPrefix(r.header.Get("Content-Security-Policy"), "default-src 'none'"), r.header.Get("Content-Security-Policy"))
}
