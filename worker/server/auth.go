package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// Role is a workspace role.
type Role string

// Workspace roles, weakest first.
const (
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

// AtLeast reports whether r is at least min.
func (r Role) AtLeast(min Role) bool { return r.rank() >= min.rank() }

// Any is the wildcard of a tokens file ("*" for every workspace of an org;
// GEOSTAT_TOKEN and the development token use it for every org too).
const Any = "*"

// TokenEnv is the environment variable holding a single owner-of-everything
// token (for local use and tests).
const TokenEnv = "GEOSTAT_TOKEN"

// DevTokenFile is the name of the generated development token in the data
// directory.
const DevTokenFile = "dev-token"

// TokenEntry is one entry of a tokens file:
//
//	[{"token": "…", "user": {"id": "<uuid>", "name": "…", "email": "…"},
//	  "orgs": {"<org uuid>": {"<workspace uuid or *>": "owner|editor|viewer"}}}]
type TokenEntry struct {
	Token string                     `json:"token"`
	User  store.User                 `json:"user"`
	Orgs  map[string]map[string]Role `json:"orgs"`
}

// Auth authenticates bearer tokens and answers role questions. Tokens are
// kept as SHA-256 digests and compared in constant time; they are never
// logged. With an Authenticator (the worker's identity store, see
// Options.Identity) every token is authenticated by it and every role
// question answered by the principal's live Roles; without one, by the
// static entries alone (any UUID is then a workspace).
type Auth struct {
	entries []authEntry
	ext     Authenticator
	logger  *slog.Logger
}

type authEntry struct {
	digest [sha256.Size]byte
	p      *Principal
}

// Authenticator turns a bearer token into a principal: the worker's
// identity store, which knows the static entries of the configuration and
// the tokens issued over HTTP alike. ok is false for a token it does not
// know (unknown, revoked or expired: 401).
type Authenticator interface {
	Authenticate(token string) (p *Principal, ok bool)
}

// WorkspaceState is a workspace's state as a role question sees it.
type WorkspaceState int

// Workspace states.
const (
	// WorkspaceUnknown: no such workspace (404).
	WorkspaceUnknown WorkspaceState = iota
	// WorkspaceActive: the workspace exists.
	WorkspaceActive
	// WorkspaceDeleted: the workspace is soft-deleted (410).
	WorkspaceDeleted
)

// Access is the answer to a role question: the caller's role in a
// workspace ("" for none) and the workspace's state.
type Access struct {
	Role  Role
	State WorkspaceState
}

// Roles is a live source of one principal's roles (the identity store): its
// answers follow every grant and revoke at the next call.
type Roles interface {
	// Resolve returns the principal's role in workspace ws of org and the
	// workspace's state; it may write (a static "*" principal's first use
	// of a workspace id registers it), hence ctx and the error.
	Resolve(ctx context.Context, org, ws string) (Access, error)
	// InOrg reports whether the principal belongs to org.
	InOrg(org string) bool
	// OwnsAnOrg reports whether the principal is an instance admin of some
	// organisation (an operator of the worker).
	OwnsAnOrg() bool
	// Grants returns a snapshot of the principal's roles, organisation ->
	// workspace (or * for every one) -> role, for PrincipalOf.
	Grants() map[string]map[string]Role
}

// Principal is an authenticated caller: its user and either static grants
// (a tokens-file entry, or a caller rebuilt by PrincipalOf) or live Roles.
type Principal struct {
	User  store.User
	orgs  map[string]map[string]Role
	roles Roles
}

// NewPrincipal returns a caller whose roles are answered by roles (an
// Authenticator builds these).
func NewPrincipal(user store.User, roles Roles) *Principal {
	return &Principal{User: user, roles: roles}
}

// Roles returns the live source of the caller's roles (nil for a caller of
// static grants): the identity store's handle, for the workspace routes.
func (p *Principal) Roles() Roles { return p.roles }

// roleTimeout bounds a role question asked without a context (Role), which
// writes only when it registers a workspace.
const roleTimeout = 10 * time.Second

// Resolve returns the caller's role in a workspace and the workspace's
// state: with live Roles, theirs; with static grants, the granted role and
// an active workspace (any UUID is a workspace), or no role and an unknown
// one.
func (p *Principal) Resolve(ctx context.Context, org, ws string) (Access, error) {
	if p.roles != nil {
		return p.roles.Resolve(ctx, org, ws)
	}
	org, ws = strings.ToLower(org), strings.ToLower(ws)
	for _, o := range []string{org, Any} {
		m := p.orgs[o]
		for _, w := range []string{ws, Any} {
			if r, ok := m[w]; ok {
				return Access{Role: r, State: WorkspaceActive}, nil
			}
		}
	}
	return Access{}, nil
}

// Role returns the caller's role in a workspace; ok is false when it has
// none there or the workspace is unknown or deleted.
func (p *Principal) Role(org, ws string) (Role, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), roleTimeout)
	defer cancel()
	a, err := p.Resolve(ctx, org, ws)
	if err != nil || a.Role == "" || a.State != WorkspaceActive {
		return "", false
	}
	return a.Role, true
}

