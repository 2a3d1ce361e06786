package workspaces

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/identity"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
)

// grantDoc is a workspace user: a role grant with the user's email and name.
type grantDoc struct {
	UserID   string        `json:"user_id"`
	Role     identity.Role `json:"role"`
	Email    *string       `json:"email"`
	FullName *string       `json:"full_name"`
}

// roleDoc is an instance role; permissions only in the role listing.
type roleDoc struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Permissions []string `json:"permissions,omitempty"`
}

func roleOf(r identity.InstanceRole) roleDoc {
	return roleDoc{ID: r.ID(), Name: string(r), Description: r.Description()}
}

// permissions of the instance roles, as the role listing shows them.
var permissions = map[identity.InstanceRole][]string{
	identity.InstanceMember: {"workspace:create", "workspace:list", "members:list"},
	identity.InstanceAdmin: {"workspace:create", "workspace:list", "members:list", "workspace:admin",
		"members:manage", "invitations:manage", "tokens:manage", "metrics:read"},
}

// memberDoc is an instance user with its role in the organisation.
type memberDoc struct {
	ID       string    `json:"id"`
	Email    string    `json:"email"`
	FullName string    `json:"full_name"`
	Roles    []roleDoc `json:"roles"`
}

func memberOf(u identity.User, org string) memberDoc {
	d := memberDoc{ID: u.ID, Email: u.Email, FullName: u.FullName, Roles: []roleDoc{}}
	if r, ok := u.Orgs[org]; ok {
		d.Roles = append(d.Roles, roleOf(r))
	}
	return d
}

// invitationDoc is an invitation as the routes render it.
type invitationDoc struct {
	ID             string    `json:"id"`
	Email          string    `json:"email"`
	Roles          []roleDoc `json:"roles"`
	CreatedDate    time.Time `json:"created_date"`
	ExpirationDate time.Time `json:"expiration_date"`
	InvitedByEmail *string   `json:"invited_by_email"`
	Status         string    `json:"status"`
}

func invitationOf(i identity.Invitation, now time.Time) invitationDoc {
	return invitationDoc{ID: i.ID, Email: i.Email, Roles: []roleDoc{roleOf(i.Role)}, CreatedDate: i.CreatedAt.UTC(),
		ExpirationDate: i.ExpiresAt.UTC(), InvitedByEmail: nullable(i.InvitedByEmail), Status: i.Status(now)}
}

// instanceRole reads a list of instance role ids: the strongest of them
// ("" for an empty list); ok false names the first unknown id.
func instanceRole(ids []string) (role identity.InstanceRole, bad string, ok bool) {
	for _, id := range ids {
		r, known := identity.InstanceRoleByID(id)
		if !known {
			if r = identity.InstanceRole(strings.ToLower(id)); !r.Valid() { // the name is accepted too
				return "", id, false
			}
		}
		if role == "" || r == identity.InstanceAdmin {
			role = r
		}
	}
	return role, "", true
}

// listGrants serves GET …/workspaces/{ws}/users (any role; user_id or
// filter[user_id] keeps one user) and its admin form.
func (a *api) listGrants(admin bool) func(http.ResponseWriter, *http.Request, *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		q := r.URL.Query()
		only := q.Get("user_id")
		if v := q.Get("filter[user_id]"); v != "" {
			only = v
		}
		if only != "" && !objects.IsUUID(only) {
			a.invalid(w, r, "user_id", "%q is not a UUID", only)
			return
		}
		if admin && !a.admin(w, r, c) {
			return
		}
		rec, _, ok := a.workspace(w, r, c, identity.RoleViewer, false)
		if !ok {
			return
		}
		results := []grantDoc{}
		for _, g := range a.st.Grants(c.org, rec.ID) {
			if only == "" || strings.EqualFold(g.UserID, only) {
				results = append(results, grantDoc{UserID: g.UserID, Role: g.Role, Email: nullable(g.Email), FullName: nullable(g.FullName)})
			}
		}
		server.WriteJSON(w, http.StatusOK, map[string]any{"links": map[string]any{"self": a.baseURL(r) + r.URL.RequestURI()}, "results": results})
	}
}

