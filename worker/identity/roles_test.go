package identity

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLastOwner(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	ana, pa := f.user(t, "ana@mine.example", InstanceMember)
	bob, pb := f.user(t, "bob@mine.example", InstanceMember)
	w, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("W")})
	require.NoError(t, err)

	err = f.s.SetGrant(ctx, pa, org1, w.ID, ana.ID, RoleEditor)
	require.ErrorIs(t, err, ErrLastOwner, "the only owner cannot demote themself")
	assert.Equal(t, "workspace-service/last-owner", err.(*Error).Kind.ProblemType())
	assert.Equal(t, 409, err.(*Error).Kind.Status())
	require.ErrorIs(t, f.s.RemoveGrant(ctx, pa, org1, w.ID, ana.ID), ErrLastOwner)

	require.NoError(t, f.s.SetGrant(ctx, pa, org1, w.ID, bob.ID, RoleOwner))
	require.NoError(t, f.s.SetGrant(ctx, pb, org1, w.ID, ana.ID, RoleViewer), "two owners: one may be demoted")
	require.ErrorIs(t, f.s.RemoveGrant(ctx, pb, org1, w.ID, bob.ID), ErrLastOwner)
	require.ErrorIs(t, f.s.SetGrant(ctx, pb, org1, w.ID, bob.ID, RoleViewer), ErrLastOwner)
	assert.Equal(t, []Grant{
		{UserID: ana.ID, Role: RoleViewer, Email: ana.Email, FullName: ana.FullName},
		{UserID: bob.ID, Role: RoleOwner, Email: bob.Email, FullName: bob.FullName},
	}, sortedGrants(ana, bob, f.s.Grants(org1, w.ID)))

	// An instance admin still acts: it may remove the last owner (it owns
	// every workspace of the org, so the workspace stays manageable).
	require.NoError(t, f.s.RemoveGrant(ctx, f.admin, org1, w.ID, bob.ID))
	res, err := f.s.Resolve(ctx, pb, org1, w.ID)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: None, State: StateActive}, res)
	require.ErrorIs(t, f.s.RemoveGrant(ctx, f.admin, org1, w.ID, bob.ID), ErrNotFound)

	// Grants go only to users of the org, with known roles.
	require.ErrorIs(t, f.s.SetGrant(ctx, pa, org1, w.ID, "7c9e6679-7425-40de-944b-e07fc1f90ae7", RoleViewer), ErrValidation)
	require.ErrorIs(t, f.s.SetGrant(ctx, f.admin, org1, w.ID, ana.ID, "boss"), ErrValidation)
}

// sortedGrants orders grants as Grants does (by user id) for a stable expectation.
func sortedGrants(a, b User, g []Grant) []Grant {
	if a.ID > b.ID && len(g) == 2 {
		return []Grant{g[1], g[0]}
	}
	return g
}

