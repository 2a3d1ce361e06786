package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
)

// MaxBlocks is the largest number of blocks in one block-list upload (Azure's
// limit).
const MaxBlocks = 50000

// NormaliseBlobName lowercases a blob name and checks it is a SHA-256 digest
// or a UUID (400 Data Key Not Valid otherwise).
func NormaliseBlobName(name string) (string, error) {
	if !objects.IsDataKey(name) {
		return "", ErrInvalidKey([]string{name})
	}
	return strings.ToLower(name), nil
}

// ErrDigestMismatch reports uploaded bytes whose SHA-256 differs from the
// blob's name; nothing is kept.
func ErrDigestMismatch(name, got string) *Error {
	e := ErrBadRequest(fmt.Sprintf("the uploaded bytes hash to %s, not to the blob name %s; nothing was stored", got, name))
	return with(with(e, "expected", name), "actual", got)
}

// ErrBlobExists reports different bytes uploaded under the name of an
// existing blob: blobs are immutable (409); nothing was stored.
func ErrBlobExists(name string) *Error {
	return with(NewError(http.StatusConflict, TypeBlobExists, "Blob Already Exists.",
		fmt.Sprintf("blob %s already exists with other content; blobs are immutable, upload under a new name", name)), "name", name)
}

// fileDigest returns the SHA-256 hex digest of a file's content.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (s *Embedded) blobPath(ws Workspace, name string) string {
	return filepath.Join(s.dir, "blobs", ws.Org, ws.ID, name[:2], name)
}

// BlobExists implements Store.
func (s *Embedded) BlobExists(ctx context.Context, ws Workspace, name string) (bool, error) {
	if err := checkWorkspace(ws); err != nil {
		return false, err
	}
	name, err := NormaliseBlobName(name)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(s.blobPath(normWorkspace(ws), name))
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, ErrStorage(err)
	}
	return true, nil
}

// PutBlob implements Store: the bytes are written to a temporary file while
// being hashed; for a SHA-256 name they must hash to it (otherwise nothing is
// kept); then the file is fsynced and renamed into place. Storing an existing
// blob again is a no-op.
func (s *Embedded) PutBlob(ctx context.Context, ws Workspace, name string, r io.Reader) error {
	if err := checkWorkspace(ws); err != nil {
		return err
	}
	ws = normWorkspace(ws)
	name, err := NormaliseBlobName(name)
	if err != nil {
		return err
	}
	f, h, err := s.tempBlob()
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := io.Copy(io.MultiWriter(f, h), r); err != nil {
		f.Close()
		if problem.NoSpace(err) {
			return ErrInsufficientStorage("blob upload", err)
		}
		return err
	}
	return s.commitBlob(ws, name, f, h)
}

func (s *Embedded) tempBlob() (*os.File, hash.Hash, error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "blob-*")
	if err != nil {
		return nil, nil, writeError("blob upload", err)
	}
	return f, sha256.New(), nil
}

// commitBlob checks the digest of a fully written temporary file and renames
// it into place.
func (s *Embedded) commitBlob(ws Workspace, name string, f *os.File, h hash.Hash) error {
	got := hex.EncodeToString(h.Sum(nil))
	if objects.IsSHA256Key(name) && got != name {
		f.Close()
		return ErrDigestMismatch(name, got)
	}
	dst := s.blobPath(ws, name)
	s.blobMu.Lock()
	defer s.blobMu.Unlock()
	if _, err := os.Stat(dst); err == nil {
		f.Close()
		// Blobs are immutable: the same bytes again are a no-op, different
		// bytes under an existing (UUID) name a conflict.
		if objects.IsSHA256Key(name) {
			return nil
		}
		have, err := fileDigest(dst)
		if err != nil {
			return ErrStorage(err)
		}
		if have != got {
			return ErrBlobExists(name)
		}
		return nil
	}
	if s.hook != nil {
		s.hook("blob-written")
	}
	if err := atomicfile.Commit(f, dst); err != nil {
		return writeError("blob upload", err)
	}
	return nil
}