// setGrant serves POST …/workspaces/{ws}/users {user_id | email, role}:
// 201 {user_id, role}, replacing the role the user had (demoting the last
// owner is 409 last-owner); owner, or instance admin in the admin form.
func (a *api) setGrant(admin bool) func(http.ResponseWriter, *http.Request, *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		if admin && !a.admin(w, r, c) {
			return
		}
		rec, _, ok := a.workspace(w, r, c, identity.RoleOwner, false)
		if !ok {
			return
		}
		var body struct {
			UserID *string        `json:"user_id"`
			Email  *string        `json:"email"`
			Role   *identity.Role `json:"role"`
		}
		if !a.decode(w, r, &body) {
			return
		}
		var bad []problem.InvalidParam
		userID := ""
		switch {
		case body.UserID != nil && body.Email != nil:
			bad = append(bad, problem.InvalidParam{Name: "user_id", Reason: "give user_id or email, not both"})
		case body.UserID != nil:
			if userID = strings.ToLower(*body.UserID); !objects.IsUUID(userID) {
				bad = append(bad, problem.InvalidParam{Name: "user_id", Reason: fmt.Sprintf("%q is not a UUID", *body.UserID)})
			}
		case body.Email != nil:
			u, known := a.st.UserByEmail(*body.Email)
			if _, in := u.Orgs[c.org]; !known || !in {
				bad = append(bad, problem.InvalidParam{Name: "email", Reason: fmt.Sprintf("%q is not a user of the organisation", *body.Email)})
			}
			userID = u.ID
		default:
			bad = append(bad, problem.InvalidParam{Name: "user_id", Reason: "required (or email)"})
		}
		if body.Role == nil || !body.Role.Valid() {
			bad = append(bad, problem.InvalidParam{Name: "role", Reason: "required: owner, editor or viewer"})
		}
		if len(bad) > 0 {
			a.write(w, r, problem.Invalid(problem.WorkspaceValidation, bad))
			return
		}
		if err := a.st.SetGrant(r.Context(), c.p, c.org, rec.ID, userID, *body.Role); err != nil {
			a.fail(w, r, err)
			return
		}
		server.WriteJSON(w, http.StatusCreated, map[string]any{"user_id": userID, "role": *body.Role})
	}
}

