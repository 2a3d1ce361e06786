package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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

// PutBlob implements Store: the bytes are written to a temporary file of
// the store (see BlobWriter): for a SHA-256 name they must hash to it
// (otherwise nothing is kept); then the file is fsynced and renamed into
// place. Storing an existing blob again is a no-op; other bytes under an
// existing UUID name are a conflict (409).
func (s *Embedded) PutBlob(ctx context.Context, ws Workspace, name string, r io.Reader) error {
	w, err := s.CreateBlob(ws, name)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := w.ReadFrom(r); err != nil {
		return err
	}
	return w.Commit()
}

// BlobWriter writes a new blob of an embedded store: the bytes go to a
// temporary file in the store's directory (the blobs' filesystem), Commit
// makes them the blob (fsync, then rename into place) and Abort drops them;
// nothing is visible under the blob's name before Commit, nor after a
// crash before it (the store clears its temporary files when it opens).
// Only a SHA-256 name is hashed (its bytes must hash to it): a UUID name
// costs no hashing, and an existing blob of that name is compared with the
// new bytes instead. A BlobWriter is not safe for concurrent use.
type BlobWriter struct {
	s    *Embedded
	ws   Workspace
	name string
	f    *os.File
	h    hash.Hash // SHA-256 names only
	done bool
	// wb starts the file's writeback as bytes come.
	wb atomicfile.Writeback
	// err is the first failed write: Commit refuses a blob missing bytes.
	err error
}

// CreateBlob starts writing blob name of workspace ws; the caller writes
// the bytes, then calls Commit, or Abort to drop them (Abort after Commit
// does nothing, so it can be deferred).
func (s *Embedded) CreateBlob(ws Workspace, name string) (*BlobWriter, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	name, err := NormaliseBlobName(name)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "blob-*")
	if err != nil {
		return nil, writeError("blob upload", err)
	}
	w := &BlobWriter{s: s, ws: normWorkspace(ws), name: name, f: f, wb: atomicfile.Writeback{F: f}}
	if objects.IsSHA256Key(name) {
		w.h = sha256.New()
	}
	return w, nil
}

// Name returns the (normalised) name of the blob being written.
func (w *BlobWriter) Name() string { return w.name }

// Write implements io.Writer.
func (w *BlobWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("store: write to a committed or aborted blob")
	}
	n, err := w.f.Write(p)
	if w.h != nil {
		w.h.Write(p[:n])
	}
	// The file's pages go to disk while the rest is written, so that
	// Commit's fsync does not write it all at the end.
	w.wb.Wrote(n)
	if err != nil {
		if w.err == nil {
			w.err = writeError("blob upload", err)
		}
		return n, w.err
	}
	return n, nil
}

// blobCopyBuffer is the buffer of BlobWriter.ReadFrom: a large upload is
// read and written in few system calls.
const blobCopyBuffer = 1 << 20

// ReadFrom implements io.ReaderFrom: it writes r's bytes until EOF, read
// through a buffer of 1 MiB (in-memory readers write themselves).
func (w *BlobWriter) ReadFrom(r io.Reader) (int64, error) {
	if wt, ok := r.(io.WriterTo); ok {
		if _, file := r.(*os.File); !file {
			return wt.WriteTo(writerOnly{w})
		}
	}
	return io.CopyBuffer(writerOnly{w}, readerOnly{r}, make([]byte, blobCopyBuffer))
}

// writerOnly and readerOnly hide ReadFrom and WriteTo from io.CopyBuffer,
// so that it uses the buffer given.
type (
	writerOnly struct{ io.Writer }
	readerOnly struct{ io.Reader }
)

// Abort drops the bytes written; it does nothing after Commit or Abort.
func (w *BlobWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.f.Name())
}

// Commit makes the bytes written the blob: for a SHA-256 name they must
// hash to it; the file is fsynced and renamed into place. When the blob
// exists already, the same bytes are a no-op and other bytes a conflict
// (ErrBlobExists, 409): blobs are immutable. After a failed Write it
// returns that error. On an error nothing is kept.
func (w *BlobWriter) Commit() error {
	if w.done {
		return errors.New("store: commit of a committed or aborted blob")
	}
	defer w.Abort() // after the rename, only the (closed) file is left
	if w.err != nil {
		return w.err
	}
	var got string
	if w.h != nil {
		if got = hex.EncodeToString(w.h.Sum(nil)); got != w.name {
			return ErrDigestMismatch(w.name, got)
		}
	}
	s := w.s
	dst := s.blobPath(w.ws, w.name)
	s.blobMu.Lock()
	defer s.blobMu.Unlock()
	if _, err := os.Stat(dst); err == nil {
		// Blobs are immutable: the same bytes again are a no-op, other
		// bytes under an existing (UUID) name a conflict.
		if w.h != nil {
			return nil
		}
		same, err := sameContent(w.f, dst)
		if err != nil {
			return ErrStorage(err)
		}
		if !same {
			return ErrBlobExists(w.name)
		}
		return nil
	}
	if s.hook != nil {
		s.hook("blob-written")
	}
	w.done = true
	if err := atomicfile.Commit(w.f, dst); err != nil {
		return writeError("blob upload", err)
	}
	return nil
}

