package files_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/internal/browser"
	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// content returns n deterministic bytes covering every byte value.
func content(n int, salt byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i/256) ^ salt
	}
	return b
}

func TestUploadByPathAndDownload(t *testing.T) {
	e := start(t, files.Options{})
	body := content(70_000, 7)

	up := e.reserve(editTok, "reports/Run 1/report.html")
	require.NotEmpty(t, up.FileID)
	vid, err := strconv.ParseInt(up.VersionID, 10, 64)
	require.NoError(t, err)
	require.Positive(t, vid)
	require.True(t, strings.HasPrefix(up.UploadURL, e.app.URL()+"/"), up.UploadURL)

	// Not visible before its content is uploaded.
	expectProblem(t, e.get(ownerTok, "reports/Run 1/report.html", ""), 404, files.TypeNotFound)
	expectProblem(t, e.get(ownerTok, "id:"+up.FileID, ""), 404, files.TypeNotFound)
	assert.Equal(t, 0, e.list("").Total)

	r := e.do("", http.MethodPut, up.UploadURL, body, "Content-Type", "text/html; charset=utf-8")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	// Versions are immutable: the same upload URL cannot store twice.
	expectProblem(t, e.do("", http.MethodPut, up.UploadURL, []byte("other")), 409, files.TypeVersionExists)

	raw := e.get(viewTok, "reports/Run 1/report.html", "")
	require.Equal(t, http.StatusOK, raw.status, "body: %s", raw.body)
	var m map[string]any
	raw.json(t, &m)
	createdAt, _ := m["created_at"].(string)
	assert.True(t, strings.HasSuffix(createdAt, "Z"), "created_at %q ends in Z", createdAt)
	ts, err := time.Parse(time.RFC3339Nano, createdAt)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), ts, time.Minute)
	assert.Equal(t, map[string]any{"id": editor.ID, "name": editor.Name, "email": editor.Email}, m["created_by"])
	assert.NotContains(t, m, "versions", "versions only with include_versions=true")

	var rec files.Record
	raw.json(t, &rec)
	assert.Equal(t, up.FileID, rec.ID)
	assert.Equal(t, up.VersionID, rec.VersionID)
	assert.Equal(t, "report.html", rec.Name)
	assert.Equal(t, "reports/Run 1/report.html", rec.Path)
	assert.Equal(t, int64(len(body)), rec.Size)
	assert.Equal(t, "text/html; charset=utf-8", rec.ContentType)
	require.NotEmpty(t, rec.DownloadURL)
	assert.Equal(t, rec, e.record("id:"+up.FileID, ""), "the same record by id")

	// Byte-identical through the signed URL, without a token.
	d := e.do("", http.MethodGet, rec.DownloadURL, nil)
	require.Equal(t, http.StatusOK, d.status, "body: %s", d.body)
	assert.True(t, bytes.Equal(body, d.body), "downloaded bytes differ")
	assert.Equal(t, "text/html; charset=utf-8", d.header.Get("Content-Type"))
	assert.Equal(t, "nosniff", d.header.Get("X-Content-Type-Options"))
	assert.Contains(t, d.header.Get("Content-Disposition"), "report.html")

	// Range requests are honoured.
	d = e.do("", http.MethodGet, rec.DownloadURL, nil, "Range", "bytes=1000-1999")
	require.Equal(t, http.StatusPartialContent, d.status)
	assert.Equal(t, body[1000:2000], d.body)
	assert.Equal(t, fmt.Sprintf("bytes 1000-1999/%d", len(body)), d.header.Get("Content-Range"))
	d = e.do("", http.MethodGet, rec.DownloadURL, nil, "Range", "bytes=-10")
	require.Equal(t, http.StatusPartialContent, d.status)
	assert.Equal(t, body[len(body)-10:], d.body)
	d = e.do("", http.MethodHead, rec.DownloadURL, nil)
	require.Equal(t, http.StatusOK, d.status)
	assert.Equal(t, strconv.Itoa(len(body)), d.header.Get("Content-Length"))
	assert.Empty(t, d.body)

	// The upload without a Content-Type gets the extension's type.
	up2 := e.put("data/table.csv", []byte("a,b\n1,2\n"), "")
	assert.Equal(t, "text/csv; charset=utf-8", e.record("id:"+up2.FileID, "").ContentType)
	up3 := e.put("data/blob.bin-x", []byte{0, 1, 2}, "")
	assert.Equal(t, "application/octet-stream", e.record("id:"+up3.FileID, "").ContentType)
	// An empty file is a file.
	up4 := e.put("empty.txt", nil, "text/plain")
	r4 := e.record("id:"+up4.FileID, "")
	assert.Equal(t, int64(0), r4.Size)
	d = e.do("", http.MethodGet, r4.DownloadURL, nil)
	require.Equal(t, http.StatusOK, d.status)
	assert.Empty(t, d.body)
}

