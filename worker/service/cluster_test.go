package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/service"
)

// An api worker with its embedded NATS server listening: a conditional
// simulation waits as queued shards while no compute worker is there, is
// cancelled through the HTTP API (its shards are purged from the queue and
// the target keeps its version), then runs to the end once a compute
// worker (here a Work loop of the test on its own TCP connection) is there,
// its progress moving with the done shards.
func TestClusterAPIWorkerCancelAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulation through NATS")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	creds := natsCredentials(t)
	s, c, _ := start(t, t.TempDir(), service.Options{Cluster: service.ClusterOptions{
		Listen: natsAddr, Users: creds.Users, Role: service.RoleAPI, ShardBytes: 1 << 10}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = s.SeedDemo(ctx)
	require.NoError(t, err)
	// The test is the compute worker, with a compute credential.
	nc := connectNATS(t, natsAddr, creds.Compute, natsauth.RoleCompute)
	q, err := cluster.Open(ctx, nc, cluster.Config{Bind: true})
	require.NoError(t, err)

	var body []byte
	for _, call := range demo.Calls(c.Base) {
		if call.Task == "conditional-turning-bands" {
			var b map[string]any
			require.NoError(t, json.Unmarshal(call.Body, &b))
			b["parameters"].(map[string]any)["realizations"] = 10
			body, err = json.Marshal(b)
			require.NoError(t, err)
			break
		}
	}
	require.NotNil(t, body)
	grid := "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + demo.MaskedGridPath
	version := func() string {
		r, err := c.Do(ctx, http.MethodGet, grid, nil)
		require.NoError(t, err)
		var v struct {
			VersionID string `json:"version_id"`
		}
		require.NoError(t, r.JSON(&v))
		return v.VersionID
	}
	before := version()
	submit := func() string {
		r, err := c.Do(ctx, http.MethodPost, "/compute/orgs/"+demo.Org+"/geostatistics/conditional-turning-bands", body)
		require.NoError(t, err)
		require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
		return r.Header.Get("Location")
	}

	// No compute worker: the 10 shards wait in the queue.
	status := submit()
	for i := 0; ; i++ {
		pending, _, err := q.Pending(ctx)
		require.NoError(t, err)
		if pending == 10 {
			break
		}
		require.Less(t, i, 1000, "the 10 shards were never queued (pending %d)", pending)
		time.Sleep(10 * time.Millisecond)
	}
	r, err := c.Do(ctx, http.MethodDelete, jobURL(status), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	job, err := c.Follow(ctx, status)
	require.NoError(t, err)
	assert.Equal(t, "cancelled", job.Status)
	pending, _, err := q.Pending(ctx)
	require.NoError(t, err)
	assert.Zero(t, pending, "the cancel purged the queued shards")
	assert.Equal(t, before, version(), "the target is unchanged")

	// A compute worker joins: the job runs; the status shows shard progress.
	wctx, stopWork := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() { worked <- q.Work(wctx, (&simjob.Handler{}).Compute, nil) }()
	defer func() { stopWork(); require.NoError(t, <-worked) }()
	status = submit()
	seen := map[string]bool{}
	for i := 0; ; i++ {
		r, err := c.Do(ctx, http.MethodGet, status, nil)
		require.NoError(t, err)
		var st struct {
			Status   string `json:"status"`
			Message  string `json:"message"`
			Progress int    `json:"progress"`
		}
		require.NoError(t, r.JSON(&st))
		seen[st.Message] = true
		if r.Status == http.StatusOK {
			require.Equal(t, "succeeded", st.Status, "%s", r.Body)
			break
		}
		require.Less(t, i, 6000, "the job did not finish")
		time.Sleep(20 * time.Millisecond)
	}
	assert.True(t, seen["simulating (shards done)"], "progress messages: %v", seen)
	assert.NotEqual(t, before, version(), "the new version is committed")
	// Both jobs (cancelled, then run) left nothing in the cluster (which
	// an api credential may list).
	js, err := jetstream.New(connectNATS(t, natsAddr, creds.API, natsauth.RoleAPI))
	require.NoError(t, err)
	obs, err := js.ObjectStore(ctx, cluster.ObjectBucket)
	require.NoError(t, err)
	_, err = obs.List(ctx)
	require.ErrorIs(t, err, jetstream.ErrNoObjectsFound)
	kv, err := js.KeyValue(ctx, cluster.BucketName)
	require.NoError(t, err)
	_, err = kv.Keys(ctx)
	require.ErrorIs(t, err, jetstream.ErrNoKeysFound)
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (a log sink).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Object Store chunks left by a put that never finished (a compute worker
// killed mid-upload) before an api worker starts are collected, and logged,
// when it starts; a stored result is kept.
func TestClusterAPIWorkerCollectsOrphans(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A previous life of the embedded server: one result, one orphan.
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: filepath.Join(dir, "nats")})
	require.NoError(t, err)
	nc, err := cluster.ConnectInProcess(ns, "before")
	require.NoError(t, err)
	_, err = cluster.Open(ctx, nc, cluster.Config{})
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	obs, err := js.ObjectStore(ctx, cluster.ObjectBucket)
	require.NoError(t, err)
	_, err = obs.PutBytes(ctx, "kept", []byte("a stored result"))
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		_, err = js.Publish(ctx, "$O."+cluster.ObjectBucket+".C.orphanNUID", []byte("chunk"))
		require.NoError(t, err)
	}
	nc.Close()
	ns.Shutdown()
	ns.WaitForShutdown()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	logs := &syncBuffer{}
	// Chunks younger than the ack deadline may be a live upload and are
	// kept: these are older than a millisecond by the restart.
	creds := natsCredentials(t)
	opts := testOptions(dir, service.Options{Cluster: service.ClusterOptions{Listen: natsAddr, Users: creds.Users, Role: service.RoleAPI, AckWait: time.Millisecond}})
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	run(t, opts)
	assert.Contains(t, logs.String(), `msg="collected orphan shard-result chunks" objects=1`)

	nc = connectNATS(t, natsAddr, creds.API, natsauth.RoleAPI)
	js, err = jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(ctx, "OBJ_"+cluster.ObjectBucket)
	require.NoError(t, err)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("$O."+cluster.ObjectBucket+".C.>"))
	require.NoError(t, err)
	require.Len(t, info.State.Subjects, 1, "only the stored result's chunk is left")
	obs, err = js.ObjectStore(ctx, cluster.ObjectBucket)
	require.NoError(t, err)
	b, err := obs.GetBytes(ctx, "kept")
	require.NoError(t, err)
	require.Equal(t, "a stored result", string(b))
}

