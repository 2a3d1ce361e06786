package workspaces_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/identity"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	adminToken = "workspaces-test-admin-token" // GEOSTAT_TOKEN: instance admin of every organisation
	org        = "4f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a01"
)

// startWorker runs a worker over dir until the test ends (or stop), with
// GEOSTAT_TOKEN=adminToken.
func startWorker(t *testing.T, dir string) (*service.Service, func()) {
	t.Helper()
	s, err := service.New(service.Options{Options: server.Options{
		Addr: "127.0.0.1:0", DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stdout: io.Discard,
		Getenv: func(k string) string {
			if k == server.TokenEnv {
				return adminToken
			}
			return ""
		}}})
	require.NoError(t, err)
	stop := workertest.Run(t, s)
	return s, stop
}

// call sends a JSON request and checks its status.
func call(t *testing.T, c *workertest.Client, method, path string, body any, want int) *workertest.Response {
	t.Helper()
	var data []byte
	if body != nil {
		var err error
		data, err = json.Marshal(body)
		require.NoError(t, err)
	}
	r, err := c.Do(context.Background(), method, path, data)
	require.NoError(t, err)
	require.Equal(t, want, r.Status, "%s %s: %s", method, path, r.Body)
	return r
}

// problemType returns the type of a problem answer.
func problemType(t *testing.T, r *workertest.Response) string {
	t.Helper()
	var p problem.Problem
	require.NoError(t, json.Unmarshal(r.Body, &p), "%s", r.Body)
	return p.Type
}

// newUser creates an instance user of org and a token for it through the
// admin routes.
func newUser(t *testing.T, admin *workertest.Client, email string) (id string, c *workertest.Client, tokenID string) {
	t.Helper()
	var u struct {
		ID    string `json:"id"`
		Roles []struct {
			Name string `json:"name"`
		} `json:"roles"`
	}
	r := call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users", map[string]string{"email": email, "full_name": email}, http.StatusCreated)
	require.NoError(t, r.JSON(&u))
	require.Len(t, u.Roles, 1)
	assert.Equal(t, "member", u.Roles[0].Name)
	var tok struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	r = call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+u.ID+"/tokens", map[string]string{"name": "laptop"}, http.StatusCreated)
	require.NoError(t, r.JSON(&tok))
	require.True(t, strings.HasPrefix(tok.Token, identity.TokenPrefix), tok.Token)
	return u.ID, &workertest.Client{Base: admin.Base, Token: tok.Token, NoRetry: true}, tok.ID
}

func wsPath(ws string) string { return "/workspace/orgs/" + org + "/workspaces/" + ws }

