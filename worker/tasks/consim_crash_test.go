package tasks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consimCrashEnv, when set, makes TestConsimCrashChild run: a worker over
// that data directory that stops between consim's two writes.
const consimCrashEnv = "GEOSTAT_TASKS_CONSIM_CRASH_DIR"

// testReportFiles stores reports in a files.Store, as the service does.
type testReportFiles struct{ fs *files.Store }

func (f testReportFiles) PutFile(ctx context.Context, org, ws, path string, content io.Reader, contentType string, by store.User) (string, string, error) {
	rec, err := f.fs.Put(ctx, org, ws, path, content, contentType, by)
	if err != nil {
		return "", "", err
	}
	return rec.ID, rec.VersionID, nil
}

func (f testReportFiles) FileURL(base, org, ws, id, version string) string {
	return files.FileURL(base, &files.Record{ID: id, Org: org, Workspace: ws}) + "?version_id=" + version
}

func (f testReportFiles) DashboardURL(base, org, ws, id string) string {
	return base + "/compute/orgs/" + org + "/reports/" + ws + "/" + id
}

func (f testReportFiles) ViewURL(base, org, ws, id, version string) (string, error) {
	return f.fs.ViewURL(base, org, ws, id, version, time.Hour)
}

func (f testReportFiles) CheckPath(p string) error { return files.CheckPath(p) }

// serveOver runs a worker with the compute routes and the file area over
// the data directory dir on 127.0.0.1:0, its jobs in an embedded NATS
// JetStream server with its state in natsDir (startJobs), its task
// environment adjusted by adjust (when not nil).
func serveOver(t *testing.T, dir, natsDir string, adjust func(*tasks.Env)) *harness {
	t.Helper()
	objecttest.Schemas(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tj := startJobs(t, natsDir, 1, logger)
	mgr := tj.mgr
	entries := []server.TokenEntry{{Token: token, User: store.User{ID: "00000000-0000-4000-8000-0000000000aa", Name: "Owner"},
		Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleOwner}}}}
	tokens, err := json.Marshal(entries)
	require.NoError(t, err)
	tokensFile := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(tokensFile, tokens, 0o600))
	fs, err := files.Open(dir)
	require.NoError(t, err)
	var env *tasks.Env
	app := workertest.StartApp(t, server.Options{
		DataDir: dir, Logger: logger, TokensFile: tokensFile,
		ExtraRoutes: func(mux server.Router, deps server.Deps) {
			env = &tasks.Env{Store: &tasks.StoreAdapter{Store: deps.Store, TempDir: dir}, Files: testReportFiles{fs: fs}, Logger: logger}
			if adjust != nil {
				adjust(env)
			}
			co := tasks.ComputeOptions{Env: env, Jobs: mgr, SyncWait: time.Minute, Roles: staticRoles(entries)}
			tasks.Register(mux, deps, co)
			tj.register(co)
			files.Register(mux, deps, fs, files.Options{})
		},
	}, "")
	t.Cleanup(func() { // runs before the app stops: jobs end first
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		mgr.Shutdown(sctx)
	})
	return &harness{t: t, app: app, jobs: mgr, tj: tj, env: env, c: &workertest.Client{Base: app.URL(), Token: token}, ctx: context.Background()}
}

// betweenWrites stops the process when a job starts its second kind of
// write (an object version or a report file) after completing the other:
// it announces the point on stdout and waits to be killed.
type betweenWrites struct {
	mu   sync.Mutex
	done map[string]bool
}

func (b *betweenWrites) enter(kind, other string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done[other] {
		fmt.Println("BETWEEN_WRITES " + other + " then " + kind)
		os.Stdout.Sync()
		select {} // wait for SIGKILL
	}
}

func (b *betweenWrites) finished(kind string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done[kind] = true
}

// crashStore and crashFiles put betweenWrites around the object versions
// and the report files a job writes.
type crashStore struct {
	tasks.ObjectStore
	b *betweenWrites
}

func (s crashStore) PutVersion(ctx context.Context, org, ws, id, ifMatch string, doc []byte, user store.User) (string, error) {
	s.b.enter("object", "report")
	v, err := s.ObjectStore.PutVersion(ctx, org, ws, id, ifMatch, doc, user)
	if err == nil {
		s.b.finished("object")
	}
	return v, err
}

type crashFiles struct {
	tasks.ReportFiles
	b *betweenWrites
}

