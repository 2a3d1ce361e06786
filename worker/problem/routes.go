package problem

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Status is one documented answer of a route: its HTTP status code, what it
// means there and, for an error, the problem types it carries.
type Status struct {
	Code    int
	Meaning string
	Types   []string
}

// Route statuses shared by many routes.
var (
	statusUnauthenticated = Status{http.StatusUnauthorized, "missing or unknown bearer token", []string{ObjectMissingToken, ObjectInvalidToken}}
	statusInternal        = Status{http.StatusInternalServerError, "the worker failed (logged); the detail says no more", []string{ObjectInternal, FileInternal, ComputeTaskFailed, WorkspaceInternal, BlockModelService}}
	objectFull            = Status{http.StatusInsufficientStorage, "the worker's disk is full; the detail names the operation, nothing is kept", []string{ObjectInsufficientStorage}}
	statusGone            = Status{http.StatusGone, "the workspace is deleted (restore it with POST /workspace/orgs/{org_id}/workspaces/{workspace_id}?deleted=false)", []string{WorkspaceGone}}
	fileFull              = Status{http.StatusInsufficientStorage, "the worker's disk is full; the detail names the operation, nothing is kept", []string{FileInsufficientStorage}}
)

// objectBase are the statuses of every workspace route of the object and
// file APIs: the token, the ids and the caller's role in the workspace.
func workspaceBase(write bool) []Status {
	out := []Status{
		statusUnauthenticated,
		{http.StatusNotFound, "the organisation or workspace does not exist for the caller (no role in it), or the object or file does not", []string{ObjectNotFound, FileNotFound}},
		{http.StatusUnprocessableEntity, "invalid parameters: an id that is not a UUID, an invalid query parameter", []string{ObjectValidation}},
		statusGone,
	}
	if write {
		out = append(out, Status{http.StatusForbidden, "the caller's role in the workspace does not allow writing (insufficient-role)", []string{ObjectInsufficient}})
	}
	return out
}

