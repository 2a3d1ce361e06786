package workspaces

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/identity"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
)

// MaxBodyBytes bounds the request bodies of the area (413 above).
const MaxBodyBytes = 1 << 20

// Paging of the area's listings.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Path prefixes of the area.
const (
	orgPrefix   = "/workspace/orgs/{org_id}"
	adminPrefix = "/workspace/admin/orgs/{org_id}"
)

// api serves the workspace area.
type api struct {
	id      *Identity
	st      *identity.Store
	auth    *server.Auth
	log     *slog.Logger
	baseURL func(*http.Request) string
}

// caller is an authenticated request of the area.
type caller struct {
	p   *identity.Principal
	org string
}

// Register adds the workspace area's routes to mux: the seed's workspace,
// member and token routes, the client's workspace management and admin
// routes, and the self-hosted engine's user and token routes (see
// docs/api.md, "Workspaces, users and roles").
func Register(mux server.Router, deps server.Deps, id *Identity) {
	a := &api{id: id, st: id.store, auth: deps.Auth, log: deps.Logger, baseURL: deps.BaseURL}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.baseURL == nil {
		a.baseURL = func(r *http.Request) string { return "http://" + r.Host }
	}
	ws := orgPrefix + "/workspaces/{workspace_id}"
	adminWS := adminPrefix + "/workspaces/{workspace_id}"
	routes := []struct {
		pattern string
		h       func(http.ResponseWriter, *http.Request, *caller)
	}{
		// The seed's routes.
		{"GET /workspace/platform/identity/v1/token", a.token},
		{"GET /workspace/evo/identity/v1/token", a.token},
		{"GET " + ws, a.getWorkspace(false)},
		{"POST " + ws, a.restoreWorkspace},
		{"GET " + ws + "/users", a.listGrants(false)},
		{"GET " + orgPrefix + "/members/users", a.listMembers},
		{"DELETE " + orgPrefix + "/members/invitations/{invitation_id}", a.deleteInvitation},
		// The client's routes.
		{"POST " + orgPrefix + "/workspaces", a.createWorkspace},
		{"GET " + orgPrefix + "/workspaces", a.listWorkspaces(false, false)},
		{"GET " + orgPrefix + "/workspaces/summary", a.listWorkspaces(false, true)},
		{"PATCH " + ws, a.updateWorkspace},
		{"DELETE " + ws, a.deleteWorkspace},
		{"GET " + ws + "/current-user-role", a.currentRole},
		{"POST " + ws + "/users", a.setGrant(false)},
		{"DELETE " + ws + "/users/{user_id}", a.removeGrant(false)},
		{"POST " + orgPrefix + "/members/users", a.addMembers},
		{"PATCH " + orgPrefix + "/members/users/{user_id}", a.setMemberRole},
		{"DELETE " + orgPrefix + "/members/users/{user_id}", a.removeMember},
		{"GET " + orgPrefix + "/members/roles", a.listRoles},
		{"GET " + orgPrefix + "/members/invitations", a.listInvitations},
		{"GET " + adminPrefix + "/workspaces", a.listWorkspaces(true, false)},
		{"GET " + adminWS, a.getWorkspace(true)},
		{"GET " + adminWS + "/users", a.listGrants(true)},
		{"POST " + adminWS + "/users", a.setGrant(true)},
		{"DELETE " + adminWS + "/users/{user_id}", a.removeGrant(true)},
		{"GET " + adminPrefix + "/users/{user_id}/workspaces", a.userWorkspaces},
		{"POST " + adminPrefix + "/action/bulk_assign_roles", a.bulkAssign},
		// The self-hosted engine's user and token routes.
		{"POST " + adminPrefix + "/users", a.createUser},
		{"POST " + adminPrefix + "/users/{user_id}/tokens", a.createToken},
		{"GET " + adminPrefix + "/users/{user_id}/tokens", a.listTokens},
		{"DELETE " + adminPrefix + "/users/{user_id}/tokens/{token_id}", a.revokeToken},
	}
	for _, rt := range routes {
		mux.Handle(rt.pattern, a.handle(rt.h))
	}
}

// pathIDs are the path values of the area that must be UUIDs.
var pathIDs = []string{"org_id", "workspace_id", "user_id", "invitation_id", "token_id"}

