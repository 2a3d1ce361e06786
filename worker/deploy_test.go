package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/jobs"
)

// unitPath is the systemd unit the README shows.
const unitPath = "deploy/geostat-worker.service"

// systemdUnit is a parsed unit file: section → key → values in file order.
type systemdUnit map[string]map[string][]string

// readUnit parses a systemd unit file: [Section] headers, Key=Value lines,
// # and ; comments, and lines continued with a trailing backslash.
func readUnit(t *testing.T, path string) systemdUnit {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	u := systemdUnit{}
	section := ""
	sc := bufio.NewScanner(f)
	var cont string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cont != "" {
			line = cont + " " + line
			cont = ""
		}
		if strings.HasSuffix(line, `\`) {
			cont = strings.TrimSuffix(line, `\`)
			continue
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			require.True(t, strings.HasSuffix(line, "]"), "section header %q", line)
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			key, value, ok := strings.Cut(line, "=")
			require.True(t, ok, "not a Key=Value line: %q", line)
			require.NotEmpty(t, section, "%q before any section", line)
			u[section][strings.TrimSpace(key)] = append(u[section][strings.TrimSpace(key)], strings.TrimSpace(value))
		}
	}
	require.NoError(t, sc.Err())
	return u
}

// unitFlags parses the worker's flags of an ExecStart command line (every
// flag of the unit takes a value).
func unitFlags(t *testing.T, args []string) map[string]string {
	t.Helper()
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "-")
		require.True(t, ok, "ExecStart argument %q is not a flag", args[i])
		if n, v, ok := strings.Cut(name, "="); ok {
			flags[n] = v
			continue
		}
		require.Less(t, i+1, len(args), "flag -%s has no value", name)
		flags[name] = args[i+1]
		i++
	}
	return flags
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// TestServiceUnit checks the systemd unit of the README: the settings the
// README promises (binary path, non-root user, data directory writable
// under ProtectSystem=strict, SIGTERM, a stop timeout longer than the
// worker's -shutdown-timeout, Restart=on-failure, hardening), that
// systemd-analyze verify accepts it when systemd is installed, and that the
// worker started with the unit's flags (paths moved to a temporary
// directory, port 0, a 2 s shutdown timeout) stops on the unit's
// KillSignal, with a long job running, within its shutdown timeout and
// exits 0.
func TestServiceUnit(t *testing.T) {
	u := readUnit(t, unitPath)
	svc := u["Service"]
	require.NotNil(t, svc, "no [Service] section")
	one := func(key string) string {
		t.Helper()
		require.Len(t, svc[key], 1, "[Service] %s", key)
		return svc[key][0]
	}
	assert.Equal(t, "on-failure", one("Restart"))
	assert.Equal(t, "SIGTERM", one("KillSignal"))
	assert.Equal(t, "yes", one("NoNewPrivileges"))
	assert.Equal(t, "strict", one("ProtectSystem"))
	assert.NotContains(t, []string{"", "root", "0"}, one("User"))
	assert.Equal(t, []string{"multi-user.target"}, u["Install"]["WantedBy"])

	cmd := strings.Fields(one("ExecStart"))
	require.NotEmpty(t, cmd)
	assert.Equal(t, "/usr/local/bin/geostat-worker", cmd[0], "the path the README installs the binary to")
	flags := unitFlags(t, cmd[1:])
	data := flags["data"]
	require.True(t, filepath.IsAbs(data), "-data %q", data)
	assert.Equal(t, data, one("WorkingDirectory"))
	rw := strings.Fields(one("ReadWritePaths"))
	writable := false
	for _, p := range rw {
		writable = writable || within(data, p)
	}
	assert.True(t, writable, "-data %s is not under ReadWritePaths %v", data, rw)
	assert.Equal(t, filepath.Join("/var/lib", one("StateDirectory")), data, "the data directory is the unit's StateDirectory")
	shutdown, err := time.ParseDuration(flags["shutdown-timeout"])
	require.NoError(t, err, "-shutdown-timeout")
	stop, err := time.ParseDuration(one("TimeoutStopSec"))
	require.NoError(t, err, "TimeoutStopSec")
	assert.Greater(t, stop, shutdown, "systemd would SIGKILL the worker before its shutdown timeout ends")
	require.Contains(t, flags, "tokens")
	assert.True(t, strings.HasPrefix(flags["tokens"], "/etc/"), "the tokens file is read-only under ProtectSystem=strict: %s", flags["tokens"])

	if analyze, err := exec.LookPath("systemd-analyze"); err == nil {
		// verify needs an executable ExecStart: the test binary stands in.
		exe, err := os.Executable()
		require.NoError(t, err)
		text, err := os.ReadFile(unitPath)
		require.NoError(t, err)
		copyPath := filepath.Join(t.TempDir(), filepath.Base(unitPath))
		require.NoError(t, os.WriteFile(copyPath, bytes.ReplaceAll(text, []byte(cmd[0]), []byte(exe)), 0o644))
		out, err := exec.Command(analyze, "verify", copyPath).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify warns (unknown or bad keys)")
	} else {
		t.Log("systemd-analyze not installed: the unit is not verified by systemd")
	}

	if testing.Short() {
		t.Skip("the worker run with the unit's flags builds the demo data")
	}
	dir := t.TempDir()
	const token = "service-unit-test-token-0123456789"
	tokens := filepath.Join(dir, "tokens.json")
	entries, err := json.Marshal([]any{map[string]any{"token": token, "user": map[string]any{"id": "ops", "name": "ops", "email": "ops@example.com"},
		"orgs": map[string]any{demo.Org: map[string]any{"*": "owner"}}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(tokens, entries, 0o600))
	const grace = 2 * time.Second
	flags["data"], flags["tokens"], flags["addr"], flags["shutdown-timeout"] = filepath.Join(dir, "data"), tokens, "127.0.0.1:0", grace.String()
	args := []string{"-demo"}
	for name, value := range flags {
		args = append(args, "-"+name, value)
	}
	p := startProc(t, dir, args...)
	base := p.url(t)
	waitStdout(t, p, "Stop the worker with Ctrl-C.")

	// A simulation far longer than the shutdown timeout.
	url := func(path string) string {
		return base + "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + path
	}
	body, err := json.Marshal(map[string]any{"parameters": map[string]any{
		"source": url(demo.PointsPath), "source_attribute": "cu", "target": url(demo.GridPath),
		"distribution": url(demo.DistributionPath), "variogram_model": url(demo.VariogramPath),
		"realizations": 100, "number_of_lines": 1000, "block_discretization": map[string]any{"nx": 4, "ny": 4, "nz": 4}}})
	require.NoError(t, err)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, target string, body []byte) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, target, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, b
	}
	code, hdr, b := do(http.MethodPost, base+"/compute/orgs/"+demo.Org+"/geostatistics/conditional-turning-bands", body)
	require.Equal(t, http.StatusSeeOther, code, "%s", b)
	status := base + hdr.Get("Location")
	for i := 0; ; i++ {
		require.Less(t, i, 1200, "the job did not start within a minute")
		_, _, b = do(http.MethodGet, status, nil)
		var st struct{ Status string }
		require.NoError(t, json.Unmarshal(b, &st), "%s", b)
		if st.Status == string(jobs.InProgress) {
			break
		}
		require.Equal(t, string(jobs.Requested), st.Status, "%s", b)
		time.Sleep(50 * time.Millisecond)
	}

	sig := map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT}[one("KillSignal")]
	require.NotZero(t, sig)
	began := time.Now()
	require.NoError(t, p.cmd.Process.Signal(sig))
	p.waitFor(t, `msg="shutting down: waiting up to 2s for 1 running job"`)
	p.waitFor(t, "job interrupted by the shutdown; put back in the shared queue to run again")
	assert.Equal(t, 0, p.wait(t), "a clean stop: Restart=on-failure does not restart it")
	took := time.Since(began)
	t.Logf("stopped %.2fs after %s (shutdown timeout %s)", took.Seconds(), one("KillSignal"), grace)
	// The job alone needs minutes; the worker ends once the shutdown
	// timeout has interrupted it, well within the unit's margin.
	assert.Less(t, took, grace+(stop-shutdown), "the worker outlived its shutdown timeout by more than the unit allows")
}

// waitStdout waits (at most two minutes) until the worker's stdout holds
// want.
func waitStdout(t *testing.T, p *proc, want string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		if stdout, _ := p.output(); strings.Contains(stdout, want) {
			return
		}
		select {
		case <-p.exited:
			_, stderr := p.output()
			t.Fatalf("the worker ended before printing %q: %s", want, stderr)
		case <-deadline:
			t.Fatalf("no %q on the worker's stdout within two minutes", want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
