package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"

	"github.com/geostat-engine/geostat/worker/problem"
)

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

// spoolStep names a failed spool: write when the disk is full, else
// reading the content (the request body).
func spoolStep(write string, err error) string {
	if problem.NoSpace(err) {
		return write
	}
	return "reading the content"
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
