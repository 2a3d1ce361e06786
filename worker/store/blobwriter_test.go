package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
)

// readBlob returns a stored blob's bytes.
func readBlob(t *testing.T, s *Embedded, name string) []byte {
	t.Helper()
	f, err := s.OpenBlob(ctx, testWS, nil, name)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, f.Size())
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	return b
}

func tmpEntries(t *testing.T, s *Embedded) []os.DirEntry {
	t.Helper()
	e, err := os.ReadDir(filepath.Join(s.Dir(), "tmp"))
	require.NoError(t, err)
	return e
}

// TestBlobWriter: a blob written through CreateBlob is invisible until
// Commit, dropped by Abort, and a blob left uncommitted (the worker
// stopped) is gone when the store opens again.
func TestBlobWriter(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	const name = "0c6e5a4e-8d7b-4f3a-9c2d-1e0f9a8b7c6d"
	data := bytes.Repeat([]byte("query output "), 100_000)

	w, err := s.CreateBlob(testWS, name)
	require.NoError(t, err)
	_, err = w.Write(data[:1000])
	require.NoError(t, err)
	_, err = w.ReadFrom(bytes.NewReader(data[1000:]))
	require.NoError(t, err)
	ok, err := s.BlobExists(ctx, testWS, name)
	require.NoError(t, err)
	assert.False(t, ok, "nothing visible before Commit")
	require.NoError(t, w.Commit())
	w.Abort() // after Commit: nothing to do
	assert.Equal(t, data, readBlob(t, s, name))
	assert.Empty(t, tmpEntries(t, s), "the temporary file became the blob")
	_, err = w.Write([]byte("more"))
	assert.Error(t, err, "a committed blob takes no more bytes")
	assert.Error(t, w.Commit(), "a second Commit is refused")

	// Abort drops the bytes.
	const other = "1c6e5a4e-8d7b-4f3a-9c2d-1e0f9a8b7c6d"
	w, err = s.CreateBlob(testWS, other)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	w.Abort()
	assert.Error(t, w.Commit())
	ok, _ = s.BlobExists(ctx, testWS, other)
	assert.False(t, ok)
	assert.Empty(t, tmpEntries(t, s))

	// Written, never committed (the worker stopped): not a blob after the
	// store opens again, and no temporary file is left.
	w, err = s.CreateBlob(testWS, other)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	s2 := openTest(t, dir)
	ok, _ = s2.BlobExists(ctx, testWS, other)
	assert.False(t, ok)
	assert.Empty(t, tmpEntries(t, s2))
	assert.Equal(t, data, readBlob(t, s2, name))

	_, err = s.CreateBlob(testWS, "not-a-key")
	requireErr(t, err, http.StatusBadRequest, TypeInvalidKey)
}

// TestBlobImmutableSameSize: other bytes of the same size under an
// existing UUID name are a conflict (409) and the first bytes stay; the
// same bytes again are a no-op. The names are not hashed, so the bytes are
// compared (a difference in the last byte of a blob of several buffers).
func TestBlobImmutableSameSize(t *testing.T) {
	s := openTest(t, t.TempDir())
	const name = "2c6e5a4e-8d7b-4f3a-9c2d-1e0f9a8b7c6d"
	first := make([]byte, 700_000)
	for i := range first {
		first[i] = byte(i * 7)
	}
	second := bytes.Clone(first)
	second[len(second)-1]++
	require.NoError(t, s.PutBlob(ctx, testWS, name, bytes.NewReader(first)))
	err := s.PutBlob(ctx, testWS, name, bytes.NewReader(second))
	requireErr(t, err, http.StatusConflict, TypeBlobExists)
	w, err := s.CreateBlob(testWS, name)
	require.NoError(t, err)
	_, err = w.Write(second)
	require.NoError(t, err)
	requireErr(t, w.Commit(), http.StatusConflict, TypeBlobExists)
	require.NoError(t, s.PutBlob(ctx, testWS, name, bytes.NewReader(first)), "the same bytes again")
	assert.Equal(t, first, readBlob(t, s, name))
	assert.Empty(t, tmpEntries(t, s))

	// A SHA-256 name is still checked against the bytes' digest.
	sum := sha256.Sum256(first)
	key := hex.EncodeToString(sum[:])
	w, err = s.CreateBlob(testWS, key)
	require.NoError(t, err)
	_, err = w.Write(second)
	require.NoError(t, err)
	requireErr(t, w.Commit(), http.StatusBadRequest, TypeBadRequest)
	ok, _ := s.BlobExists(ctx, testWS, key)
	assert.False(t, ok)
	assert.Empty(t, tmpEntries(t, s))
}

