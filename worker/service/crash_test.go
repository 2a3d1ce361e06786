package service_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childDirEnv, when set, makes the test binary run a worker over that data
// directory instead of the tests (see TestMain): the crash test kills it.
const (
	childDirEnv  = "GEOSTAT_SERVICE_TEST_CHILD_DIR"
	childDemoEnv = "GEOSTAT_SERVICE_TEST_CHILD_DEMO"
	// childNATSEnv and childObjectsEnv, when set, make the child join that
	// NATS server and read that worker's objects (see jobs_test.go).
	childNATSEnv = "GEOSTAT_SERVICE_TEST_CHILD_NATS"
	// childCredentialsEnv is the NATS credential file of a joining child.
	childCredentialsEnv = "GEOSTAT_SERVICE_TEST_CHILD_NATS_CREDENTIALS"
	childObjectsEnv     = "GEOSTAT_SERVICE_TEST_CHILD_OBJECTS"
	childPrefix         = "geostat-test-child listening on "
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(runChild(dir, os.Getenv(childDemoEnv) != ""))
	}
	os.Exit(m.Run())
}

// runChild runs a worker on 127.0.0.1:0 over dir (with the demo seeded when
// asked), prints its URL and serves until SIGTERM or SIGKILL.
func runChild(dir string, seed bool) int {
	opts := service.Options{Threads: 1}
	if u := os.Getenv(childNATSEnv); u != "" {
		opts.MaxJobs = 1
		opts.Cluster = service.ClusterOptions{NATS: u, Credentials: os.Getenv(childCredentialsEnv), JobAckWait: childJobAckWait, ShardBytes: 1 << 20}
		opts.ObjectsURL, opts.ObjectsToken = os.Getenv(childObjectsEnv), token
	}
	s, err := service.New(testOptions(dir, opts))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child worker:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if seed {
		if _, err := s.SeedDemo(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "child worker:", err)
			return 1
		}
	}
	fmt.Println(childPrefix + s.URL())
	if err := s.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child worker:", err)
		return 1
	}
	return 0
}

// startChild re-executes the test binary as a worker process over dir and
// returns it with a client, once it listens (bounded wait).
func startChild(t *testing.T, dir string, seed bool, env ...string) (*exec.Cmd, *workertest.Client) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childDirEnv+"="+dir), env...)
	if seed {
		cmd.Env = append(cmd.Env, childDemoEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), childPrefix); ok {
				urls <- u
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		require.True(t, ok, "the child worker exited before listening")
		return cmd, &workertest.Client{Base: u, Token: token}
	case <-time.After(2 * time.Minute):
		t.Fatal("the child worker did not start listening")
	}
	return nil, nil
}

