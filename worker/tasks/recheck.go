package tasks

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
)

// JobRoles answers a job's re-check of its submitter's role: the role a
// user id holds now in a workspace and the workspace's state, from the
// worker's live identity view (never a snapshot taken at submit).
type JobRoles interface {
	RoleOfUser(userID, org, ws string) server.Access
}

// access is one workspace a job's preparation checked, and whether it
// needed to write there.
type access struct {
	org, ws string
	write   bool
}

// roleCheck re-checks a job's submitter's roles: when the job starts, in
// every workspace its preparation read or wrote, and just before each
// write of its results. A role removed or lowered since (403) or a deleted
// workspace (410) fails the job before anything is written.
type roleCheck struct {
	roles JobRoles
	user  string
	mu    sync.Mutex
	seen  []access
}

// record wraps a request's Access so that the workspaces it allows are
// remembered for the start check.
func (c *roleCheck) record(a Access) Access {
	return func(org, ws string, write bool) error {
		err := a(org, ws, write)
		if err == nil {
			c.mu.Lock()
			c.seen = append(c.seen, access{org, ws, write})
			c.mu.Unlock()
		}
		return err
	}
}

// check answers whether the user may still read (write false) or write
// workspace ws of org.
func (c *roleCheck) check(org, ws string, write bool) error {
	a := c.roles.RoleOfUser(c.user, org, ws)
	if a.State == server.WorkspaceDeleted {
		return &StatusError{Status: http.StatusGone, Type: problem.WorkspaceGone, Title: "Gone.",
			Detail: fmt.Sprintf("workspace %s was deleted after the job was submitted; nothing was written", ws)}
	}
	min := server.RoleViewer
	if write {
		min = server.RoleEditor
	}
	if a.State == server.WorkspaceActive && a.Role.AtLeast(min) {
		return nil
	}
	what := "reading"
	if write {
		what = "writing to"
	}
	e := store.NewError(http.StatusForbidden, store.TypeInsufficient, "Insufficient Role.",
		fmt.Sprintf("the job's submitter no longer holds the role %s or higher needed for %s workspace %s (a role changed after the job was submitted); nothing was written", min, what, ws))
	e.Extra = map[string]any{"your_role": a.Role}
	return e
}

// atStart re-checks every workspace the preparation used.
func (c *roleCheck) atStart() error {
	c.mu.Lock()
	seen := append([]access(nil), c.seen...)
	c.mu.Unlock()
	for _, a := range seen {
		if err := c.check(a.org, a.ws, a.write); err != nil {
			return err
		}
	}
	return nil
}

// guard returns env with its result writers re-checking the role of the
// workspace they write to just before each write.
func (c *roleCheck) guard(env *Env) {
	env.Store = checkedStore{ObjectStore: env.Store, c: c}
	if env.Files != nil {
		env.Files = checkedFiles{ReportFiles: env.Files, c: c}
	}
	if env.BlockModels != nil {
		env.BlockModels = &checkedBlockModels{BlockModels: env.BlockModels, c: c, where: map[*BlockModel]access{}}
	}
}

// checkedStore is an ObjectStore whose writes of object versions re-check
// the job's role first.
type checkedStore struct {
	ObjectStore
	c *roleCheck
}

// PutVersion implements ObjectStore.
func (s checkedStore) PutVersion(ctx context.Context, org, workspace, objectID, ifMatch string, doc []byte, user store.User) (string, error) {
	if err := s.c.check(org, workspace, true); err != nil {
		return "", err
	}
	return s.ObjectStore.PutVersion(ctx, org, workspace, objectID, ifMatch, doc, user)
}

// CreateObject implements ObjectStore.
func (s checkedStore) CreateObject(ctx context.Context, org, workspace, path string, doc []byte, user store.User) (string, string, error) {
	if err := s.c.check(org, workspace, true); err != nil {
		return "", "", err
	}
	return s.ObjectStore.CreateObject(ctx, org, workspace, path, doc, user)
}

// checkedFiles is a ReportFiles whose file writes re-check the job's role
// first.
type checkedFiles struct {
	ReportFiles
	c *roleCheck
}

// PutFile implements ReportFiles.
func (f checkedFiles) PutFile(ctx context.Context, org, ws, path string, content io.Reader, contentType string, by store.User) (string, string, error) {
	if err := f.c.check(org, ws, true); err != nil {
		return "", "", err
	}
	return f.ReportFiles.PutFile(ctx, org, ws, path, content, contentType, by)
}

// checkedBlockModels is a block model area whose column writes re-check
// the job's role in the model's workspace first.
type checkedBlockModels struct {
	BlockModels
	c     *roleCheck
	mu    sync.Mutex
	where map[*BlockModel]access // the workspace each opened model is in
}

// Open implements BlockModels.
func (b *checkedBlockModels) Open(ctx context.Context, org, workspace, modelUUID string) (*BlockModel, error) {
	m, err := b.BlockModels.Open(ctx, org, workspace, modelUUID)
	if err == nil {
		b.mu.Lock()
		b.where[m] = access{org: org, ws: workspace}
		b.mu.Unlock()
	}
	return m, err
}

// WriteColumn implements BlockModels.
func (b *checkedBlockModels) WriteColumn(ctx context.Context, m *BlockModel, w bmjob.ColumnWrite, by store.User) (*BlockModelWrite, error) {
	b.mu.Lock()
	at, ok := b.where[m]
	b.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("block model %s was not opened through this job's area", m.ModelID)
	}
	if err := b.c.check(at.org, at.ws, true); err != nil {
		return nil, err
	}
	return b.BlockModels.WriteColumn(ctx, m, w, by)
}
