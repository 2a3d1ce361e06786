package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workertest"
)

// testBlockModels is the block model area of the tests' worker: a real
// column store (bmstore in the data directory) and the real object store,
// kept in step as A.13 says (every model version gets an object version
// listing its user columns). It implements tasks.BlockModels the way the
// service's block model area does, so the tasks run against real stores.
type testBlockModels struct {
	t       testing.TB
	store   *bmstore.Store
	objects store.Store
	mu      sync.Mutex
	models  map[string]*testModel
	// beforeWrite, when set, runs at the start of WriteColumn (a change of
	// the model by someone else while a task ran).
	beforeWrite func()
}

// testModel is a model of the test area: its workspace, geometry and
// linked object.
type testModel struct {
	org, ws  string
	name     string
	geometry *blockmodel.Geometry
	objectID string
	deleted  bool
	// mu orders the model's writes with their object versions.
	mu sync.Mutex
}

// Open implements tasks.BlockModels.
func (a *testBlockModels) Open(ctx context.Context, org, workspace, modelUUID string) (*tasks.BlockModel, error) {
	a.mu.Lock()
	m := a.models[modelUUID]
	a.mu.Unlock()
	if m == nil || m.deleted || m.org != org || m.ws != workspace {
		return nil, fmt.Errorf("block model %s: %w", modelUUID, tasks.ErrNotFound)
	}
	return &tasks.BlockModel{Store: a.store, ModelID: modelUUID, Geometry: m.geometry}, nil
}

// WriteColumn implements tasks.BlockModels: the model version through
// bmjob.WriteColumn, then the object version mirroring it.
func (a *testBlockModels) WriteColumn(ctx context.Context, bm *tasks.BlockModel, w bmjob.ColumnWrite, by store.User) (*tasks.BlockModelWrite, error) {
	a.mu.Lock()
	m := a.models[bm.ModelID]
	a.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.beforeWrite != nil {
		a.beforeWrite()
	}
	v, err := bmjob.WriteColumn(ctx, a.store, w)
	if err != nil {
		return nil, err
	}
	vid, err := a.putObject(ctx, bm.ModelID, m, v, by)
	if err != nil {
		return nil, err
	}
	return &tasks.BlockModelWrite{Version: v, ObjectID: m.objectID, ObjectVersionID: vid}, nil
}

// objectDoc is the block model object of version v (A.13).
func objectDoc(modelID string, m *testModel, v *bmstore.Version) map[string]any {
	bb := m.geometry.BBox()
	attrs := []any{}
	for _, c := range v.UserColumns() {
		attrs = append(attrs, map[string]any{"name": c.Title, "key": c.ColID, "block_model_column_uuid": c.ColID, "attribute_type": string(c.DataType)})
	}
	geom, _ := json.Marshal(m.geometry.ObjectGeometry())
	var g map[string]any
	_ = json.Unmarshal(geom, &g)
	var id any
	if m.objectID != "" {
		id = m.objectID
	}
	return map[string]any{
		"schema": "/objects/block-model/1.0.0/block-model.schema.json",
		"name":   m.name, "uuid": id, "description": "a test block model",
		"bounding_box": map[string]any{"min_x": bb.XMinMax.Min, "max_x": bb.XMinMax.Max, "min_y": bb.YMinMax.Min,
			"max_y": bb.YMinMax.Max, "min_z": bb.ZMinMax.Min, "max_z": bb.ZMinMax.Max},
		"coordinate_reference_system": "unspecified",
		"block_model_uuid":            modelID,
		"block_model_version_uuid":    v.VersionUUID,
		"geometry":                    g,
		"attributes":                  attrs,
	}
}

// putObject writes the object version of model version v (the first one
// creates the object at <name>.json).
func (a *testBlockModels) putObject(ctx context.Context, modelID string, m *testModel, v *bmstore.Version, by store.User) (string, error) {
	doc := objecttest.JSON(objectDoc(modelID, m, v))
	req := store.PutRequest{Object: doc, By: by}
	if m.objectID == "" {
		req.Path = m.name + ".json"
	} else {
		req.ID = m.objectID
	}
	ov, err := a.objects.PutObject(ctx, store.Workspace{Org: m.org, ID: m.ws}, req)
	if err != nil {
		return "", err
	}
	m.objectID = ov.ObjectID
	return ov.VersionID, nil
}

// bmColumn is a user column of a created test model.
type bmColumn struct {
	title string
	col   bmstore.Column
}

// floatColumn is a Float64 column (NaN: null).
func floatColumn(title string, v []float64) bmColumn {
	return bmColumn{title, bmstore.Column{Type: blockmodel.Float64, Floats: v}}
}