// OpenBlob implements Store. v may be nil.
func (s *Embedded) OpenBlob(ctx context.Context, ws Workspace, v *Version, name string) (objects.BlobFile, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	name, err := NormaliseBlobName(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(s.blobPath(normWorkspace(ws), name))
	if os.IsNotExist(err) {
		return nil, NewError(http.StatusNotFound, TypeDataKeyNotFound, "Data Key Not Found.", fmt.Sprintf("blob %s does not exist", name))
	}
	if err != nil {
		return nil, ErrStorage(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, ErrStorage(err)
	}
	return &blobFile{File: f, size: st.Size()}, nil
}

type blobFile struct {
	*os.File
	size int64
}

func (b *blobFile) Size() int64 { return b.size }

// BlobPath returns the file of a stored blob (for HTTP range serving).
func (s *Embedded) BlobPath(ws Workspace, name string) (string, error) {
	if err := checkWorkspace(ws); err != nil {
		return "", err
	}
	name, err := NormaliseBlobName(name)
	if err != nil {
		return "", err
	}
	return s.blobPath(normWorkspace(ws), name), nil
}

func (s *Embedded) stagingDir(ws Workspace, name string) string {
	return filepath.Join(s.dir, "staging", ws.Org, ws.ID, name)
}

// StageBlock stores one block of a block upload (the Azure "Put Block"
// operation). Block ids are opaque bytes (the decoded base64 id); staging the
// same id again replaces the block.
func (s *Embedded) StageBlock(ctx context.Context, ws Workspace, name string, blockID []byte, r io.Reader) error {
	if err := checkWorkspace(ws); err != nil {
		return err
	}
	ws = normWorkspace(ws)
	name, err := NormaliseBlobName(name)
	if err != nil {
		return err
	}
	if len(blockID) == 0 || len(blockID) > 64 {
		return ErrBadRequest("block ids must be 1 to 64 bytes")
	}
	dir := s.stagingDir(ws, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return writeError("block upload", err)
	}
	if n, err := os.ReadDir(dir); err == nil && len(n) >= MaxBlocks {
		return ErrBadRequest(fmt.Sprintf("more than %d blocks", MaxBlocks))
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "block-*")
	if err != nil {
		return writeError("block upload", err)
	}
	defer os.Remove(f.Name())
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		if problem.NoSpace(err) {
			return ErrInsufficientStorage("block upload", err)
		}
		return err
	}
	if err := atomicfile.Commit(f, filepath.Join(dir, hex.EncodeToString(blockID))); err != nil {
		return writeError("block upload", err)
	}
	return nil
}

// CommitBlocks assembles staged blocks in the given order into the blob (the
// Azure "Put Block List" operation), checks the digest and stores it. The
// staged blocks are removed whether or not the digest matches, so a failed
// upload keeps nothing.
func (s *Embedded) CommitBlocks(ctx context.Context, ws Workspace, name string, blockIDs [][]byte) error {
	if err := checkWorkspace(ws); err != nil {
		return err
	}
	ws = normWorkspace(ws)
	name, err := NormaliseBlobName(name)
	if err != nil {
		return err
	}
	if len(blockIDs) > MaxBlocks {
		return ErrBadRequest(fmt.Sprintf("more than %d blocks", MaxBlocks))
	}
	dir := s.stagingDir(ws, name)
	defer os.RemoveAll(dir)
	f, h, err := s.tempBlob()
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := io.MultiWriter(f, h)
	for _, id := range blockIDs {
		if len(id) == 0 || len(id) > 64 {
			f.Close()
			return ErrBadRequest("block ids must be 1 to 64 bytes")
		}
		b, err := os.Open(filepath.Join(dir, hex.EncodeToString(id)))
		if err != nil {
			f.Close()
			return ErrBadRequest(fmt.Sprintf("block %x was not uploaded", id))
		}
		_, err = io.Copy(w, b)
		b.Close()
		if err != nil {
			f.Close()
			return writeError("blob upload", err)
		}
	}
	return s.commitBlob(ws, name, f, h)
}