func TestResolveRoles(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	_, pa := f.user(t, "ana@mine.example", InstanceMember)
	eve, pe := f.user(t, "eve@mine.example", InstanceMember)
	_, padm := f.user(t, "boss@mine.example", InstanceAdmin)
	w, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("W")})
	require.NoError(t, err)

	res, err := f.s.Resolve(ctx, pe, org1, w.ID)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: None, State: StateActive}, res, "no grant: no role (404)")
	require.NoError(t, f.s.SetGrant(ctx, pa, org1, w.ID, eve.ID, RoleViewer))
	res, _ = f.s.Resolve(ctx, pe, org1, w.ID)
	assert.Equal(t, RoleViewer, res.Role)
	assert.False(t, res.Role.AtLeast(RoleEditor), "viewer is too low for editor routes (403)")

	res, _ = f.s.Resolve(ctx, padm, org1, w.ID)
	assert.Equal(t, RoleOwner, res.Role, "an instance admin owns every workspace of its org")
	r, ok := f.s.InstanceRoleOf(padm, org1)
	assert.True(t, ok)
	assert.Equal(t, InstanceAdmin, r)
	_, ok = f.s.InstanceRoleOf(padm, org2)
	assert.False(t, ok)

	list := f.s.WorkspacesFor(pe, org1, false)
	require.Len(t, list, 1)
	assert.Equal(t, w.ID, list[0].ID)
	assert.Equal(t, RoleViewer, list[0].Role)
	other, err := f.s.CreateWorkspace(ctx, padm, org1, WorkspaceInput{Name: ptr("Other")})
	require.NoError(t, err)
	assert.Len(t, f.s.WorkspacesFor(pe, org1, false), 1, "only the workspaces with a role")
	assert.Len(t, f.s.WorkspacesFor(padm, org1, false), 2, "an admin sees every one")
	assert.Len(t, f.s.WorkspacesFor(f.admin, org1, false), 2, "so does a static * owner")
	assert.Empty(t, f.s.WorkspacesFor(pe, org2, false))
	require.NoError(t, f.s.DeleteWorkspace(ctx, padm, org1, other.ID))
	assert.Len(t, f.s.WorkspacesFor(padm, org1, false), 1)
	assert.Len(t, f.s.WorkspacesFor(padm, org1, true), 2)

	res, _ = f.s.Resolve(ctx, padm, org1, ws2)
	assert.Equal(t, Resolution{}, res, "an unknown workspace is unknown even to an admin")
	res, _ = f.s.Resolve(ctx, padm, org2, w.ID)
	assert.Equal(t, Resolution{}, res, "workspaces belong to one org")

	// Jobs re-check by user id: a revoked grant is seen at once.
	assert.Equal(t, Resolution{Role: RoleViewer, State: StateActive}, f.s.RoleOfUser(eve.ID, org1, w.ID))
	require.NoError(t, f.s.RemoveGrant(ctx, pa, org1, w.ID, eve.ID))
	assert.Equal(t, Resolution{Role: None, State: StateActive}, f.s.RoleOfUser(eve.ID, org1, w.ID))
	require.NoError(t, f.s.DeleteWorkspace(ctx, pa, org1, w.ID))
	assert.Equal(t, Resolution{Role: RoleOwner, State: StateDeleted}, f.s.RoleOfUser(pa.User.ID, org1, w.ID))

	// Instance roles: ids are fixed UUIDv5s.
	assert.Equal(t, InstanceAdmin.ID(), InstanceAdmin.ID())
	assert.NotEqual(t, InstanceAdmin.ID(), InstanceMember.ID())
	byID, ok := InstanceRoleByID(InstanceMember.ID())
	assert.True(t, ok)
	assert.Equal(t, InstanceMember, byID)
	assert.Equal(t, "5", InstanceAdmin.ID()[14:15], "a version 5 UUID")
}

