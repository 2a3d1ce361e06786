package bmapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/internal/urlsign"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
)

// Prefix is the path prefix of every route of the area.
const Prefix = "/blockmodel/orgs/{org_id}"

// wsPrefix is the prefix of the workspace routes.
const wsPrefix = Prefix + "/workspaces/{workspace_id}/block-models"

// Topic is the jobs.Spec Topic of the area's jobs (update and query) on the
// worker's job layer; Rebuild makes their Func again from the queued
// request.
const Topic = "blockmodel"

// Job kinds on the job layer (jobs.Spec Task).
const (
	taskUpdate = "update"
	taskQuery  = "query"
)

// Defaults of Options.
const (
	// DefaultURLExpiry is the validity of upload and download URLs (A.12:
	// 30 minutes).
	DefaultURLExpiry = 30 * time.Minute
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes = 1 << 20
)

// Options configure the area.
type Options struct {
	// Dir is the directory of the column store (created when missing).
	Dir string
	// TempDir holds query outputs while they are written when the object
	// store is not the embedded one, which takes them directly (default
	// Dir/tmp).
	TempDir string
	// Signer signs the upload and download URLs: the worker's one
	// URL-signing key, so that the blob routes accept them.
	Signer *urlsign.Signer
	// Jobs runs the update and query jobs.
	Jobs *jobs.Manager
	// URLExpiry is the validity of signed URLs (default DefaultURLExpiry).
	URLExpiry time.Duration
}

// Area is the block model area of a worker: the column store, the model
// records and the routes. Build it with New, then Register its routes.
type Area struct {
	bm      *bmstore.Store
	objects store.Store
	signer  *urlsign.Signer
	jobs    *jobs.Manager
	expiry  time.Duration
	tmp     string
	logger  *slog.Logger
	auth    *server.Auth
	baseURL func(*http.Request) string
	// mu serialises the read-modify-write of model records (names are
	// unique per workspace; object version ids are recorded per version).
	mu sync.Mutex
	// clock holds the func() time.Time the area reads the time from
	// (time.Now; tests move it).
	clock atomic.Value
	// cache holds the model records by id (loaded is set once every
	// record of the store was read): the area writes every record, so the
	// listings and the name checks need not read the disk.
	cacheMu sync.Mutex
	cache   map[string]bmstore.Model
	loaded  bool
	// drops holds the uploads of ended jobs for RunSweeps to delete, off
	// the jobs' own time (when it is full, or no sweeps run, the next
	// Sweep deletes them).
	drops chan droppedUpload
}