func TestNewVersionsByIDAndCaseInsensitivePath(t *testing.T) {
	e := start(t, files.Options{})
	v1 := e.put("Reports/Sim.html", []byte("version one"), "text/html")
	v2 := e.put("id:"+v1.FileID, []byte("version two"), "text/html")
	assert.Equal(t, v1.FileID, v2.FileID)
	v3 := e.put("reports/SIM.HTML", []byte("version three"), "text/html")
	assert.Equal(t, v1.FileID, v3.FileID, "a path differing only in case is the same file")
	ids := []string{v1.VersionID, v2.VersionID, v3.VersionID}
	for i := 1; i < len(ids); i++ {
		a, _ := strconv.ParseInt(ids[i-1], 10, 64)
		b, _ := strconv.ParseInt(ids[i], 10, 64)
		assert.Greater(t, b, a, "version ids strictly increase")
	}

	latest := e.record("REPORTS/sim.html", "include_versions=true")
	assert.Equal(t, v3.VersionID, latest.VersionID)
	assert.Equal(t, "reports/SIM.HTML", latest.Path, "the version's path as uploaded")
	assert.Equal(t, "SIM.HTML", latest.Name)
	require.Len(t, latest.Versions, 3)
	for i, v := range latest.Versions {
		assert.Equal(t, ids[2-i], v.VersionID, "newest first")
		assert.Equal(t, owner, v.CreatedBy)
	}
	d := e.do("", http.MethodGet, latest.DownloadURL, nil)
	assert.Equal(t, "version three", string(d.body))

	// Older versions stay readable and unchanged.
	old := e.record("id:"+v1.FileID, "version_id="+v1.VersionID)
	assert.Equal(t, "Reports/Sim.html", old.Path)
	assert.Equal(t, "version one", string(e.do("", http.MethodGet, old.DownloadURL, nil).body))
	mid := e.record("reports/sim.html", "version_id="+v2.VersionID)
	assert.Equal(t, "version two", string(e.do("", http.MethodGet, mid.DownloadURL, nil).body))
	assert.Equal(t, "Reports/Sim.html", mid.Path, "a version by id keeps the file's path")

	expectProblem(t, e.get(ownerTok, "id:"+v1.FileID, "version_id=123"), 404, files.TypeNotFound)
	expectProblem(t, e.get(ownerTok, "id:"+v1.FileID, "version_id=abc"), 422, files.TypeValidation)
	expectProblem(t, e.get(ownerTok, "id:"+v1.FileID, "version_id=-5"), 422, files.TypeValidation)
	expectProblem(t, e.get(ownerTok, "id:not-a-uuid", ""), 422, files.TypeValidation)
	expectProblem(t, e.get(ownerTok, "id:"+v1.FileID, "include_versions=maybe"), 422, files.TypeValidation)
	expectProblem(t, e.do(ownerTok, http.MethodPut, prefix+"/files/44444444-4444-4444-8444-444444444444", nil), 404, files.TypeNotFound)

	p := e.list("")
	assert.Equal(t, 1, p.Total)
	require.Len(t, p.Files, 1)
	assert.Equal(t, v3.VersionID, p.Files[0].VersionID)
}

