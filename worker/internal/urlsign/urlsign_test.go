package urlsign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func query(t *testing.T, s *Signer, op, path string, exp time.Time) url.Values {
	t.Helper()
	q, err := url.ParseQuery(s.Query(op, path, exp))
	require.NoError(t, err)
	return q
}

func TestVerify(t *testing.T) {
	s, err := Load(t.TempDir(), time.Now())
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	const blob = "/blobs/o/w/abc"
	q := query(t, s, "upload", blob, now.Add(time.Minute))
	require.NoError(t, s.Verify("upload", blob, q, now, nil))
	require.NoError(t, s.Verify("upload", blob, q, now.Add(time.Minute), nil), "valid up to its expiry second")

	assert.ErrorIs(t, s.Verify("download", blob, q, now, nil), ErrWrongOp, "an upload URL is not a download URL")
	q2 := url.Values{"op": {"download"}, "se": q["se"], "sig": q["sig"]}
	assert.ErrorIs(t, s.Verify("download", blob, q2, now, nil), ErrBadSignature, "the op is signed")
	assert.ErrorIs(t, s.Verify("upload", "/blobs/o/w/abd", q, now, nil), ErrBadSignature, "another path")
	assert.ErrorIs(t, s.Verify("upload", "/file/v2/content/o/w/abc", q, now, nil), ErrBadSignature, "another area")

	later := url.Values{"op": q["op"], "se": {fmt.Sprint(now.Add(time.Hour).Unix())}, "sig": q["sig"]}
	assert.ErrorIs(t, s.Verify("upload", blob, later, now, nil), ErrBadSignature, "the expiry is signed")
	tampered := url.Values{"op": q["op"], "se": q["se"], "sig": {"0" + q.Get("sig")[1:]}}
	if q.Get("sig")[0] == '0' {
		tampered.Set("sig", "1"+q.Get("sig")[1:])
	}
	assert.ErrorIs(t, s.Verify("upload", blob, tampered, now, nil), ErrBadSignature)
	assert.ErrorIs(t, s.Verify("upload", blob, url.Values{"op": q["op"], "se": q["se"]}, now, nil), ErrBadSignature)
	assert.ErrorIs(t, s.Verify("upload", blob, url.Values{"op": q["op"], "se": {"soon"}, "sig": q["sig"]}, now, nil), ErrNoExpiry)

	assert.ErrorIs(t, s.Verify("upload", blob, q, now.Add(time.Minute+time.Second), nil), ErrExpired)
	expiredTampered := url.Values{"op": q["op"], "se": q["se"], "sig": tampered["sig"]}
	assert.ErrorIs(t, s.Verify("upload", blob, expiredTampered, now.Add(time.Hour), nil), ErrBadSignature,
		"the signature is checked before the expiry")

	other, err := Load(t.TempDir(), time.Now())
	require.NoError(t, err)
	assert.ErrorIs(t, other.Verify("upload", blob, q, now, nil), ErrBadSignature, "another key")
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(dir, time.Now())
	require.NoError(t, err)
	path := filepath.Join(dir, KeyFile)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, int64(keyLen), fi.Size())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	exp := time.Now().Add(time.Hour)
	q := query(t, s, "view", "/p", exp)
	s2, err := Load(dir, time.Now())
	require.NoError(t, err)
	require.NoError(t, s2.Verify("view", "/p", q, time.Now(), nil), "the key is read again at the next start")

	// A temporary file a crash left is removed.
	stale := filepath.Join(dir, ".url-signing-key-123")
	require.NoError(t, os.WriteFile(stale, []byte("partial"), 0o600))
	_, err = Load(dir, time.Now())
	require.NoError(t, err)
	assert.NoFileExists(t, stale)

	// A key torn by the earlier non-atomic writer is replaced, not used.
	torn := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(torn, KeyFile), []byte("short"), 0o600))
	_, err = Load(torn, time.Now())
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(torn, KeyFile))
	require.NoError(t, err)
	assert.Len(t, data, keyLen)
}

func TestCreateKeepsAConcurrentKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFile)
	first := make([]byte, keyLen)
	first[0] = 1
	require.NoError(t, os.WriteFile(path, first, 0o600))
	got, err := create(dir, path, make([]byte, keyLen))
	require.NoError(t, err)
	assert.Equal(t, first, got, "a key another start created first wins")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, first, data)
}

