package service_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/service"
)

// startNATSServer builds nats-server from the module the worker already
// depends on and runs it as its own process, with JetStream and the
// authorization block of the worker's credentials, on 127.0.0.1. It
// returns its address and process; the process is killed when the test
// ends.
func startNATSServer(t *testing.T, creds natsauth.Credentials) (string, *os.Process) {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is needed to build nats-server: ", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "nats-server")
	build := exec.Command(gocmd, "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building nats-server: %s", out)
	users, err := natsauth.ReadUsers(creds.Users)
	require.NoError(t, err)
	auth, err := natsauth.ServerConfig(users)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	conf := filepath.Join(dir, "nats.conf")
	body := fmt.Sprintf("listen: %q\njetstream {\n  store_dir: %q\n}\n%s\n", addr, filepath.Join(dir, "js"), auth)
	require.NoError(t, os.WriteFile(conf, []byte(body), 0o600))
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		require.Less(t, i, 300, "nats-server never listened on %s", addr)
		time.Sleep(20 * time.Millisecond)
	}
	return addr, cmd.Process
}

// With the NATS server it joined paused (SIGSTOP) for 10 s, a worker's
// status reads of known jobs keep answering at once, also while a submit
// waits on NATS; when the server resumes (SIGCONT), the waiting submit
// completes and its job runs, as does a job submitted afterwards.
func TestPausedNATSKeepsStatusReadsAnswering(t *testing.T) {
	if testing.Short() {
		t.Skip("pauses a nats-server process for 10 s")
	}
	creds := natsCredentials(t)
	addr, nats := startNATSServer(t, creds)
	s, c, _ := start(t, t.TempDir(), service.Options{Cluster: service.ClusterOptions{
		NATS: "nats://" + addr, Credentials: creds.API, Role: service.RoleAPI}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	var call demo.Call
	for _, cl := range demo.Calls(c.Base) {
		if cl.Topic == "geostatistics" && cl.Task == "knn" {
			call = cl
		}
	}
	require.NotEmpty(t, call.Body, "the demo has a knn call")
	submit := func(ctx context.Context) (int, string, string) {
		r, err := c.Do(ctx, http.MethodPost, call.Path(), call.Body)
		if err != nil {
			return 0, "", err.Error()
		}
		return r.Status, r.Header.Get("Location"), string(r.Body)
	}
	var known []string
	for range 3 {
		status, loc, body := submit(ctx)
		require.Equal(t, http.StatusSeeOther, status, body)
		job, err := c.Follow(ctx, loc)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status)
		known = append(known, loc)
	}

	require.NoError(t, nats.Signal(syscall.SIGSTOP))
	paused := time.Now()
	type answer struct {
		status   int
		loc, msg string
	}
	submitted := make(chan answer, 1)
	go func() {
		st, loc, msg := submit(ctx)
		submitted <- answer{st, loc, msg}
	}()
	var lat []time.Duration
	for time.Since(paused) < 10*time.Second {
		for _, loc := range known {
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			t0 := time.Now()
			r, err := c.Do(rctx, http.MethodGet, loc, nil)
			lat = append(lat, time.Since(t0))
			rcancel()
			require.NoError(t, err, "a status read while NATS is paused")
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		select {
		case a := <-submitted:
			t.Fatalf("the submit answered while NATS was paused: %d %s", a.status, a.msg)
		default:
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, nats.Signal(syscall.SIGCONT))
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("%d status reads while NATS was paused: p50 %s, p99 %s, max %s", len(lat), lat[len(lat)/2], p99, lat[len(lat)-1])
	assert.Less(t, p99, 50*time.Millisecond, "status reads while NATS is paused")

	// NATS is back: the waiting submit completes and its job runs.
	var a answer
	select {
	case a = <-submitted:
	case <-ctx.Done():
		t.Fatal("the submit waiting on NATS never answered")
	}
	require.Equal(t, http.StatusSeeOther, a.status, "the submit that waited on the pause: %s", a.msg)
	job, err := c.Follow(ctx, a.loc)
	require.NoError(t, err)
	assert.Equal(t, "succeeded", job.Status)
	status, loc, body := submit(ctx)
	require.Equal(t, http.StatusSeeOther, status, body)
	job, err = c.Follow(ctx, loc)
	require.NoError(t, err)
	assert.Equal(t, "succeeded", job.Status)
}