func TestList(t *testing.T) {
	e := start(t, files.Options{})
	names := []string{"b.txt", "A.txt", "c/d.txt", "C/a.txt", "e.txt", "f.txt", "g.txt"}
	for i, n := range names {
		e.put(n, []byte(n), "text/plain")
		if i == 0 {
			e.put(n, []byte("again"), "text/plain") // a second version is not a second file
		}
	}
	e.reserve(ownerTok, "never-uploaded.txt") // not listed
	// Ordered by path, case-insensitively.
	want := []string{"A.txt", "b.txt", "C/a.txt", "c/d.txt", "e.txt", "f.txt", "g.txt"}

	all := e.list("")
	assert.Equal(t, 7, all.Total)
	assert.Equal(t, 100, all.Limit, "default limit")
	assert.Equal(t, 0, all.Offset)
	var got []string
	for _, f := range all.Files {
		got = append(got, f.Path)
		assert.NotEmpty(t, f.DownloadURL)
		assert.Empty(t, f.Versions)
	}
	assert.Equal(t, want, got)

	p := e.list("limit=3&offset=2")
	assert.Equal(t, 7, p.Total, "total counts all matches")
	assert.Equal(t, 3, p.Limit)
	assert.Equal(t, 2, p.Offset)
	require.Len(t, p.Files, 3)
	for i, f := range p.Files {
		assert.Equal(t, want[2+i], f.Path)
	}
	p = e.list("limit=5000&offset=6")
	require.Len(t, p.Files, 1)
	assert.Equal(t, "g.txt", p.Files[0].Path)
	p = e.list("offset=50")
	assert.Equal(t, 7, p.Total)
	assert.Empty(t, p.Files)
	assert.Contains(t, string(e.do(ownerTok, http.MethodGet, prefix+"/files?offset=50", nil).body), `"files":[]`)

	for _, q := range []string{"limit=0", "limit=5001", "limit=x", "offset=-1", "offset=1.5"} {
		expectProblem(t, e.do(ownerTok, http.MethodGet, prefix+"/files?"+q, nil), 422, files.TypeValidation)
	}
	// Another workspace is empty.
	r := e.do(ownerTok, http.MethodGet, "/file/v2/orgs/"+org+"/workspaces/"+otherWS+"/files", nil)
	require.Equal(t, http.StatusOK, r.status)
	var empty files.Page
	r.json(t, &empty)
	assert.Equal(t, 0, empty.Total)
}

