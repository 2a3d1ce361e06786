package bmapi_test

import (
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userWithToken creates a user of org and a token for it with the static
// owner's admin rights.
func userWithToken(t *testing.T, w *worker, email string) (string, *workertest.Client) {
	t.Helper()
	var u struct {
		ID string `json:"id"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, "/workspace/admin/orgs/"+org+"/users", map[string]string{"email": email}, http.StatusCreated).JSON(&u))
	var tok struct {
		Token string `json:"token"`
	}
	require.NoError(t, do(t, w.c, http.MethodPost, "/workspace/admin/orgs/"+org+"/users/"+u.ID+"/tokens", map[string]string{"name": "t"}, http.StatusCreated).JSON(&tok))
	return u.ID, w.as(tok.Token)
}

// Roles: the owner of a workspace creates and updates; a viewer reads but
// may not create, update or delete (403 forbidden with your_role); a user
// without a role in the workspace gets 404 (it does not exist for them);
// no token 401 unauthorized; a deleted workspace 410.
func TestRoles(t *testing.T) {
	w := startWorker(t)
	_, ana := userWithToken(t, w, "ana@mine.example")
	bobID, bob := userWithToken(t, w, "bob@mine.example")
	_, carol := userWithToken(t, w, "carol@mine.example")
	var space struct {
		ID string `json:"id"`
	}
	require.NoError(t, do(t, ana, http.MethodPost, "/workspace/orgs/"+org+"/workspaces", map[string]string{"name": "pit"}, http.StatusCreated).JSON(&space))
	do(t, ana, http.MethodPost, "/workspace/orgs/"+org+"/workspaces/"+space.ID+"/users", map[string]string{"user_id": bobID, "role": "viewer"}, http.StatusCreated)

	prefix := bmPrefix(org, space.ID)
	rec := create(t, ana, org, space.ID, regularBody("owned", ""))
	path := prefix + "/" + rec.BMUUID
	var got struct {
		CreatedBy struct {
			ID    string  `json:"id"`
			Email *string `json:"email"`
		} `json:"created_by"`
	}
	require.NoError(t, do(t, bob, http.MethodGet, path, nil, http.StatusOK).JSON(&got))
	require.NotNil(t, got.CreatedBy.Email)
	assert.Equal(t, "ana@mine.example", *got.CreatedBy.Email)
	do(t, bob, http.MethodGet, prefix, nil, http.StatusOK)
	do(t, bob, http.MethodGet, path+"/versions", nil, http.StatusOK)
	do(t, bob, http.MethodPost, path+"/blocks", `{"columns": ["*"]}`, http.StatusOK)

	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, prefix, regularBody("mine", "")},
		{http.MethodPatch, path, `{"name": "theirs"}`},
		{http.MethodDelete, path, ""},
		{http.MethodPost, path + "?deleted=false", ""},
		{http.MethodPatch, path + "/blocks", addCu},
		{http.MethodPost, path + "/jobs/5f0c2a52-1b7e-4c36-9a0d-0d4b5e8f1a02/uploaded", ""},
	} {
		r := do(t, bob, c.method, c.path, c.body, http.StatusForbidden)
		var p struct {
			Type     string   `json:"type"`
			YourRole string   `json:"your_role"`
			Roles    []string `json:"permitted_roles"`
		}
		require.NoError(t, r.JSON(&p))
		assert.Equal(t, errBase+"/block-model-service/auth/forbidden", p.Type, "%s %s", c.method, c.path)
		assert.Equal(t, "viewer", p.YourRole)
		assert.Equal(t, []string{"owner", "editor"}, p.Roles)
	}
	r := do(t, carol, http.MethodGet, path, nil, http.StatusNotFound)
	assert.Equal(t, errBase+"/workspace-service/workspace-not-found", problemType(t, r))
	do(t, carol, http.MethodPost, prefix, regularBody("x1y", ""), http.StatusNotFound)
	var page struct {
		Total int `json:"total"`
	}
	require.NoError(t, do(t, carol, http.MethodGet, "/blockmodel/orgs/"+org+"/block-models", nil, http.StatusOK).JSON(&page))
	assert.Equal(t, 0, page.Total, "the organisation listing shows only workspaces with a role")
	require.NoError(t, do(t, bob, http.MethodGet, "/blockmodel/orgs/"+org+"/block-models", nil, http.StatusOK).JSON(&page))
	assert.Equal(t, 1, page.Total)

	for _, c := range []*workertest.Client{w.as(""), w.as("not-a-token")} {
		r = do(t, c, http.MethodGet, path, nil, http.StatusUnauthorized)
		assert.Equal(t, errBase+"/block-model-service/auth/unauthorized", problemType(t, r))
	}
	do(t, w.as(""), http.MethodGet, "/blockmodel/orgs/"+org+"/units", nil, http.StatusUnauthorized)

	do(t, ana, http.MethodDelete, "/workspace/orgs/"+org+"/workspaces/"+space.ID, nil, http.StatusNoContent)
	r = do(t, ana, http.MethodGet, path, nil, http.StatusGone)
	assert.Equal(t, errBase+"/workspace-service/gone", problemType(t, r))
	do(t, bob, http.MethodGet, prefix, nil, http.StatusGone)
}