// New opens the area's column store under opts.Dir. objs is the worker's
// object store (embedded: the upload and download URLs are its signed blob
// URLs).
func New(opts Options, objs store.Store, logger *slog.Logger) (*Area, error) {
	if opts.Dir == "" || opts.Signer == nil || opts.Jobs == nil || objs == nil {
		return nil, errors.New("bmapi: New needs Dir, Signer, Jobs and an object store")
	}
	bm, err := bmstore.Open(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("bmapi: %w", err)
	}
	if opts.URLExpiry <= 0 {
		opts.URLExpiry = DefaultURLExpiry
	}
	if opts.TempDir == "" {
		opts.TempDir = filepath.Join(opts.Dir, "tmp")
	}
	if err := os.MkdirAll(opts.TempDir, 0o755); err != nil {
		return nil, fmt.Errorf("bmapi: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Area{bm: bm, objects: objs, signer: opts.Signer, jobs: opts.Jobs, expiry: opts.URLExpiry,
		tmp: opts.TempDir, logger: logger, cache: map[string]bmstore.Model{}, drops: make(chan droppedUpload, 256)}
	a.clock.Store(time.Now)
	return a, nil
}

// now is the area's time.
func (a *Area) now() time.Time { return a.clock.Load().(func() time.Time)() }

// Store returns the area's column store (the compute tasks read and write
// block models through it).
func (a *Area) Store() *bmstore.Store { return a.bm }

// Register adds the routes of the area (A.10) to mux.
func (a *Area) Register(mux server.Router, deps server.Deps) {
	a.auth = deps.Auth
	a.baseURL = deps.BaseURL
	if a.baseURL == nil {
		a.baseURL = func(r *http.Request) string { return "http://" + r.Host }
	}
	view := func(h handler) http.Handler { return a.guard(server.RoleViewer, h) }
	edit := func(h handler) http.Handler { return a.guard(server.RoleEditor, h) }
	bm := wsPrefix + "/{bm_id}"
	mux.Handle("POST "+wsPrefix, edit(a.create))
	mux.Handle("GET "+wsPrefix, view(a.list))
	mux.Handle("GET "+Prefix+"/block-models", a.orgGuard(a.listOrg))
	mux.Handle("GET "+bm, view(a.get))
	mux.Handle("PATCH "+bm, edit(a.patch))
	mux.Handle("DELETE "+bm, edit(a.delete))
	mux.Handle("POST "+bm, edit(a.restore))
	mux.Handle("PATCH "+bm+"/blocks", edit(a.startUpdate))
	mux.Handle("POST "+bm+"/blocks", view(a.query))
	mux.Handle("POST "+bm+"/jobs/{job_id}/uploaded", edit(a.uploaded))
	mux.Handle("GET "+bm+"/jobs/{job_id}", view(a.job))
	mux.Handle("GET "+bm+"/versions", view(a.versions))
	mux.Handle("GET "+bm+"/versions/{version_id}", view(a.version))
	mux.Handle("POST "+bm+"/versions/{version_id}/delta", view(a.delta))
	mux.Handle("GET "+Prefix+"/units", a.orgGuard(a.units))
	for _, r := range ReportRoutes() {
		mux.Handle(r, a.orgGuard(a.notImplemented))
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	if n, err := a.RepairObjects(ctx); err != nil {
		a.logger.Error("writing the missing geoscience object versions of block models", "err", err)
	} else if n > 0 {
		a.logger.Info("wrote the missing geoscience object versions of block models", "objects", n)
	}
}

// ReportRoutes are the eight report routes of the client (A.9.6), which
// answer 501 in this engine.
func ReportRoutes() []string {
	rs := wsPrefix + "/{bm_id}/report-specifications"
	return []string{
		"POST " + rs,
		"GET " + rs,
		"GET " + rs + "/{report_specification_id}",
		"PATCH " + rs + "/{report_specification_id}",
		"DELETE " + rs + "/{report_specification_id}",
		"POST " + rs + "/{report_specification_id}/results",
		"GET " + rs + "/{report_specification_id}/results",
		"GET " + rs + "/{report_specification_id}/results/{report_result_id}",
	}
}

// call is an authenticated request of a workspace route.
type call struct {
	org, ws string
	role    server.Role
	user    store.User
}

func (c *call) workspace() store.Workspace { return store.Workspace{Org: c.org, ID: c.ws} }

type handler func(w http.ResponseWriter, r *http.Request, c *call)

// pathIDs are the path values of the area that must be UUIDs.
var pathIDs = []string{"org_id", "workspace_id", "bm_id", "job_id", "version_id"}

// authenticate checks the token (401 under the area's type) and the UUID
// path ids (422 naming each).
func (a *Area) authenticate(w http.ResponseWriter, r *http.Request) (*server.Principal, bool) {
	p, err := a.auth.Authenticate(r)
	if err != nil {
		pr := problem.From(err)
		if pr.Status == http.StatusUnauthorized {
			pr.Type = problem.BlockModelUnauthorized
		}
		a.write(w, r, pr)
		return nil, false
	}
	var bad []problem.InvalidParam
	for _, name := range pathIDs {
		if v := r.PathValue(name); v != "" && !objects.IsUUID(v) {
			bad = append(bad, problem.InvalidParam{Name: name, Reason: fmt.Sprintf("%q is not a UUID", v)})
		}
	}
	if len(bad) > 0 {
		a.write(w, r, problem.Invalid(problem.BlockModelValidation, bad))
		return nil, false
	}
	return p, true
}

// guard wraps a workspace route: a valid token (401), UUID ids (422), a
// role in the workspace (404 without one), a live workspace (410) and at
// least min (403 with your_role and permitted_roles).
func (a *Area) guard(min server.Role, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := a.authenticate(w, r)
		if !ok {
			return
		}
		org, ws := strings.ToLower(r.PathValue("org_id")), strings.ToLower(r.PathValue("workspace_id"))
		acc, err := p.Resolve(r.Context(), org, ws)
		if err != nil {
			a.fail(w, r, fmt.Errorf("resolving the role in workspace %s: %w", ws, err))
			return
		}
		if acc.Role == "" || acc.State == server.WorkspaceUnknown {
			a.write(w, r, problem.Problem{Type: problem.WorkspaceNotFound, Title: "Not Found.", Status: http.StatusNotFound,
				Detail: fmt.Sprintf("workspace %s not found", ws)})
			return
		}
		if acc.State == server.WorkspaceDeleted {
			a.write(w, r, server.WorkspaceGone(ws))
			return
		}
		if !acc.Role.AtLeast(min) {
			var permitted []server.Role
			for _, role := range []server.Role{server.RoleOwner, server.RoleEditor, server.RoleViewer} {
				if role.AtLeast(min) {
					permitted = append(permitted, role)
				}
			}
			a.write(w, r, problem.Problem{Type: problem.BlockModelForbidden, Title: "Forbidden.", Status: http.StatusForbidden,
				Detail: fmt.Sprintf("this operation needs the role %s or higher", min),
				Extra:  map[string]any{"your_role": acc.Role, "permitted_roles": permitted}})
			return
		}
		ctx := server.WithPrincipal(r.Context(), p)
		h(w, r.WithContext(ctx), &call{org: org, ws: ws, role: acc.Role, user: p.User})
	})
}

