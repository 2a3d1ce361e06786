package files

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	tOrg = "11111111-1111-4111-8111-111111111111"
	tWS  = "22222222-2222-4222-8222-222222222222"
)

var tUser = store.User{ID: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "T"}

func TestVersionIDsStrictlyIncreaseWithAFrozenClock(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	frozen := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	s.now = func() time.Time { return frozen }
	ctx := t.Context()
	var prev int64
	for i := range 5 {
		var vid int64
		if i%2 == 0 {
			rec, err := s.Put(ctx, tOrg, tWS, "f.txt", strings.NewReader("x"), "", tUser)
			require.NoError(t, err)
			vid, _ = strconv.ParseInt(rec.VersionID, 10, 64)
			assert.Equal(t, "2025-01-02T03:04:05Z", mustJSONTime(t, rec.CreatedAt), "microsecond UTC, Z")
		} else {
			ref, err := s.reserve(ctx, tOrg, tWS, "", "f.txt", tUser, time.Minute, false)
			require.NoError(t, err)
			vid = ref.version
		}
		if i == 0 {
			assert.Equal(t, frozen.UnixNano(), vid, "the nanosecond timestamp")
		} else {
			assert.Equal(t, prev+1, vid)
		}
		prev = vid
	}
	// After a restart ids continue above every id issued, even with the
	// clock behind.
	s2, err := Open(filepath.Dir(s.root))
	require.NoError(t, err)
	s2.now = func() time.Time { return frozen.Add(-time.Hour) }
	rec, err := s2.Put(ctx, tOrg, tWS, "g.txt", strings.NewReader("y"), "", tUser)
	require.NoError(t, err)
	assert.Equal(t, strconv.FormatInt(prev+1, 10), rec.VersionID)
}

func mustJSONTime(t *testing.T, tm time.Time) string {
	t.Helper()
	b, err := tm.MarshalJSON()
	require.NoError(t, err)
	return strings.Trim(string(b), `"`)
}

func TestUploadURLExpires(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	now := time.Now()
	s.now = func() time.Time { return now }
	ref, err := s.reserve(t.Context(), tOrg, tWS, "", "e.txt", tUser, time.Minute, false)
	require.NoError(t, err)
	u := s.signedURL("http://h", opUpload, ref, time.Minute)
	q := mustQuery(t, u)
	require.NoError(t, s.verify(opUpload, ref, q))
	now = now.Add(61 * time.Second)
	err = s.verify(opUpload, ref, q)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expired")
	assert.Equal(t, http.StatusForbidden, err.(*Error).Status)
}

func mustQuery(t *testing.T, u string) map[string][]string {
	t.Helper()
	i := strings.IndexByte(u, '?')
	require.Positive(t, i)
	q := map[string][]string{}
	for _, kv := range strings.Split(u[i+1:], "&") {
		k, v, _ := strings.Cut(kv, "=")
		q[k] = []string{v}
	}
	return q
}

func TestSigningKey(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(dir, SigningKeyFile))
	require.NoError(t, err, "the one key sits in the data directory")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.NoFileExists(t, filepath.Join(dir, "files", "signing-key"), "no second key file")
	ref := versionRef{org: tOrg, ws: tWS, file: "0b5e4a52-4c58-4e8c-9a0e-6f1f2b3c4d5e", version: 7}
	q := mustQuery(t, s.signedURL("http://h", opDownload, ref, time.Minute))
	s2, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, s2.verify(opDownload, ref, q), "the key survives a restart")
	s3, err := Open(t.TempDir())
	require.NoError(t, err)
	assert.Error(t, s3.verify(opDownload, ref, q), "another data directory has another key")
}

