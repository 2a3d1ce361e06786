package files

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
)

// Options configures the HTTP routes of the file area. The zero value of
// each field means its default.
type Options struct {
	// URLExpiry is the validity of signed upload and download URLs (default
	// server.DefaultURLExpiry).
	URLExpiry time.Duration
	// MaxUploadBytes bounds one version's content (413 above; default
	// server.DefaultMaxBlobBytes).
	MaxUploadBytes int64
}

// ViewCSP is the Content-Security-Policy of a view URL's answer: the page's
// own inline styles and inline SVG, data: images, nothing else (no script
// runs; the page is sandboxed, so it has no origin of its own either).
// It is the policy of every answer serving stored content
// (server.StoredContentCSP).
const ViewCSP = server.StoredContentCSP

// apiPrefix is the path prefix of the workspace routes.
const apiPrefix = "/file/v2/orgs/{org_id}/workspaces/{workspace_id}"

// UploadResponse is the body of PUT files/path/{file_path} and PUT
// files/{file_id}: the file, the reserved version and the signed URL its
// content is to be PUT to.
type UploadResponse struct {
	FileID    string `json:"file_id"`
	VersionID string `json:"version_id"`
	UploadURL string `json:"upload_url"`
}

type api struct {
	s       *Store
	opts    Options
	logger  *slog.Logger
	baseURL func(*http.Request) string
}

// Register adds the file area's routes (see the package documentation) to
// mux, protected by deps.Auth: reads need the viewer role, writes editor or
// owner. It is meant for server.Options.ExtraRoutes. It panics when deps has
// no Auth or s is nil.
func Register(mux server.Router, deps server.Deps, s *Store, opts Options) {
	if deps.Auth == nil || s == nil {
		panic("files: Register needs deps.Auth and a Store")
	}
	if opts.URLExpiry <= 0 {
		opts.URLExpiry = server.DefaultURLExpiry
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = server.DefaultMaxBlobBytes
	}
	a := &api{s: s, opts: opts, logger: deps.Logger, baseURL: deps.BaseURL}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	if a.baseURL == nil {
		a.baseURL = func(r *http.Request) string { return "http://" + r.Host }
	}
	view := func(h http.HandlerFunc) http.Handler { return deps.Auth.RequireWorkspace(server.RoleViewer, h) }
	edit := func(h http.HandlerFunc) http.Handler { return deps.Auth.RequireWorkspace(server.RoleEditor, h) }
	mux.Handle("GET "+apiPrefix+"/files", view(a.list))
	mux.Handle("PUT "+apiPrefix+"/files/path/{file_path...}", edit(a.reserve))
	mux.Handle("PUT "+apiPrefix+"/files/{file_id}", edit(a.reserve))
	mux.Handle("GET "+apiPrefix+"/files/path/{file_path...}", view(a.get))
	mux.Handle("GET "+apiPrefix+"/files/{file_id}", view(a.get))
	mux.Handle("DELETE "+apiPrefix+"/files/path/{file_path...}", edit(a.delete))
	mux.Handle("DELETE "+apiPrefix+"/files/{file_id}", edit(a.delete))
	content := contentPrefix + "/{org_id}/{workspace_id}/{file_id}/{version_id}"
	mux.HandleFunc("PUT "+content, a.upload)
	mux.HandleFunc("GET "+content, a.download) // GET patterns serve HEAD too
}

// target reads the file id or path and the whitespace flag of a request.
func target(r *http.Request) (id, path string, checkWhitespace bool) {
	checkWhitespace = store.PreviewHeaderEnables(r.Header.Get("API-Preview"), store.PreviewWhitespaceCheck)
	if id = r.PathValue("file_id"); id != "" {
		return id, "", checkWhitespace
	}
	return "", r.PathValue("file_path"), checkWhitespace
}

func user(r *http.Request) store.User {
	if p := server.PrincipalFrom(r.Context()); p != nil {
		return p.User
	}
	return store.User{}
}

// reserve serves PUT files/path/{file_path} and PUT files/{file_id}.
func (a *api) reserve(w http.ResponseWriter, r *http.Request) {
	id, path, ws := target(r)
	ref, err := a.s.reserve(r.Context(), r.PathValue("org_id"), r.PathValue("workspace_id"), id, path, user(r), a.opts.URLExpiry, ws)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, UploadResponse{
		FileID: ref.file, VersionID: strconv.FormatInt(ref.version, 10),
		UploadURL: a.s.signedURL(a.baseURL(r), opUpload, ref, a.opts.URLExpiry),
	})
}

