package service_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/internal/urlsign"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rebase moves a signed URL to base (another run of the worker), keeping
// its path and query.
func rebase(t *testing.T, base, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	return strings.TrimRight(base, "/") + p.RequestURI()
}

// splitURL returns a signed URL's path and query.
func splitURL(t *testing.T, u string) (string, url.Values) {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	return p.Path, p.Query()
}

// TestSignedURLs: blob and file content URLs are signed by one signer with
// one key file, DATA/url-signing-key (mode 0600, no second key): a URL
// signed for one operation, path or area is 403 for any other, as are an
// altered signature and an expired URL; after a restart on the same data
// directory, URLs handed out before it still work.
func TestSignedURLs(t *testing.T) {
	dir := t.TempDir()
	s, c, stop := start(t, dir, service.Options{})
	ctx := context.Background()
	anon := &workertest.Client{Base: s.URL()}

	// Two files, and a third reservation not uploaded yet.
	filesPrefix := "/file/v2/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/files"
	reserve := func(name string) files.UploadResponse {
		r := expectStatus(t, c, http.MethodPut, filesPrefix+"/path/"+name, http.StatusOK, "reserve "+name)
		var up files.UploadResponse
		require.NoError(t, r.JSON(&up))
		return up
	}
	upload := func(name, body string) files.Record {
		r, err := anon.Do(ctx, http.MethodPut, reserve(name).UploadURL, []byte(body))
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var rec files.Record
		require.NoError(t, r.JSON(&rec))
		return rec
	}
	a, b := upload("a.txt", "alpha"), upload("b.txt", "beta")
	pending := reserve("c.txt")

	// A blob in an object (its download URL), and the upload URL of a blob
	// not yet stored.
	const content = "some blob bytes"
	_, blobDown := postBlobObject(t, c, "signed.json", content)
	later := []byte("bytes uploaded after the restart")
	laterSum := sha256.Sum256(later)
	laterKey := hex.EncodeToString(laterSum[:])
	body, err := json.Marshal([]store.DataRequest{{Name: laterKey}})
	require.NoError(t, err)
	r, err := c.Do(ctx, http.MethodPut, workertest.WorkspacePrefix(demo.Org, demo.Workspace)+"/data", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var data []store.DataResponse
	require.NoError(t, r.JSON(&data))
	require.Len(t, data, 1)
	require.NotNil(t, data[0].UploadURL)
	blobUp := *data[0].UploadURL

	// One key file.
	keyPath := filepath.Join(dir, urlsign.KeyFile)
	fi, err := os.Stat(keyPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.NoFileExists(t, filepath.Join(dir, "files", "signing-key"))
	keyBytes, err := os.ReadFile(keyPath)
	require.NoError(t, err)

	aPath, aQ := splitURL(t, a.DownloadURL)
	bPath, _ := splitURL(t, b.DownloadURL)
	pendingPath, pendingQ := splitURL(t, pending.UploadURL)
	blobPath, blobQ := splitURL(t, blobDown)
	blobUpPath, blobUpQ := splitURL(t, blobUp)
	withOp := func(q url.Values, op string) string {
		q2 := url.Values{"op": {op}, "se": q["se"], "sig": q["sig"]}
		return q2.Encode()
	}
	tamper := func(q url.Values) string {
		sig := []byte(q.Get("sig"))
		if sig[len(sig)-1] == '0' {
			sig[len(sig)-1] = '1'
		} else {
			sig[len(sig)-1] = '0'
		}
		return url.Values{"op": q["op"], "se": q["se"], "sig": {string(sig)}}.Encode()
	}
	k, err := urlsign.New(keyBytes)
	require.NoError(t, err)

	// A URL the test signs with the key read from disk is accepted: the
	// expired one below fails for its expiry, not for its signature.
	fresh := aPath + "?" + k.Query("download", aPath, time.Now().Add(time.Minute))
	r, err = anon.Do(ctx, http.MethodGet, fresh, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "alpha", string(r.Body))

	for _, tc := range []struct{ name, method, url, detail string }{
		{"a file download URL on another file", http.MethodGet, bPath + "?" + aQ.Encode(), "signature"},
		{"a file download URL as a view URL", http.MethodGet, aPath + "?" + withOp(aQ, "view"), "signature"},
		{"a file download URL for an upload", http.MethodPut, aPath + "?" + aQ.Encode(), "not a signed upload URL"},
		{"a file download URL relabelled upload", http.MethodPut, aPath + "?" + withOp(aQ, "upload"), "signature"},
		{"a file upload URL for a download", http.MethodGet, pendingPath + "?" + withOp(pendingQ, "download"), "signature"},
		{"a blob download URL on a file", http.MethodGet, aPath + "?" + blobQ.Encode(), "signature"},
		{"a file download URL on a blob", http.MethodGet, blobPath + "?" + aQ.Encode(), "signature"},
		{"a blob upload URL for a download", http.MethodGet, blobUpPath + "?" + withOp(blobUpQ, "download"), "signature"},
		{"a blob download URL for an upload", http.MethodPut, blobPath + "?" + withOp(blobQ, "upload"), "signature"},
		{"a blob upload URL on another blob", http.MethodPut, blobPath + "?" + blobUpQ.Encode(), "signature"},
		{"an altered file signature", http.MethodGet, aPath + "?" + tamper(aQ), "signature"},
		{"an altered blob signature", http.MethodGet, blobPath + "?" + tamper(blobQ), "signature"},
		{"an expired file URL", http.MethodGet, aPath + "?" + k.Query("download", aPath, time.Now().Add(-time.Minute)), "expired"},
		{"an expired blob URL", http.MethodGet, blobPath + "?" + k.Query("download", blobPath, time.Now().Add(-time.Minute)), "expired"},
	} {
		r, err := anon.Do(ctx, tc.method, tc.url, []byte("x"))
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, r.Status, "%s: %s", tc.name, r.Body)
		var p problem.Problem
		require.NoError(t, r.JSON(&p), tc.name)
		assert.Equal(t, problem.BadSignature, p.Type, tc.name)
		assert.Contains(t, p.Detail, tc.detail, tc.name)
	}

	// Restart on the same data directory: the key is the same and URLs
	// handed out before still work.
	stop()
	s2, _, _ := start(t, dir, service.Options{})
	anon2 := &workertest.Client{Base: s2.URL()}
	after, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	assert.Equal(t, keyBytes, after, "the key is read, not made again")
	r, err = anon2.Do(ctx, http.MethodGet, rebase(t, s2.URL(), a.DownloadURL), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "alpha", string(r.Body))
	r, err = anon2.Do(ctx, http.MethodGet, rebase(t, s2.URL(), blobDown), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, content, string(r.Body))
	r, err = anon2.Do(ctx, http.MethodPut, rebase(t, s2.URL(), blobUp), later, "x-ms-blob-type", "BlockBlob")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r, err = anon2.Do(ctx, http.MethodPut, rebase(t, s2.URL(), pending.UploadURL), []byte("gamma"))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}

// TestSignedURLsOfBeforeTheUpgrade: a data directory of the version with
// two keys (DATA/url-signing-key for blobs, DATA/files/signing-key for file
// content, each URL form its own) is upgraded at start: one key file is
// left (the files key retired, mode 0600), and URLs in the old forms, signed
// before the upgrade, still work until they expire.
func TestSignedURLsOfBeforeTheUpgrade(t *testing.T) {
	dir := t.TempDir()
	s, c, stop := start(t, dir, service.Options{})
	ctx := context.Background()
	filesPrefix := "/file/v2/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/files"
	r, err := c.Do(ctx, http.MethodPut, filesPrefix+"/path/old.txt", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var up files.UploadResponse
	require.NoError(t, r.JSON(&up))
	r, err = (&workertest.Client{Base: s.URL()}).Do(ctx, http.MethodPut, up.UploadURL, []byte("old"))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	const content = "an old blob"
	sum := sha256.Sum256([]byte(content))
	key := hex.EncodeToString(sum[:])
	blobs := objecttest.NewBlobs()
	blobs.Put(key, []byte(content))
	require.NoError(t, c.UploadBlobs(ctx, demo.Org, demo.Workspace, blobs, 1))
	stop()

	// The data directory as the earlier version left it.
	blobKey, err := os.ReadFile(filepath.Join(dir, urlsign.KeyFile))
	require.NoError(t, err)
	filesKey := []byte("0123456789abcdef0123456789abcdef")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "files", "signing-key"), filesKey, 0o600))
	exp := time.Now().Add(time.Hour).Unix()
	mac := func(k []byte, msg string) string {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(msg))
		return hex.EncodeToString(m.Sum(nil))
	}
	se := strconv.FormatInt(exp, 10)
	fileURL := fmt.Sprintf("/file/v2/content/%s/%s/%s/%s?", demo.Org, demo.Workspace, up.FileID, up.VersionID) +
		url.Values{"op": {"download"}, "se": {se}, "sig": {mac(filesKey, fmt.Sprintf("geostat-files\ndownload\n%s\n%s\n%s\n%s\n%d",
			demo.Org, demo.Workspace, up.FileID, up.VersionID, exp))}}.Encode()
	blobURL := fmt.Sprintf("/blobs/%s/%s/%s?", demo.Org, demo.Workspace, key) +
		url.Values{"op": {"download"}, "se": {se}, "sig": {mac(blobKey, fmt.Sprintf("download\n%s\n%s\n%s\n%d",
			demo.Org, demo.Workspace, key, exp))}}.Encode()

	s2, _, _ := start(t, dir, service.Options{})
	anon := &workertest.Client{Base: s2.URL()}
	r, err = anon.Do(ctx, http.MethodGet, fileURL, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "a file URL of before the upgrade: %s", r.Body)
	assert.Equal(t, "old", string(r.Body))
	r, err = anon.Do(ctx, http.MethodGet, blobURL, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "a blob URL of before the upgrade: %s", r.Body)
	assert.Equal(t, content, string(r.Body))

	assert.NoFileExists(t, filepath.Join(dir, "files", "signing-key"))
	after, err := os.ReadFile(filepath.Join(dir, urlsign.KeyFile))
	require.NoError(t, err)
	assert.Equal(t, blobKey, after, "the existing key stays the key")
	fi, err := os.Stat(filepath.Join(dir, urlsign.RetiredKeyFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}