// OwnsAnOrg reports whether the caller is owner of every workspace of some
// organisation (an operator of the worker).
func (p *Principal) OwnsAnOrg() bool {
	if p.roles != nil {
		return p.roles.OwnsAnOrg()
	}
	for _, m := range p.orgs {
		if m[Any] == RoleOwner {
			return true
		}
	}
	return false
}

// Grants returns a copy of the caller's roles, organisation -> workspace
// (or * for every one) -> role: with User, what PrincipalOf needs to
// rebuild the caller, e.g. to run a queued job on another worker. With live
// Roles it is a snapshot of them.
func (p *Principal) Grants() map[string]map[string]Role {
	if p.roles != nil {
		return p.roles.Grants()
	}
	out := make(map[string]map[string]Role, len(p.orgs))
	for o, m := range p.orgs {
		out[o] = maps.Clone(m)
	}
	return out
}

// PrincipalOf rebuilds a caller from its user and Grants (keys are
// compared case-insensitively, as for a token's entry).
func PrincipalOf(user store.User, grants map[string]map[string]Role) *Principal {
	orgs := make(map[string]map[string]Role, len(grants))
	for o, m := range grants {
		c := make(map[string]Role, len(m))
		for w, r := range m {
			c[strings.ToLower(w)] = r
		}
		orgs[strings.ToLower(o)] = c
	}
	return &Principal{User: user, orgs: orgs}
}

// InOrg reports whether the caller has a role in any workspace of org.
func (p *Principal) InOrg(org string) bool {
	if p.roles != nil {
		return p.roles.InOrg(org)
	}
	return len(p.orgs[strings.ToLower(org)]) > 0 || len(p.orgs[Any]) > 0
}

// NewAuth builds an authenticator from token entries, checking them: non-empty
// unique tokens, a user id, org keys that are UUIDs (or *), workspace keys that
// are UUIDs or *, and known roles.
func NewAuth(entries []TokenEntry) (*Auth, error) {
	a := &Auth{}
	seen := map[[sha256.Size]byte]bool{}
	for i, e := range entries {
		if e.Token == "" {
			return nil, fmt.Errorf("tokens[%d].token: empty", i)
		}
		if e.User.ID == "" {
			return nil, fmt.Errorf("tokens[%d].user.id: empty", i)
		}
		orgs := map[string]map[string]Role{}
		for org, wss := range e.Orgs {
			if org != Any && !objects.IsUUID(org) {
				return nil, fmt.Errorf("tokens[%d].orgs: %q is not an org UUID", i, org)
			}
			m := map[string]Role{}
			for ws, r := range wss {
				if ws != Any && !objects.IsUUID(ws) {
					return nil, fmt.Errorf("tokens[%d].orgs[%s]: %q is not a workspace UUID or *", i, org, ws)
				}
				if r.rank() == 0 {
					return nil, fmt.Errorf("tokens[%d].orgs[%s][%s]: role %q, want owner, editor or viewer", i, org, ws, r)
				}
				m[strings.ToLower(ws)] = r
			}
			orgs[strings.ToLower(org)] = m
		}
		d := sha256.Sum256([]byte(e.Token))
		if seen[d] {
			return nil, fmt.Errorf("tokens[%d].token: duplicate token", i)
		}
		seen[d] = true
		a.entries = append(a.entries, authEntry{digest: d, p: &Principal{User: e.User, orgs: orgs}})
	}
	return a, nil
}

// LoadTokensFile reads a tokens file.
func LoadTokensFile(path string) ([]TokenEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	var entries []TokenEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("tokens file %s: no tokens", path)
	}
	return entries, nil
}

// LocalUser is the user of GEOSTAT_TOKEN and of the development token.
var LocalUser = store.User{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("geostat-local-user")).String(), Name: "local", Email: ""}

// OwnerEverywhere returns a token entry that owns every workspace of every
// organisation.
func OwnerEverywhere(token string) TokenEntry {
	return TokenEntry{Token: token, User: LocalUser, Orgs: map[string]map[string]Role{Any: {Any: RoleOwner}}}
}

// DevToken returns the development token kept in dataDir/dev-token, creating
// a random one (mode 0600) on first use. created reports a new token.
func DevToken(dataDir string) (token string, created bool, err error) {
	path := filepath.Join(dataDir, DevTokenFile)
	if data, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(data)); t != "" {
			return t, false, nil
		}
	} else if !os.IsNotExist(err) {
		return "", false, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, err
	}
	token = hex.EncodeToString(b[:])
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, err
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", false, err
	}
	if err := f.Close(); err != nil {
		return "", false, err
	}
	return token, true, nil
}

