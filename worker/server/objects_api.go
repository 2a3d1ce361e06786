package server

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/store"
)

// Request limits of the object API.
const (
	// MaxDataNames is the most blob names one PUT data request may ask for.
	MaxDataNames = 32
	// MaxLatestIDs is the most ids one PATCH objects request may ask for.
	MaxLatestIDs = 500
	// maxSmallBody bounds JSON bodies other than objects.
	maxSmallBody = 1 << 20
)

// objectPrefix is the path prefix of the workspace routes.
const objectPrefix = "/geoscience-object/orgs/{org_id}/workspaces/{workspace_id}"

// routeObjects registers the object API on mux.
func (a *App) routeObjects(mux Router) {
	view := func(h http.HandlerFunc) http.Handler { return a.auth.RequireWorkspace(RoleViewer, h) }
	edit := func(h http.HandlerFunc) http.Handler { return a.auth.RequireWorkspace(RoleEditor, h) }
	mux.Handle("GET /geoscience-object/orgs/{org_id}/objects", a.auth.Authenticated(http.HandlerFunc(a.listOrg)))
	mux.Handle("GET "+objectPrefix+"/objects", view(a.listWorkspace))
	mux.Handle("PATCH "+objectPrefix+"/objects", view(a.latestVersions))
	mux.Handle("GET "+objectPrefix+"/objects/{object_id}", view(a.getObject))
	mux.Handle("POST "+objectPrefix+"/objects/{object_id}", edit(a.postObjectByID))
	mux.Handle("DELETE "+objectPrefix+"/objects/{object_id}", edit(a.deleteObject))
	mux.Handle("GET "+objectPrefix+"/objects/path/{path...}", view(a.getObject))
	mux.Handle("POST "+objectPrefix+"/objects/path/{path...}", edit(a.postObjectByPath))
	mux.Handle("DELETE "+objectPrefix+"/objects/path/{path...}", edit(a.deleteObject))
	mux.Handle("PUT "+objectPrefix+"/data", edit(a.putData))
	mux.HandleFunc("PUT /blobs/{org_id}/{workspace_id}/{name}", a.blobUpload)
	mux.HandleFunc("GET /blobs/{org_id}/{workspace_id}/{name}", a.blobDownload)
}

func workspaceOf(r *http.Request) store.Workspace {
	return store.Workspace{Org: strings.ToLower(r.PathValue("org_id")), ID: strings.ToLower(r.PathValue("workspace_id"))}
}

// objectRef reads the object id (422 when not a UUID) or path of a request.
func objectRef(r *http.Request) (store.Ref, error) {
	if id := r.PathValue("object_id"); id != "" {
		if !objects.IsUUID(id) {
			return store.Ref{}, store.ErrValidation(fmt.Sprintf("object_id %q is not a UUID", id))
		}
		return store.Ref{ID: strings.ToLower(id)}, nil
	}
	return store.Ref{Path: r.PathValue("path")}, nil
}

func queryBool(q url.Values, name string) (bool, bool, error) {
	s := q.Get(name)
	if s == "" {
		return false, false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, false, store.ErrValidation(fmt.Sprintf("%s %q: want true or false", name, s))
	}
	return b, true, nil
}

