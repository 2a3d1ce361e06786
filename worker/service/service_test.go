package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/internal/browser"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmapi"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "service-test-token"

// testOptions completes opts for a test worker over dir: 127.0.0.1:0,
// discarded logs and, unless opts has its own Getenv, GEOSTAT_TOKEN=token.
func testOptions(dir string, opts service.Options) service.Options {
	opts.Addr = "127.0.0.1:0"
	opts.DataDir = dir
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Stdout = io.Discard
	if opts.Getenv == nil {
		opts.Getenv = func(k string) string {
			if k == server.TokenEnv {
				return token
			}
			return ""
		}
	}
	return opts
}

// start runs a Service on 127.0.0.1:0 over dir until the test ends (or
// until the returned stop is called).
func start(t *testing.T, dir string, opts service.Options) (*service.Service, *workertest.Client, func()) {
	t.Helper()
	s, stop := run(t, testOptions(dir, opts))
	return s, &workertest.Client{Base: s.URL(), Token: token}, stop
}

// run runs a Service until the test ends (or until the returned stop is
// called).
func run(t *testing.T, opts service.Options) (*service.Service, func()) {
	t.Helper()
	s, err := service.New(opts)
	require.NoError(t, err)
	stop := workertest.Run(t, s)
	return s, stop
}

func TestOpenAPIListsEveryRoute(t *testing.T) {
	s, c, _ := start(t, t.TempDir(), service.Options{})
	ctx := context.Background()
	r, err := c.Do(ctx, http.MethodGet, "/openapi.json", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, r.JSON(&doc))
	assert.Equal(t, "3.1.0", doc.OpenAPI)
	n := 0
	for _, ops := range doc.Paths {
		n += len(ops)
	}
	// The two submit routes are documented once per task, with the task's
	// request schema; every other route once.
	perTask := map[string][]string{"/compute/orgs/{org_id}/geostat/{task}": tasks.Tasks(tasks.TopicSeed),
		"/compute/orgs/{org_id}/geostatistics/{task}": tasks.Tasks(tasks.TopicCurrent)}
	assert.Equal(t, len(s.Routes())-2+len(perTask["/compute/orgs/{org_id}/geostat/{task}"])+len(perTask["/compute/orgs/{org_id}/geostatistics/{task}"]), n)
	for _, p := range s.Routes() {
		method, path, _ := strings.Cut(p, " ")
		path = strings.ReplaceAll(path, "...}", "}")
		paths := []string{path}
		if names, ok := perTask[path]; ok && method == http.MethodPost {
			paths = nil
			for _, task := range names {
				paths = append(paths, strings.Replace(path, "{task}", task, 1))
			}
		}
		for _, path := range paths {
			require.Contains(t, doc.Paths, path, p)
			assert.Contains(t, doc.Paths[path], strings.ToLower(method), p)
		}
	}
	for _, want := range []string{"/healthz", "/metrics", "/compute/orgs/{org_id}/geostatistics/kriging", "/file/v2/orgs/{org_id}/workspaces/{workspace_id}/files"} {
		assert.Contains(t, doc.Paths, want)
	}
	// Without a token only /healthz answers.
	anon := &workertest.Client{Base: c.Base}
	r, err = anon.Do(ctx, http.MethodGet, "/openapi.json", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, r.Status)
	r, err = anon.Do(ctx, http.MethodGet, "/healthz", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, r.Status)
}