func (f crashFiles) PutFile(ctx context.Context, org, ws, path string, content io.Reader, contentType string, by store.User) (string, string, error) {
	f.b.enter("report", "object")
	id, v, err := f.ReportFiles.PutFile(ctx, org, ws, path, content, contentType, by)
	if err == nil {
		f.b.finished("report")
	}
	return id, v, err
}

// TestConsimCrashChild is the child half of TestConsimCrashBetweenWrites:
// it runs only when re-executed with consimCrashEnv set. It serves a worker
// over the directory with report files, puts the consim case's objects,
// prints the target grid's id and runs consim with validation, which stops
// between its two writes (betweenWrites).
func TestConsimCrashChild(t *testing.T) {
	dir := os.Getenv(consimCrashEnv)
	if dir == "" {
		t.Skip("child process of TestConsimCrashBetweenWrites")
	}
	b := &betweenWrites{done: map[string]bool{}}
	h := serveOver(t, dir, filepath.Join(dir, "nats"), func(env *tasks.Env) {
		env.Store = crashStore{ObjectStore: env.Store, b: b}
		env.Files = crashFiles{ReportFiles: env.Files, b: b}
	})
	c := newConsimCase(t, h)
	fmt.Println("GRID " + c.gID)
	_, err := h.c.RunTask(h.ctx, org, "consim", map[string]any{
		"source_object": h.url(c.pts), "source_attribute": "locations.attributes[?name=='cu']",
		"target_object": h.url(c.g), "variogram_model": h.url(c.vario),
		"neighborhood": map[string]any{"max_samples": 12, "ellipsoid": map[string]any{
			"ellipsoid_ranges": map[string]any{"major": 80, "semi_major": 60, "minor": 15}}},
		"number_of_lines": 30, "number_of_simulations": 3, "number_of_simulations_to_save": 1,
		"perform_validation": true,
	})
	t.Fatalf("the job should have stopped between its writes: %v", err)
}

// TestConsimCrashBetweenWrites kills (SIGKILL) a worker between consim's
// two writes, the target's new version (the simulation) and the validation
// report (a file), and reopens its data directory: no report is visible
// for a simulation that was not committed. Consim commits the simulation
// first, so the process stops with the simulation committed and no report;
// before, it stored the report first and a crash left a report of a
// simulation that never existed.
func TestConsimCrashBetweenWrites(t *testing.T) {
	objecttest.Schemas(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestConsimCrashChild$", "-test.v")
	cmd.Env = append(os.Environ(), consimCrashEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var gridID, point string
	deadline := time.After(2 * time.Minute)
	for point == "" {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the child exited before stopping between the writes")
			if id, found := strings.CutPrefix(l, "GRID "); found {
				gridID = id
			}
			if p, found := strings.CutPrefix(l, "BETWEEN_WRITES "); found {
				point = p
			}
		case <-deadline:
			t.Fatal("the child did not reach the point between the writes")
		}
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no cleanup runs
	_ = cmd.Wait()
	go func() {
		for range lines {
		}
	}()
	require.NotEmpty(t, gridID)

	// Reopen the stores over the directory, as a restarted worker does.
	st, err := store.OpenEmbedded(store.EmbeddedOptions{Dir: dir, Schemas: objecttest.Schemas(t)})
	require.NoError(t, err)
	v, err := st.GetObject(context.Background(), store.Workspace{Org: org, ID: ws}, store.Ref{ID: gridID})
	require.NoError(t, err)
	o, err := objects.Decode(v.Object)
	require.NoError(t, err)
	_, err = o.ResolveAttribute("mean")
	committed := err == nil
	fs, err := files.Open(dir)
	require.NoError(t, err)
	page, err := fs.List(context.Background(), org, ws, 100, 0)
	require.NoError(t, err)
	var reports []string
	for _, f := range page.Files {
		if strings.HasPrefix(f.Path, "reports/") || strings.HasPrefix(f.Path, "/reports/") {
			reports = append(reports, f.Path)
		}
	}
	assert.False(t, len(reports) > 0 && !committed,
		"reports %v are visible for a simulation that was never committed (stopped between %s)", reports, point)
	assert.Equal(t, "object then report", point, "the simulation is committed first")
	assert.True(t, committed, "the simulation committed before the crash is kept")
	assert.Empty(t, reports, "the report was not written before the crash")
}