// Authenticate returns the principal of the request's bearer token: a
// missing or malformed Authorization header is 401 missing-token, an unknown
// token 401 invalid-token.
func (a *Auth) Authenticate(r *http.Request) (*Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, store.NewError(http.StatusUnauthorized, store.TypeMissingToken, "Access Denied.",
			"an Authorization: Bearer <token> header is required")
	}
	if a.ext != nil {
		p, ok := a.ext.Authenticate(token)
		if !ok {
			return nil, store.NewError(http.StatusUnauthorized, store.TypeInvalidToken, "Access Denied.", "the token is not valid")
		}
		return p, nil
	}
	d := sha256.Sum256([]byte(token))
	var found *Principal
	// Compare against every entry, without an early exit.
	for i := range a.entries {
		if subtle.ConstantTimeCompare(d[:], a.entries[i].digest[:]) == 1 {
			found = a.entries[i].p
		}
	}
	if found == nil {
		return nil, store.NewError(http.StatusUnauthorized, store.TypeInvalidToken, "Access Denied.", "the token is not valid")
	}
	return found, nil
}

type principalKey struct{}

// PrincipalFrom returns the principal an auth middleware stored in ctx.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// authProblem renders an auth failure of the middleware under the problem
// types of the route's area: on /compute/ routes the object area's base is
// swapped for the compute area's (e.g. compute/auth/invalid-token), so a
// compute client sees a compute error type.
func authProblem(r *http.Request, err error) problem.Problem {
	p := problem.From(err)
	if strings.HasPrefix(r.URL.Path, "/compute/") {
		if rest, ok := strings.CutPrefix(p.Type, problem.ObjectBase); ok {
			p.Type = problem.ComputeBase + rest
		}
	}
	return p
}

// Authenticated wraps h so it runs only for a valid token (401 otherwise),
// with the principal in the request context.
func (a *Auth) Authenticated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r)
		if err != nil {
			problem.Write(w, authProblem(r, err))
			return
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// RequireOrg wraps h: a valid token (401), a UUID {org_id} path value (422)
// and some role in that organisation (404 otherwise). For routes such as the
// compute tasks that act at organisation level.
func (a *Auth) RequireOrg(h http.Handler) http.Handler {
	return a.Authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		org := r.PathValue("org_id")
		if !objects.IsUUID(org) {
			problem.Write(w, authProblem(r, store.ErrValidation(fmt.Sprintf("org_id %q is not a UUID", org))))
			return
		}
		if !PrincipalFrom(r.Context()).InOrg(org) {
			problem.Write(w, authProblem(r, store.ErrNotFound("", fmt.Sprintf("organisation %s not found", org))))
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// RequireWorkspace wraps h: a valid token (401), UUID {org_id} and
// {workspace_id} path values (422), a role in a workspace that exists (404
// otherwise), a workspace not deleted (410 workspace-service/gone) and at
// least role min (403 insufficient-role with your_role and permitted_roles
// otherwise).
func (a *Auth) RequireWorkspace(min Role, h http.Handler) http.Handler {
	return a.Authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		org, ws := r.PathValue("org_id"), r.PathValue("workspace_id")
		for name, v := range map[string]string{"org_id": org, "workspace_id": ws} {
			if !objects.IsUUID(v) {
				problem.Write(w, authProblem(r, store.ErrValidation(fmt.Sprintf("%s %q is not a UUID", name, v))))
				return
			}
		}
		acc, err := PrincipalFrom(r.Context()).Resolve(r.Context(), org, ws)
		if err != nil {
			WriteProblem(w, r, a.logger, fmt.Errorf("resolving the role in workspace %s: %w", ws, err))
			return
		}
		role := acc.Role
		if role == "" || acc.State == WorkspaceUnknown {
			problem.Write(w, authProblem(r, store.ErrNotFound("", fmt.Sprintf("workspace %s not found", ws))))
			return
		}
		if acc.State == WorkspaceDeleted {
			problem.Write(w, WorkspaceGone(ws))
			return
		}
		if !role.AtLeast(min) {
			var permitted []Role
			for _, r := range []Role{RoleOwner, RoleEditor, RoleViewer} {
				if r.AtLeast(min) {
					permitted = append(permitted, r)
				}
			}
			e := store.NewError(http.StatusForbidden, store.TypeInsufficient, "Insufficient Role.",
				fmt.Sprintf("this operation needs the role %s or higher", min))
			e.Extra = map[string]any{"your_role": role, "permitted_roles": permitted}
			problem.Write(w, authProblem(r, e))
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// WorkspaceGone is the 410 of a route on a soft-deleted workspace, the
// same in every area.
func WorkspaceGone(ws string) problem.Problem {
	return problem.Problem{Type: problem.WorkspaceGone, Title: "Gone.", Status: http.StatusGone,
		Detail: fmt.Sprintf("workspace %s is deleted", ws)}
}