// TestDemo seeds the demo workspace and runs the printed commands, as
// printed, with bash and curl against the worker: the script ends without
// error, every task of both topics' task tables ran and succeeded, each
// command made one job, and the printed report-page lines are those of the
// calls that store a report, each opening as a browser would.
func TestDemo(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("TestDemo runs the demo's printed commands with bash and curl: %s is not installed", tool)
		}
	}
	s, c, _ := start(t, t.TempDir(), service.Options{SyncWait: 2 * time.Minute})
	ctx := context.Background()
	n, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	require.Positive(t, n)
	n, err = s.SeedDemo(ctx)
	require.NoError(t, err, "seeding again reuses the workspace")
	assert.Zero(t, n, "nothing is stored again")

	// The calls cover the task table of each topic, and nothing else.
	calls := demo.Calls(c.Base)
	covered := map[string]bool{}
	for _, call := range calls {
		covered[call.Topic+"/"+call.Task] = true
	}
	var table []string
	for _, topic := range []string{tasks.TopicSeed, tasks.TopicCurrent} {
		for _, task := range tasks.Tasks(topic) {
			table = append(table, topic+"/"+task)
			assert.True(t, covered[topic+"/"+task], "the demo has no command for %s/%s", topic, task)
		}
	}
	assert.Len(t, covered, len(table), "the demo calls only tasks of the table")

	// Run the printed commands as a user pastes them, stopping at the first
	// that fails (run returns non-zero when a task is refused or its job
	// does not succeed).
	script := demo.Commands(c.Base, token)
	require.Equal(t, len(calls), strings.Count(script, "\nrun /compute/"), "one printed command per call")
	// Then the query of the demo's block model, kriged by one of the calls.
	bm, ok := s.DemoBlockModel()
	require.True(t, ok, "SeedDemo made the demo's block model")
	script += demo.BlockModelCommands(c.Base, bm)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // a hang guard: a minute on a machine loaded eightfold
	defer cancel()
	cmd := exec.CommandContext(sctx, "bash", "-c", "set -e\n"+script)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	require.NoError(t, cmd.Run(), "the demo's commands failed:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	t.Logf("the demo's %d commands ran in %.1fs", len(calls), time.Since(began).Seconds())
	assert.Empty(t, stderr.String())

	// The block model query printed the CSV of its first blocks, kriged.
	assert.Contains(t, stdout.String(), "x,y,z,cu_ok\n")
	assert.Regexp(t, `\nx,y,z,cu_ok\n([-0-9.e]+,){3}[-0-9.e]+\n`, stdout.String())

	// Every command made one job, and every job succeeded; every task of
	// the table is among them. (The block model query is a job of the
	// block model area.)
	list := slices.DeleteFunc(s.Jobs().List(demo.Org), func(r jobs.Record) bool { return r.Topic == bmapi.Topic })
	require.Len(t, list, len(calls), "one job per printed command")
	ran := map[string]bool{}
	results := map[string][]json.RawMessage{}
	slices.SortFunc(list, func(a, b jobs.Record) int { return a.CreatedAt.Compare(b.CreatedAt) })
	for _, rec := range list {
		key := rec.Topic + "/" + rec.Task
		if rec.FinishedAt != nil {
			t.Logf("%-45s %6.2fs", key, rec.FinishedAt.Sub(rec.CreatedAt).Seconds())
		}
		if assert.Equal(t, jobs.Succeeded, rec.Status, "%s: %+v", key, rec.Error) {
			ran[key] = true
		}
		require.True(t, json.Valid(rec.Result), key)
		results[key] = append(results[key], rec.Result)
	}
	for _, key := range table {
		assert.True(t, ran[key], "%s did not run and succeed", key)
	}

	// The report-page lines: one per call that stores a report (the count
	// the footer gives), each a working view link.
	var views []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(line, demo.ViewLine); ok {
			views = append(views, v)
		}
	}
	want := 0
	for _, call := range calls {
		if call.View {
			want++
		}
	}
	require.Len(t, views, want, "report-page lines")
	assert.True(t, strings.HasPrefix(demo.Footer(), fmt.Sprintf("%d of these commands store a validation report", want)), demo.Footer())
	for _, v := range views {
		checkReportView(t, v, c.Base)
	}
	for _, res := range results[tasks.TopicCurrent+"/simulation-report"] {
		var rep struct {
			ValidationReport struct{ Reference string } `json:"validation_report"`
			Links            struct{ Dashboard, View string }
		}
		require.NoError(t, json.Unmarshal(res, &rep))
		page, err := c.Do(ctx, http.MethodGet, rep.Links.Dashboard, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, page.Status)
		assert.Contains(t, string(page.Body), "<svg")
		assert.Contains(t, page.Header.Get("Content-Type"), "text/html")
		rec, err := c.Do(ctx, http.MethodGet, rep.ValidationReport.Reference, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, rec.Status, "%s", rec.Body)
	}
	// Metrics saw the jobs.
	r, err := c.Do(ctx, http.MethodGet, "/metrics", nil)
	require.NoError(t, err)
	assert.Contains(t, string(r.Body), `geostat_jobs_total{status="succeeded",task="knn",topic="geostatistics"} 1`)
	assert.Contains(t, string(r.Body), `route="POST /compute/orgs/{org_id}/geostatistics/{task}"`)
}