// baseURL is the scheme and host clients reached this worker at (or
// Options.PublicURL).
func (a *App) baseURL(r *http.Request) string {
	if a.opts.PublicURL != "" {
		return strings.TrimSuffix(a.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// dataID is the stable id of a blob in links and PUT data responses.
func dataID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("geostat-blob:"+strings.ToLower(name))).String()
}

// record renders a version with its links (signed download URLs).
func (a *App) record(r *http.Request, ws store.Workspace, v *store.Version) store.VersionRecord {
	base := a.baseURL(r)
	links := store.RecordLinks{
		Download: base + "/geoscience-object/orgs/" + ws.Org + "/workspaces/" + ws.ID + "/objects/" + v.ObjectID + "?version=" + v.VersionID,
	}
	for _, k := range v.DataKeys {
		links.Data = append(links.Data, store.DataLink{ID: dataID(k), Name: k,
			DownloadURL: base + a.signer.sign(opDownload, ws, k, a.opts.URLExpiry)})
	}
	return v.Record(links)
}

func (a *App) fail(w http.ResponseWriter, r *http.Request, err error) {
	WriteProblem(w, r, a.logger, err)
}

func (a *App) getObject(w http.ResponseWriter, r *http.Request) {
	ref, err := objectRef(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	ref.Version = q.Get("version")
	if ref.IncludeVersions, _, err = queryBool(q, "include_versions"); err != nil {
		a.fail(w, r, err)
		return
	}
	if ref.Deleted, _, err = queryBool(q, "deleted"); err != nil {
		a.fail(w, r, err)
		return
	}
	ws := workspaceOf(r)
	v, err := a.embedded.GetObject(r.Context(), ws, ref)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", v.ETag())
	if inm := r.Header.Get("If-None-Match"); inm != "" && ref.Version == "" {
		for _, tag := range strings.Split(inm, ",") {
			if strings.Trim(strings.TrimSpace(tag), `"`) == v.VersionID {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
	}
	WriteJSON(w, http.StatusOK, a.record(r, ws, v))
}

// readBody reads a request body up to limit bytes, decompressing
// Content-Encoding: gzip (the limit applies to the decompressed bytes).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, limit)
	switch enc := strings.ToLower(r.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, store.ErrBadRequest("the gzip body is corrupt: " + err.Error())
		}
		defer zr.Close()
		body = &limitedReader{r: zr, n: limit, limit: limit}
	default:
		return nil, store.ErrBadRequest(fmt.Sprintf("Content-Encoding %q is not supported", enc))
	}
	data, err := io.ReadAll(body)
	if err != nil {
		if _, ok := err.(*http.MaxBytesError); ok {
			return nil, err
		}
		return nil, store.ErrBadRequest("reading the body: " + err.Error())
	}
	return data, nil
}

// limitedReader fails with *http.MaxBytesError past n bytes.
type limitedReader struct {
	r        io.Reader
	n, limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			return 0, &http.MaxBytesError{Limit: l.limit}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

func (a *App) putRequest(w http.ResponseWriter, r *http.Request) (store.PutRequest, error) {
	body, err := a.readObjectBody(w, r)
	if err != nil {
		return store.PutRequest{}, err
	}
	return store.PutRequest{
		IfMatch:         r.Header.Get("If-Match"),
		Object:          body,
		By:              PrincipalFrom(r.Context()).User,
		CheckWhitespace: store.PreviewHeaderEnables(r.Header.Get("API-Preview"), store.PreviewWhitespaceCheck),
	}, nil
}

func (a *App) readObjectBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return readBody(w, r, a.opts.MaxObjectBytes)
}

func (a *App) postObjectByPath(w http.ResponseWriter, r *http.Request) {
	req, err := a.putRequest(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	req.Path = r.PathValue("path")
	a.put(w, r, req)
}

func (a *App) put(w http.ResponseWriter, r *http.Request, req store.PutRequest) {
	ws := workspaceOf(r)
	if err := a.checkBlockModelWrite(r.Context(), ws, req); err != nil {
		a.fail(w, r, err)
		return
	}
	v, err := a.embedded.PutObject(r.Context(), ws, req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", v.ETag())
	WriteJSON(w, http.StatusCreated, a.record(r, ws, v))
}

func (a *App) postObjectByID(w http.ResponseWriter, r *http.Request) {
	ref, err := objectRef(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	deleted, given, err := queryBool(r.URL.Query(), "deleted")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if given {
		if deleted {
			a.fail(w, r, store.ErrValidation("deleted=true is not valid on POST; use DELETE to delete"))
			return
		}
		ws := workspaceOf(r)
		v, err := a.embedded.RestoreObject(r.Context(), ws, ref.ID, PrincipalFrom(r.Context()).User)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		WriteJSON(w, http.StatusOK, a.record(r, ws, v))
		return
	}
	req, err := a.putRequest(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	req.ID = ref.ID
	a.put(w, r, req)
}

func (a *App) deleteObject(w http.ResponseWriter, r *http.Request) {
	ref, err := objectRef(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.checkBlockModelDelete(r.Context(), workspaceOf(r), ref); err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.embedded.DeleteObject(r.Context(), workspaceOf(r), ref, PrincipalFrom(r.Context()).User); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pageRecord renders a page with next/prev links built from the request URL.
func pageRecord(r *http.Request, base string, p *store.Page) store.ListPageRecord {
	rec := store.ListPageRecord{Count: len(p.Items), Limit: p.Limit, Offset: p.Offset, Total: p.Total, Objects: []store.ListItemRecord{}}
	for i := range p.Items {
		rec.Objects = append(rec.Objects, p.Items[i].Record())
	}
	link := func(offset int) *string {
		q := r.URL.Query()
		q.Set("offset", strconv.Itoa(offset))
		q.Set("limit", strconv.Itoa(p.Limit))
		s := base + r.URL.Path + "?" + q.Encode()
		return &s
	}
	if p.Offset+len(p.Items) < p.Total {
		rec.Links.Next = link(p.Offset + p.Limit)
	}
	if p.Offset > 0 {
		rec.Links.Prev = link(max(0, p.Offset-p.Limit))
	}
	return rec
}

func (a *App) listWorkspace(w http.ResponseWriter, r *http.Request) {
	limit, offset, deleted, err := store.ParsePaging(r.URL.Query())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	p, err := a.embedded.ListObjects(r.Context(), workspaceOf(r), store.ListOptions{Deleted: deleted, Limit: limit, Offset: offset})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, pageRecord(r, a.baseURL(r), p))
}

func (a *App) listOrg(w http.ResponseWriter, r *http.Request) {
	org := r.PathValue("org_id")
	if !objects.IsUUID(org) {
		a.fail(w, r, store.ErrValidation(fmt.Sprintf("org_id %q is not a UUID", org)))
		return
	}
	p := PrincipalFrom(r.Context())
	if !p.InOrg(org) {
		a.fail(w, r, store.ErrNotFound("", fmt.Sprintf("organisation %s not found", org)))
		return
	}
	q, err := store.ParseOrgQuery(r.URL.Query())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	q.Access = func(ws string) (string, bool) {
		role, ok := p.Role(org, ws)
		return string(role), ok
	}
	page, err := a.embedded.ListOrgObjects(r.Context(), org, q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, pageRecord(r, a.baseURL(r), page))
}

// decodeBody decodes the JSON body into v in one pass: a syntax error is
// 400 naming its line and column (objects.JSONSyntaxError), well-formed
// JSON of another shape the 422 of shape. (json.Unmarshal checks the whole
// body's syntax before it decodes anything, so every syntax error is a
// *json.SyntaxError here, whatever v is.)
func decodeBody(body []byte, v any, shape string) error {
	err := json.Unmarshal(body, v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return store.ErrBadRequest(objects.JSONSyntaxError(body, err).Error())
	default:
		return store.ErrValidation(shape)
	}
}

func (a *App) latestVersions(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, maxSmallBody)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var ids []string
	if err := decodeBody(body, &ids, "the body must be a JSON list of object ids"); err != nil {
		a.fail(w, r, err)
		return
	}
	if len(ids) > MaxLatestIDs {
		a.fail(w, r, store.ErrValidation(fmt.Sprintf("at most %d object ids per request, got %d", MaxLatestIDs, len(ids))))
		return
	}
	for _, id := range ids {
		if !objects.IsUUID(id) {
			a.fail(w, r, store.ErrValidation(fmt.Sprintf("object id %q is not a UUID", id)))
			return
		}
	}
	lv, err := a.embedded.LatestVersions(r.Context(), workspaceOf(r), ids)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]store.LatestVersionRecord, len(lv))
	for i, l := range lv {
		out[i].ObjectID = l.ObjectID
		if l.VersionID != "" {
			v := l.VersionID
			out[i].VersionID = &v
		}
	}
	WriteJSON(w, http.StatusOK, out)
}

// putData answers PUT data: for each requested blob name whether it exists
// and, if not, a signed upload URL served by this worker.
func (a *App) putData(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, maxSmallBody)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var reqs []store.DataRequest
	if err := decodeBody(body, &reqs, `the body must be a JSON list of {"name": "<sha256>"}`); err != nil {
		a.fail(w, r, err)
		return
	}
	if len(reqs) > MaxDataNames {
		a.fail(w, r, store.ErrValidation(fmt.Sprintf("at most %d names per request, got %d", MaxDataNames, len(reqs))))
		return
	}
	var invalid []string
	for _, d := range reqs {
		if !objects.IsDataKey(d.Name) {
			invalid = append(invalid, d.Name)
		}
	}
	if len(invalid) > 0 {
		a.fail(w, r, store.ErrInvalidKey(invalid))
		return
	}
	ws := workspaceOf(r)
	base := a.baseURL(r)
	out := make([]store.DataResponse, len(reqs))
	for i, d := range reqs {
		name := strings.ToLower(d.Name)
		exists, err := a.embedded.BlobExists(r.Context(), ws, name)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		out[i] = store.DataResponse{ID: dataID(name), Name: name, Exists: exists}
		if !exists {
			u := base + a.signer.sign(opUpload, ws, name, a.opts.URLExpiry)
			out[i].UploadURL = &u
		}
	}
	WriteJSON(w, http.StatusOK, out)
}
