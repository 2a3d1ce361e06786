package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readFromWriter is a ResponseWriter whose ReadFrom (the connection's
// sendfile path in net/http) counts its calls.
type readFromWriter struct {
	*httptest.ResponseRecorder
	readFroms int
}

func (w *readFromWriter) ReadFrom(r io.Reader) (int64, error) {
	w.readFroms++
	return io.Copy(w.ResponseRecorder.Body, r)
}

// TestStatusRecorderKeepsReadFrom: a file served with http.ServeContent
// through the server's status recorder reaches the connection's ReadFrom
// (sendfile), instead of being copied through user space by Write.
func TestStatusRecorderKeepsReadFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blob")
	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(i * 31)
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()

	inner := &readFromWriter{ResponseRecorder: httptest.NewRecorder()}
	rec := &statusRecorder{ResponseWriter: inner}
	req := httptest.NewRequest(http.MethodGet, "/blobs/x", nil)
	http.ServeContent(rec, req, "", time.Time{}, f)
	assert.Equal(t, 1, inner.readFroms, "the body goes through the connection's ReadFrom")
	assert.Equal(t, http.StatusOK, rec.status)
	assert.Equal(t, data, inner.Body.Bytes())

	// A writer without ReadFrom still gets the bytes.
	plain := httptest.NewRecorder()
	rec = &statusRecorder{ResponseWriter: plain}
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	http.ServeContent(rec, req, "", time.Time{}, f)
	assert.Equal(t, http.StatusOK, rec.status)
	assert.Equal(t, data, plain.Body.Bytes())
}
