package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/worker/identity"
	"github.com/google/uuid"
)

// authOrg is the organisation of the auth-lookup users.
const authOrg = "4f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a77"

// authGrantsPerWorkspace is how many users share a workspace.
const authGrantsPerWorkspace = 100

// authSizes are the users and the grants of a size (each user has a token;
// every user holds grants/users roles).
func authSizes(z synthetic.Size) (users, grants int) {
	if z == synthetic.Small {
		return 1000, 10000
	}
	return 10000, 100000
}

// authLookup measures what every request asks of the identity store: the
// bearer token's digest to its principal, then the principal's role in a
// workspace, from the in-memory view the store's watch keeps current. The
// users, tokens, workspaces and grants are made through the store's own
// operations on an embedded NATS JetStream server (untimed).
func authLookup() harness.Scenario {
	return harness.Scenario{
		Name: "auth-lookup",
		Description: "identity store: token → principal → role in a workspace, from the in-memory view, with 10,000 users " +
			"(one token each) and 100,000 grants over 1,000 workspaces made through the store's operations on an embedded NATS JetStream",
		Setup: setupAuthLookup,
	}
}

// authLookupsPerRun is the number of lookups one run times.
const authLookupsPerRun = 1_000_000

func setupAuthLookup(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	users, grants := authSizes(cfg.Size)
	nc, closeAll, err := embeddedNATS("bench-auth")
	if err != nil {
		return nil, err
	}
	admin := identity.Static{Token: "gst_bench-admin-" + uuid.NewString(), User: identity.UserRef{ID: uuid.NewString(), Name: "bench admin"},
		Orgs: map[string]map[string]identity.Role{authOrg: {identity.Any: identity.RoleOwner}}}
	st, err := identity.Open(ctx, nc, identity.Config{Static: []identity.Static{admin}})
	if err != nil {
		closeAll()
		return nil, err
	}
	closeAll0 := closeAll
	closeAll = func() { st.Close(); closeAll0() }
	secrets, wsOf, err := fillIdentity(ctx, st, admin.Token, users, grants)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("filling the identity store: %w", err)
	}
	var missing atomic.Int64
	w := &harness.Workload{
		Info: fmt.Sprintf("%d lookups of %d users' tokens and their role among %d grants over %d workspaces",
			authLookupsPerRun, users, grants, grants/authGrantsPerWorkspace),
		Items: authLookupsPerRun,
		Unit:  "lookups",
		Close: closeAll,
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		missing.Store(0)
		for i := range authLookupsPerRun {
			k := i % len(secrets)
			p, err := st.Authenticate(secrets[k])
			if err != nil {
				return fmt.Errorf("token %d: %w", k, err)
			}
			res, err := st.Resolve(ctx, p, authOrg, wsOf[k])
			if err != nil {
				return err
			}
			if !res.Role.Valid() || res.State != identity.StateActive {
				missing.Add(1)
			}
			if progress != nil && (i+1)%100_000 == 0 {
				progress(i+1, authLookupsPerRun)
			}
		}
		return nil
	}
	w.Check = func() error {
		if n := missing.Load(); n > 0 {
			return fmt.Errorf("%d lookups found no role in an active workspace", n)
		}
		return nil
	}
	return w, nil
}

// fillIdentity makes users users of authOrg with a token each, and
// grants/authGrantsPerWorkspace workspaces of authGrantsPerWorkspace grants
// each (viewer, editor, owner in turn), spread so that every user holds
// grants/users of them; it returns each user's token secret and a workspace
// the user has a role in.
func fillIdentity(ctx context.Context, st *identity.Store, adminToken string, users, grants int) (secrets, wsOf []string, err error) {
	admin, err := st.Authenticate(adminToken)
	if err != nil {
		return nil, nil, err
	}
	nws := grants / authGrantsPerWorkspace
	ids := make([]string, users)
	secrets = make([]string, users)
	wsOf = make([]string, users)
	workspaces := make([]string, nws)
	const writers = 16 // puts in flight: the KV round trips overlap
	var (
		mu    sync.Mutex
		first error
	)
	each := func(n int, f func(i int) error) error {
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n || ctx.Err() != nil {
						return
					}
					if err := f(i); err != nil {
						mu.Lock()
						first = errors.Join(first, err)
						mu.Unlock()
						return
					}
				}
			}()
		}
		wg.Wait()
		if first != nil {
			return first
		}
		return ctx.Err()
	}
	if err := each(users, func(i int) error {
		u, err := st.CreateUser(ctx, admin, authOrg, fmt.Sprintf("u%d@mine.example", i), fmt.Sprintf("User %d", i), identity.InstanceMember)
		if err != nil {
			return err
		}
		tok, err := st.CreateToken(ctx, u.ID, "bench", nil)
		if err != nil {
			return err
		}
		ids[i], secrets[i] = u.ID, tok.Secret
		return nil
	}); err != nil {
		return nil, nil, err
	}
	if err := each(nws, func(w int) error {
		name := fmt.Sprintf("bench workspace %d", w)
		ws, err := st.CreateWorkspace(ctx, admin, authOrg, identity.WorkspaceInput{Name: &name})
		if err != nil {
			return err
		}
		workspaces[w] = ws.ID
		for j := range authGrantsPerWorkspace {
			u := (w*authGrantsPerWorkspace + j*7919) % users
			role := []identity.Role{identity.RoleViewer, identity.RoleEditor, identity.RoleOwner}[j%3]
			if err := st.SetGrant(ctx, admin, authOrg, ws.ID, ids[u], role); err != nil {
				return err
			}
			mu.Lock()
			wsOf[u] = ws.ID
			mu.Unlock()
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	for i, w := range wsOf {
		if w == "" {
			return nil, nil, fmt.Errorf("user %d has no grant", i)
		}
	}
	return secrets, wsOf, nil
}