// The main path of the area: an admin creates users and tokens, a user
// creates a workspace and grants roles, and every area answers by those
// roles at the next request: 404 without a role, 403 below the route's,
// 410 once deleted, again 200 after a restore; the last owner stays; a
// revoked token is refused at once.
func TestUsersRolesAndTokens(t *testing.T) {
	s, _ := startWorker(t, t.TempDir())
	admin := &workertest.Client{Base: s.URL(), Token: adminToken, NoRetry: true}
	anaID, ana, _ := newUser(t, admin, "ana@mine.example")
	bobID, bob, bobToken := newUser(t, admin, "bob@mine.example")

	// The token is shown once: the listing has no secret.
	r := call(t, admin, http.MethodGet, "/workspace/admin/orgs/"+org+"/users/"+bobID+"/tokens", nil, http.StatusOK)
	assert.NotContains(t, string(r.Body), bob.Token)
	assert.Contains(t, string(r.Body), bobToken)
	call(t, bob, http.MethodGet, "/workspace/platform/identity/v1/token", nil, http.StatusOK)
	call(t, &workertest.Client{Base: s.URL(), Token: "gst_unknown"}, http.MethodGet, "/workspace/evo/identity/v1/token", nil, http.StatusUnauthorized)

	// Ana creates a workspace: she owns it, Bob does not see it.
	r = call(t, ana, http.MethodPost, "/workspace/orgs/"+org+"/workspaces", map[string]any{"name": "Pit 4", "labels": []string{"au"}}, http.StatusCreated)
	var ws struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Role     string `json:"current_user_role"`
		SelfLink string `json:"self_link"`
	}
	require.NoError(t, r.JSON(&ws))
	assert.Equal(t, "owner", ws.Role)
	assert.Equal(t, s.URL()+wsPath(ws.ID), ws.SelfLink)
	objects := workertest.WorkspacePrefix(org, ws.ID) + "/objects"
	call(t, ana, http.MethodGet, objects, nil, http.StatusOK)
	r = call(t, bob, http.MethodGet, wsPath(ws.ID), nil, http.StatusNotFound)
	assert.Equal(t, problem.WorkspaceNotFound, problemType(t, r))
	call(t, bob, http.MethodGet, objects, nil, http.StatusNotFound)
	call(t, ana, http.MethodPost, "/workspace/orgs/"+org+"/workspaces", map[string]any{"name": "PIT 4"}, http.StatusConflict)

	// A viewer reads, cannot write.
	call(t, ana, http.MethodPost, wsPath(ws.ID)+"/users", map[string]string{"email": "bob@mine.example", "role": "viewer"}, http.StatusCreated)
	r = call(t, bob, http.MethodGet, wsPath(ws.ID)+"/current-user-role", nil, http.StatusOK)
	assert.JSONEq(t, `{"user_id": "`+bobID+`", "role": "viewer"}`, string(r.Body))
	call(t, bob, http.MethodGet, objects, nil, http.StatusOK)
	r = call(t, bob, http.MethodPost, objects+"/path/a.json", map[string]any{}, http.StatusForbidden)
	assert.Equal(t, problem.ObjectInsufficient, problemType(t, r))
	r = call(t, bob, http.MethodPatch, wsPath(ws.ID), map[string]any{"name": "mine"}, http.StatusForbidden)
	assert.Equal(t, problem.WorkspaceInsufficient, problemType(t, r))
	r = call(t, bob, http.MethodGet, wsPath(ws.ID)+"/users", nil, http.StatusOK)
	var users struct {
		Results []struct {
			UserID string `json:"user_id"`
			Role   string `json:"role"`
			Email  string `json:"email"`
		} `json:"results"`
	}
	require.NoError(t, r.JSON(&users))
	require.Len(t, users.Results, 2)
	roles := map[string]string{}
	for _, u := range users.Results {
		roles[u.UserID] = u.Role
	}
	assert.Equal(t, map[string]string{anaID: "owner", bobID: "viewer"}, roles)

	// The last owner can be neither demoted nor removed, by herself; an
	// editor may write.
	r = call(t, ana, http.MethodPost, wsPath(ws.ID)+"/users", map[string]string{"user_id": anaID, "role": "editor"}, http.StatusConflict)
	assert.Equal(t, problem.WorkspaceLastOwner, problemType(t, r))
	call(t, ana, http.MethodDelete, wsPath(ws.ID)+"/users/"+anaID, nil, http.StatusConflict)
	call(t, ana, http.MethodPost, wsPath(ws.ID)+"/users", map[string]string{"user_id": bobID, "role": "editor"}, http.StatusCreated)
	r = call(t, bob, http.MethodPut, "/file/v2/orgs/"+org+"/workspaces/"+ws.ID+"/files/path/notes.txt", nil, http.StatusOK)

	// Deleted: 410 in every area, for every role; restored: back.
	call(t, bob, http.MethodDelete, wsPath(ws.ID), nil, http.StatusForbidden)
	call(t, ana, http.MethodDelete, wsPath(ws.ID), nil, http.StatusNoContent)
	for _, p := range []string{wsPath(ws.ID), objects, "/file/v2/orgs/" + org + "/workspaces/" + ws.ID + "/files"} {
		r = call(t, bob, http.MethodGet, p, nil, http.StatusGone)
		assert.Equal(t, problem.WorkspaceGone, problemType(t, r), p)
	}
	call(t, bob, http.MethodGet, wsPath(ws.ID)+"?deleted=true", nil, http.StatusOK)
	call(t, bob, http.MethodPost, wsPath(ws.ID)+"?deleted=false", nil, http.StatusForbidden)
	call(t, ana, http.MethodPost, wsPath(ws.ID), nil, http.StatusBadRequest)
	call(t, ana, http.MethodPost, wsPath(ws.ID)+"?deleted=false", nil, http.StatusNoContent)
	call(t, bob, http.MethodGet, objects, nil, http.StatusOK)
	r = call(t, ana, http.MethodPost, wsPath(ws.ID)+"?deleted=false", nil, http.StatusSeeOther)
	assert.Equal(t, s.URL()+wsPath(ws.ID), r.Header.Get("Location"))
	assert.Equal(t, problem.WorkspaceNotDeleted, problemType(t, r))

	// Bob leaves; the workspace is gone for him again.
	call(t, bob, http.MethodDelete, wsPath(ws.ID)+"/users/"+bobID, nil, http.StatusNoContent)
	call(t, bob, http.MethodGet, objects, nil, http.StatusNotFound)

	// Revoked: refused at the next request.
	call(t, bob, http.MethodGet, "/workspace/orgs/"+org+"/workspaces", nil, http.StatusOK)
	call(t, admin, http.MethodDelete, "/workspace/admin/orgs/"+org+"/users/"+bobID+"/tokens/"+bobToken, nil, http.StatusNoContent)
	r = call(t, bob, http.MethodGet, "/workspace/orgs/"+org+"/workspaces", nil, http.StatusUnauthorized)
	assert.Equal(t, problem.WorkspaceInvalidToken, problemType(t, r))
	call(t, bob, http.MethodGet, objects, nil, http.StatusUnauthorized)
	call(t, admin, http.MethodDelete, "/workspace/admin/orgs/"+org+"/users/"+bobID+"/tokens/"+bobToken, nil, http.StatusNotFound)

	// Only admins manage users and tokens.
	r = call(t, ana, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+anaID+"/tokens", map[string]string{"name": "more"}, http.StatusForbidden)
	assert.Equal(t, problem.WorkspaceInsufficient, problemType(t, r))
	call(t, ana, http.MethodGet, "/workspace/orgs/"+org+"/members/users", nil, http.StatusOK)
	call(t, ana, http.MethodGet, "/workspace/orgs/"+org+"/members/invitations", nil, http.StatusForbidden)
}