// stringColumn is a Utf8 column ("" : null).
func stringColumn(title string, v []string) bmColumn {
	null := make([]bool, len(v))
	for i, s := range v {
		null[i] = s == ""
	}
	return bmColumn{title, bmstore.Column{Type: blockmodel.Utf8, Strings: v, Null: null}}
}

// createModel stores version 1 of a model of geometry g in the test
// workspace with rows b (nil: every parent whole), and with columns
// version 2, writes the object version of each at <name>.json, and
// returns the model's uuid and the object id.
func (a *testBlockModels) createModel(name string, g *blockmodel.Geometry, b *blockmodel.Blocks, cols ...bmColumn) (string, string) {
	t := a.t
	t.Helper()
	if b == nil {
		b = g.WholeBlocks()
	}
	id := bmstore.NewUUID()
	owner := store.User{ID: "00000000-0000-4000-8000-0000000000aa", Name: "Owner"}
	v, err := bmjob.CreateModel(context.Background(), a.store, bmstore.Model{ID: id}, b, bmstore.Meta{CreatedBy: owner.ID, Comment: "created"})
	require.NoError(t, err)
	m := &testModel{org: org, ws: ws, name: name, geometry: g}
	_, err = a.putObject(context.Background(), id, m, v, owner)
	require.NoError(t, err)
	if len(cols) > 0 {
		// The columns: version 2, as an update job would add them.
		tx, err := a.store.Begin(id)
		require.NoError(t, err)
		for _, c := range cols {
			w, err := tx.AddColumn(bmstore.ColumnMeta{Title: c.title, DataType: c.col.Type})
			require.NoError(t, err)
			require.NoError(t, w.Write(c.col))
			require.NoError(t, w.Close())
		}
		v, err = tx.Commit(bmstore.Meta{CreatedBy: owner.ID, Comment: "columns"})
		require.NoError(t, err)
		_, err = a.putObject(context.Background(), id, m, v, owner)
		require.NoError(t, err)
	}
	a.mu.Lock()
	a.models[id] = m
	a.mu.Unlock()
	return id, m.objectID
}

// latest returns the latest version of a model.
func (a *testBlockModels) latest(id string) *bmstore.Version {
	a.t.Helper()
	n, err := a.store.Latest(id)
	require.NoError(a.t, err)
	v, err := a.store.Version(id, n)
	require.NoError(a.t, err)
	return v
}

// column reads a column of the latest version of a model.
func (a *testBlockModels) column(id, title string) []float64 {
	a.t.Helper()
	v, err := bmjob.ReadFloat64(context.Background(), a.store, id, a.latest(id), title)
	require.NoError(a.t, err)
	return v
}

// startBM is start with the block model area of the tests (testBlockModels)
// in the tasks' Env.
func startBM(t testing.TB, maxJobs int) (*harness, *testBlockModels) {
	t.Helper()
	objecttest.Schemas(t)
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tj := startJobs(t, filepath.Join(dir, "nats"), maxJobs, logger)
	mgr := tj.mgr
	tokens, err := json.Marshal([]server.TokenEntry{
		{Token: token, User: store.User{ID: "00000000-0000-4000-8000-0000000000aa", Name: "Owner"}, Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleOwner}}},
		{Token: viewerToken, User: store.User{ID: "00000000-0000-4000-8000-0000000000bb", Name: "Viewer"}, Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleViewer}}},
	})
	require.NoError(t, err)
	tokensFile := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(tokensFile, tokens, 0o600))
	bst, err := bmstore.Open(filepath.Join(dir, "blockmodels"))
	require.NoError(t, err)
	area := &testBlockModels{t: t, store: bst, models: map[string]*testModel{}}
	var env *tasks.Env
	app := workertest.StartApp(t, server.Options{
		DataDir: dir, Logger: logger, TokensFile: tokensFile,
		ExtraRoutes: func(mux server.Router, deps server.Deps) {
			area.objects = deps.Store
			env = &tasks.Env{Store: &tasks.StoreAdapter{Store: deps.Store, TempDir: dir}, Logger: logger, BlockModels: area}
			co := tasks.ComputeOptions{Env: env, Jobs: mgr, SyncWait: 30 * time.Second}
			tasks.Register(mux, deps, co)
			tj.register(co)
		},
	}, "")
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		mgr.Shutdown(sctx)
	})
	return &harness{t: t, app: app, jobs: mgr, tj: tj, env: env, c: &workertest.Client{Base: app.URL(), Token: token}, ctx: context.Background()}, area
}