func TestConcurrentUploadsOfOneVersionStoreOnce(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	ref, err := s.reserve(t.Context(), tOrg, tWS, "", "c.txt", tUser, time.Minute, false)
	require.NoError(t, err)
	const n = 8
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.upload(context.Background(), ref, strings.NewReader("body "+strconv.Itoa(i)), "")
			if err == nil {
				statuses[i] = http.StatusCreated
				return
			}
			statuses[i] = err.(*Error).Status
		})
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		if st == http.StatusCreated {
			created++
		} else {
			assert.Equal(t, http.StatusConflict, st)
		}
	}
	assert.Equal(t, 1, created)
	rec, rc, err := s.Get(t.Context(), tOrg, tWS, "", "c.txt", "")
	require.NoError(t, err)
	defer rc.Close()
	assert.Len(t, rec.Versions, 1)
	entries, err := os.ReadDir(s.tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the losers' temporary files are removed")
}

// TestOpenRecoversFromInterruptedWrites simulates crashes at each step of a
// version's commit and checks that a restart sees whole versions only.
func TestOpenRecoversFromInterruptedWrites(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	ctx := t.Context()
	rec, err := s.Put(ctx, tOrg, tWS, "done.txt", strings.NewReader("done"), "", tUser)
	require.NoError(t, err)

	// Crash after the content was renamed into place, before the record:
	// the reservation stays, the content goes.
	ref, err := s.reserve(ctx, tOrg, tWS, "", "half.txt", tUser, time.Hour, false)
	require.NoError(t, err)
	halfDir := filepath.Join(s.root, "data", tOrg, tWS, ref.file)
	require.NoError(t, os.WriteFile(filepath.Join(halfDir, contentName(ref.version)), []byte("half"), 0o644))
	// A crash after the record, before the reservation was removed.
	ref2, err := s.reserve(ctx, tOrg, tWS, rec.ID, "", tUser, time.Hour, false)
	require.NoError(t, err)
	doneDir := filepath.Join(s.root, "data", tOrg, tWS, rec.ID)
	require.NoError(t, os.WriteFile(filepath.Join(doneDir, contentName(ref2.version)), []byte("v2"), 0o644))
	m := &versionMeta{FileID: rec.ID, VersionID: strconv.FormatInt(ref2.version, 10), Path: "done.txt", CreatedAt: time.Now().UTC(), CreatedBy: tUser, Size: 2, ContentType: "text/plain"}
	require.NoError(t, writeJSONForTest(filepath.Join(doneDir, versionName(ref2.version)), m))
	// An expired reservation of a file that never got content.
	old := time.Now().Add(-2 * time.Hour)
	s.now = func() time.Time { return old }
	ref3, err := s.reserve(ctx, tOrg, tWS, "", "abandoned.txt", tUser, time.Minute, false)
	require.NoError(t, err)
	// A temporary file of an interrupted spool.
	require.NoError(t, os.WriteFile(filepath.Join(s.tmp, "content-123"), []byte("partial"), 0o644))

	s2, err := Open(dir)
	require.NoError(t, err)
	// The whole versions are there.
	got, rc, err := s2.Get(ctx, tOrg, tWS, "", "done.txt", "")
	require.NoError(t, err)
	rc.Close()
	assert.Equal(t, strconv.FormatInt(ref2.version, 10), got.VersionID)
	assert.NoFileExists(t, filepath.Join(doneDir, pendingName(ref2.version)), "a superseded reservation is removed")
	// The half-written version is not, but its reservation can still be
	// uploaded.
	_, _, err = s2.Get(ctx, tOrg, tWS, "", "half.txt", "")
	assert.True(t, IsNotFound(err))
	assert.NoFileExists(t, filepath.Join(halfDir, contentName(ref.version)))
	_, err = s2.upload(ctx, ref, strings.NewReader("whole"), "")
	require.NoError(t, err)
	_, rc, err = s2.Get(ctx, tOrg, tWS, "", "half.txt", "")
	require.NoError(t, err)
	defer rc.Close()
	// The abandoned file is gone, and so is the temporary file.
	assert.NoDirExists(t, filepath.Join(s.root, "data", tOrg, tWS, ref3.file))
	entries, err := os.ReadDir(s2.tmp)
	require.NoError(t, err)
	assert.Empty(t, entries)
	page, err := s2.List(ctx, tOrg, tWS, 10, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
}

func writeJSONForTest(path string, v *versionMeta) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
