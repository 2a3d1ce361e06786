package server

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/geostat-engine/geostat/worker/problem"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/urlsign"
	"github.com/geostat-engine/geostat/worker/store"
)

// SigningKeyFile is the name of the URL-signing key in the data directory,
// shared by blob and file content URLs (see package urlsign).
const SigningKeyFile = urlsign.KeyFile

// Signed URL operations.
const (
	opUpload   = "upload"
	opDownload = "download"
)

// signer makes and checks the signed URLs of blobs (package urlsign). A
// signed URL is its only credential, like a pre-signed object-store URL.
type signer struct {
	urls *urlsign.Signer
	now  func() time.Time
}

// blobPath is the path of a blob's signed URL.
func blobPath(ws store.Workspace, name string) string {
	return "/blobs/" + ws.Org + "/" + ws.ID + "/" + name
}

// sign returns the path and query of a signed blob URL valid for ttl.
func (s *signer) sign(op string, ws store.Workspace, name string, ttl time.Duration) string {
	p := blobPath(ws, name)
	return p + "?" + s.urls.Query(op, p, s.now().Add(ttl))
}

// verify checks a signed request's signature and expiry.
func (s *signer) verify(r *http.Request, op string) (store.Workspace, string, error) {
	ws := store.Workspace{Org: r.PathValue("org_id"), ID: r.PathValue("workspace_id")}
	name := r.PathValue("name")
	// The blob form before the one signer, accepted during the upgrade window.
	legacy := func(exp int64) string { return fmt.Sprintf("%s\n%s\n%s\n%s\n%d", op, ws.Org, ws.ID, name, exp) }
	err := s.urls.Verify(op, blobPath(ws, name), r.URL.Query(), s.now(), legacy)
	switch {
	case err == nil:
		return ws, name, nil
	case errors.Is(err, urlsign.ErrWrongOp):
		return ws, name, &signatureError{detail: "the URL is not a signed " + op + " URL"}
	default:
		return ws, name, &signatureError{detail: err.Error()}
	}
}

type signatureError struct{ detail string }

func (e *signatureError) Error() string { return e.detail }

func writeSignatureProblem(w http.ResponseWriter, err error) {
	problem.Write(w, problem.Problem{Type: problem.BadSignature, Title: "Authentication Failed.", Status: http.StatusForbidden, Detail: err.Error()})
}

// blobUpload serves PUT on a signed upload URL: a whole-body upload, or the
// Azure block form (comp=block&blockid=<base64> stages a block,
// comp=blocklist commits the <BlockList> in order). The bytes must hash to
// the blob name; otherwise nothing is kept.
func (a *App) blobUpload(w http.ResponseWriter, r *http.Request) {
	ws, name, err := a.signer.verify(r, opUpload)
	if err != nil {
		writeSignatureProblem(w, err)
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	switch q.Get("comp") {
	case "":
		body := http.MaxBytesReader(w, r.Body, a.opts.MaxBlobBytes)
		err = a.embedded.PutBlob(ctx, ws, name, body)
	case "block":
		id, derr := base64.StdEncoding.DecodeString(q.Get("blockid"))
		if derr != nil || len(id) == 0 {
			err = store.ErrBadRequest("blockid must be non-empty base64")
			break
		}
		body := http.MaxBytesReader(w, r.Body, a.opts.MaxBlobBytes)
		err = a.embedded.StageBlock(ctx, ws, name, id, body)
	case "blocklist":
		var ids [][]byte
		ids, err = parseBlockList(http.MaxBytesReader(w, r.Body, maxBlockListBytes))
		if err == nil {
			err = a.embedded.CommitBlocks(ctx, ws, name, ids)
		}
	default:
		err = store.ErrBadRequest(fmt.Sprintf("comp=%q is not supported (block or blocklist)", q.Get("comp")))
	}
	if err != nil {
		WriteProblem(w, r, a.logger, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// maxBlockListBytes bounds a block list body (50,000 ids of up to 64 bytes).
const maxBlockListBytes = 16 << 20

// parseBlockList reads an Azure <BlockList>: <Latest>, <Committed> and
// <Uncommitted> elements in document order, each holding a base64 block id.
func parseBlockList(r io.Reader) ([][]byte, error) {
	dec := xml.NewDecoder(r)
	var ids [][]byte
	depth := 0
	sawRoot := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, err
			}
			return nil, store.ErrBadRequest("the block list is not valid XML: " + err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				if t.Name.Local != "BlockList" {
					return nil, store.ErrBadRequest("the block list root element must be BlockList")
				}
				sawRoot = true
				continue
			}
			switch t.Name.Local {
			case "Latest", "Committed", "Uncommitted":
				var s string
				if err := dec.DecodeElement(&s, &t); err != nil {
					return nil, store.ErrBadRequest("bad block list entry: " + err.Error())
				}
				depth--
				id, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
				if err != nil || len(id) == 0 {
					return nil, store.ErrBadRequest(fmt.Sprintf("block id %q is not base64", s))
				}
				ids = append(ids, id)
			default:
				return nil, store.ErrBadRequest("unexpected element " + t.Name.Local + " in the block list")
			}
		case xml.EndElement:
			depth--
		}
	}
	if !sawRoot {
		return nil, store.ErrBadRequest("the block list is empty")
	}
	return ids, nil
}

// blobDownload serves GET and HEAD on a signed download URL, honouring Range,
// as an attachment under the stored-content headers.
func (a *App) blobDownload(w http.ResponseWriter, r *http.Request) {
	ws, name, err := a.signer.verify(r, opDownload)
	if err != nil {
		writeSignatureProblem(w, err)
		return
	}
	path, err := a.embedded.BlobPath(ws, name)
	if err != nil {
		WriteProblem(w, r, a.logger, err)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		WriteProblem(w, r, a.logger, store.NewError(http.StatusNotFound, store.TypeDataKeyNotFound, "Data Key Not Found.",
			fmt.Sprintf("blob %s does not exist", name)))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		WriteProblem(w, r, a.logger, store.ErrStorage(err))
		return
	}
	SetStoredContentHeaders(w.Header(), "application/octet-stream", Attachment, name)
	w.Header().Set("ETag", `"`+strings.ToLower(name)+`"`)
	http.ServeContent(w, r, "", st.ModTime(), f)
}
