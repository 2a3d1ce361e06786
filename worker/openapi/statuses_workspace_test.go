package openapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/geostat-engine/geostat/worker/workspaces"
	"github.com/stretchr/testify/require"
)

// doFunc sends one request of the walk as a named caller.
type doFunc = func(who, method, path string, body []byte, header ...string) *workertest.Response

// jsonBody marshals v.
func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// created decodes the id of a 201 answer.
func created(t *testing.T, r *workertest.Response) string {
	t.Helper()
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var v struct {
		ID string `json:"id"`
	}
	require.NoError(t, r.JSON(&v))
	require.NotEmpty(t, v.ID, "%s", r.Body)
	return v.ID
}

// deletedWorkspace creates a workspace of demo.Org as the instance admin
// (the static owner of every workspace of the organisation) and deletes
// it.
func deletedWorkspace(t *testing.T, do doFunc) string {
	t.Helper()
	id := created(t, do("owner", http.MethodPost, "/workspace/orgs/"+demo.Org+"/workspaces", jsonBody(t, map[string]string{"name": "walk-gone"})))
	r := do("owner", http.MethodDelete, "/workspace/orgs/"+demo.Org+"/workspaces/"+id, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	return id
}

// walkWorkspaces provokes the statuses of the workspace area's routes.
// Callers: owner is an instance admin of demo.Org (a static "*" owner),
// viewer a member with the viewer role everywhere, stranger a member
// without a role in the area's workspaces, and alice and bob stored users
// created here; the owner has no role in the organisation noSuchOrg.
func walkWorkspaces(t *testing.T, do doFunc, as map[string]*workertest.Client, goneWS string) {
	t.Helper()
	const noSuchOrg = "00000000-0000-4000-8000-00000000c0de"
	base := as["owner"].Base
	org := "/workspace/orgs/" + demo.Org
	admin := "/workspace/admin/orgs/" + demo.Org
	strangeOrg := func(p string) string { return strings.Replace(p, demo.Org, noSuchOrg, 1) }
	badOrg := func(p string) string { return strings.Replace(p, demo.Org, "not-a-uuid", 1) }
	huge := []byte(`{"pad": "` + strings.Repeat("x", workspaces.MaxBodyBytes) + `"}`)
	// every provokes 401 (anonymous), 404 (the owner in an organisation
	// it has no role in) and 422 (an org id that is not a UUID).
	every := func(method, path string, body []byte) {
		do("anonymous", method, path, body)
		do("owner", method, strangeOrg(path), body)
		do("owner", method, badOrg(path), body)
	}

	// The token check.
	for _, p := range []string{"/workspace/platform/identity/v1/token", "/workspace/evo/identity/v1/token"} {
		do("owner", http.MethodGet, p, nil)
		do("anonymous", http.MethodGet, p, nil)
	}

	// Users and tokens.
	users := admin + "/users"
	aliceBody := jsonBody(t, map[string]string{"email": "alice@walk.example", "full_name": "Alice"})
	alice := created(t, do("owner", http.MethodPost, users, aliceBody))
	every(http.MethodPost, users, aliceBody)
	do("viewer", http.MethodPost, users, aliceBody)
	do("owner", http.MethodPost, users, aliceBody) // 409: a user already
	do("owner", http.MethodPost, users, jsonBody(t, map[string]string{"email": "not an email"}))
	do("owner", http.MethodPost, users, huge)
	bob := created(t, do("owner", http.MethodPost, users, jsonBody(t, map[string]string{"email": "bob@walk.example"})))

	tokens := users + "/" + alice + "/tokens"
	tokBody := jsonBody(t, map[string]string{"name": "walk"})
	r := do("owner", http.MethodPost, tokens, tokBody)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var tok struct {
		Token string `json:"token"`
	}
	require.NoError(t, r.JSON(&tok))
	as["alice"] = &workertest.Client{Base: base, Token: tok.Token, NoRetry: true}
	every(http.MethodPost, tokens, tokBody)
	do("viewer", http.MethodPost, tokens, tokBody)
	do("owner", http.MethodPost, tokens, jsonBody(t, map[string]string{"name": ""}))
	do("owner", http.MethodPost, tokens, huge)
	do("owner", http.MethodGet, tokens, nil)
	every(http.MethodGet, tokens, nil)
	do("viewer", http.MethodGet, tokens, nil)
	spare := created(t, do("owner", http.MethodPost, tokens, jsonBody(t, map[string]string{"name": "spare"})))
	revoke := tokens + "/" + spare
	do("viewer", http.MethodDelete, revoke, nil)
	every(http.MethodDelete, revoke, nil)
	do("owner", http.MethodDelete, revoke, nil)

	// Workspaces: alice creates w (she owns it) and w2.
	list := org + "/workspaces"
	wBody := jsonBody(t, map[string]any{"name": "walk-w", "labels": []string{"walk"}})
	w := created(t, do("alice", http.MethodPost, list, wBody))
	every(http.MethodPost, list, wBody)
	do("alice", http.MethodPost, list, wBody) // 409: the name is taken
	do("alice", http.MethodPost, list, jsonBody(t, map[string]any{"name": 5}))
	do("alice", http.MethodPost, list, huge)
	w2 := created(t, do("alice", http.MethodPost, list, jsonBody(t, map[string]any{"name": "walk-w2"})))
	for _, p := range []string{list, list + "/summary"} {
		do("alice", http.MethodGet, p+"?order_by=-name", nil)
		every(http.MethodGet, p, nil)
		do("alice", http.MethodGet, p+"?limit=0", nil)
	}

	wsPath := func(id string) string { return org + "/workspaces/" + id }
	// A route on one workspace: 401, 404 (a stranger), 422 (an id that is
	// not a UUID) and 410 (the deleted workspace).
	onWS := func(method, suffix string, body []byte) {
		do("anonymous", method, wsPath(w)+suffix, body)
		do("stranger", method, wsPath(w)+suffix, body)
		do("owner", method, wsPath("not-a-uuid")+suffix, body)
		do("owner", method, wsPath(goneWS)+suffix, body)
	}
	do("alice", http.MethodGet, wsPath(w), nil)
	onWS(http.MethodGet, "", nil)
	do("alice", http.MethodGet, wsPath(w)+"/current-user-role", nil)
	onWS(http.MethodGet, "/current-user-role", nil)
	do("alice", http.MethodGet, wsPath(w)+"/users", nil)
	onWS(http.MethodGet, "/users", nil)

	patch := jsonBody(t, map[string]any{"description": "walked"})
	do("alice", http.MethodPatch, wsPath(w), patch)
	onWS(http.MethodPatch, "", patch)
	do("viewer", http.MethodPatch, wsPath(w), patch)
	do("alice", http.MethodPatch, wsPath(w), jsonBody(t, map[string]any{"name": "walk-w2"})) // 409
	do("alice", http.MethodPatch, wsPath(w), jsonBody(t, map[string]any{"labels": 5}))
	do("alice", http.MethodPatch, wsPath(w), huge)

	// Roles in w: alice gives bob a role and takes it back; she cannot
	// demote or remove herself, the last owner.
	grant := jsonBody(t, map[string]string{"user_id": bob, "role": "editor"})
	do("alice", http.MethodPost, wsPath(w)+"/users", grant)
	onWS(http.MethodPost, "/users", grant)
	do("viewer", http.MethodPost, wsPath(w)+"/users", grant)
	do("alice", http.MethodPost, wsPath(w)+"/users", jsonBody(t, map[string]string{"user_id": alice, "role": "viewer"})) // 409
	do("alice", http.MethodPost, wsPath(w)+"/users", jsonBody(t, map[string]string{"user_id": bob, "role": "boss"}))
	do("alice", http.MethodPost, wsPath(w)+"/users", huge)
	do("alice", http.MethodDelete, wsPath(w)+"/users/"+bob, nil)
	onWS(http.MethodDelete, "/users/"+bob, nil)
	do("viewer", http.MethodDelete, wsPath(w)+"/users/"+alice, nil)
	do("alice", http.MethodDelete, wsPath(w)+"/users/"+alice, nil) // 409

	// Delete and restore w2.
	do("viewer", http.MethodDelete, wsPath(w2), nil)
	onWS(http.MethodDelete, "", nil)
	do("alice", http.MethodDelete, wsPath(w2), nil)
	do("viewer", http.MethodPost, wsPath(w2)+"?deleted=false", nil)
	do("alice", http.MethodPost, wsPath(w2), nil) // 400: deleted=false missing
	do("alice", http.MethodPost, wsPath(w2)+"?deleted=false", nil)
	do("alice", http.MethodPost, wsPath(w2)+"?deleted=false", nil) // 303: active
	do("anonymous", http.MethodPost, wsPath(w2)+"?deleted=false", nil)
	do("stranger", http.MethodPost, wsPath(w2)+"?deleted=false", nil)
	do("owner", http.MethodPost, wsPath("not-a-uuid")+"?deleted=false", nil)

	// Members, roles and invitations.
	members := org + "/members/users"
	do("alice", http.MethodGet, members, nil)
	every(http.MethodGet, members, nil)
	do("alice", http.MethodGet, members+"?limit=x", nil)
	invite := jsonBody(t, map[string]any{"users": []map[string]any{{"email": "carol@walk.example", "roles": []string{}}}})
	r = do("owner", http.MethodPost, members, invite)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var invited struct {
		Invitations []struct {
			ID string `json:"id"`
		} `json:"invitations"`
	}
	require.NoError(t, r.JSON(&invited))
	require.Len(t, invited.Invitations, 1)
	every(http.MethodPost, members, invite)
	do("viewer", http.MethodPost, members, invite)
	do("owner", http.MethodPost, members, jsonBody(t, map[string]any{"users": []map[string]any{{"email": "alice@walk.example"}}})) // 409
	do("owner", http.MethodPost, members, jsonBody(t, map[string]any{"users": []map[string]any{{"email": "dan@walk.example", "roles": []string{"no-such-role"}}}}))
	do("owner", http.MethodPost, members, huge)
	setRole := jsonBody(t, map[string][]string{"roles": {"member"}})
	do("owner", http.MethodPatch, members+"/"+bob, setRole)
	every(http.MethodPatch, members+"/"+bob, setRole)
	do("viewer", http.MethodPatch, members+"/"+bob, setRole)
	do("owner", http.MethodPatch, members+"/"+bob, jsonBody(t, map[string][]string{"roles": {}}))
	do("owner", http.MethodPatch, members+"/"+bob, huge)
	do("viewer", http.MethodGet, org+"/members/roles", nil)
	every(http.MethodGet, org+"/members/roles", nil)
	invitations := org + "/members/invitations"
	do("owner", http.MethodGet, invitations, nil)
	every(http.MethodGet, invitations, nil)
	do("viewer", http.MethodGet, invitations, nil)
	do("owner", http.MethodGet, invitations+"?offset=-1", nil)
	inv := invitations + "/" + invited.Invitations[0].ID
	do("viewer", http.MethodDelete, inv, nil)
	every(http.MethodDelete, inv, nil)
	do("owner", http.MethodDelete, inv, nil)

	// The admin routes.
	adminList := admin + "/workspaces"
	do("owner", http.MethodGet, adminList, nil)
	every(http.MethodGet, adminList, nil)
	do("viewer", http.MethodGet, adminList, nil)
	do("owner", http.MethodGet, adminList+"?order_by=bogus", nil)
	adminWS := adminList + "/" + w
	// An admin route on one workspace: 401, 403 (not an admin), 404 (no
	// role in the organisation), 422 and 410.
	onAdminWS := func(method, suffix string, body []byte) {
		do("anonymous", method, adminWS+suffix, body)
		do("viewer", method, adminWS+suffix, body)
		do("owner", method, strangeOrg(adminWS)+suffix, body)
		do("owner", method, adminList+"/not-a-uuid"+suffix, body)
		do("owner", method, adminList+"/"+goneWS+suffix, body)
	}
	do("owner", http.MethodGet, adminWS, nil)
	onAdminWS(http.MethodGet, "", nil)
	do("owner", http.MethodGet, adminWS+"/users", nil)
	onAdminWS(http.MethodGet, "/users", nil)
	do("owner", http.MethodPost, adminWS+"/users", grant)
	onAdminWS(http.MethodPost, "/users", grant)
	do("owner", http.MethodPost, adminWS+"/users", jsonBody(t, map[string]string{"role": "owner"}))
	do("owner", http.MethodPost, adminWS+"/users", huge)
	do("owner", http.MethodDelete, adminWS+"/users/"+bob, nil)
	onAdminWS(http.MethodDelete, "/users/"+bob, nil)
	userWS := users + "/" + alice + "/workspaces"
	do("owner", http.MethodGet, userWS, nil)
	every(http.MethodGet, userWS, nil)
	do("viewer", http.MethodGet, userWS, nil)
	bulk := admin + "/action/bulk_assign_roles"
	bulkBody := jsonBody(t, map[string]any{"role_assignments": []map[string]string{{"user_id": bob, "workspace_id": w, "role": "viewer"}}})
	do("owner", http.MethodPost, bulk, bulkBody)
	every(http.MethodPost, bulk, bulkBody)
	do("viewer", http.MethodPost, bulk, bulkBody)
	do("owner", http.MethodPost, bulk, jsonBody(t, map[string]any{"role_assignments": []any{}}))
	do("owner", http.MethodPost, bulk, huge)

	// A user removed from the organisation.
	do("viewer", http.MethodDelete, members+"/"+bob, nil)
	every(http.MethodDelete, members+"/"+bob, nil)
	do("owner", http.MethodDelete, members+"/"+bob, nil)
}