// handle wraps h: a valid token (401 under the area's types) and UUID path
// ids (422 naming each bad one).
func (a *api) handle(h func(http.ResponseWriter, *http.Request, *caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sp, err := a.auth.Authenticate(r)
		if err != nil {
			p := problem.From(err)
			if rest, ok := strings.CutPrefix(p.Type, problem.ObjectBase); ok {
				p.Type = problem.WorkspaceBase + rest // auth/missing-token, auth/invalid-token
			}
			a.write(w, r, p)
			return
		}
		ip := principalOf(sp)
		if ip == nil {
			a.fail(w, r, errors.New("workspaces: the principal was not authenticated by the identity store"))
			return
		}
		var bad []problem.InvalidParam
		for _, name := range pathIDs {
			if v := r.PathValue(name); v != "" && !objects.IsUUID(v) {
				bad = append(bad, problem.InvalidParam{Name: name, Reason: fmt.Sprintf("%q is not a UUID", v)})
			}
		}
		if len(bad) > 0 {
			a.write(w, r, problem.Invalid(problem.WorkspaceValidation, bad))
			return
		}
		h(w, r, &caller{p: ip, org: strings.ToLower(r.PathValue("org_id"))})
	})
}

// write answers a problem, through server.WriteProblem (which logs server
// errors and statuses the route does not document).
func (a *api) write(w http.ResponseWriter, r *http.Request, p problem.Problem) {
	server.WriteProblem(w, r, a.log, &problem.Error{Status: p.Status, Type: p.Type, Title: p.Title, Detail: p.Detail, Extra: p.Extra})
}

// fail answers err: an identity error with its kind's status and type, a
// body over MaxBodyBytes 413, any other error 500 (logged, not shown).
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ie *identity.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ie) && ie.Kind.Status() >= 400 && ie.Kind.Status() < 500:
		p := problem.Problem{Type: problem.Base + "/" + ie.Kind.ProblemType(), Title: http.StatusText(ie.Kind.Status()) + ".",
			Status: ie.Kind.Status(), Detail: ie.Detail}
		if len(ie.Params) > 0 {
			p = problem.Invalid(p.Type, ie.Params)
		}
		a.write(w, r, p)
	case errors.As(err, &mbe):
		server.WriteProblem(w, r, a.log, err)
	default:
		server.WriteProblem(w, r, a.log, &problem.Error{Status: http.StatusInternalServerError, Type: problem.WorkspaceInternal,
			Title: "Internal Error.", Err: err})
	}
}

// invalid answers 422 validation naming one bad parameter.
func (a *api) invalid(w http.ResponseWriter, r *http.Request, name, format string, args ...any) {
	a.write(w, r, problem.Invalid(problem.WorkspaceValidation, []problem.InvalidParam{{Name: name, Reason: fmt.Sprintf(format, args...)}}))
}

func notFound(format string, args ...any) problem.Problem {
	return problem.Problem{Type: problem.WorkspaceNotFound, Title: "Not Found.", Status: http.StatusNotFound, Detail: fmt.Sprintf(format, args...)}
}

func insufficient(detail string, yours any, permitted any) problem.Problem {
	return problem.Problem{Type: problem.WorkspaceInsufficient, Title: "Insufficient Role.", Status: http.StatusForbidden, Detail: detail,
		Extra: map[string]any{"your_role": yours, "permitted_roles": permitted}}
}

// permittedRoles lists the workspace roles at least min, strongest first.
func permittedRoles(min identity.Role) []identity.Role {
	var out []identity.Role
	for _, r := range []identity.Role{identity.RoleOwner, identity.RoleEditor, identity.RoleViewer} {
		if r.AtLeast(min) {
			out = append(out, r)
		}
	}
	return out
}

