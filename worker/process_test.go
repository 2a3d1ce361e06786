package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
)

// These tests run the worker as a real process: the test binary re-executes
// itself with runAsWorkerEnv set, and TestMain then runs the worker's main
// on the arguments instead of the tests.

const runAsWorkerEnv = "GEOSTAT_TEST_RUN_AS_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(runAsWorkerEnv) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// proc is a worker process started by a test.
type proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	lines  chan string // stderr lines, closed at EOF
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// workerEnv is the environment of a worker process: the test's, without
// any geostat setting (so the worker uses its built-in schemas and a
// development token), plus the re-exec switch.
func workerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GEOSTAT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, runAsWorkerEnv+"=1")
}

// startProc starts the worker in dir (the working directory) with args.
func startProc(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	p := &proc{lines: make(chan string, 1024), exited: make(chan struct{})}
	p.cmd = exec.Command(exe, args...)
	p.cmd.Dir = dir
	p.cmd.Env = workerEnv()
	p.cmd.Stdout = &lockedWriter{mu: &p.mu, w: &p.stdout}
	errPipe, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- line:
			default:
			}
		}
		close(p.lines)
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *proc) output() (stdout, stderr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String(), p.stderr.String()
}

var listeningRE = regexp.MustCompile(`msg="geostat worker listening" addr=(\S+)`)

// waitFor waits (at most two minutes) for a stderr line containing want and
// returns it; it fails the test when the process ends first.
func (p *proc) waitFor(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				<-p.exited
				_, stderr := p.output()
				t.Fatalf("the worker ended (%v) before logging %q:\n%s", p.err, want, stderr)
			}
			if strings.Contains(line, want) {
				return line
			}
		case <-timeout:
			_, stderr := p.output()
			t.Fatalf("no %q from the worker within two minutes:\n%s", want, stderr)
		}
	}
}

// addr waits for the worker to listen and returns its base URL.
func (p *proc) url(t *testing.T) string {
	t.Helper()
	m := listeningRE.FindStringSubmatch(p.waitFor(t, `msg="geostat worker listening"`))
	require.NotNil(t, m)
	return "http://" + m[1]
}

// wait waits (at most two minutes) for the process to end and returns its
// exit status.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	go func() {
		for range p.lines { // drain, so the reader never blocks
		}
	}()
	select {
	case <-p.exited:
	case <-time.After(2 * time.Minute):
		t.Fatal("the worker did not end within two minutes")
	}
	return p.cmd.ProcessState.ExitCode()
}

// The done-when of issue 16: a worker started from / with nothing but a data
// directory (and a free port) validates what it stores with its built-in
// schemas.
func TestWorkerFromRootValidatesWithBuiltInSchemas(t *testing.T) {
	data := t.TempDir()
	p := startProc(t, "/", "-data", data, "-addr", "127.0.0.1:0")
	base := p.url(t)
	token, err := os.ReadFile(filepath.Join(data, server.DevTokenFile))
	require.NoError(t, err)
	const org, ws = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	post := func(path string, doc map[string]any) (int, map[string]any) {
		body, err := json.Marshal(doc)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, base+"/geoscience-object/orgs/"+org+"/workspaces/"+ws+"/objects/path/"+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var prob map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&prob))
		return resp.StatusCode, prob
	}
	// A pointset without locations and with a name of the wrong type.
	status, prob := post("bad.json", map[string]any{"schema": "/objects/pointset/1.3.0/pointset.schema.json", "name": 5,
		"uuid": nil, "bounding_box": map[string]any{"min_x": 0, "max_x": 1, "min_y": 0, "max_y": 1, "min_z": 0, "max_z": 1},
		"coordinate_reference_system": map[string]any{"epsg_code": 32650}})
	assert.Equal(t, http.StatusBadRequest, status, "%v", prob)
	assert.Equal(t, problem.ObjectInvalidObject, prob["type"])
	// An unknown schema id is not stored either.
	status, prob = post("unknown.json", map[string]any{"schema": "/objects/unknown/1.0.0/unknown.schema.json", "name": "x"})
	assert.Equal(t, http.StatusNotFound, status, "%v", prob)
	assert.Equal(t, problem.ObjectSchemaNotFound, prob["type"])
	_, stderr := p.output()
	assert.Contains(t, stderr, "schemas=embedded")

	// SIGINT: the shutdown is announced at once, the worker ends with 0.
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	p.waitFor(t, `msg="shutting down: waiting up to 10s for 0 running jobs"`)
	assert.Equal(t, 0, p.wait(t))
}

