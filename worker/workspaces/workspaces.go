package workspaces

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/identity"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
)

// workspaceDoc is a workspace as the routes render it.
type workspaceDoc struct {
	ID                      string            `json:"id"`
	Name                    string            `json:"name"`
	Description             string            `json:"description"`
	Labels                  []string          `json:"labels"`
	DefaultCoordinateSystem string            `json:"default_coordinate_system"`
	BoundingBox             *identity.Polygon `json:"bounding_box"`
	MLEnabled               bool              `json:"ml_enabled"`
	CurrentUserRole         identity.Role     `json:"current_user_role,omitempty"`
	UserRole                identity.Role     `json:"user_role,omitempty"`
	CreatedAt               time.Time         `json:"created_at"`
	CreatedBy               userRef           `json:"created_by"`
	UpdatedAt               time.Time         `json:"updated_at"`
	UpdatedBy               userRef           `json:"updated_by"`
	SelfLink                string            `json:"self_link"`
}

func (a *api) selfLink(r *http.Request, w identity.Workspace) string {
	return a.baseURL(r) + "/workspace/orgs/" + w.Org + "/workspaces/" + w.ID
}

func (a *api) doc(r *http.Request, w identity.Workspace, role identity.Role) workspaceDoc {
	labels := w.Labels
	if labels == nil {
		labels = []string{}
	}
	return workspaceDoc{ID: w.ID, Name: w.Name, Description: w.Description, Labels: labels,
		DefaultCoordinateSystem: w.DefaultCoordinateSystem, BoundingBox: w.BoundingBox, MLEnabled: w.MLEnabled,
		CurrentUserRole: role, CreatedAt: w.CreatedAt.UTC(), CreatedBy: refOf(w.CreatedBy),
		UpdatedAt: w.UpdatedAt.UTC(), UpdatedBy: refOf(w.UpdatedBy), SelfLink: a.selfLink(r, w)}
}

// token serves the seed's token route: it mints nothing (tokens come from
// the admin routes) and answers 200 without a body to a valid token.
func (a *api) token(w http.ResponseWriter, r *http.Request, c *caller) {
	w.WriteHeader(http.StatusOK)
}

// deletedParam reads the deleted query parameter ("" when absent).
func deletedParam(r *http.Request) (string, bool) {
	v := r.URL.Query().Get("deleted")
	return v, v == "" || v == "true" || v == "false"
}

// getWorkspace serves GET …/workspaces/{ws} (any role; deleted=true reads a
// deleted one) and its admin form (instance admin, role optional).
func (a *api) getWorkspace(admin bool) func(http.ResponseWriter, *http.Request, *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		deleted, ok := deletedParam(r)
		if !ok {
			a.invalid(w, r, "deleted", "%q: want true or false", deleted)
			return
		}
		if admin && !a.admin(w, r, c) {
			return
		}
		rec, role, ok := a.workspace(w, r, c, identity.RoleViewer, deleted == "true")
		if !ok {
			return
		}
		if admin {
			role = identity.None // optional in admin responses
		}
		server.WriteJSON(w, http.StatusOK, a.doc(r, rec, role))
	}
}