// orgGuard wraps an organisation route: a valid token (401) and a UUID
// org id (422); the handler decides what the caller sees.
func (a *Area) orgGuard(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := a.authenticate(w, r)
		if !ok {
			return
		}
		ctx := server.WithPrincipal(r.Context(), p)
		h(w, r.WithContext(ctx), &call{org: strings.ToLower(r.PathValue("org_id")), user: p.User})
	})
}

// write answers a problem through server.WriteProblem (which logs server
// errors and undocumented statuses).
func (a *Area) write(w http.ResponseWriter, r *http.Request, p problem.Problem) {
	server.WriteProblem(w, r, a.logger, &problem.Error{Status: p.Status, Type: p.Type, Title: p.Title, Detail: p.Detail, Extra: p.Extra})
}

// fail answers err: a problem carrier (a *blockmodel.ValidationError, a
// *problem.Error of the area) as its document, a body over MaxBodyBytes
// 413, anything else 500 block-model-service/service (logged, not shown).
func (a *Area) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ve *blockmodel.ValidationError
	var pe *problem.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ve):
		a.write(w, r, ve.Problem())
	case errors.As(err, &pe) && pe.Status < 500:
		a.write(w, r, pe.Problem())
	case errors.As(err, &mbe):
		a.write(w, r, problem.Problem{Type: problem.PayloadTooLarge, Title: "Payload Too Large.", Status: http.StatusRequestEntityTooLarge,
			Detail: fmt.Sprintf("the body is over %d bytes", MaxBodyBytes)})
	default:
		if problem.NoSpace(err) {
			server.WriteProblem(w, r, a.logger, problem.InsufficientStorage(problem.BlockModelService, r.Method+" "+r.URL.Path, err))
			return
		}
		server.WriteProblem(w, r, a.logger, &problem.Error{Status: http.StatusInternalServerError, Type: problem.BlockModelService,
			Title: "Service Error.", Detail: "the server could not complete the request", Err: err})
	}
}

// body reads a request body of at most MaxBodyBytes.
func body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
}

func errNotFound(format string, args ...any) *problem.Error {
	return problem.New(http.StatusNotFound, problem.BlockModelNotFound, "Not Found.", fmt.Sprintf(format, args...))
}

func errValidation(name, format string, args ...any) error {
	e := &blockmodel.ValidationError{}
	e.Add(name, format, args...)
	return e.Err()
}

func errInvalidQuery(detail string) *problem.Error {
	return problem.New(http.StatusBadRequest, problem.BlockModelInvalidQuery, "Invalid Query Parameters.", detail)
}

// notImplemented answers the report routes (A.9.6).
func (a *Area) notImplemented(w http.ResponseWriter, r *http.Request, c *call) {
	a.write(w, r, problem.Problem{Type: problem.BlockModelNotImpl, Title: "Not Implemented.", Status: http.StatusNotImplemented,
		Detail: "block model reports are not implemented by this engine"})
}

// units serves GET /blockmodel/orgs/{org_id}/units (A.4.4).
func (a *Area) units(w http.ResponseWriter, r *http.Request, c *call) {
	server.WriteJSON(w, http.StatusOK, blockmodel.Units())
}

// writeJSON answers v.
func writeJSON(w http.ResponseWriter, status int, v any) { server.WriteJSON(w, status, v) }

// jsonRaw marshals v (of the area's own types, which always marshal).
func jsonRaw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("bmapi: marshal %T: %v", v, err))
	}
	return b
}

// ctxTimeout bounds the object writes of the start-up repair.
func ctxTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}