// natsCredentials writes new NATS credentials in a temporary directory.
func natsCredentials(t *testing.T) natsauth.Credentials {
	t.Helper()
	c, err := natsauth.NewCredentials(filepath.Join(t.TempDir(), "nats-credentials"))
	require.NoError(t, err)
	return c
}

// connectNATS connects over TCP to the NATS port addr of a listening
// worker with the credential file seed, as a worker of role does.
func connectNATS(t *testing.T, addr, seed, role string) *nats.Conn {
	t.Helper()
	key, err := natsauth.ReadKey(seed)
	require.NoError(t, err)
	nc, err := cluster.Connect("nats://"+addr, "test-"+role, key.Option(), nats.CustomInboxPrefix(natsauth.InboxPrefix(role)))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// jobURL is the job URL of a job status URL.
func jobURL(statusURL string) string { return statusURL[:len(statusURL)-len("/status")] }

// A worker joining a listening api worker without a credential, or with
// one the users file does not list, is refused and told which flag to
// give; a worker asked to listen without users refuses to start.
func TestClusterJoinNeedsCredentials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	creds := natsCredentials(t)
	start(t, t.TempDir(), service.Options{Cluster: service.ClusterOptions{Listen: natsAddr, Users: creds.Users, Role: service.RoleAPI}})

	_, err = service.New(testOptions(t.TempDir(), service.Options{Cluster: service.ClusterOptions{NATS: "nats://" + natsAddr, Role: service.RoleAPI}}))
	require.ErrorContains(t, err, "the server requires a credential: give -nats-credentials FILE (the api.nk")
	stranger := natsCredentials(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = service.RunCompute(ctx, service.ClusterOptions{NATS: "nats://" + natsAddr, Role: service.RoleCompute, Credentials: stranger.Compute}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.ErrorContains(t, err, "the server refused the credential of -nats-credentials "+stranger.Compute)

	_, err = service.New(testOptions(t.TempDir(), service.Options{Cluster: service.ClusterOptions{Listen: "127.0.0.1:0"}}))
	require.ErrorContains(t, err, "-nats-listen 127.0.0.1:0 needs -nats-users FILE")
}