// restoreWorkspace serves POST …/workspaces/{ws}?deleted=false: 204 once
// restored (renamed "<name> (n)" when its name was taken meanwhile), 303 to
// the workspace when it is not deleted, 400 without deleted=false; owner or
// instance admin.
func (a *api) restoreWorkspace(w http.ResponseWriter, r *http.Request, c *caller) {
	if v := r.URL.Query().Get("deleted"); v != "false" {
		a.write(w, r, problem.Problem{Type: problem.WorkspaceBadRequest, Title: "Bad Request.", Status: http.StatusBadRequest,
			Detail: fmt.Sprintf("deleted=%q: POST on a workspace restores it and needs deleted=false", v)})
		return
	}
	rec, _, ok := a.workspace(w, r, c, identity.RoleOwner, true)
	if !ok {
		return
	}
	if _, err := a.st.RestoreWorkspace(r.Context(), c.p, c.org, rec.ID); err != nil {
		if ie, ok := err.(*identity.Error); ok && ie.Kind == identity.KindActive {
			// 303 See Other to the workspace, with a problem body.
			self := a.selfLink(r, rec)
			w.Header().Set("Location", self)
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusSeeOther)
			json.NewEncoder(w).Encode(problem.Problem{Type: problem.WorkspaceNotDeleted, Title: "See Other.", Status: http.StatusSeeOther,
				Detail: fmt.Sprintf("workspace %s is not deleted; see %s", rec.ID, self)})
			return
		}
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// workspaceInput parses the body of a create or an update: name,
// description, labels, default_coordinate_system, bounding_box (null clears
// it) and ml_enabled; members of the wrong type are 422, each named.
func workspaceInput(body map[string]json.RawMessage) (identity.WorkspaceInput, []problem.InvalidParam) {
	var in identity.WorkspaceInput
	var bad []problem.InvalidParam
	field := func(name string, v any) bool {
		raw, ok := body[name]
		if !ok {
			return false
		}
		if err := json.Unmarshal(raw, v); err != nil {
			bad = append(bad, problem.InvalidParam{Name: name, Reason: fmt.Sprintf("wrong type: %v", err)})
			return false
		}
		return true
	}
	str := func(name string) *string {
		var s *string
		if field(name, &s) && s == nil {
			bad = append(bad, problem.InvalidParam{Name: name, Reason: "must be a string, not null"})
		}
		return s
	}
	in.Name = str("name")
	in.Description = str("description")
	in.DefaultCoordinateSystem = str("default_coordinate_system")
	var labels []string
	if field("labels", &labels) {
		if labels == nil {
			labels = []string{}
		}
		in.Labels = labels
	}
	var box *identity.Polygon
	if field("bounding_box", &box) {
		in.BoundingBox, in.ClearBoundingBox = box, box == nil
	}
	var ml *bool
	if field("ml_enabled", &ml) && ml != nil {
		in.MLEnabled = ml
	}
	return in, bad
}

// createWorkspace serves POST …/workspaces: 201 with the workspace, whose
// owner the creator (a stored user) becomes; instance member.
func (a *api) createWorkspace(w http.ResponseWriter, r *http.Request, c *caller) {
	if _, ok := a.member(w, r, c); !ok {
		return
	}
	var body map[string]json.RawMessage
	if !a.decode(w, r, &body) {
		return
	}
	in, bad := workspaceInput(body)
	if len(bad) > 0 {
		a.write(w, r, problem.Invalid(problem.WorkspaceValidation, bad))
		return
	}
	rec, err := a.st.CreateWorkspace(r.Context(), c.p, c.org, in)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	res, err := a.st.Resolve(r.Context(), c.p, c.org, rec.ID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Location", a.selfLink(r, rec))
	server.WriteJSON(w, http.StatusCreated, a.doc(r, rec, res.Role))
}

// updateWorkspace serves PATCH …/workspaces/{ws}: 200 with the workspace;
// owner.
func (a *api) updateWorkspace(w http.ResponseWriter, r *http.Request, c *caller) {
	_, role, ok := a.workspace(w, r, c, identity.RoleOwner, false)
	if !ok {
		return
	}
	var body map[string]json.RawMessage
	if !a.decode(w, r, &body) {
		return
	}
	in, bad := workspaceInput(body)
	if len(bad) > 0 {
		a.write(w, r, problem.Invalid(problem.WorkspaceValidation, bad))
		return
	}
	rec, err := a.st.UpdateWorkspace(r.Context(), c.p, c.org, r.PathValue("workspace_id"), in)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	server.WriteJSON(w, http.StatusOK, a.doc(r, rec, role))
}

// deleteWorkspace serves DELETE …/workspaces/{ws}: 204, a soft delete
// after which every area answers 410 for the workspace; owner.
func (a *api) deleteWorkspace(w http.ResponseWriter, r *http.Request, c *caller) {
	rec, _, ok := a.workspace(w, r, c, identity.RoleOwner, false)
	if !ok {
		return
	}
	if err := a.st.DeleteWorkspace(r.Context(), c.p, c.org, rec.ID); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// currentRole serves GET …/workspaces/{ws}/current-user-role.
func (a *api) currentRole(w http.ResponseWriter, r *http.Request, c *caller) {
	_, role, ok := a.workspace(w, r, c, identity.RoleViewer, false)
	if !ok {
		return
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"user_id": c.p.User.ID, "role": role})
}

// listQuery is the query of a workspace listing.
type listQuery struct {
	limit, offset int
	deleted       bool
	name          string
	createdBy     string
	userID        string
	orderBy       string
	desc          bool
}

var orderFields = []string{"name", "created_at", "updated_at", "user_role"}

func parseListQuery(r *http.Request) (listQuery, []problem.InvalidParam) {
	q := r.URL.Query()
	var lq listQuery
	var bad []problem.InvalidParam
	add := func(name, format string, args ...any) {
		bad = append(bad, problem.InvalidParam{Name: name, Reason: fmt.Sprintf(format, args...)})
	}
	var perr *problem.InvalidParam
	if lq.limit, lq.offset, perr = paging(q); perr != nil {
		bad = append(bad, *perr)
	}
	switch v := q.Get("deleted"); v {
	case "", "false":
	case "true":
		lq.deleted = true
	default:
		add("deleted", "%q: want true or false", v)
	}
	lq.name = q.Get("name")
	if v := q.Get("filter[name]"); v != "" {
		lq.name = v
	}
	for _, k := range []string{"created_by", "user_id"} {
		if v := q.Get(k); v != "" && !objects.IsUUID(v) {
			add(k, "%q is not a UUID", v)
		}
	}
	lq.createdBy, lq.userID = strings.ToLower(q.Get("created_by")), strings.ToLower(q.Get("user_id"))
	for _, k := range []string{"created_at", "updated_at"} {
		if q.Has(k) {
			add(k, "filtering by %s is not supported by this engine", k)
		}
	}
	lq.orderBy = "name"
	if v := q.Get("order_by"); v != "" {
		f := v
		switch {
		case strings.HasPrefix(f, "-"):
			f, lq.desc = f[1:], true
		case strings.HasPrefix(f, "desc:"):
			f, lq.desc = f[5:], true
		case strings.HasPrefix(f, "asc:"):
			f = f[4:]
		case strings.HasSuffix(f, ":desc"):
			f, lq.desc = strings.TrimSuffix(f, ":desc"), true
		case strings.HasSuffix(f, ":asc"):
			f = strings.TrimSuffix(f, ":asc")
		}
		if !slices.Contains(orderFields, f) {
			add("order_by", "%q: want one of %s, optionally prefixed by - or asc:/desc:", v, strings.Join(orderFields, ", "))
		}
		lq.orderBy = f
	}
	return lq, bad
}

var roleRank = map[identity.Role]int{identity.RoleViewer: 1, identity.RoleEditor: 2, identity.RoleOwner: 3}

// listWorkspaces serves GET …/workspaces (the workspaces where the caller
// has a role), its summary form ({id, name} only) and the admin form (every
// workspace of the organisation).
func (a *api) listWorkspaces(admin, summary bool) func(http.ResponseWriter, *http.Request, *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		lq, bad := parseListQuery(r)
		if len(bad) > 0 {
			a.write(w, r, problem.Invalid(problem.WorkspaceValidation, bad))
			return
		}
		if admin {
			if !a.admin(w, r, c) {
				return
			}
		} else if _, ok := a.member(w, r, c); !ok {
			return
		}
		var all []identity.WorkspaceRole
		if admin {
			for _, ws := range a.st.Workspaces(c.org, lq.deleted) {
				all = append(all, identity.WorkspaceRole{Workspace: ws})
			}
		} else {
			all = a.st.WorkspacesFor(c.p, c.org, lq.deleted)
		}
		name := strings.ToLower(lq.name)
		all = slices.DeleteFunc(all, func(ws identity.WorkspaceRole) bool {
			return (name != "" && !strings.Contains(strings.ToLower(ws.Name), name)) ||
				(lq.createdBy != "" && !strings.EqualFold(ws.CreatedBy.ID, lq.createdBy)) ||
				(lq.userID != "" && a.st.RoleOfUser(lq.userID, c.org, ws.ID).Role == identity.None)
		})
		slices.SortStableFunc(all, func(x, y identity.WorkspaceRole) int {
			var d int
			switch lq.orderBy {
			case "created_at":
				d = x.CreatedAt.Compare(y.CreatedAt)
			case "updated_at":
				d = x.UpdatedAt.Compare(y.UpdatedAt)
			case "user_role":
				d = roleRank[x.Role] - roleRank[y.Role]
			default:
				d = strings.Compare(strings.ToLower(x.Name), strings.ToLower(y.Name))
			}
			if lq.desc {
				d = -d
			}
			return d
		})
		items := page(all, lq.limit, lq.offset)
		results := make([]any, len(items))
		for i, ws := range items {
			if summary {
				results[i] = map[string]string{"id": ws.ID, "name": ws.Name}
			} else {
				results[i] = a.doc(r, ws.Workspace, ws.Role)
			}
		}
		server.WriteJSON(w, http.StatusOK, map[string]any{"links": a.pageLinks(r, lq.limit, lq.offset, len(items), len(all), true), "results": results})
	}
}