// get serves GET files/path/{file_path} and GET files/{file_id}
// (version_id, include_versions).
func (a *api) get(w http.ResponseWriter, r *http.Request) {
	id, path, ws := target(r)
	q := r.URL.Query()
	withVersions := false
	if v := q.Get("include_versions"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			a.fail(w, r, errValidation("include_versions "+strconv.Quote(v)+": want true or false"))
			return
		}
		withVersions = b
	}
	rec, err := a.s.stat(r.Context(), r.PathValue("org_id"), r.PathValue("workspace_id"), id, path, q.Get("version_id"), ws, withVersions)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	rec.DownloadURL = a.s.DownloadURL(a.baseURL(r), rec, a.opts.URLExpiry)
	server.WriteJSON(w, http.StatusOK, rec)
}

// delete serves DELETE files/path/{file_path} and DELETE files/{file_id}.
func (a *api) delete(w http.ResponseWriter, r *http.Request) {
	id, path, ws := target(r)
	if err := a.s.delete(r.Context(), r.PathValue("org_id"), r.PathValue("workspace_id"), id, path, user(r), ws); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// list serves GET files (limit, offset).
func (a *api) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset := DefaultListLimit, 0
	for _, p := range []struct {
		name string
		dst  *int
		min  int
	}{{"limit", &limit, 1}, {"offset", &offset, 0}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < p.min {
			a.fail(w, r, errValidation(p.name+" "+strconv.Quote(v)+": want an integer of at least "+strconv.Itoa(p.min)))
			return
		}
		*p.dst = n
	}
	page, err := a.s.List(r.Context(), r.PathValue("org_id"), r.PathValue("workspace_id"), limit, offset)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	base := a.baseURL(r)
	for _, rec := range page.Files {
		rec.DownloadURL = a.s.DownloadURL(base, rec, a.opts.URLExpiry)
	}
	server.WriteJSON(w, http.StatusOK, page)
}

// contentRef reads and checks a signed content URL for op.
func (a *api) contentRef(r *http.Request, op string) (versionRef, error) {
	ws, err := workspace(r.PathValue("org_id"), r.PathValue("workspace_id"))
	if err != nil {
		return versionRef{}, errSignature("the URL is not a valid content URL")
	}
	fr, err := resolve(r.PathValue("file_id"), "", false)
	if err != nil {
		return versionRef{}, errSignature("the URL is not a valid content URL")
	}
	vid, err := parseVersionID(r.PathValue("version_id"))
	if err != nil {
		return versionRef{}, errSignature("the URL is not a valid content URL")
	}
	ref := versionRef{org: ws.Org, ws: ws.ID, file: fr.id, version: vid}
	return ref, a.s.verify(op, ref, r.URL.Query())
}

// upload serves PUT on a signed upload URL: the whole body is the version's
// content, its Content-Type the version's content type. 201 with the record.
func (a *api) upload(w http.ResponseWriter, r *http.Request) {
	ref, err := a.contentRef(r, opUpload)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, a.opts.MaxUploadBytes)
	rec, err := a.s.upload(r.Context(), ref, body, r.Header.Get("Content-Type"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	rec.DownloadURL = a.s.DownloadURL(a.baseURL(r), rec, a.opts.URLExpiry)
	server.WriteJSON(w, http.StatusCreated, rec)
}

// download serves GET and HEAD on a signed download or view URL, honouring
// Range and conditional requests. A download URL offers the body as an
// attachment; a view URL shows it inline. Both send the stored-content
// headers (server.SetStoredContentHeaders: nosniff, ViewCSP).
func (a *api) download(w http.ResponseWriter, r *http.Request) {
	op := opDownload
	if r.URL.Query().Get("op") == opView {
		op = opView
	}
	ref, err := a.contentRef(r, op)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	rec, err := a.s.downloadable(ref)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	f, err := a.s.openContent(rec)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	defer f.Close()
	h := w.Header()
	if op == opView {
		server.SetStoredContentHeaders(h, rec.ContentType, server.Inline, rec.Name)
		h.Set("Cache-Control", "private, no-store")
	} else {
		server.SetStoredContentHeaders(h, rec.ContentType, server.Attachment, rec.Name)
	}
	h.Set("ETag", `"`+rec.VersionID+`"`)
	http.ServeContent(w, r, "", rec.CreatedAt, f)
}

// fail writes err as problem JSON whose status member equals the HTTP
// status (see problem.From); server errors are logged, the cause not shown.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	p := problem.From(err)
	if p.Status >= 500 {
		if p.Type == problem.ObjectInternal { // a fault of the worker
			p.Type = TypeInternal
		}
		a.logger.Error("file request failed", "method", r.Method, "route", r.Pattern, "status", p.Status, "err", err)
	}
	problem.Write(w, p)
}