func TestConcurrentTasksAndRestart(t *testing.T) {
	dir := t.TempDir()
	s, c, stop := start(t, dir, service.Options{MaxJobs: 2})
	ctx := context.Background()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	url := func(p string) string {
		return c.Base + "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + p
	}
	// 20 knn tasks at once onto the same grid: all succeed, each writes
	// its own attribute into a new version.
	var wg sync.WaitGroup
	jobs := make([]string, 20)
	errs := make([]error, 20)
	for i := range jobs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			job, err := c.RunTask(ctx, demo.Org, "knn", map[string]any{
				"source": map[string]any{"object": url(demo.PointsPath), "attribute": "cu"},
				"target": map[string]any{"object": url(demo.GridPath), "attribute": map[string]any{"operation": "create", "name": fmt.Sprintf("knn_%02d", i)}},
				"neighborhood": map[string]any{"max_samples": 4 + i, "ellipsoid": map[string]any{
					"ellipsoid_ranges": map[string]any{"major": 200, "semi_major": 200, "minor": 50}}},
			})
			if err == nil && job.Status != "succeeded" {
				err = fmt.Errorf("job %s: %s", job.Status, job.Error)
			}
			errs[i] = err
			if job != nil {
				jobs[i] = string(job.Results)
			}
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "task %d", i)
	}
	rec, err := c.Do(ctx, http.MethodGet, "/geoscience-object/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/objects/path/"+demo.GridPath, nil)
	require.NoError(t, err)
	for i := range jobs {
		assert.Contains(t, string(rec.Body), fmt.Sprintf(`"knn_%02d"`, i))
	}
	// A finished job still answers after a restart.
	list := s.Jobs().List(demo.Org)
	require.Len(t, list, 20)
	id, task := list[0].ID, list[0].Task
	stop()
	s2, c2, _ := start(t, dir, service.Options{})
	r, err := c2.Do(ctx, http.MethodGet, "/compute/orgs/"+demo.Org+"/geostatistics/"+task+"/"+id+"/status", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), `"succeeded"`)
	_ = s2
}

// TestShutdownInterruptsRunningJobs stops the worker while a long
// simulation runs: the shutdown timeout (300 ms, far less than the job
// needs) interrupts it, Run returns, and after a restart the job is queued
// to run again (attempt 2 of 3), the target unchanged.
func TestShutdownInterruptsRunningJobs(t *testing.T) {
	dir := t.TempDir()
	s, c, stop := start(t, dir, service.Options{Options: server.Options{ShutdownTimeout: 300 * time.Millisecond}})
	ctx := context.Background()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	grid := "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + demo.GridPath
	before, err := c.Do(ctx, http.MethodGet, grid, nil)
	require.NoError(t, err)
	url := func(p string) string {
		return c.Base + "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + p
	}
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": url(demo.PointsPath), "source_attribute": "cu", "target": url(demo.GridPath),
		"distribution": url(demo.DistributionPath), "variogram_model": url(demo.VariogramPath),
		"realizations": 100, "number_of_lines": 1000, "block_discretization": map[string]any{"nx": 4, "ny": 4, "nz": 4}}})
	r, err := c.Do(ctx, http.MethodPost, "/compute/orgs/"+demo.Org+"/geostatistics/conditional-turning-bands", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	status := r.Header.Get("Location")
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rec, started := s.Jobs().WaitStarted(wctx, jobID(status))
	require.True(t, started, "the job did not start")
	require.Equal(t, jobs.InProgress, rec.Status)
	stop()
	_, c2, _ := start(t, dir, service.Options{})
	requireRunAgain(t, c2, status)
	after, err := c2.Do(ctx, http.MethodGet, grid, nil)
	require.NoError(t, err)
	var b, a struct {
		VersionID string `json:"version_id"`
	}
	require.NoError(t, before.JSON(&b))
	require.NoError(t, after.JSON(&a))
	assert.Equal(t, b.VersionID, a.VersionID, "the target is unchanged")
}

// checkReportView opens a report's view link as a browser would: without a
// token, inline, with nosniff and the view policy; in Chromium the page lays
// out its plots and a screenshot of it is not blank.
func checkReportView(t *testing.T, view, base string) {
	t.Helper()
	require.True(t, strings.HasPrefix(view, base+"/file/v2/content/"), "links.view %q", view)
	require.Contains(t, view, "op=view&", "a plain URL, not JSON-escaped")
	resp, err := http.Get(view)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, files.ViewCSP, resp.Header.Get("Content-Security-Policy"))
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Disposition"), "inline"))
	assert.Contains(t, string(body), "<svg")
	assert.NotContains(t, string(body), "<script", "the report has no script")
	if browser.Chromium() == "" {
		t.Log("chromium not installed: the report view is not opened in a browser")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom, err := browser.Browser(ctx, t, view, "--dump-dom")
	require.NoError(t, err)
	assert.Contains(t, string(dom), "data-plot=", "the page's plots are in the browser's DOM")
	colours, err := browser.ScreenshotColours(ctx, t, view, 1280, 1600)
	require.NoError(t, err)
	assert.Greater(t, colours, 50, "the screenshot looks blank")
}

// jobID is the job id of a job status URL.
func jobID(statusURL string) string {
	p := strings.TrimSuffix(statusURL, "/status")
	return p[strings.LastIndex(p, "/")+1:]
}
