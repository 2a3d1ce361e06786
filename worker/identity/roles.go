package identity

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// Role is a workspace role.
type Role string

// Workspace roles, weakest first; None is no role.
const (
	None       Role = ""
	RoleViewer Role = "viewer"
	RoleEditor Role = "editor"
	RoleOwner  Role = "owner"
)

func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleEditor:
		return 2
	case RoleOwner:
		return 3
	}
	return 0
}

// Valid reports whether r is viewer, editor or owner.
func (r Role) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r is a role and at least min.
func (r Role) AtLeast(min Role) bool { return r.rank() > 0 && r.rank() >= min.rank() }

// InstanceRole is a role in an organisation: admin or member.
type InstanceRole string

// Instance roles; admin ranks above member.
const (
	InstanceAdmin  InstanceRole = "admin"
	InstanceMember InstanceRole = "member"
)

// Valid reports whether r is admin or member.
func (r InstanceRole) Valid() bool { return r == InstanceAdmin || r == InstanceMember }

// RoleNamespace is the UUID namespace of the instance roles' fixed ids.
const RoleNamespace = "8c0b6f3e-5d1a-5e47-9a3c-2f1e0d4b7a61"

// ID is the role's fixed id: the UUIDv5 of its name under RoleNamespace.
func (r InstanceRole) ID() string {
	return uuid.NewSHA1(uuid.MustParse(RoleNamespace), []byte(r)).String()
}

// Description is the role's one-line description.
func (r InstanceRole) Description() string {
	switch r {
	case InstanceAdmin:
		return "manages users, roles, tokens and every workspace of the organisation"
	case InstanceMember:
		return "can sign in and create workspaces"
	}
	return ""
}

// InstanceRoleByID returns the instance role of a fixed id.
func InstanceRoleByID(id string) (InstanceRole, bool) {
	for _, r := range []InstanceRole{InstanceAdmin, InstanceMember} {
		if strings.EqualFold(r.ID(), id) {
			return r, true
		}
	}
	return "", false
}

// Any is the wildcard of a static principal's grants: every workspace of an
// organisation, or every organisation.
const Any = "*"

// UserRef names a user in records (created_by, updated_by, deleted_by).
type UserRef struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Static is a read-only principal of the worker's configuration (an entry
// of the tokens file, GEOSTAT_TOKEN or the development token): Orgs maps an
// organisation id (or Any) to workspace ids (or Any) to roles.
type Static struct {
	Token string                     `json:"token"`
	User  UserRef                    `json:"user"`
	Orgs  map[string]map[string]Role `json:"orgs"`
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// checkStatic validates a static entry and returns its grants with lower
// case keys.
func checkStatic(i int, e Static) (map[string]map[string]Role, error) {
	if e.Token == "" {
		return nil, fmt.Errorf("static[%d].token: empty", i)
	}
	if e.User.ID == "" {
		return nil, fmt.Errorf("static[%d].user.id: empty", i)
	}
	orgs := map[string]map[string]Role{}
	for org, wss := range e.Orgs {
		if org != Any && !isUUID(org) {
			return nil, fmt.Errorf("static[%d].orgs: %q is not an org UUID or *", i, org)
		}
		m := map[string]Role{}
		for ws, r := range wss {
			if ws != Any && !isUUID(ws) {
				return nil, fmt.Errorf("static[%d].orgs[%s]: %q is not a workspace UUID or *", i, org, ws)
			}
			if !r.Valid() {
				return nil, fmt.Errorf("static[%d].orgs[%s][%s]: role %q, want owner, editor or viewer", i, org, ws, r)
			}
			m[strings.ToLower(ws)] = r
		}
		orgs[strings.ToLower(org)] = m
	}
	return orgs, nil
}

// Principal is an authenticated caller: a stored user (whose roles are read
// live from the store at every Resolve) or a static principal.
type Principal struct {
	// User is the caller.
	User UserRef
	// TokenID is the id of the stored token used ("" for a static one).
	TokenID string
	// static holds a static principal's grants (nil for a stored user).
	static map[string]map[string]Role
}

// Static reports whether p is a static (configured, read-only) principal.
func (p *Principal) Static() bool { return p.static != nil }

// staticRole is a static principal's role in a workspace and whether it
// comes from a "*" workspace grant.
func (p *Principal) staticRole(org, ws string) (Role, bool) {
	for _, o := range [2]string{org, Any} {
		m := p.static[o]
		if r, ok := m[ws]; ok {
			return r, false
		}
		if r, ok := m[Any]; ok {
			return r, true
		}
	}
	return None, false
}

// staticInstanceRole is a static principal's instance role in org: admin
// with owner of "*", member with any grant in it.
func (p *Principal) staticInstanceRole(org string) (InstanceRole, bool) {
	member := false
	for _, o := range [2]string{org, Any} {
		m := p.static[o]
		if m[Any] == RoleOwner {
			return InstanceAdmin, true
		}
		member = member || len(m) > 0
	}
	if member {
		return InstanceMember, true
	}
	return "", false
}
