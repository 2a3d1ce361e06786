package identity

import (
	"context"
	"slices"
	"strings"
)

// Grant is a user's role in a workspace, with the user's name and email
// when the user is known.
type Grant struct {
	UserID   string `json:"user_id"`
	Role     Role   `json:"role"`
	Email    string `json:"email"`
	FullName string `json:"full_name"`
}

// Grants returns the grants of a workspace sorted by user id (nil for an
// unknown workspace).
func (s *Store) Grants(org, ws string) []Grant {
	org, ws = strings.ToLower(org), strings.ToLower(ws)
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	e := s.v.workspaces[orgWS{org, ws}]
	if e.rec == nil {
		return nil
	}
	out := make([]Grant, 0, len(e.rec.Grants))
	for u, r := range e.rec.Grants {
		g := Grant{UserID: u, Role: r}
		if ue := s.v.users[u]; ue.rec != nil {
			g.Email, g.FullName = ue.rec.Email, ue.rec.FullName
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Grant) int { return strings.Compare(a.UserID, b.UserID) })
	return out
}

// owners counts the owners of a grant map.
func owners(g map[string]Role) int {
	n := 0
	for _, r := range g {
		if r == RoleOwner {
			n++
		}
	}
	return n
}

// SetGrant gives userID (an instance user of org) role in an active
// workspace, replacing the role it had. Demoting the workspace's last owner
// is ErrLastOwner, unless by is an instance admin of org (who acts as owner
// of every workspace, so the workspace stays manageable).
func (s *Store) SetGrant(ctx context.Context, by *Principal, org, ws, userID string, role Role) error {
	org, ws, err := lowerIDs(org, ws)
	if err != nil {
		return err
	}
	userID = strings.ToLower(userID)
	var p params
	if !role.Valid() {
		p.add("role", "%q, want owner, editor or viewer", role)
	}
	if err := s.sync(ctx); err != nil {
		return err
	}
	s.v.mu.RLock()
	u := s.v.users[userID]
	s.v.mu.RUnlock()
	if u.rec == nil || u.rec.Orgs[org] == "" {
		p.add("user_id", "%q is not a user of the organisation", userID)
	}
	if err := p.err(); err != nil {
		return err
	}
	admin := s.isAdmin(by, org)
	_, err = s.updateWS(ctx, org, ws, func(r *wsRecord) error {
		if r.DeletedAt != nil {
			return errorf(KindGone, "workspace %s is deleted", ws)
		}
		if r.Grants[userID] == RoleOwner && role != RoleOwner && owners(r.Grants) == 1 && !admin {
			return errorf(KindLastOwner, "user %s is the last owner of workspace %s", userID, ws)
		}
		r.Grants[userID] = role
		r.UpdatedAt, r.UpdatedBy = s.now(), ref(by)
		return nil
	})
	return err
}

// RemoveGrant removes userID's role in an active workspace (ErrNotFound if
// it has none). Removing the last owner is ErrLastOwner, unless by is an
// instance admin of org.
func (s *Store) RemoveGrant(ctx context.Context, by *Principal, org, ws, userID string) error {
	org, ws, err := lowerIDs(org, ws)
	if err != nil {
		return err
	}
	userID = strings.ToLower(userID)
	admin := s.isAdmin(by, org)
	_, err = s.updateWS(ctx, org, ws, func(r *wsRecord) error {
		if r.DeletedAt != nil {
			return errorf(KindGone, "workspace %s is deleted", ws)
		}
		cur, ok := r.Grants[userID]
		if !ok {
			return errorf(KindNotFound, "user %s has no role in workspace %s", userID, ws)
		}
		if cur == RoleOwner && owners(r.Grants) == 1 && !admin {
			return errorf(KindLastOwner, "user %s is the last owner of workspace %s", userID, ws)
		}
		delete(r.Grants, userID)
		r.UpdatedAt, r.UpdatedBy = s.now(), ref(by)
		return nil
	})
	return err
}

// Resolution is the answer to a role question.
type Resolution struct {
	// Role is the caller's effective role (None: no role, answer 404).
	Role Role
	// State is the workspace's state: unknown (404), active, deleted (410).
	State State
	// Registered reports that this call registered the workspace (a
	// static principal's "*" grant used an unknown workspace id first):
	// the caller logs it.
	Registered bool
}

