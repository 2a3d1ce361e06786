package tasks

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveRoles is a role table the test changes while a job "runs".
type liveRoles map[string]server.Access

func (r liveRoles) RoleOfUser(userID, org, ws string) server.Access { return r[userID+"/"+org+"/"+ws] }

// countingStore counts the writes that reach the store behind a job.
type countingStore struct {
	ObjectStore
	writes int
}

func (s *countingStore) PutVersion(context.Context, string, string, string, string, []byte, store.User) (string, error) {
	s.writes++
	return "v", nil
}

func (s *countingStore) CreateObject(context.Context, string, string, string, []byte, store.User) (string, string, error) {
	s.writes++
	return "o", "v", nil
}

type countingModels struct {
	BlockModels
	writes int
}

func (m *countingModels) Open(_ context.Context, _, _, id string) (*BlockModel, error) {
	return &BlockModel{ModelID: id}, nil
}

func (m *countingModels) WriteColumn(context.Context, *BlockModel, bmjob.ColumnWrite, store.User) (*BlockModelWrite, error) {
	m.writes++
	return &BlockModelWrite{}, nil
}

type countingFiles struct {
	ReportFiles
	writes int
}

func (f *countingFiles) PutFile(context.Context, string, string, string, io.Reader, string, store.User) (string, string, error) {
	f.writes++
	return "f", "v", nil
}

// A job's writes re-check its submitter's role just before each write: a
// role lowered or a workspace deleted after the job started refuses the
// write (403, 410) before it reaches the store; the start check covers
// every workspace the preparation read or wrote.
func TestRoleCheckBeforeEachWrite(t *testing.T) {
	ctx := context.Background()
	roles := liveRoles{
		"u/o/ws": {Role: server.RoleEditor, State: server.WorkspaceActive},
		"u/o/rd": {Role: server.RoleViewer, State: server.WorkspaceActive},
	}
	rc := &roleCheck{roles: roles, user: "u"}
	objs, files, models := &countingStore{}, &countingFiles{}, &countingModels{}
	env := &Env{Store: objs, Files: files, BlockModels: models}
	rc.guard(env)
	bm, err := env.BlockModels.Open(ctx, "o", "ws", "m")
	require.NoError(t, err)

	allow := rc.record(func(string, string, bool) error { return nil })
	require.NoError(t, allow("o", "rd", false))
	require.NoError(t, allow("o", "ws", true))
	require.NoError(t, rc.atStart())

	_, err = env.Store.PutVersion(ctx, "o", "ws", "id", "v0", nil, store.User{})
	require.NoError(t, err)
	_, err = env.BlockModels.WriteColumn(ctx, bm, bmjob.ColumnWrite{}, store.User{})
	require.NoError(t, err)
	_, _, err = env.Files.PutFile(ctx, "o", "ws", "r.html", strings.NewReader(""), "text/html", store.User{})
	require.NoError(t, err)
	require.Equal(t, 1, objs.writes)
	require.Equal(t, 1, files.writes)

	roles["u/o/ws"] = server.Access{Role: server.RoleViewer, State: server.WorkspaceActive}
	_, err = env.Store.PutVersion(ctx, "o", "ws", "id", "v1", nil, store.User{})
	assert.Equal(t, http.StatusForbidden, problem.StatusOf(err), "%v", err)
	_, _, err = env.Store.CreateObject(ctx, "o", "ws", "p.json", nil, store.User{})
	assert.Equal(t, http.StatusForbidden, problem.StatusOf(err), "%v", err)
	_, _, err = env.Files.PutFile(ctx, "o", "ws", "r.html", strings.NewReader(""), "text/html", store.User{})
	assert.Equal(t, http.StatusForbidden, problem.StatusOf(err), "%v", err)
	_, err = env.BlockModels.WriteColumn(ctx, bm, bmjob.ColumnWrite{}, store.User{})
	assert.Equal(t, http.StatusForbidden, problem.StatusOf(err), "%v", err)
	assert.Error(t, rc.atStart(), "the start check sees the lowered role too")

	roles["u/o/ws"] = server.Access{Role: server.RoleEditor, State: server.WorkspaceDeleted}
	_, err = env.Store.PutVersion(ctx, "o", "ws", "id", "v1", nil, store.User{})
	assert.Equal(t, http.StatusGone, problem.StatusOf(err), "%v", err)

	delete(roles, "u/o/rd") // the grant of a workspace it only reads is removed
	roles["u/o/ws"] = server.Access{Role: server.RoleOwner, State: server.WorkspaceActive}
	assert.Equal(t, http.StatusForbidden, problem.StatusOf(rc.atStart()))
	assert.Equal(t, 1, objs.writes, "no refused write reached the store")
	assert.Equal(t, 1, files.writes)
	assert.Equal(t, 1, models.writes)
}