// TestBlobWriterLarge: a blob of several writeback chunks (their writeback
// started while the rest is written) is stored whole.
func TestBlobWriterLarge(t *testing.T) {
	s := openTest(t, t.TempDir())
	const name = "3c6e5a4e-8d7b-4f3a-9c2d-1e0f9a8b7c6d"
	data := make([]byte, 2*atomicfile.WritebackChunk+12345)
	for i := range data {
		data[i] = byte(i*13 + i>>16)
	}
	w, err := s.CreateBlob(testWS, name)
	require.NoError(t, err)
	defer w.Abort()
	for off := 0; off < len(data); off += 1 << 20 {
		_, err := w.Write(data[off:min(len(data), off+1<<20)])
		require.NoError(t, err)
	}
	require.NoError(t, w.Commit())
	assert.Equal(t, data, readBlob(t, s, name))
}

// TestBlobWriterFailedWrite: after a write failed, Commit refuses the
// blob (it would miss bytes) and nothing is kept.
func TestBlobWriterFailedWrite(t *testing.T) {
	s := openTest(t, t.TempDir())
	const name = "4c6e5a4e-8d7b-4f3a-9c2d-1e0f9a8b7c6d"
	w, err := s.CreateBlob(testWS, name)
	require.NoError(t, err)
	_, err = w.Write([]byte("first part"))
	require.NoError(t, err)
	require.NoError(t, w.f.Close()) // the next write fails
	_, err = w.Write([]byte("lost part"))
	require.Error(t, err)
	require.Error(t, w.Commit())
	ok, _ := s.BlobExists(ctx, testWS, name)
	assert.False(t, ok)
	assert.Empty(t, tmpEntries(t, s))
}

// A private blob is stored and read like any blob, but no object version
// may reference it, and only it can be deleted.
func TestPrivateBlob(t *testing.T) {
	s := openTest(t, t.TempDir())
	doc, _ := pointsetDoc(t, s)
	const name = "3f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a09"
	require.NoError(t, s.ReserveBlob(testWS, name))
	require.NoError(t, s.ReserveBlob(testWS, name), "reserving again is harmless")
	data := []byte("an uploaded file")
	require.NoError(t, s.PutBlob(ctx, testWS, name, bytes.NewReader(data)))
	f, err := s.OpenBlob(ctx, testWS, nil, name)
	require.NoError(t, err)
	got := make([]byte, len(data))
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	f.Close()
	assert.Equal(t, data, got)

	// An object referencing it: its key is not found.
	doc["locations"].(map[string]any)["coordinates"].(map[string]any)["data"] = name
	_, err = s.PutObject(ctx, testWS, PutRequest{Path: "p.json", Object: objecttest.JSON(doc), By: alice})
	requireErr(t, err, http.StatusBadRequest, TypeDataKeyNotFound)

	// A stored blob cannot become private; a SHA-256 name cannot be.
	_, b := pointsetDoc(t, s)
	shared := b.Keys()[0]
	requireErr(t, s.ReserveBlob(testWS, shared), http.StatusBadRequest, TypeBadRequest)
	const public = "3f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a0a"
	require.NoError(t, s.PutBlob(ctx, testWS, public, bytes.NewReader(data)))
	requireErr(t, s.ReserveBlob(testWS, public), http.StatusConflict, TypeBlobExists)
	requireErr(t, s.DeletePrivateBlob(testWS, public), http.StatusConflict, TypeBlobExists)
	requireErr(t, s.DeletePrivateBlob(testWS, shared), http.StatusConflict, TypeBlobExists)
	ok, err := s.BlobExists(ctx, testWS, public)
	require.NoError(t, err)
	assert.True(t, ok, "a blob that is not private is kept")

	require.NoError(t, s.DeletePrivateBlob(testWS, name))
	ok, err = s.BlobExists(ctx, testWS, name)
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, s.DeletePrivateBlob(testWS, name), "deleted already")
	// A reserved name never stored: only its mark goes.
	const never = "3f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a0b"
	require.NoError(t, s.ReserveBlob(testWS, never))
	require.NoError(t, s.DeletePrivateBlob(testWS, never))
}