// Resolve answers the role question of every area: p's role in workspace
// ws of org, and the workspace's state. Routes answer 404 for an unknown
// workspace or no role, 410 for a deleted one, 403 for a role too low. An
// unknown workspace id used by a static principal through a "*" grant is
// registered first (the only case that writes, hence ctx and the error).
func (s *Store) Resolve(ctx context.Context, p *Principal, org, ws string) (Resolution, error) {
	org, ws = strings.ToLower(org), strings.ToLower(ws)
	if p.static != nil {
		role, viaAny := p.staticRole(org, ws)
		s.v.mu.RLock()
		e := s.v.workspaces[orgWS{org, ws}]
		s.v.mu.RUnlock()
		if e.rec != nil {
			return Resolution{Role: role, State: e.rec.state()}, nil
		}
		if role == None || !viaAny || org == Any || !isUUID(org) || !isUUID(ws) {
			return Resolution{}, nil
		}
		created, err := s.register(ctx, p.User, org, ws)
		if err != nil {
			return Resolution{}, err
		}
		st := StateActive
		if e := s.workspace(org, ws); e.rec != nil {
			st = e.rec.state()
		}
		return Resolution{Role: role, State: st, Registered: created}, nil
	}
	return s.userRole(p.User.ID, org, ws), nil
}

// userRole resolves a stored user's role from the view.
func (s *Store) userRole(userID, org, ws string) Resolution {
	userID = strings.ToLower(userID)
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	e := s.v.workspaces[orgWS{org, ws}]
	if e.rec == nil {
		return Resolution{}
	}
	res := Resolution{State: e.rec.state()}
	u := s.v.users[userID]
	if u.rec == nil {
		return res
	}
	switch u.rec.Orgs[org] {
	case InstanceAdmin:
		res.Role = RoleOwner
	case InstanceMember:
		res.Role = e.rec.Grants[userID]
	}
	return res
}

// RoleOfUser is Resolve for a user id rather than a token, as a job
// re-checks its submitter's role when it starts and before it commits: a
// static principal's user id resolves through its configured grants (the
// strongest of its entries), another through the store's current view. It
// never registers a workspace.
func (s *Store) RoleOfUser(userID, org, ws string) Resolution {
	org, ws = strings.ToLower(org), strings.ToLower(ws)
	if ps := s.staticsByUser[strings.ToLower(userID)]; len(ps) > 0 {
		s.v.mu.RLock()
		e := s.v.workspaces[orgWS{org, ws}]
		s.v.mu.RUnlock()
		if e.rec == nil {
			return Resolution{}
		}
		res := Resolution{State: e.rec.state()}
		for _, p := range ps {
			if r, _ := p.staticRole(org, ws); r.rank() > res.Role.rank() {
				res.Role = r
			}
		}
		return res
	}
	return s.userRole(userID, org, ws)
}

// InstanceRoleOf returns p's instance role in org (ok false: not a member).
func (s *Store) InstanceRoleOf(p *Principal, org string) (InstanceRole, bool) {
	org = strings.ToLower(org)
	if p == nil {
		return "", false
	}
	if p.static != nil {
		return p.staticInstanceRole(org)
	}
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	u := s.v.users[strings.ToLower(p.User.ID)]
	if u.rec == nil {
		return "", false
	}
	r, ok := u.rec.Orgs[org]
	return r, ok
}

func (s *Store) isAdmin(p *Principal, org string) bool {
	r, _ := s.InstanceRoleOf(p, org)
	return r == InstanceAdmin
}

// WorkspaceRole is a workspace with a caller's role in it.
type WorkspaceRole struct {
	Workspace
	Role Role `json:"current_user_role"`
}

// WorkspacesFor returns the workspaces of org in which p has a role (every
// one for an instance admin), sorted by name, the deleted ones too when
// deleted is true: what a workspace listing shows its caller.
func (s *Store) WorkspacesFor(p *Principal, org string, deleted bool) []WorkspaceRole {
	org = strings.ToLower(org)
	all := s.Workspaces(org, deleted)
	out := make([]WorkspaceRole, 0, len(all))
	for _, w := range all {
		var role Role
		if p.static != nil {
			role, _ = p.staticRole(org, w.ID)
		} else {
			role = s.userRole(p.User.ID, org, w.ID).Role
		}
		if role != None {
			out = append(out, WorkspaceRole{Workspace: w, Role: role})
		}
	}
	return out
}