// sameContent reports whether the file f (read from its start) holds the
// bytes of the file at path.
func sameContent(f *os.File, path string) (bool, error) {
	g, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer g.Close()
	fs, err := f.Stat()
	if err != nil {
		return false, err
	}
	gs, err := g.Stat()
	if err != nil {
		return false, err
	}
	if fs.Size() != gs.Size() {
		return false, nil
	}
	a, b := make([]byte, 256<<10), make([]byte, 256<<10)
	for off := int64(0); off < fs.Size(); {
		n := int(min(int64(len(a)), fs.Size()-off))
		if _, err := f.ReadAt(a[:n], off); err != nil {
			return false, err
		}
		if _, err := io.ReadFull(g, b[:n]); err != nil {
			return false, err
		}
		if !bytes.Equal(a[:n], b[:n]) {
			return false, nil
		}
		off += int64(n)
	}
	return true, nil
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
	w, err := s.CreateBlob(ws, name)
	if err != nil {
		return err
	}
	defer w.Abort()
	for _, id := range blockIDs {
		if len(id) == 0 || len(id) > 64 {
			return ErrBadRequest("block ids must be 1 to 64 bytes")
		}
		b, err := os.Open(filepath.Join(dir, hex.EncodeToString(id)))
		if err != nil {
			return ErrBadRequest(fmt.Sprintf("block %x was not uploaded", id))
		}
		_, err = w.ReadFrom(b)
		b.Close()
		if err != nil {
			return err
		}
	}
	return w.Commit()
}

// privateMark is the suffix of the file that marks a private blob, beside
// the blob's own file.
const privateMark = ".private"

// ReserveBlob makes name, a UUID not stored yet, a private blob of ws: it
// is stored and served through the blob routes like any blob, but no
// object version may reference it (its key reads as not found there), and
// DeletePrivateBlob removes it. The block model area reserves its upload
// files and query outputs so, and deletes them once its jobs are done with
// them. A SHA-256 name is refused: content blobs are shared by objects.
func (s *Embedded) ReserveBlob(ws Workspace, name string) error {
	if err := checkWorkspace(ws); err != nil {
		return err
	}
	name, err := NormaliseBlobName(name)
	if err != nil {
		return err
	}
	if !objects.IsUUID(name) {
		return ErrBadRequest(fmt.Sprintf("blob %s: only a UUID name can be private", name))
	}
	p := s.blobPath(normWorkspace(ws), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return writeError("blob reservation", err)
	}
	if _, err := os.Stat(p); err == nil {
		return ErrBlobExists(name)
	}
	f, err := os.OpenFile(p+privateMark, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return writeError("blob reservation", err)
	}
	return f.Close()
}

// isPrivate reports whether blob name (normalised) of ws (normalised) was
// reserved by ReserveBlob.
func (s *Embedded) isPrivate(ws Workspace, name string) bool {
	_, err := os.Stat(s.blobPath(ws, name) + privateMark)
	return err == nil
}

// DeletePrivateBlob removes a private blob (ReserveBlob) and its mark; a
// blob reserved but never stored leaves only its mark, and one deleted
// already is no error. A stored blob that is not private is refused (409):
// objects may reference it.
func (s *Embedded) DeletePrivateBlob(ws Workspace, name string) error {
	if err := checkWorkspace(ws); err != nil {
		return err
	}
	name, err := NormaliseBlobName(name)
	if err != nil {
		return err
	}
	ws = normWorkspace(ws)
	p := s.blobPath(ws, name)
	if !s.isPrivate(ws, name) {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			return nil
		}
		return NewError(http.StatusConflict, TypeBlobExists, "Blob Not Private.", fmt.Sprintf("blob %s is not private; it is kept", name))
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return ErrStorage(err)
	}
	if err := os.Remove(p + privateMark); err != nil && !os.IsNotExist(err) {
		return ErrStorage(err)
	}
	return nil
}