// RouteStatuses returns the statuses each route answers, by route pattern
// ("METHOD /path/{param}", as registered). It is the one table of the
// statuses: the OpenAPI document lists exactly these, and a test of the
// worker provokes each of them and checks that no route answers a status it
// does not list. A new status of a route is added here (with the route's
// handler), e.g. a 507 insufficient-storage of the write routes or a 429 of
// a request limiter.
func RouteStatuses() map[string][]Status {
	const (
		objPrefix  = "/geoscience-object/orgs/{org_id}/workspaces/{workspace_id}"
		filePrefix = "/file/v2/orgs/{org_id}/workspaces/{workspace_id}"
	)
	with := func(base []Status, more ...Status) []Status {
		return append(append([]Status(nil), base...), more...)
	}
	view, edit := workspaceBase(false), workspaceBase(true)
	submit := func(topic string) []Status {
		out := []Status{
			statusUnauthenticated,
			{http.StatusSeeOther, "the job was created: see its status (Location)", nil},
			{http.StatusBadRequest, "the body is not JSON (the detail gives the line and column)", []string{ComputeBadJSON}},
			{http.StatusForbidden, "the caller may read but not write the target's workspace (insufficient-role)", []string{ObjectInsufficient}},
			{http.StatusNotFound, "no such task, or a workspace the request names where the caller has no role", []string{ComputeUnknownTask, ObjectNotFound}},
			statusGone,
			{http.StatusRequestEntityTooLarge, "the body is over 1 MiB", []string{ComputePayloadTooLarge}},
			{http.StatusUnprocessableEntity, "invalid parameters (invalid-params names each: unknown member, wrong type, out of range, missing or unusable object or attribute), or stored data the task cannot use", []string{ComputeValidation, ComputeInvalidData}},
			{http.StatusTooManyRequests, "the caller has too many jobs queued or running (Retry-After)", []string{TooManyRequests}},
			{http.StatusServiceUnavailable, "the worker is shutting down or cannot queue the job, or (geostat, synchronous) the job was interrupted", []string{ComputeUnavailable, ComputeInterrupted}},
			{http.StatusNotImplemented, "simulation-report or consim on a worker without a file area", []string{ComputeNotImplemented}},
		}
		if topic == "geostat" {
			out = append(out,
				Status{http.StatusOK, "the task's result (the job finished within the synchronous wait)", nil},
				Status{http.StatusConflict, "the job was cancelled while the request waited", []string{ComputeCancelled}},
				Status{http.StatusInsufficientStorage, "the disk filled while the job wrote its output; the target is unchanged", []string{ComputeInsufficientStorage}},
				statusInternal)
		}
		return out
	}
	linkedDelete := Status{http.StatusConflict, "the object is a block model's geoscience object: delete the block model instead", []string{ObjectBlockModelLinked}}
	job := []Status{
		statusUnauthenticated,
		{http.StatusOK, "the job has finished", nil},
		{http.StatusAccepted, "the job is still running", nil},
		{http.StatusNotFound, "no such job for this organisation, topic and task, or no role in its workspace", []string{ComputeJobNotFound}},
	}
	cancel := []Status{
		statusUnauthenticated,
		{http.StatusNoContent, "cancelling", nil},
		{http.StatusForbidden, "a viewer cannot cancel (insufficient-role)", []string{ObjectInsufficient}},
		{http.StatusNotFound, "no such job", []string{ComputeJobNotFound}},
	}
	out := map[string][]Status{
		"GET /healthz":      {{http.StatusOK, "the worker is up", nil}},
		"GET /metrics":      {statusUnauthenticated, {http.StatusOK, "text exposition format", nil}},
		"GET /openapi.json": {statusUnauthenticated, {http.StatusOK, "OpenAPI 3.1 JSON", nil}},
		"GET /geoscience-object/orgs/{org_id}/objects": {statusUnauthenticated,
			{http.StatusOK, "a list page", nil},
			{http.StatusNotFound, "the organisation does not exist for the caller", []string{ObjectNotFound}},
			{http.StatusUnprocessableEntity, "invalid filter, sort or paging", []string{ObjectInvalidFilter, ObjectInvalidSort, ObjectValidation}}},
		"GET " + objPrefix + "/objects": with(view, Status{http.StatusOK, "a list page", nil}),
		"PATCH " + objPrefix + "/objects": with(view, Status{http.StatusOK, "[{object_id, version_id}]", nil},
			Status{http.StatusBadRequest, "the body is not JSON (line and column)", []string{ObjectBadRequest}}),
		"GET " + objPrefix + "/objects/{object_id}": with(view, Status{http.StatusOK, "the version record", nil},
			Status{http.StatusNotModified, "not modified (If-None-Match)", nil}),
		"POST " + objPrefix + "/objects/{object_id}": with(edit, Status{http.StatusCreated, "the new version record", nil},
			Status{http.StatusOK, "restored (?deleted=false)", nil},
			Status{http.StatusBadRequest, "the body is not a JSON object (line and column), or an invalid object", []string{ObjectBadRequest, ObjectInvalidObject, ObjectError}},
			Status{http.StatusPreconditionFailed, "stale If-Match", []string{ObjectModified}}, objectFull),
		"DELETE " + objPrefix + "/objects/{object_id}": with(edit, Status{http.StatusNoContent, "deleted", nil}, linkedDelete),
		"GET " + objPrefix + "/objects/path/{path...}": with(view, Status{http.StatusOK, "the version record", nil},
			Status{http.StatusNotModified, "not modified (If-None-Match)", nil}),
		"POST " + objPrefix + "/objects/path/{path...}": with(edit, Status{http.StatusCreated, "the version record", nil},
			Status{http.StatusBadRequest, "the body is not a JSON object (line and column), an invalid object or path", []string{ObjectBadRequest, ObjectInvalidObject, ObjectError, ObjectInvalidPath}},
			Status{http.StatusConflict, "the object already exists with another uuid", []string{ObjectAlreadyExists}}, objectFull),
		"DELETE " + objPrefix + "/objects/path/{path...}": with(edit, Status{http.StatusNoContent, "deleted", nil}, linkedDelete),
		"PUT " + objPrefix + "/data": with(edit, Status{http.StatusOK, "[{id, name, exists, upload_url}]", nil},
			Status{http.StatusBadRequest, "the body is not JSON (line and column)", []string{ObjectBadRequest}}),
		"PUT /blobs/{org_id}/{workspace_id}/{name}": {
			{http.StatusCreated, "stored (the same bytes again too)", nil},
			{http.StatusConflict, "different bytes under an existing blob name (blobs are immutable)", []string{ObjectBlobExists}},
			{http.StatusBadRequest, "the content does not match its SHA-256 name", []string{ObjectBadRequest}},
			{http.StatusForbidden, "bad or expired signature", []string{BadSignature}},
			objectFull},
		"GET /blobs/{org_id}/{workspace_id}/{name}": {
			{http.StatusOK, "the Parquet bytes", nil},
			{http.StatusPartialContent, "a range", nil},
			{http.StatusForbidden, "bad or expired signature", []string{BadSignature}}},
		"POST /compute/orgs/{org_id}/geostat/{task}":                      submit("geostat"),
		"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}/status":       job,
		"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}":              job,
		"DELETE /compute/orgs/{org_id}/geostat/{task}/{job_id}":           cancel,
		"POST /compute/orgs/{org_id}/geostatistics/{task}":                submit("geostatistics"),
		"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}/status": job,
		"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}":        job,
		"DELETE /compute/orgs/{org_id}/geostatistics/{task}/{job_id}":     cancel,
		"GET /compute/orgs/{org_id}/reports/{workspace_id}/{file_id}": with(
			[]Status{statusUnauthenticated,
				{http.StatusNotFound, "no such report file, or no role in the workspace", []string{ObjectNotFound, FileNotFound}},
				{http.StatusUnprocessableEntity, "an id that is not a UUID", []string{ObjectValidation, FileValidation}},
				statusGone},
			Status{http.StatusOK, "text/html", nil}),
		"PUT " + filePrefix + "/files/path/{file_path...}": with(edit, Status{http.StatusOK, "upload response", nil},
			Status{http.StatusBadRequest, "invalid path", []string{FileInvalidPath}}, fileFull),
		"PUT " + filePrefix + "/files/{file_id}":              with(edit, Status{http.StatusOK, "upload response", nil}, fileFull),
		"GET " + filePrefix + "/files/path/{file_path...}":    with(view, Status{http.StatusOK, "the record", nil}),
		"GET " + filePrefix + "/files/{file_id}":              with(view, Status{http.StatusOK, "the record", nil}),
		"DELETE " + filePrefix + "/files/path/{file_path...}": with(edit, Status{http.StatusNoContent, "deleted", nil}),
		"DELETE " + filePrefix + "/files/{file_id}":           with(edit, Status{http.StatusNoContent, "deleted", nil}),
		"GET " + filePrefix + "/files":                        with(view, Status{http.StatusOK, "a page", nil}),
		"PUT /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}": {
			{http.StatusCreated, "stored", nil},
			{http.StatusForbidden, "bad or expired signature", []string{BadSignature}},
			fileFull},
		"GET /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}": {
			{http.StatusOK, "the content", nil},
			{http.StatusPartialContent, "a range", nil},
			{http.StatusForbidden, "bad or expired signature", []string{BadSignature}}},
		"HEAD /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}": {
			{http.StatusOK, "headers only", nil},
			{http.StatusForbidden, "bad or expired signature", nil}},
	}
	for pattern, list := range workspaceStatuses() {
		out[pattern] = list
	}
	for pattern, list := range blockModelStatuses() {
		out[pattern] = list
	}
	// What every route but the liveness probe may answer: the request
	// limits of the server (worker/server/app.go) and a failure of the
	// worker itself. A status that every route gets goes here.
	every := []Status{
		{http.StatusTooManyRequests, "this caller has too many requests in flight (Retry-After)", []string{TooManyRequests}},
		{http.StatusServiceUnavailable, "the worker has too many requests in flight (Retry-After)", []string{Unavailable}},
		statusInternal,
	}
	for pattern, list := range out {
		if pattern == "GET /healthz" {
			continue
		}
		list = slices.Clone(list) // the routes share some lists
		for _, e := range every {
			i := slices.IndexFunc(list, func(s Status) bool { return s.Code == e.Code })
			if i < 0 {
				list = append(list, e)
				continue
			}
			if list[i].Meaning != e.Meaning {
				list[i].Meaning += "; or " + e.Meaning
			}
			list[i].Types = slices.Clone(list[i].Types)
			for _, t := range e.Types {
				if !slices.Contains(list[i].Types, t) {
					list[i].Types = append(list[i].Types, t)
				}
			}
		}
		if strings.Contains(pattern, " /compute/") {
			// The authentication problems of the compute routes carry the
			// compute base (worker/server authProblem); the report route's
			// workspace checks too.
			for i := range list {
				if list[i].Code == http.StatusUnauthorized || strings.Contains(pattern, "/reports/") {
					list[i].Types = rebase(list[i].Types)
				}
			}
		}
		slices.SortFunc(list, func(a, b Status) int { return a.Code - b.Code })
		out[pattern] = list
	}
	return out
}