func legacyMAC(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// TestUpgrade starts from a data directory of the two earlier schemes: a
// blob key and a file content key, and URLs each signed in its own form.
func TestUpgrade(t *testing.T) {
	dir := t.TempDir()
	blobKey, filesKey := make([]byte, keyLen), make([]byte, keyLen)
	for i := range blobKey {
		blobKey[i], filesKey[i] = byte(i), byte(100+i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, KeyFile), blobKey, 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "files"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, legacyFilesKey), filesKey, 0o600))

	upgrade := time.Now()
	exp := upgrade.Add(time.Hour).Unix()
	blobMsg := func(e int64) string { return fmt.Sprintf("download\no\nw\nabc\n%d", e) }
	fileMsg := func(e int64) string { return fmt.Sprintf("geostat-files\nview\no\nw\nf\n3\n%d", e) }
	oldBlob := url.Values{"op": {"download"}, "se": {fmt.Sprint(exp)}, "sig": {legacyMAC(blobKey, blobMsg(exp))}}
	oldFile := url.Values{"op": {"view"}, "se": {fmt.Sprint(exp)}, "sig": {legacyMAC(filesKey, fileMsg(exp))}}

	s, err := Load(dir, upgrade)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(dir, legacyFilesKey), "one key file after the upgrade")
	data, err := os.ReadFile(filepath.Join(dir, KeyFile))
	require.NoError(t, err)
	assert.Equal(t, blobKey, data, "the existing key is kept")
	fi, err := os.Stat(filepath.Join(dir, RetiredKeyFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	now := upgrade.Add(10 * time.Minute)
	require.NoError(t, s.Verify("download", "/blobs/o/w/abc", oldBlob, now, blobMsg), "a blob URL of before the upgrade")
	require.NoError(t, s.Verify("view", "/file/v2/content/o/w/f/3", oldFile, now, fileMsg), "a file URL of before the upgrade")
	assert.ErrorIs(t, s.Verify("download", "/blobs/o/w/abc", oldBlob, now, nil), ErrBadSignature, "only where the old form is given")
	assert.ErrorIs(t, s.Verify("view", "/file/v2/content/o/w/f/3", oldFile, now, blobMsg), ErrBadSignature, "the old forms stay apart")
	assert.ErrorIs(t, s.Verify("download", "/blobs/o/w/abc", oldBlob, upgrade.Add(2*time.Hour), blobMsg), ErrExpired)

	// A restart within the window still has the retired key.
	s2, err := Load(dir, now)
	require.NoError(t, err)
	require.NoError(t, s2.Verify("view", "/file/v2/content/o/w/f/3", oldFile, now, fileMsg))

	// A URL in the old form expiring after the window is refused.
	far := upgrade.Add(2 * LegacyWindow).Unix()
	farFile := url.Values{"op": {"view"}, "se": {fmt.Sprint(far)}, "sig": {legacyMAC(filesKey, fileMsg(far))}}
	assert.ErrorIs(t, s2.Verify("view", "/file/v2/content/o/w/f/3", farFile, now, fileMsg), ErrBadSignature)

	// The first start after the window removes the retired key.
	s3, err := Load(dir, upgrade.Add(LegacyWindow+time.Minute))
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(dir, RetiredKeyFile))
	assert.ErrorIs(t, s3.Verify("view", "/file/v2/content/o/w/f/3", oldFile, now, fileMsg), ErrBadSignature)
}

// TestUpgradeFromFilesKeyOnly: a data directory with only the file content
// key gets its one key from it.
func TestUpgradeFromFilesKeyOnly(t *testing.T) {
	dir := t.TempDir()
	filesKey := make([]byte, keyLen)
	filesKey[3] = 7
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "files"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, legacyFilesKey), filesKey, 0o600))
	s, err := Load(dir, time.Now())
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, KeyFile))
	require.NoError(t, err)
	assert.Equal(t, filesKey, data)
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	k, err := New(filesKey)
	require.NoError(t, err)
	exp := time.Now().Add(time.Minute)
	require.NoError(t, s.Verify("upload", "/x", query(t, k, "upload", "/x", exp), time.Now(), nil))
}