// workspace resolves the caller's access to the path's workspace: no role
// in a workspace that exists is 404, a deleted workspace 410 (unless
// allowDeleted), a role below min 403.
func (a *api) workspace(w http.ResponseWriter, r *http.Request, c *caller, min identity.Role, allowDeleted bool) (identity.Workspace, identity.Role, bool) {
	ws := strings.ToLower(r.PathValue("workspace_id"))
	res, err := a.st.Resolve(r.Context(), c.p, c.org, ws)
	if err != nil {
		a.fail(w, r, err)
		return identity.Workspace{}, identity.None, false
	}
	if res.Registered {
		a.log.Info("registered a workspace on its first use by a static principal with a * grant", "org", c.org, "workspace", ws, "user", c.p.User.ID)
	}
	if res.Role == identity.None || res.State == identity.StateUnknown {
		a.write(w, r, notFound("workspace %s not found", ws))
		return identity.Workspace{}, identity.None, false
	}
	if res.State == identity.StateDeleted && !allowDeleted {
		a.write(w, r, server.WorkspaceGone(ws))
		return identity.Workspace{}, identity.None, false
	}
	if !res.Role.AtLeast(min) {
		a.write(w, r, insufficient(fmt.Sprintf("this operation needs the role %s or higher in the workspace", min), res.Role, permittedRoles(min)))
		return identity.Workspace{}, identity.None, false
	}
	rec, _ := a.st.Workspace(c.org, ws)
	return rec, res.Role, true
}

// member checks that the caller belongs to the path's organisation (404
// otherwise: the organisation does not exist for it) and returns its
// instance role.
func (a *api) member(w http.ResponseWriter, r *http.Request, c *caller) (identity.InstanceRole, bool) {
	role, ok := a.st.InstanceRoleOf(c.p, c.org)
	if !ok {
		a.write(w, r, notFound("organisation %s not found", c.org))
	}
	return role, ok
}

// admin checks that the caller is an instance admin of the path's
// organisation: 404 for a stranger to it, 403 for a member.
func (a *api) admin(w http.ResponseWriter, r *http.Request, c *caller) bool {
	role, ok := a.member(w, r, c)
	if !ok {
		return false
	}
	if role != identity.InstanceAdmin {
		a.write(w, r, insufficient("this operation needs the instance role admin", role, []identity.InstanceRole{identity.InstanceAdmin}))
		return false
	}
	return true
}

// decode reads a JSON object body into v (422 naming body when it is not
// one, 413 above MaxBodyBytes).
func (a *api) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		a.fail(w, r, err)
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		a.invalid(w, r, "body", "not a JSON object of the expected shape: %v", err)
		return false
	}
	return true
}

// userRef renders a user reference: {id, name, email}, null members when
// unknown.
type userRef struct {
	ID    *string `json:"id"`
	Name  *string `json:"name"`
	Email *string `json:"email"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func refOf(u identity.UserRef) userRef {
	return userRef{ID: nullable(u.ID), Name: nullable(u.Name), Email: nullable(u.Email)}
}

// paging reads limit and offset.
func paging(q url.Values) (limit, offset int, err *problem.InvalidParam) {
	limit = DefaultLimit
	if s := q.Get("limit"); s != "" {
		n, e := strconv.Atoi(s)
		if e != nil || n < 1 || n > MaxLimit {
			return 0, 0, &problem.InvalidParam{Name: "limit", Reason: fmt.Sprintf("%q: want an integer in 1..%d", s, MaxLimit)}
		}
		limit = n
	}
	if s := q.Get("offset"); s != "" {
		n, e := strconv.Atoi(s)
		if e != nil || n < 0 {
			return 0, 0, &problem.InvalidParam{Name: "offset", Reason: fmt.Sprintf("%q: want an integer >= 0", s)}
		}
		offset = n
	}
	return limit, offset, nil
}

// page cuts items[offset:offset+limit].
func page[T any](items []T, limit, offset int) []T {
	if offset >= len(items) {
		return []T{}
	}
	return items[offset:min(len(items), offset+limit)]
}

// pageLinks are the links of a list page: count (items on the page),
// first, next and previous (null when none), and with total also last and
// total.
func (a *api) pageLinks(r *http.Request, limit, offset, count, total int, withTotal bool) map[string]any {
	at := func(off int) string {
		q := r.URL.Query()
		q.Set("limit", strconv.Itoa(limit))
		q.Set("offset", strconv.Itoa(off))
		return a.baseURL(r) + r.URL.Path + "?" + q.Encode()
	}
	links := map[string]any{"count": count, "first": at(0), "next": nil, "previous": nil}
	if offset+limit < total {
		links["next"] = at(offset + limit)
	}
	if offset > 0 {
		links["previous"] = at(max(0, offset-limit))
	}
	if withTotal {
		links["total"] = total
		links["last"] = at(max(0, (total-1)/limit*limit))
	}
	return links
}

// timeOrNull renders an optional time.
func timeOrNull(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}