// removeGrant serves DELETE …/workspaces/{ws}/users/{user_id}: 204;
// owner, or the user itself, or instance admin in the admin form; removing
// the last owner is 409 last-owner (an admin may).
func (a *api) removeGrant(admin bool) func(http.ResponseWriter, *http.Request, *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		if admin && !a.admin(w, r, c) {
			return
		}
		userID := strings.ToLower(r.PathValue("user_id"))
		min := identity.RoleOwner
		if !c.p.Static() && strings.EqualFold(c.p.User.ID, userID) {
			min = identity.RoleViewer // leaving a workspace
		}
		rec, _, ok := a.workspace(w, r, c, min, false)
		if !ok {
			return
		}
		if err := a.st.RemoveGrant(r.Context(), c.p, c.org, rec.ID, userID); err != nil {
			a.fail(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// listMembers serves GET …/members/users?limit&offset: the instance users
// of the organisation; instance member.
func (a *api) listMembers(w http.ResponseWriter, r *http.Request, c *caller) {
	limit, offset, perr := paging(r.URL.Query())
	if perr != nil {
		a.write(w, r, problem.Invalid(problem.WorkspaceValidation, []problem.InvalidParam{*perr}))
		return
	}
	if _, ok := a.member(w, r, c); !ok {
		return
	}
	all := a.st.Users(c.org)
	items := page(all, limit, offset)
	results := make([]memberDoc, len(items))
	for i, u := range items {
		results[i] = memberOf(u, c.org)
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"links": a.pageLinks(r, limit, offset, len(items), len(all), false), "results": results})
}

// addMembers serves POST …/members/users {users: [{email, roles}]}: an
// email that is a user already joins the organisation, another one is
// invited (a pending invitation, no mail sent); 201 {members,
// invitations}; instance admin.
func (a *api) addMembers(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	var body struct {
		Users []struct {
			Email string   `json:"email"`
			Roles []string `json:"roles"`
		} `json:"users"`
	}
	if !a.decode(w, r, &body) {
		return
	}
	var bad []problem.InvalidParam
	if n := len(body.Users); n < 1 || n > 100 {
		bad = append(bad, problem.InvalidParam{Name: "users", Reason: "want 1 to 100 users"})
	}
	roles := make([]identity.InstanceRole, len(body.Users))
	for i, u := range body.Users {
		role, id, ok := instanceRole(u.Roles)
		if !ok {
			bad = append(bad, problem.InvalidParam{Name: fmt.Sprintf("users[%d].roles", i), Reason: fmt.Sprintf("%q is not an instance role id", id)})
		}
		roles[i] = role
	}
	if len(bad) > 0 {
		a.write(w, r, problem.Invalid(problem.WorkspaceValidation, bad))
		return
	}
	members, invitations := []memberDoc{}, []invitationDoc{}
	for i, u := range body.Users {
		if _, known := a.st.UserByEmail(u.Email); known {
			m, err := a.st.CreateUser(r.Context(), c.p, c.org, u.Email, "", roles[i])
			if err != nil {
				a.fail(w, r, err)
				return
			}
			members = append(members, memberOf(m, c.org))
			continue
		}
		inv, err := a.st.Invite(r.Context(), c.p, c.org, u.Email, roles[i])
		if err != nil {
			a.fail(w, r, err)
			return
		}
		invitations = append(invitations, invitationOf(inv, time.Now()))
	}
	server.WriteJSON(w, http.StatusCreated, map[string]any{"members": members, "invitations": invitations})
}

// setMemberRole serves PATCH …/members/users/{user_id} {roles}: 200 {id,
// roles}; instance admin.
func (a *api) setMemberRole(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	var body struct {
		Roles []string `json:"roles"`
	}
	if !a.decode(w, r, &body) {
		return
	}
	role, id, ok := instanceRole(body.Roles)
	switch {
	case !ok:
		a.invalid(w, r, "roles", "%q is not an instance role id", id)
		return
	case role == "":
		a.invalid(w, r, "roles", "required: one instance role id")
		return
	}
	u, err := a.st.SetUserRole(r.Context(), c.org, r.PathValue("user_id"), role)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	d := memberOf(u, c.org)
	server.WriteJSON(w, http.StatusOK, map[string]any{"id": d.ID, "roles": d.Roles})
}

// removeMember serves DELETE …/members/users/{user_id}: 204; the user's
// grants in the organisation go, and with its last organisation the user
// and its tokens (effective at the next request); instance admin.
func (a *api) removeMember(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	if err := a.st.RemoveUser(r.Context(), c.p, c.org, r.PathValue("user_id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listRoles serves GET …/members/roles; instance member.
func (a *api) listRoles(w http.ResponseWriter, r *http.Request, c *caller) {
	if _, ok := a.member(w, r, c); !ok {
		return
	}
	out := []roleDoc{}
	for _, role := range []identity.InstanceRole{identity.InstanceAdmin, identity.InstanceMember} {
		d := roleOf(role)
		d.Permissions = permissions[role]
		out = append(out, d)
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"roles": out})
}

// listInvitations serves GET …/members/invitations?limit&offset; instance
// admin.
func (a *api) listInvitations(w http.ResponseWriter, r *http.Request, c *caller) {
	limit, offset, perr := paging(r.URL.Query())
	if perr != nil {
		a.write(w, r, problem.Invalid(problem.WorkspaceValidation, []problem.InvalidParam{*perr}))
		return
	}
	if !a.admin(w, r, c) {
		return
	}
	all := a.st.Invitations(c.org)
	items := page(all, limit, offset)
	results := make([]invitationDoc, len(items))
	now := time.Now()
	for i, inv := range items {
		results[i] = invitationOf(inv, now)
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"links": a.pageLinks(r, limit, offset, len(items), len(all), false), "results": results})
}

// deleteInvitation serves DELETE …/members/invitations/{invitation_id};
// instance admin.
func (a *api) deleteInvitation(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	if err := a.st.DeleteInvitation(r.Context(), c.org, r.PathValue("invitation_id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// userWorkspaces serves GET /workspace/admin/orgs/{org}/users/{user_id}/
// workspaces: the workspaces where the user has a role, with user_role;
// instance admin.
func (a *api) userWorkspaces(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	userID := strings.ToLower(r.PathValue("user_id"))
	if _, ok := a.orgUser(w, r, c, userID); !ok {
		return
	}
	results := []workspaceDoc{}
	for _, ws := range a.st.Workspaces(c.org, false) {
		if role := a.st.RoleOfUser(userID, c.org, ws.ID).Role; role != identity.None {
			d := a.doc(r, ws, identity.None)
			d.UserRole = role
			results = append(results, d)
		}
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"results": results})
}

// orgUser returns a user of the path's organisation (404 otherwise).
func (a *api) orgUser(w http.ResponseWriter, r *http.Request, c *caller, userID string) (identity.User, bool) {
	u, ok := a.st.User(userID)
	if _, in := u.Orgs[c.org]; !ok || !in {
		a.write(w, r, notFound("user %s is not a user of the organisation", userID))
		return identity.User{}, false
	}
	return u, true
}

// MaxBulkAssignments bounds the role assignments of one bulk request.
const MaxBulkAssignments = 100

// bulkAssign serves POST /workspace/admin/orgs/{org}/action/
// bulk_assign_roles {role_assignments: [{user_id, workspace_id, role}]}:
// every assignment is checked first (422 naming each bad one), then
// applied in order; 200 with the assignments; instance admin.
func (a *api) bulkAssign(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	type assignment struct {
		UserID      string        `json:"user_id"`
		WorkspaceID string        `json:"workspace_id"`
		Role        identity.Role `json:"role"`
	}
	var body struct {
		RoleAssignments []assignment `json:"role_assignments"`
	}
	if !a.decode(w, r, &body) {
		return
	}
	var bad []problem.InvalidParam
	add := func(name, format string, args ...any) {
		bad = append(bad, problem.InvalidParam{Name: name, Reason: fmt.Sprintf(format, args...)})
	}
	if n := len(body.RoleAssignments); n < 1 || n > MaxBulkAssignments {
		add("role_assignments", "want 1 to %d assignments", MaxBulkAssignments)
	}
	for i, as := range body.RoleAssignments {
		at := fmt.Sprintf("role_assignments[%d]", i)
		if u, ok := a.st.User(strings.ToLower(as.UserID)); !ok || u.Orgs[c.org] == "" {
			add(at+".user_id", "%q is not a user of the organisation", as.UserID)
		}
		if _, st := a.st.Workspace(c.org, as.WorkspaceID); st != identity.StateActive {
			add(at+".workspace_id", "%q is not an active workspace of the organisation", as.WorkspaceID)
		}
		if !as.Role.Valid() {
			add(at+".role", "%q: want owner, editor or viewer", as.Role)
		}
	}
	if len(bad) > 0 {
		a.write(w, r, problem.Invalid(problem.WorkspaceValidation, bad))
		return
	}
	for _, as := range body.RoleAssignments {
		if err := a.st.SetGrant(r.Context(), c.p, c.org, as.WorkspaceID, as.UserID, as.Role); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"role_assignments": body.RoleAssignments})
}

// createUser serves POST /workspace/admin/orgs/{org}/users {email,
// full_name, roles?}: 201 with the instance user (the roles of a pending
// invitation of the email when roles is absent, else member); instance
// admin.
func (a *api) createUser(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	var body struct {
		Email    string   `json:"email"`
		FullName string   `json:"full_name"`
		Roles    []string `json:"roles"`
	}
	if !a.decode(w, r, &body) {
		return
	}
	role, id, ok := instanceRole(body.Roles)
	if !ok {
		a.invalid(w, r, "roles", "%q is not an instance role id", id)
		return
	}
	u, err := a.st.CreateUser(r.Context(), c.p, c.org, body.Email, body.FullName, role)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusCreated, memberOf(u, c.org))
}

// tokenDoc is a token as listed (never its secret).
type tokenDoc struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  any       `json:"expires_at"`
	LastUsedAt any       `json:"last_used_at"`
}

// createToken serves POST …/users/{user_id}/tokens {name, expires_at?}:
// 201 {id, name, token, created_at, expires_at}, the token shown this
// once; instance admin of every organisation of the user.
func (a *api) createToken(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	u, ok := a.orgUser(w, r, c, strings.ToLower(r.PathValue("user_id")))
	if !ok {
		return
	}
	// A token acts in every organisation of its user: only an admin of
	// each of them may issue one (else an admin of one organisation could
	// act as the user in another, as its admin perhaps).
	for org := range u.Orgs {
		if role, _ := a.st.InstanceRoleOf(c.p, org); role != identity.InstanceAdmin {
			a.write(w, r, insufficient("the user belongs to an organisation the caller does not administer: only an admin of each of the user's organisations may issue it a token",
				role, []identity.InstanceRole{identity.InstanceAdmin}))
			return
		}
	}
	var body struct {
		Name      string     `json:"name"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	if !a.decode(w, r, &body) {
		return
	}
	t, err := a.st.CreateToken(r.Context(), u.ID, body.Name, body.ExpiresAt)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // the secret is shown once
	server.WriteJSON(w, http.StatusCreated, map[string]any{"id": t.ID, "name": t.Name, "token": t.Secret,
		"created_at": t.CreatedAt.UTC(), "expires_at": timeOrNull(t.ExpiresAt)})
}

// listTokens serves GET …/users/{user_id}/tokens; instance admin.
func (a *api) listTokens(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	u, ok := a.orgUser(w, r, c, strings.ToLower(r.PathValue("user_id")))
	if !ok {
		return
	}
	results := []tokenDoc{}
	for _, t := range a.st.Tokens(u.ID) {
		results = append(results, tokenDoc{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt.UTC(), ExpiresAt: timeOrNull(t.ExpiresAt), LastUsedAt: timeOrNull(t.LastUsedAt)})
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"results": results})
}

// revokeToken serves DELETE …/users/{user_id}/tokens/{token_id}: 204; the
// token is refused at the next request on every api worker; instance admin.
func (a *api) revokeToken(w http.ResponseWriter, r *http.Request, c *caller) {
	if !a.admin(w, r, c) {
		return
	}
	u, ok := a.orgUser(w, r, c, strings.ToLower(r.PathValue("user_id")))
	if !ok {
		return
	}
	if err := a.st.RevokeToken(r.Context(), u.ID, strings.ToLower(r.PathValue("token_id"))); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
