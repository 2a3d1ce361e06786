package workspaces

import (
	"context"
	"log/slog"
	"maps"
	"strings"

	"github.com/geostat-engine/geostat/worker/identity"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
)

// Identity is the identity store as the worker's authenticator
// (server.Authenticator) and role resolver (the server.Roles of every
// principal it authenticates), so that every area's role checks read the
// store's live view.
type Identity struct {
	store  *identity.Store
	logger *slog.Logger
	// static maps each static principal of the store to its configured
	// grants (the snapshot a queued job carries) and its workspace ids.
	static map[*identity.Principal]map[string]map[string]server.Role
}

// StaticOf converts the worker's static token entries (tokens file,
// GEOSTAT_TOKEN, the development token) into the identity store's static
// principals.
func StaticOf(entries []server.TokenEntry) []identity.Static {
	out := make([]identity.Static, len(entries))
	for i, e := range entries {
		orgs := make(map[string]map[string]identity.Role, len(e.Orgs))
		for o, m := range e.Orgs {
			c := make(map[string]identity.Role, len(m))
			for w, r := range m {
				c[w] = identity.Role(r)
			}
			orgs[o] = c
		}
		out[i] = identity.Static{Token: e.Token, User: identity.UserRef{ID: e.User.ID, Name: e.User.Name, Email: e.User.Email}, Orgs: orgs}
	}
	return out
}

// NewIdentity wraps st, opened with StaticOf(entries) as its static
// principals. It logs the workspaces a static principal registers by
// using them first.
func NewIdentity(st *identity.Store, entries []server.TokenEntry, logger *slog.Logger) *Identity {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	id := &Identity{store: st, logger: logger, static: map[*identity.Principal]map[string]map[string]server.Role{}}
	for _, e := range entries {
		if p, err := st.Authenticate(e.Token); err == nil && p.Static() {
			id.static[p] = server.PrincipalOf(e.User, e.Orgs).Grants()
		}
	}
	return id
}

// Store returns the identity store.
func (i *Identity) Store() *identity.Store { return i.store }

// StaticWorkspaces returns the workspace ids the static entries name
// (organisation → workspace ids, wildcards left out): with the ids found in
// the stores, what the first start registers.
func (i *Identity) StaticWorkspaces() map[string][]string {
	out := map[string][]string{}
	for _, orgs := range i.static {
		for o, m := range orgs {
			if o == server.Any {
				continue
			}
			for w := range m {
				if w != server.Any {
					out[o] = append(out[o], w)
				}
			}
		}
	}
	return out
}

// Authenticate implements server.Authenticator: a static principal or the
// user of a stored token that is neither revoked nor expired.
func (i *Identity) Authenticate(token string) (*server.Principal, bool) {
	p, err := i.store.Authenticate(token)
	if err != nil {
		return nil, false
	}
	return server.NewPrincipal(store.User{ID: p.User.ID, Name: p.User.Name, Email: p.User.Email}, &roles{id: i, p: p}), true
}

// roles answers one principal's role questions from the store.
type roles struct {
	id *Identity
	p  *identity.Principal
}

// principalOf returns the identity principal behind a server principal
// authenticated by an Identity (nil for another).
func principalOf(p *server.Principal) *identity.Principal {
	if p == nil {
		return nil
	}
	if r, ok := p.Roles().(*roles); ok {
		return r.p
	}
	return nil
}

// Resolve implements server.Roles; a workspace a static principal
// registers by using it first is logged.
func (r *roles) Resolve(ctx context.Context, org, ws string) (server.Access, error) {
	res, err := r.id.store.Resolve(ctx, r.p, org, ws)
	if err != nil {
		return server.Access{}, err
	}
	if res.Registered {
		r.id.logger.Info("registered a workspace on its first use by a static principal with a * grant",
			"org", strings.ToLower(org), "workspace", strings.ToLower(ws), "user", r.p.User.ID)
	}
	return server.Access{Role: server.Role(res.Role), State: stateOf(res.State)}, nil
}

func stateOf(s identity.State) server.WorkspaceState {
	switch s {
	case identity.StateActive:
		return server.WorkspaceActive
	case identity.StateDeleted:
		return server.WorkspaceDeleted
	}
	return server.WorkspaceUnknown
}

// InOrg implements server.Roles: an instance role in org.
func (r *roles) InOrg(org string) bool {
	_, ok := r.id.store.InstanceRoleOf(r.p, org)
	return ok
}

// OwnsAnOrg implements server.Roles: an instance admin of some
// organisation.
func (r *roles) OwnsAnOrg() bool {
	if r.p.Static() {
		return server.PrincipalOf(store.User{}, r.id.static[r.p]).OwnsAnOrg()
	}
	u, ok := r.id.store.User(r.p.User.ID)
	if !ok {
		return false
	}
	for _, role := range u.Orgs {
		if role == identity.InstanceAdmin {
			return true
		}
	}
	return false
}

// Grants implements server.Roles: a static principal's configured grants,
// a user's current ones (owner of every workspace of an organisation it
// administers).
func (r *roles) Grants() map[string]map[string]server.Role {
	if r.p.Static() {
		out := make(map[string]map[string]server.Role, len(r.id.static[r.p]))
		for o, m := range r.id.static[r.p] {
			out[o] = maps.Clone(m)
		}
		return out
	}
	out := map[string]map[string]server.Role{}
	u, ok := r.id.store.User(r.p.User.ID)
	if !ok {
		return out
	}
	for org, role := range u.Orgs {
		if role == identity.InstanceAdmin {
			out[org] = map[string]server.Role{server.Any: server.RoleOwner}
			continue
		}
		m := map[string]server.Role{}
		for _, w := range r.id.store.WorkspacesFor(r.p, org, false) {
			m[w.ID] = server.Role(w.Role)
		}
		out[org] = m
	}
	return out
}

// RoleOfUser implements tasks.JobRoles: a user id's role in a workspace
// now and the workspace's state, as a job re-checks its submitter's roles
// when it starts and before it writes (a static principal's user id by its
// configured grants). It never registers a workspace.
func (i *Identity) RoleOfUser(userID, org, ws string) server.Access {
	res := i.store.RoleOfUser(userID, org, ws)
	return server.Access{Role: server.Role(res.Role), State: stateOf(res.State)}
}
