package bmjob

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// modelFiles lists the files under a store's root (a failed update leaves
// none behind, not even temporary ones).
func modelFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	}))
	return out
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