func TestSoftDelete(t *testing.T) {
	e := start(t, files.Options{})
	a := e.put("keep/a.txt", []byte("a"), "")
	b := e.put("drop/b.txt", []byte("b"), "")
	c := e.put("drop/c.txt", []byte("c"), "")
	bRec := e.record("id:"+b.FileID, "")

	r := e.do(editTok, http.MethodDelete, prefix+"/files/path/DROP/B.TXT", nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	assert.Empty(t, r.body)
	r = e.do(editTok, http.MethodDelete, prefix+"/files/"+c.FileID, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)

	for _, target := range []string{"drop/b.txt", "id:" + b.FileID, "drop/c.txt", "id:" + c.FileID} {
		expectProblem(t, e.get(ownerTok, target, ""), 404, files.TypeNotFound)
	}
	expectProblem(t, e.get(ownerTok, "id:"+b.FileID, "version_id="+b.VersionID), 404, files.TypeNotFound)
	// A download URL issued before the delete no longer works.
	expectProblem(t, e.do("", http.MethodGet, bRec.DownloadURL, nil), 404, files.TypeNotFound)
	// Deleting again, or a new version by id, is 404.
	expectProblem(t, e.do(editTok, http.MethodDelete, prefix+"/files/path/drop/b.txt", nil), 404, files.TypeNotFound)
	expectProblem(t, e.do(editTok, http.MethodDelete, prefix+"/files/"+b.FileID, nil), 404, files.TypeNotFound)
	expectProblem(t, e.do(editTok, http.MethodPut, prefix+"/files/"+b.FileID, nil), 404, files.TypeNotFound)

	p := e.list("")
	assert.Equal(t, 1, p.Total)
	require.Len(t, p.Files, 1)
	assert.Equal(t, a.FileID, p.Files[0].ID)

	// The path is free again: a new upload creates a new file.
	n := e.put("drop/b.txt", []byte("new b"), "")
	assert.NotEqual(t, b.FileID, n.FileID)
	assert.Equal(t, 2, e.list("").Total)

	// A reservation of a file deleted before its upload cannot be used.
	up := e.reserve(ownerTok, "id:"+a.FileID)
	require.Equal(t, http.StatusNoContent, e.do(ownerTok, http.MethodDelete, prefix+"/files/"+a.FileID, nil).status)
	expectProblem(t, e.do("", http.MethodPut, up.UploadURL, []byte("late")), 404, files.TypeNotFound)
}

func TestInvalidPaths(t *testing.T) {
	e := start(t, files.Options{})
	preview := []string{"API-Preview", "other-flag, " + store.PreviewWhitespaceCheck}
	bad := func(path string, hdr ...string) {
		t.Helper()
		r := e.do(ownerTok, http.MethodPut, prefix+"/files/path/"+path, nil, hdr...)
		expectProblem(t, r, 400, problem.Base+"/file-api/files/invalid-path")
	}
	bad(escape("a/b?.txt"))
	bad(escape(`a\b.txt`))
	bad(escape("a/b|c.txt"))
	bad("a/%01b.txt")
	bad("")   // empty path
	bad("a/") // empty name

	// The name: 255 characters are accepted, 256 are not.
	ok255 := strings.Repeat("n", 251) + ".txt"
	require.Len(t, ok255, 255)
	e.reserve(ownerTok, "dir/"+ok255)
	long := strings.Repeat("n", 252) + ".txt"
	r := e.do(ownerTok, http.MethodPut, prefix+"/files/path/dir/"+long, nil)
	p := expectProblem(t, r, 400, files.TypeInvalidPath)
	assert.Contains(t, p["detail"], "too long")
	// Multi-byte characters count as characters.
	e.reserve(ownerTok, strings.Repeat("é", 255))
	bad(escape(strings.Repeat("é", 256)))

	// Leading or trailing whitespace: only with the preview flag.
	for _, path := range []string{" lead.txt", "trail.txt ", "dir /x.txt", "a/ b/c.txt"} {
		p := expectProblem(t, e.do(ownerTok, http.MethodPut, prefix+"/files/path/"+escape(path), nil, preview...), 400, files.TypeInvalidPath)
		assert.Contains(t, p["detail"], "not permitted")
		e.reserve(ownerTok, path) // accepted without the flag
	}
	// The flag applies to reads and deletes too.
	e.put("  spaced.txt", []byte("x"), "")
	assert.Equal(t, http.StatusOK, e.get(ownerTok, "  spaced.txt", "").status)
	expectProblem(t, e.do(ownerTok, http.MethodGet, prefix+"/files/path/"+escape("  spaced.txt"), nil, preview...), 400, files.TypeInvalidPath)
	expectProblem(t, e.do(ownerTok, http.MethodDelete, prefix+"/files/path/"+escape("  spaced.txt"), nil, preview...), 400, files.TypeInvalidPath)
	// Names need no .json extension (unlike objects), and may be anything
	// else that is valid.
	e.put("notes", []byte("no extension"), "")
	e.put("a.json", []byte("{}"), "")
}

func TestRoles(t *testing.T) {
	e := start(t, files.Options{})
	up := e.put("r.txt", []byte("report"), "")

	// A viewer reads and lists.
	assert.Equal(t, http.StatusOK, e.get(viewTok, "r.txt", "").status)
	assert.Equal(t, http.StatusOK, e.get(viewTok, "id:"+up.FileID, "").status)
	assert.Equal(t, http.StatusOK, e.do(viewTok, http.MethodGet, prefix+"/files", nil).status)
	// ... but does not write.
	for _, req := range []struct{ method, path string }{
		{http.MethodPut, "/files/path/v.txt"},
		{http.MethodPut, "/files/" + up.FileID},
		{http.MethodDelete, "/files/path/r.txt"},
		{http.MethodDelete, "/files/" + up.FileID},
	} {
		p := expectProblem(t, e.do(viewTok, req.method, prefix+req.path, nil), 403, store.TypeInsufficient)
		assert.Equal(t, "viewer", p["your_role"])
		assert.ElementsMatch(t, []any{"owner", "editor"}, p["permitted_roles"])
	}
	// An editor writes.
	e.reserve(editTok, "e.txt")

	// No role in the workspace: 404, for reads and writes.
	other := "/file/v2/orgs/" + org + "/workspaces/" + otherWS
	for _, tok := range []string{viewTok, editTok} {
		expectProblem(t, e.do(tok, http.MethodGet, other+"/files", nil), 404, store.TypeNotFound)
		expectProblem(t, e.do(tok, http.MethodPut, other+"/files/path/x.txt", nil), 404, store.TypeNotFound)
		expectProblem(t, e.do(tok, http.MethodGet, other+"/files/"+up.FileID, nil), 404, store.TypeNotFound)
	}
	// The owner of every workspace finds nothing there: files belong to
	// their workspace.
	expectProblem(t, e.do(ownerTok, http.MethodGet, other+"/files/"+up.FileID, nil), 404, files.TypeNotFound)
	// No or an unknown token: 401.
	expectProblem(t, e.do("", http.MethodGet, prefix+"/files", nil), 401, store.TypeMissingToken)
	expectProblem(t, e.do("nope", http.MethodGet, prefix+"/files/path/r.txt", nil), 401, store.TypeInvalidToken)
	// Not UUIDs: 422.
	expectProblem(t, e.do(ownerTok, http.MethodGet, "/file/v2/orgs/acme/workspaces/"+wsID+"/files", nil), 422, store.TypeValidation)
}

func TestSignedURLs(t *testing.T) {
	e := start(t, files.Options{})
	up := e.reserve(ownerTok, "s.txt")
	sig := problem.BadSignature

	// Tampered upload URLs: another version, another file, a changed
	// expiry, the signature of another operation.
	u, err := url.Parse(up.UploadURL)
	require.NoError(t, err)
	vid, _ := strconv.ParseInt(up.VersionID, 10, 64)
	tamper := func(f func(u *url.URL)) string {
		c := *u
		c.RawQuery = u.RawQuery
		f(&c)
		return c.String()
	}
	for _, bad := range []string{
		tamper(func(c *url.URL) {
			c.Path = strings.Replace(c.Path, up.VersionID, strconv.FormatInt(vid+1, 10), 1)
		}),
		tamper(func(c *url.URL) {
			c.Path = strings.Replace(c.Path, up.FileID, "44444444-4444-4444-8444-444444444444", 1)
		}),
		tamper(func(c *url.URL) { c.Path = strings.Replace(c.Path, wsID, otherWS, 1) }),
		tamper(func(c *url.URL) {
			q := c.Query()
			se, _ := strconv.ParseInt(q.Get("se"), 10, 64)
			q.Set("se", strconv.FormatInt(se+3600, 10))
			c.RawQuery = q.Encode()
		}),
		tamper(func(c *url.URL) {
			q := c.Query()
			s := []byte(q.Get("sig"))
			s[0] ^= 1
			q.Set("sig", string(s))
			c.RawQuery = q.Encode()
		}),
		tamper(func(c *url.URL) {
			q := c.Query()
			q.Set("op", "download")
			c.RawQuery = q.Encode()
		}),
		tamper(func(c *url.URL) { c.RawQuery = "" }),
	} {
		expectProblem(t, e.do("", http.MethodPut, bad, []byte("x")), 403, sig)
	}
	// None of those stored anything.
	expectProblem(t, e.get(ownerTok, "s.txt", ""), 404, files.TypeNotFound)
	// The upload URL is not a download URL.
	expectProblem(t, e.do("", http.MethodGet, up.UploadURL, nil), 403, sig)
	require.Equal(t, http.StatusCreated, e.do("", http.MethodPut, up.UploadURL, []byte("fine")).status)

	rec := e.record("s.txt", "")
	require.Equal(t, http.StatusOK, e.do("", http.MethodGet, rec.DownloadURL, nil).status)
	// A download URL does not upload.
	expectProblem(t, e.do("", http.MethodPut, rec.DownloadURL, []byte("x")), 403, sig)
	// An expired download URL is rejected; so is one for another version.
	rec.Org, rec.Workspace = org, wsID
	expired := e.store.DownloadURL(e.app.URL(), &rec, -2*time.Second)
	p := expectProblem(t, e.do("", http.MethodGet, expired, nil), 403, sig)
	assert.Contains(t, p["detail"], "expired")
	fresh := e.store.DownloadURL(e.app.URL(), &rec, time.Minute)
	assert.Equal(t, "fine", string(e.do("", http.MethodGet, fresh, nil).body))
	other := rec
	other.VersionID = strconv.FormatInt(vid+1, 10)
	forged := strings.Replace(fresh, "/"+rec.VersionID+"?", "/"+other.VersionID+"?", 1)
	expectProblem(t, e.do("", http.MethodGet, forged, nil), 403, sig)
	// A correctly signed URL for a version that does not exist is 404.
	expectProblem(t, e.do("", http.MethodGet, e.store.DownloadURL(e.app.URL(), &other, time.Minute), nil), 404, files.TypeNotFound)
}

func TestUploadTooLargeKeepsNothing(t *testing.T) {
	e := start(t, files.Options{MaxUploadBytes: 1000})
	up := e.reserve(ownerTok, "big.bin")
	expectProblem(t, e.do("", http.MethodPut, up.UploadURL, content(5000, 1)), 413, problem.PayloadTooLarge)
	expectProblem(t, e.get(ownerTok, "big.bin", ""), 404, files.TypeNotFound)
	assert.Equal(t, 0, e.list("").Total)
	// The reservation survives: the same URL takes a body within the limit.
	small := content(1000, 2)
	require.Equal(t, http.StatusCreated, e.do("", http.MethodPut, up.UploadURL, small).status)
	rec := e.record("big.bin", "")
	assert.Equal(t, small, e.do("", http.MethodGet, rec.DownloadURL, nil).body)
	assertNoTempFiles(t, e.dir)
}

func TestGeostatTokenAndRestart(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == server.TokenEnv {
			return "tok"
		}
		return ""
	}
	e := startWith(t, dir, server.Options{Getenv: getenv}, files.Options{URLExpiry: time.Minute})
	body := content(3000, 9)
	up := e.reserve("tok", "persist/p.dat")
	require.Equal(t, http.StatusCreated, e.do("", http.MethodPut, up.UploadURL, body, "Content-Type", "application/x-test").status)
	r := e.do("tok", http.MethodGet, prefix+"/files/"+up.FileID, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var rec files.Record
	r.json(t, &rec)
	assert.Equal(t, server.LocalUser, rec.CreatedBy)
	pending := e.reserve("tok", "persist/pending.dat")
	require.NoError(t, e.app.Stop(t.Context()))

	// A restart over the same directory sees the same files, accepts the
	// reservation and honours URLs signed before.
	e2 := startWith(t, dir, server.Options{Getenv: getenv}, files.Options{})
	rec2, rc, err := e2.store.Get(t.Context(), org, wsID, up.FileID, "", "")
	require.NoError(t, err)
	defer rc.Close()
	assert.Equal(t, rec.ID, rec2.ID)
	assert.Equal(t, rec.VersionID, rec2.VersionID)
	assert.Equal(t, rec.CreatedAt, rec2.CreatedAt)
	assert.Equal(t, "application/x-test", rec2.ContentType)
	old := strings.Replace(rec.DownloadURL, e.app.URL(), e2.app.URL(), 1)
	d := e2.do("", http.MethodGet, old, nil)
	require.Equal(t, http.StatusOK, d.status, "body: %s", d.body)
	assert.Equal(t, body, d.body)
	pu := strings.Replace(pending.UploadURL, e.app.URL(), e2.app.URL(), 1)
	require.Equal(t, http.StatusCreated, e2.do("", http.MethodPut, pu, []byte("later")).status)
	r = e2.do("tok", http.MethodGet, prefix+"/files", nil)
	var p files.Page
	r.json(t, &p)
	assert.Equal(t, 2, p.Total)
}

// assertNoTempFiles checks that no temporary file is left in DATA/files/tmp.
func assertNoTempFiles(t *testing.T, dataDir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dataDir, "files", "tmp"))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// A view URL shows a page inline in a browser, without a token, under a
// policy that lets inline CSS and SVG through and runs no script.
func TestViewURL(t *testing.T) {
	e := start(t, files.Options{})
	page := `<!DOCTYPE html><html><head><style>body{background:#fff}h1{color:#123456}</style></head><body>` +
		`<h1 id="title">Report</h1><svg data-plot="p" width="200" height="100"><rect width="150" height="80" style="fill:#c33"/></svg>` +
		`<script>document.getElementById('title').setAttribute('data-script-ran', 'yes')</script></body></html>`
	up := e.put("reports/view.html", []byte(page), "text/html; charset=utf-8")
	view, err := e.store.ViewURL(e.app.URL(), org, wsID, up.FileID, up.VersionID, time.Minute)
	require.NoError(t, err)

	r := e.do("", http.MethodGet, view, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, page, string(r.body))
	assert.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
	assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
	assert.Equal(t, files.ViewCSP, r.header.Get("Content-Security-Policy"))
	assert.True(t, strings.HasPrefix(r.header.Get("Content-Disposition"), "inline"), r.header.Get("Content-Disposition"))
	csp := files.ViewCSP
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "style-src 'unsafe-inline'")
	assert.NotContains(t, csp, "script-src")

	// The operation is signed: a view URL is not a download URL, nor the
	// reverse; an expired view URL is refused.
	sig := problem.BadSignature
	expectProblem(t, e.do("", http.MethodGet, strings.Replace(view, "op=view", "op=download", 1), nil), 403, sig)
	rec := e.record("reports/view.html", "")
	expectProblem(t, e.do("", http.MethodGet, strings.Replace(rec.DownloadURL, "op=download", "op=view", 1), nil), 403, sig)
	expired, err := e.store.ViewURL(e.app.URL(), org, wsID, up.FileID, up.VersionID, -2*time.Second)
	require.NoError(t, err)
	expectProblem(t, e.do("", http.MethodGet, expired, nil), 403, sig)
	_, err = e.store.ViewURL(e.app.URL(), org, wsID, up.FileID, "v1", time.Minute)
	assert.Error(t, err)

	// In Chromium: the page renders (title and SVG in the DOM), its script
	// does not run.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom, err := browser.Browser(ctx, t, view, "--dump-dom")
	require.NoError(t, err)
	assert.Contains(t, string(dom), `<h1 id="title">Report</h1>`, "%s", dom)
	assert.Contains(t, string(dom), `data-plot="p"`)
	assert.NotContains(t, string(dom), `data-script-ran="yes"`, "the page's script ran")
	// The check can fail: the same page from a file URL runs its script.
	local := filepath.Join(t.TempDir(), "page.html")
	require.NoError(t, os.WriteFile(local, []byte(page), 0o644))
	dom, err = browser.Browser(ctx, t, "file://"+local, "--dump-dom")
	require.NoError(t, err)
	assert.Contains(t, string(dom), `data-script-ran="yes"`)
	colours, err := browser.ScreenshotColours(ctx, t, view, 400, 300)
	require.NoError(t, err)
	assert.Greater(t, colours, 2, "the screenshot shows the page's colours")
}