// jobError reads a finished job's status and returns its error document.
func jobError(t *testing.T, c *workertest.Client, statusURL string) problem.Problem {
	t.Helper()
	r, err := c.Do(context.Background(), http.MethodGet, statusURL, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var st struct {
		Status string           `json:"status"`
		Error  *problem.Problem `json:"error"`
	}
	require.NoError(t, r.JSON(&st))
	require.Equal(t, "failed", st.Status)
	require.NotNil(t, st.Error)
	return *st.Error
}

// TestCrashedJobRunsAgainAfterRestart kills a worker process (SIGKILL by
// PID) while a simulation runs and restarts over its data directory: the
// job reads requested again (attempt 2 of 3), the same as a job
// interrupted by a clean shutdown, and once its queue message comes back
// (after the ack deadline) it runs again and succeeds, writing the same
// data as an uninterrupted run of the same request, bit for bit.
func TestCrashedJobRunsAgainAfterRestart(t *testing.T) {
	dir := t.TempDir()
	cmd, child := startChild(t, dir, true)
	crashed := submit(t, child, "geostatistics", "conditional-turning-bands", mediumSimulation(child.Base))
	// The job runs in another process: poll its status, bounded.
	for i := 0; ; i++ {
		r, err := child.Do(context.Background(), http.MethodGet, crashed, nil)
		require.NoError(t, err)
		if containsStatus(r.Body, "in progress") {
			break
		}
		require.Less(t, i, 6000, "the job did not start: %s", r.Body)
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
	err := cmd.Wait()
	require.Error(t, err, "the worker was killed")

	// Restart over the same directory: the job is queued to run again.
	opts := service.Options{Threads: 1, Options: server.Options{ShutdownTimeout: 200 * time.Millisecond},
		Cluster: service.ClusterOptions{JobAckWait: childJobAckWait}}
	s, c, stop := start(t, dir, opts)
	const again = "Job requested: run again after its worker stopped (attempt 2 of 3)"
	crashRec, ok := s.Jobs().Get(jobID(crashed))
	require.True(t, ok)
	if crashRec.Status == jobs.Requested {
		assert.Equal(t, again, crashRec.Message)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	j, err := c.Follow(ctx, crashed)
	require.NoError(t, err)
	require.Equal(t, "succeeded", j.Status, "the crashed job ran again: %s", j.Error)
	rec, _ := s.Jobs().Get(jobID(crashed))
	assert.Equal(t, 2, rec.Attempts)
	rerun := dataKeys(t, c, demo.GridPath)
	require.NotEmpty(t, rerun)

	// The same request run without interruption writes the same data.
	plain := submit(t, c, "geostatistics", "conditional-turning-bands", mediumSimulation(c.Base))
	j, err = c.Follow(ctx, plain)
	require.NoError(t, err)
	require.Equal(t, "succeeded", j.Status, "%s", j.Error)
	assert.Equal(t, rerun, dataKeys(t, c, demo.GridPath), "the run after the crash wrote the same data, bit for bit")

	// A simulation interrupted by a shutdown reads the same after the
	// restart: queued to run again.
	shut := startHeavy(t, s, c)
	stop()
	s2, c2, _ := start(t, dir, service.Options{})
	r, ok := s2.Jobs().Get(jobID(shut))
	require.True(t, ok)
	// Put back, it is either still waiting for its message to come back or
	// already started again (when the server kept the message's put-back
	// across its restart): both are the job run again, never failed.
	switch r.Status {
	case jobs.Requested:
		assert.Equal(t, again, r.Message)
		assert.Equal(t, 1, r.Attempts, "one start so far")
	case jobs.InProgress:
		assert.Equal(t, 2, r.Attempts, "started again")
	default:
		t.Fatalf("the job interrupted by the shutdown is %s (%+v), want requested or in progress", r.Status, r.Error)
	}
	d, err := c2.Do(ctx, http.MethodDelete, jobURL(shut), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, d.Status)
	waitStatus(t, c2, shut, "cancelled")
}

// mediumSimulation is a conditional simulation of the demo that runs for
// a few seconds on one thread.
func mediumSimulation(base string) []byte {
	body, _ := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": demoURL(base, demo.PointsPath), "source_attribute": "cu", "target": demoURL(base, demo.GridPath),
		"distribution": demoURL(base, demo.DistributionPath), "variogram_model": demoURL(base, demo.VariogramPath),
		"realizations": 20, "number_of_lines": 500, "random_seed": 7}})
	return body
}

// dataKeys reads a demo object and returns the data keys it references
// (every string member named "data"), in document order.
func dataKeys(t *testing.T, c *workertest.Client, path string) []string {
	t.Helper()
	r, err := c.Do(context.Background(), http.MethodGet, "/geoscience-object/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/objects/path/"+path, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var doc any
	require.NoError(t, r.JSON(&doc))
	var keys []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			names := make([]string, 0, len(v))
			for k := range v {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				if s, ok := v[k].(string); ok && k == "data" {
					keys = append(keys, s)
					continue
				}
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return keys
}

func containsStatus(body []byte, s string) bool {
	return strings.Contains(string(body), `"status":"`+s+`"`)
}
