package identity_test

import (
	"context"
	"fmt"
	"os"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/identity"
)

// An api worker opens the identity store on its NATS connection, with the
// tokens file's entries as static principals; an admin creates a user, a
// workspace and a token for the user, and every request then resolves its
// caller's role from the live view.
func Example() {
	dir, err := os.MkdirTemp("", "identity-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: dir})
	if err != nil {
		panic(err)
	}
	defer ns.Shutdown()
	nc, err := cluster.ConnectInProcess(ns, "example")
	if err != nil {
		panic(err)
	}
	defer nc.Close()

	const org = "4f0c2a6e-9f3b-4c1d-8a2e-1b3c5d7e9f01"
	ctx := context.Background()
	s, err := identity.Open(ctx, nc, identity.Config{Static: []identity.Static{{
		Token: "ops-secret",
		User:  identity.UserRef{ID: "0d6f1c1e-7b8a-4b9c-8d0e-1f2a3b4c5d6e", Name: "ops"},
		Orgs:  map[string]map[string]identity.Role{org: {identity.Any: identity.RoleOwner}},
	}}})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	ops, _ := s.Authenticate("ops-secret")
	ana, _ := s.CreateUser(ctx, ops, org, "ana@mine.example", "Ana Ruiz", "")
	name := "Pit A"
	ws, _ := s.CreateWorkspace(ctx, ops, org, identity.WorkspaceInput{Name: &name})
	_ = s.SetGrant(ctx, ops, org, ws.ID, ana.ID, identity.RoleEditor)
	tok, _ := s.CreateToken(ctx, ana.ID, "laptop", nil)

	// A request with Ana's token.
	p, err := s.Authenticate(tok.Secret)
	if err != nil {
		panic(err)
	}
	res, _ := s.Resolve(ctx, p, org, ws.ID)
	fmt.Println(p.User.Email, res.Role, res.State, res.Role.AtLeast(identity.RoleEditor))

	// The revoke takes effect at the next request.
	_ = s.RevokeToken(ctx, ana.ID, tok.ID)
	_, err = s.Authenticate(tok.Secret)
	fmt.Println(err)
	// Output:
	// ana@mine.example editor active true
	// identity: invalid token
}