// A workspace id nobody registered is unknown to a stored user, even an
// instance admin, while a static principal with a "*" grant registers it
// by using it first (the scripts that invent workspace ids keep working);
// a token past its expiry is refused.
func TestUnknownWorkspacesAndExpiry(t *testing.T) {
	s, _ := startWorker(t, t.TempDir())
	admin := &workertest.Client{Base: s.URL(), Token: adminToken, NoRetry: true}
	carlaID, carla, _ := newUser(t, admin, "carla@mine.example")
	call(t, admin, http.MethodPatch, "/workspace/orgs/"+org+"/members/users/"+carlaID,
		map[string][]string{"roles": {identity.InstanceAdmin.ID()}}, http.StatusOK)
	const invented = "0e9b5a3c-7d2f-4e1a-8b6c-5f4d3e2a1b0c"
	objects := workertest.WorkspacePrefix(org, invented) + "/objects"
	call(t, carla, http.MethodGet, objects, nil, http.StatusNotFound)
	call(t, carla, http.MethodGet, wsPath(invented), nil, http.StatusNotFound)
	call(t, admin, http.MethodGet, objects, nil, http.StatusOK) // registers it
	r := call(t, carla, http.MethodGet, wsPath(invented), nil, http.StatusOK)
	var ws struct {
		Name string `json:"name"`
		Role string `json:"current_user_role"`
	}
	require.NoError(t, r.JSON(&ws))
	assert.Equal(t, "workspace-"+invented[:8], ws.Name)
	assert.Equal(t, "owner", ws.Role, "an instance admin acts as owner of every workspace")

	// A token with an expiry in the past is refused at creation; one that
	// expires works until then.
	r = call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+carlaID+"/tokens",
		map[string]any{"name": "old", "expires_at": time.Now().Add(-time.Hour)}, http.StatusUnprocessableEntity)
	assert.Contains(t, string(r.Body), "expires_at")
	r = call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+carlaID+"/tokens",
		map[string]any{"name": "soon", "expires_at": time.Now().Add(time.Hour)}, http.StatusCreated)
	var tok struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	require.NoError(t, r.JSON(&tok))
	assert.False(t, tok.ExpiresAt.IsZero())
	call(t, &workertest.Client{Base: s.URL(), Token: tok.Token}, http.MethodGet, wsPath(invented), nil, http.StatusOK)
}