func TestStaticPrincipals(t *testing.T) {
	ns := startServer(t, t.TempDir())
	const (
		starTok  = "star-token"
		everyTok = "everywhere-token"
		wsTok    = "one-ws-token"
		viewTok  = "viewer-star-token"
	)
	wsUser := UserRef{ID: "1e2d3c4b-5a69-4788-9a0b-c1d2e3f40516", Name: "script"}
	s := open(t, ns, Config{Static: []Static{
		{Token: starTok, User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: RoleOwner}}},
		{Token: everyTok, User: UserRef{ID: "local"}, Orgs: map[string]map[string]Role{Any: {Any: RoleOwner}}},
		{Token: wsTok, User: wsUser, Orgs: map[string]map[string]Role{org1: {ws2: RoleEditor}}},
		{Token: viewTok, User: UserRef{ID: "viewer"}, Orgs: map[string]map[string]Role{org1: {Any: RoleViewer}}},
	}})
	ctx := testCtx(t)
	star, err := s.Authenticate(starTok)
	require.NoError(t, err)
	assert.True(t, star.Static())
	one, err := s.Authenticate(wsTok)
	require.NoError(t, err)

	// A non-* static principal does not register an unknown workspace.
	res, err := s.Resolve(ctx, one, org1, ws2)
	require.NoError(t, err)
	assert.Equal(t, Resolution{}, res)
	_, st := s.Workspace(org1, ws2)
	assert.Equal(t, StateUnknown, st)

	// A * principal registers it at first use, once.
	res, err = s.Resolve(ctx, star, org1, ws2)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: RoleOwner, State: StateActive, Registered: true}, res)
	w, st := s.Workspace(org1, ws2)
	assert.Equal(t, StateActive, st)
	assert.Equal(t, "workspace-82bb5c3d", w.Name)
	assert.Equal(t, adminUser, w.CreatedBy)
	res, err = s.Resolve(ctx, star, org1, ws2)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: RoleOwner, State: StateActive}, res)
	// Now registered, the explicit grant applies.
	res, _ = s.Resolve(ctx, one, org1, ws2)
	assert.Equal(t, Resolution{Role: RoleEditor, State: StateActive}, res)

	// * of another org does not reach org2; * of * does.
	res, _ = s.Resolve(ctx, star, org2, ws1)
	assert.Equal(t, Resolution{}, res)
	every, err := s.Authenticate(everyTok)
	require.NoError(t, err)
	res, err = s.Resolve(ctx, every, org2, ws1)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: RoleOwner, State: StateActive, Registered: true}, res)
	r, _ := s.InstanceRoleOf(every, org2)
	assert.Equal(t, InstanceAdmin, r)

	// A viewer-* grant gives viewer everywhere in the org, not admin.
	viewer, err := s.Authenticate(viewTok)
	require.NoError(t, err)
	res, _ = s.Resolve(ctx, viewer, org1, ws2)
	assert.Equal(t, RoleViewer, res.Role)
	r, _ = s.InstanceRoleOf(viewer, org1)
	assert.Equal(t, InstanceMember, r)
	r, _ = s.InstanceRoleOf(star, org1)
	assert.Equal(t, InstanceAdmin, r)

	// Jobs of static principals re-check by user id too.
	assert.Equal(t, Resolution{Role: RoleEditor, State: StateActive}, s.RoleOfUser(wsUser.ID, org1, ws2))
	assert.Equal(t, Resolution{}, s.RoleOfUser(wsUser.ID, org1, ws1), "RoleOfUser never registers")

	// Bad static entries are refused.
	for _, bad := range [][]Static{
		{{Token: "", User: adminUser}},
		{{Token: "a", User: UserRef{}}},
		{{Token: "a", User: adminUser, Orgs: map[string]map[string]Role{"acme": {Any: RoleOwner}}}},
		{{Token: "a", User: adminUser, Orgs: map[string]map[string]Role{org1: {"x": RoleOwner}}}},
		{{Token: "a", User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: "god"}}}},
		{{Token: "a", User: adminUser}, {Token: "a", User: wsUser}},
	} {
		_, err := Open(ctx, connect(t, ns), Config{Static: bad})
		require.Error(t, err)
	}
	_, err = s.Authenticate("nope")
	require.ErrorIs(t, err, ErrInvalidToken)
}

func TestRegisterExisting(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	// A workspace named like a registered one makes its registration rename.
	_, err := f.s.CreateWorkspace(ctx, f.admin, org1, WorkspaceInput{Name: ptr("workspace-91aa4b2c")})
	require.NoError(t, err)
	require.True(t, f.s.NeedsRegistration())
	got, err := f.s.RegisterExisting(ctx, map[string][]string{org1: {ws1, ws2, ws1}, strings.ToUpper(org2): {ws2}})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{org1 + "/" + ws1, org1 + "/" + ws2, org2 + "/" + ws2}, got)
	w, st := f.s.Workspace(org1, ws1)
	assert.Equal(t, StateActive, st)
	assert.Equal(t, "workspace-91aa4b2c (1)", w.Name)
	w, _ = f.s.Workspace(org2, ws2)
	assert.Equal(t, "workspace-82bb5c3d", w.Name)
	assert.False(t, f.s.NeedsRegistration())

	// Done once: a later call registers nothing.
	other := "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
	got, err = f.s.RegisterExisting(ctx, map[string][]string{org1: {other}})
	require.NoError(t, err)
	assert.Empty(t, got)
	_, st = f.s.Workspace(org1, other)
	assert.Equal(t, StateUnknown, st)
}
