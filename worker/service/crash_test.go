package service_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

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
	childNATSEnv    = "GEOSTAT_SERVICE_TEST_CHILD_NATS"
	childObjectsEnv = "GEOSTAT_SERVICE_TEST_CHILD_OBJECTS"
	childPrefix     = "geostat-test-child listening on "
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
		opts.Cluster = service.ClusterOptions{NATS: u, JobAckWait: childJobAckWait, ShardBytes: 1 << 20}
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

// TestCrashInterruptedJobReadsLikeShutdown kills a worker process (SIGKILL
// by PID) while a simulation runs, restarts over its data directory and
// reads the job: failed, 503 interrupted, the same document as a job
// interrupted by a clean shutdown.
func TestCrashInterruptedJobReadsLikeShutdown(t *testing.T) {
	dir := t.TempDir()
	cmd, child := startChild(t, dir, true)
	crashed := submit(t, child, "geostatistics", "conditional-turning-bands", heavySimulation(child.Base))
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

	// Restart over the same directory: the job was interrupted.
	s, c, stop := start(t, dir, service.Options{Threads: 1, Options: server.Options{ShutdownTimeout: 200 * time.Millisecond}})
	crashDoc := jobError(t, c, crashed)
	assert.Equal(t, problem.ComputeInterrupted, crashDoc.Type)
	assert.Equal(t, http.StatusServiceUnavailable, crashDoc.Status)

	// The same simulation interrupted by a shutdown reads the same.
	shut := startHeavy(t, s, c)
	stop()
	_, c2, _ := start(t, dir, service.Options{})
	assert.Equal(t, crashDoc, jobError(t, c2, shut), "crash and shutdown interruptions read the same")
	assert.Equal(t, crashDoc, jobError(t, c2, crashed), "and the crashed job still reads so")
}

func containsStatus(body []byte, s string) bool {
	return strings.Contains(string(body), `"status":"`+s+`"`)
}