// Invitations: an unknown email is invited, and creating the user takes
// the invitation's role over; the instance user listing pages.
func TestInvitationsAndMembers(t *testing.T) {
	s, _ := startWorker(t, t.TempDir())
	admin := &workertest.Client{Base: s.URL(), Token: adminToken, NoRetry: true}
	members := "/workspace/orgs/" + org + "/members"
	r := call(t, admin, http.MethodPost, members+"/users", map[string]any{"users": []map[string]any{
		{"email": "dan@mine.example", "roles": []string{identity.InstanceAdmin.ID()}}}}, http.StatusCreated)
	var added struct {
		Members     []json.RawMessage `json:"members"`
		Invitations []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"invitations"`
	}
	require.NoError(t, r.JSON(&added))
	require.Len(t, added.Invitations, 1)
	assert.Empty(t, added.Members)
	assert.Equal(t, "pending", added.Invitations[0].Status)
	r = call(t, admin, http.MethodGet, members+"/invitations", nil, http.StatusOK)
	assert.Contains(t, string(r.Body), "dan@mine.example")
	r = call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users", map[string]string{"email": "dan@mine.example", "full_name": "Dan"}, http.StatusCreated)
	assert.Contains(t, string(r.Body), `"name":"admin"`)
	r = call(t, admin, http.MethodGet, members+"/invitations", nil, http.StatusOK)
	assert.NotContains(t, string(r.Body), "dan@mine.example", "the user took the invitation over")
	call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users", map[string]string{"email": "dan@mine.example"}, http.StatusConflict)

	for i := range 3 {
		call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users", map[string]string{"email": fmt.Sprintf("u%d@mine.example", i)}, http.StatusCreated)
	}
	r = call(t, admin, http.MethodGet, members+"/users?limit=2&offset=1", nil, http.StatusOK)
	var pg struct {
		Links struct {
			Count    int     `json:"count"`
			Next     *string `json:"next"`
			Previous *string `json:"previous"`
		} `json:"links"`
		Results []struct {
			Email string `json:"email"`
		} `json:"results"`
	}
	require.NoError(t, r.JSON(&pg))
	require.Len(t, pg.Results, 2)
	assert.Equal(t, 2, pg.Links.Count)
	assert.NotNil(t, pg.Links.Next)
	assert.NotNil(t, pg.Links.Previous)
	assert.Equal(t, "u0@mine.example", pg.Results[0].Email, "sorted by email: dan, u0, u1, u2")
	call(t, admin, http.MethodDelete, members+"/invitations/"+added.Invitations[0].ID, nil, http.StatusNotFound)
	r = call(t, admin, http.MethodPut, members+"/roles", nil, http.StatusMethodNotAllowed)
	assert.Equal(t, problem.WorkspaceMethodNotAllowed, problemType(t, r))
}

// An admin of one organisation cannot issue a token to a user who also
// belongs to another organisation it does not administer (the token would
// act there too, with the user's role in it).
func TestTokensOnlyFromAnAdminOfEveryOrganisation(t *testing.T) {
	s, _ := startWorker(t, t.TempDir())
	admin := &workertest.Client{Base: s.URL(), Token: adminToken, NoRetry: true}
	const other = "4f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a09"
	ivyID, ivy, _ := newUser(t, admin, "ivy@mine.example")
	call(t, admin, http.MethodPatch, "/workspace/orgs/"+org+"/members/users/"+ivyID, map[string][]string{"roles": {"admin"}}, http.StatusOK)
	// Jon: a member of org and an admin of other.
	jonID, _, _ := newUser(t, admin, "jon@mine.example")
	call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+other+"/users", map[string]any{"email": "jon@mine.example", "roles": []string{"admin"}}, http.StatusCreated)
	r := call(t, ivy, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+jonID+"/tokens", map[string]string{"name": "x"}, http.StatusForbidden)
	assert.Equal(t, problem.WorkspaceInsufficient, problemType(t, r))
	call(t, admin, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+jonID+"/tokens", map[string]string{"name": "x"}, http.StatusCreated)
	call(t, ivy, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+ivyID+"/tokens", map[string]string{"name": "x"}, http.StatusCreated)
}