// rebase moves object problem types to the compute base.
func rebase(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		if rest, ok := strings.CutPrefix(t, ObjectBase); ok {
			t = ComputeBase + rest
		}
		out[i] = t
	}
	return out
}

// documented is RouteStatuses built once, for Undocumented, which runs on
// every error answer of the worker; it is read, never modified.
var documented = sync.OnceValue(RouteStatuses)

// Undocumented reports whether a route of the table answered a status the
// table does not list for it (a HEAD request is looked up under its GET
// pattern's HEAD route). Patterns the table does not know (test routes)
// are not reported.
func Undocumented(method, pattern string, code int) bool {
	if rest, ok := strings.CutPrefix(pattern, "GET "); ok && method == http.MethodHead {
		pattern = "HEAD " + rest
	}
	list, ok := documented()[pattern]
	return ok && !slices.ContainsFunc(list, func(s Status) bool { return s.Code == code })
}

// workspaceStatuses are the statuses of the workspace area's routes
// (worker/workspaces).
func workspaceStatuses() map[string][]Status {
	const (
		org   = "/workspace/orgs/{org_id}"
		admin = "/workspace/admin/orgs/{org_id}"
		ws    = org + "/workspaces/{workspace_id}"
		aws   = admin + "/workspaces/{workspace_id}"
	)
	var (
		auth     = Status{http.StatusUnauthorized, "missing or unknown bearer token (a revoked or expired one too)", []string{WorkspaceMissingToken, WorkspaceInvalidToken}}
		invalid  = Status{http.StatusUnprocessableEntity, "invalid parameters: an id that is not a UUID, a bad query parameter or body member (invalid-params names each)", []string{WorkspaceValidation}}
		noOrg    = Status{http.StatusNotFound, "the organisation does not exist for the caller (no instance role in it), or the user, token or invitation named does not exist", []string{WorkspaceNotFound}}
		noWS     = Status{http.StatusNotFound, "the workspace does not exist for the caller (unknown, or no role in it), or the user named has no role in it", []string{WorkspaceNotFound}}
		low      = Status{http.StatusForbidden, "the caller's role is too low (insufficient-role, with your_role and permitted_roles)", []string{WorkspaceInsufficient}}
		notAdmin = Status{http.StatusForbidden, "the caller is not an instance admin of the organisation (insufficient-role)", []string{WorkspaceInsufficient}}
		large    = Status{http.StatusRequestEntityTooLarge, "the body is over 1 MiB", []string{PayloadTooLarge}}
		name     = Status{http.StatusConflict, "another workspace of the organisation has the name (case-insensitively)", []string{WorkspaceNameConflict}}
		lastOwn  = Status{http.StatusConflict, "the change would leave the workspace without an owner (last-owner)", []string{WorkspaceLastOwner}}
		exists   = Status{http.StatusConflict, "the email is a user of the organisation already", []string{WorkspaceUserExists}}
		ok       = func(meaning string) Status { return Status{http.StatusOK, meaning, nil} }
		created  = func(meaning string) Status { return Status{http.StatusCreated, meaning, nil} }
		done     = Status{http.StatusNoContent, "done", nil}
	)
	return map[string][]Status{
		"GET /workspace/platform/identity/v1/token":              {auth, ok("the token is valid (no body; tokens are issued by the admin token routes)")},
		"GET /workspace/evo/identity/v1/token":                   {auth, ok("the token is valid (no body; tokens are issued by the admin token routes)")},
		"GET " + ws:                                              {auth, ok("the workspace with current_user_role"), noWS, statusGone, invalid},
		"POST " + ws:                                             {auth, done, {http.StatusSeeOther, "the workspace is not deleted: see it (Location, problem body not-deleted)", []string{WorkspaceNotDeleted}}, {http.StatusBadRequest, "deleted=false is missing", []string{WorkspaceBadRequest}}, low, noWS, invalid},
		"GET " + ws + "/users":                                   {auth, ok("{links, results: [{user_id, role, email, full_name}]}"), noWS, statusGone, invalid},
		"GET " + org + "/members/users":                          {auth, ok("{links: {count, first, next, previous}, results: [instance user]}"), noOrg, invalid},
		"DELETE " + org + "/members/invitations/{invitation_id}": {auth, done, notAdmin, noOrg, invalid},
		"POST " + org + "/workspaces":                            {auth, created("the workspace; the creator (a stored user) is its owner"), noOrg, name, large, invalid},
		"GET " + org + "/workspaces":                             {auth, ok("{links: {count, first, last, next, previous, total}, results: [workspace]}"), noOrg, invalid},
		"GET " + org + "/workspaces/summary":                     {auth, ok("{links, results: [{id, name}]}"), noOrg, invalid},
		"PATCH " + ws:                                            {auth, ok("the workspace"), low, noWS, name, statusGone, large, invalid},
		"DELETE " + ws:                                           {auth, done, low, noWS, statusGone, invalid},
		"GET " + ws + "/current-user-role":                       {auth, ok("{user_id, role}"), noWS, statusGone, invalid},
		"POST " + ws + "/users":                                  {auth, created("{user_id, role}"), low, noWS, lastOwn, statusGone, large, invalid},
		"DELETE " + ws + "/users/{user_id}":                      {auth, done, low, noWS, lastOwn, statusGone, invalid},
		"POST " + org + "/members/users":                         {auth, created("{members, invitations}"), notAdmin, noOrg, exists, large, invalid},
		"PATCH " + org + "/members/users/{user_id}":              {auth, ok("{id, roles}"), notAdmin, noOrg, large, invalid},
		"DELETE " + org + "/members/users/{user_id}":             {auth, done, notAdmin, noOrg, invalid},
		"GET " + org + "/members/roles":                          {auth, ok("{roles: [{id, name, description, permissions}]}"), noOrg, invalid},
		"GET " + org + "/members/invitations":                    {auth, ok("{links, results: [invitation]}"), notAdmin, noOrg, invalid},
		"GET " + admin + "/workspaces":                           {auth, ok("every workspace of the organisation"), notAdmin, noOrg, invalid},
		"GET " + aws:                                             {auth, ok("the workspace"), notAdmin, noWS, statusGone, invalid},
		"GET " + aws + "/users":                                  {auth, ok("{links, results}"), notAdmin, noWS, statusGone, invalid},
		"POST " + aws + "/users":                                 {auth, created("{user_id, role}"), notAdmin, noWS, statusGone, large, invalid},
		"DELETE " + aws + "/users/{user_id}":                     {auth, done, notAdmin, noWS, statusGone, invalid},
		"GET " + admin + "/users/{user_id}/workspaces":           {auth, ok("{results: [workspace with user_role]}"), notAdmin, noOrg, invalid},
		"POST " + admin + "/action/bulk_assign_roles":            {auth, ok("{role_assignments}"), notAdmin, noOrg, large, invalid},
		"POST " + admin + "/users":                               {auth, created("the instance user"), notAdmin, noOrg, exists, large, invalid},
		"POST " + admin + "/users/{user_id}/tokens":              {auth, created("{id, name, token, created_at, expires_at}: the token is shown this once"), notAdmin, noOrg, large, invalid},
		"GET " + admin + "/users/{user_id}/tokens":               {auth, ok("{results: [{id, name, created_at, expires_at, last_used_at}]}"), notAdmin, noOrg, invalid},
		"DELETE " + admin + "/users/{user_id}/tokens/{token_id}": {auth, done, notAdmin, noOrg, invalid},
	}
}
