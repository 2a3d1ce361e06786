package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteCommitRemove(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o755))
	path := filepath.Join(dir, "a", "b", "file.json")
	require.NoError(t, Write(tmp, path, []byte("one"), nil))
	got, _ := os.ReadFile(path)
	assert.Equal(t, "one", string(got))

	// A crash before the rename (the hook sees the old file) keeps the old
	// content; the hook runs after the data is durable.
	require.NoError(t, Write(tmp, path, []byte("two"), func() {
		old, _ := os.ReadFile(path)
		assert.Equal(t, "one", string(old))
	}))
	got, _ = os.ReadFile(path)
	assert.Equal(t, "two", string(got))

	f, err := os.CreateTemp(tmp, "x-*")
	require.NoError(t, err)
	f.WriteString("three")
	require.NoError(t, Commit(f, path))
	got, _ = os.ReadFile(path)
	assert.Equal(t, "three", string(got))
	left, _ := os.ReadDir(tmp)
	assert.Empty(t, left, "no temporary file is left behind")

	require.NoError(t, Remove(path))
	require.NoError(t, Remove(path), "removing a missing file is fine")
	_, err = os.Stat(path)
	assert.True(t, os.IsNotExist(err))

	// A failing write leaves nothing.
	assert.Error(t, Write(filepath.Join(dir, "missing"), path, []byte("x"), nil))
}

// TestWriteback: a file written through a Writeback, across several
// writeback chunks, has background fsyncs and holds every byte once
// committed.
func TestWriteback(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, "wb-*")
	require.NoError(t, err)
	w := &Writeback{F: f}
	var want []byte
	for i := range 5 {
		chunk := bytes.Repeat([]byte{byte('a' + i)}, WritebackChunk/2+1234)
		n, err := w.Write(chunk)
		require.NoError(t, err)
		require.Equal(t, len(chunk), n)
		want = append(want, chunk...)
	}
	require.Equal(t, int64(len(want)), w.n)
	require.Positive(t, w.synced, "writeback started for the first chunks")
	// the first chunk's background fsync ends (bounded wait on its count)
	for i := 0; w.syncs.Load() == 0; i++ {
		require.Less(t, i, 10_000, "no background fsync ended")
		time.Sleep(time.Millisecond)
	}
	path := filepath.Join(dir, "out")
	require.NoError(t, Commit(f, path))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got))
}