// One worker per data directory: a second one exits at once naming the
// directory and the first one's PID; the lock goes with the process, also
// when it is killed.
func TestOneWorkerPerDataDirectory(t *testing.T) {
	data := t.TempDir()
	first := startProc(t, t.TempDir(), "-data", data, "-addr", "127.0.0.1:0")
	first.url(t)

	second := startProc(t, t.TempDir(), "-data", data, "-addr", "127.0.0.1:0")
	assert.Equal(t, 1, second.wait(t))
	_, stderr := second.output()
	assert.Contains(t, stderr, data+" is used by another worker (pid "+fmt.Sprint(first.cmd.Process.Pid)+")")
	assert.NotContains(t, stderr, "geostat worker listening")

	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	first.wait(t)
	third := startProc(t, t.TempDir(), "-data", data, "-addr", "127.0.0.1:0")
	third.url(t)
	// SIGTERM: announced at once, exit 0.
	require.NoError(t, third.cmd.Process.Signal(syscall.SIGTERM))
	third.waitFor(t, `msg="shutting down: waiting up to 10s for 0 running jobs"`)
	assert.Equal(t, 0, third.wait(t))
}

// A busy port fails before anything is created in the data directory.
func TestBusyPortLeavesNothingBehind(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	data := filepath.Join(t.TempDir(), "geostat-data")
	p := startProc(t, t.TempDir(), "-data", data, "-addr", ln.Addr().String())
	assert.Equal(t, 1, p.wait(t))
	_, stderr := p.output()
	assert.Contains(t, stderr, "listen")
	assert.Contains(t, stderr, ln.Addr().String())
	_, err = os.Stat(data)
	assert.True(t, os.IsNotExist(err), "the data directory was created: %v", err)
}

func TestHelpSaysWorker(t *testing.T) {
	p := startProc(t, t.TempDir(), "-help")
	assert.Equal(t, 0, p.wait(t))
	_, stderr := p.output()
	assert.True(t, strings.HasPrefix(stderr, "usage: worker [flags]\n"), "%s", stderr)
	assert.Contains(t, stderr, "-shutdown-timeout")
	assert.Contains(t, stderr, "SIGINT or SIGTERM")

	p = startProc(t, t.TempDir(), "-no-such-flag")
	assert.Equal(t, 2, p.wait(t))
	_, stderr = p.output()
	assert.Contains(t, stderr, "usage: worker [flags]")
}

// -demo on a data directory it seeded before reuses the workspace and
// prints the commands again.
func TestDemoTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the demo data twice")
	}
	data := t.TempDir()
	for i, want := range []string{"The demo workspace is ready.", "reusing it as it is"} {
		p := startProc(t, t.TempDir(), "-data", data, "-addr", "127.0.0.1:0", "-demo")
		base := p.url(t)
		deadline := time.Now().Add(2 * time.Minute)
		var stdout string
		for time.Now().Before(deadline) {
			if stdout, _ = p.output(); strings.Contains(stdout, "Stop the worker with Ctrl-C.") {
				break
			}
			select {
			case <-p.exited:
				_, stderr := p.output()
				t.Fatalf("run %d: the worker ended: %s", i, stderr)
			case <-time.After(50 * time.Millisecond):
			}
		}
		assert.Contains(t, stdout, want, "run %d", i)
		assert.Contains(t, stdout, "export GEOSTAT="+base+" TOKEN=$(cat "+filepath.Join(data, server.DevTokenFile)+")")
		assert.Contains(t, stdout, "out=$(mktemp)")
		assert.Contains(t, stdout, "open that URL in a browser")
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		assert.Equal(t, 0, p.wait(t), "run %d", i)
	}
}
