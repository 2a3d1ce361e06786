package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

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
