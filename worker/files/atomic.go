package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to path so that readers (and a restart after a
// crash) see the old state or the complete new file: temporary file in
// tmpDir (same file system), fsync, rename, directory fsync.
func writeFileAtomic(tmpDir, path string, data []byte) error {
	f, err := os.CreateTemp(tmpDir, "write-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	return commitTemp(f, path)
}

// commitTemp fsyncs, closes and renames a written temporary file to path,
// then fsyncs path's directory. On failure the temporary file is removed.
func commitTemp(f *os.File, path string) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir fsyncs a directory so renames and removals in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// spooled is content written to a temporary file, fsynced and closed, ready
// to be renamed into place.
type spooled struct {
	path   string
	size   int64
	sha256 string
}

// spool copies r into a new temporary file in tmpDir, hashing it, and
// fsyncs it. The copy stops with ctx's error when ctx ends. On error nothing
// is left behind.
func spool(ctx context.Context, tmpDir string, r io.Reader) (*spooled, error) {
	f, err := os.CreateTemp(tmpDir, "content-*")
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return &spooled{path: f.Name(), size: n, sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

// ctxReader fails reads once its context has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
