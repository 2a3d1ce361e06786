package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// simJob is a small conditional simulation split into shards.
type simJob struct {
	in   tbsim.Input
	p    tbsim.Params
	plan *shard.Plan
	keys []string
	byID map[string]shard.Shard
}

func newSimJob(t *testing.T, realisations int, sz shard.Sizes) *simJob {
	spec := synthetic.Simulation(synthetic.Small, synthetic.DefaultSeed)
	spec.GridSize = [3]int{14, 10, 6}
	c, err := synthetic.New(spec)
	require.NoError(t, err)
	m, err := c.Masked()
	require.NoError(t, err)
	p := tbsim.DefaultParams()
	p.Realisations = realisations
	p.Lines = 40
	p.Method = kriging.Ordinary
	p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}
	in := tbsim.Input{Masked: m, Coords: c.Coords, Values: c.Grades, Variogram: c.Variogram, Distribution: c.Distribution}
	starts, err := tbsim.RowStarts(in)
	require.NoError(t, err)
	pl, err := shard.NewPlan(starts, p.Realisations, shard.Outputs(p), sz)
	require.NoError(t, err)
	j := &simJob{in: in, p: p, plan: pl, byID: map[string]shard.Shard{}}
	for _, s := range pl.Shards {
		j.keys = append(j.keys, s.Key())
		j.byID[s.Key()] = s
	}
	return j
}

// handler computes a shard of the job.
func (j *simJob) handler(_ context.Context, _ string, _ json.RawMessage, key string) ([]byte, error) {
	s, ok := j.byID[key]
	if !ok {
		return nil, fmt.Errorf("unknown shard %q", key)
	}
	return shard.Compute(context.Background(), j.in, j.p, s)
}

const groupRows = 200

func (j *simJob) writers(t *testing.T) []*objects.TableWriter {
	var ws []*objects.TableWriter
	for o := 0; o < j.plan.Outputs; o++ {
		w, err := objects.NewTableWriter(&bytes.Buffer{}, objects.Float64Types(j.p.Realisations), objects.EnsembleColumnNames("v", j.p.Realisations), &objects.WriteOptions{RowGroupRows: groupRows})
		require.NoError(t, err)
		ws = append(ws, w)
	}
	return ws
}

func closeAll(t *testing.T, ws []*objects.TableWriter) []objects.Blob {
	out, err := shard.Close(ws)
	require.NoError(t, err)
	return out
}

// check assembles the job's results from the queue and compares the files
// with the single-process ones byte for byte (by SHA-256 key).
func (j *simJob) check(t *testing.T, ctx context.Context, q *cluster.Queue, job string) {
	ref := j.writers(t)
	require.NoError(t, shard.WriteSingle(ctx, j.in, j.p, ref))
	ws := j.writers(t)
	require.NoError(t, shard.Assemble(ctx, j.plan, ws, func(ctx context.Context, s shard.Shard) ([]byte, error) {
		return q.Result(ctx, job, s.Key())
	}))
	require.Equal(t, closeAll(t, ref), closeAll(t, ws))
}

func startServer(t *testing.T) *server.Server {
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(ns.Shutdown)
	return ns
}

func connect(t *testing.T, ns *server.Server, name string) *nats.Conn {
	nc, err := cluster.ConnectInProcess(ns, name)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// events collects Work events and lets a test wait for one.
type events struct {
	mu  sync.Mutex
	all []cluster.Event
	ch  chan cluster.Event
}

func newEvents() *events { return &events{ch: make(chan cluster.Event, 1024)} }

func (e *events) add(ev cluster.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	select {
	case e.ch <- ev:
	default:
	}
}

func (e *events) list() []cluster.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]cluster.Event(nil), e.all...)
}

// A consumer stopped in the middle of a shard (its context cancelled, no
// ack) loses nothing: the shard is redelivered after the ack deadline and
// finished by the other consumer, no shard completes twice, and the
// assembled ensemble equals the single-process one bit for bit.
// Resubmitting the job publishes nothing new.
func TestKilledConsumerShardRedelivered(t *testing.T) {
	ns := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := cluster.Config{AckWait: 2 * time.Second}
	qa, err := cluster.Open(ctx, connect(t, ns, "a"), cfg)
	require.NoError(t, err)
	qb, err := cluster.Open(ctx, connect(t, ns, "b"), cfg)
	require.NoError(t, err)
	j := newSimJob(t, 6, shard.Sizes{TileBytes: 40 * 6 * 8, ShardBytes: 40 * 2 * 8})
	require.Greater(t, len(j.keys), 6)
	const job = "job-killed"
	require.NoError(t, qa.Submit(ctx, job, json.RawMessage(`{"test":1}`), j.keys))

	// Consumer A takes one shard and hangs in it until it is killed.
	actx, kill := context.WithCancel(ctx)
	taken := make(chan string, 1)
	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		_ = qa.Work(actx, func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
			taken <- key
			<-ctx.Done()
			return nil, ctx.Err()
		}, nil)
	}()
	var killed string
	select {
	case killed = <-taken:
	case <-ctx.Done():
		t.Fatal("consumer A took no shard")
	}
	kill()
	<-aDone

	ev := newEvents()
	bctx, stopB := context.WithCancel(ctx)
	bDone := make(chan struct{})
	go func() { defer close(bDone); _ = qb.Work(bctx, j.handler, ev.add) }()
	var seen []int
	st, err := qb.Wait(ctx, job, func(done, total int) {
		require.Equal(t, len(j.keys), total)
		seen = append(seen, done)
	})
	stopB()
	<-bDone
	require.NoError(t, err)
	require.Equal(t, cluster.Status{Shards: len(j.keys), Done: len(j.keys)}, st)
	// Progress counts done shards, one at a time, up to all of them.
	require.NotEmpty(t, seen)
	for i := 1; i < len(seen); i++ {
		require.Equal(t, seen[i-1]+1, seen[i])
	}
	require.Equal(t, len(j.keys), seen[len(seen)-1])

	completions := map[string]int{}
	for _, e := range ev.list() {
		require.NoError(t, e.Err, "shard %s", e.Shard)
		require.Equal(t, "done", e.Outcome, "shard %s", e.Shard)
		completions[e.Shard]++
		if e.Shard == killed {
			require.Equal(t, uint64(2), e.Delivery, "the killed shard is a redelivery")
		} else {
			require.Equal(t, uint64(1), e.Delivery)
		}
	}
	require.Len(t, completions, len(j.keys))
	for k, n := range completions {
		require.Equal(t, 1, n, "shard %s", k)
	}
	j.check(t, ctx, qb, job)

	// Resubmission: the same record, every message a duplicate.
	require.NoError(t, qa.Submit(ctx, job, json.RawMessage(`{"test":1}`), j.keys))
	pending, ackPending, err := qa.Pending(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(0), pending)
	require.Equal(t, 0, ackPending)
	require.ErrorContains(t, qa.Submit(ctx, job, json.RawMessage(`{"test":2}`), j.keys), "already exists with another spec")
}

// A shard completed a second time with a different result fails the job
// loudly, naming both digests.
func TestDifferentDigestFailsJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second})
	const job = "job-nondeterministic"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"s0", "s1"}))
	calls := 0
	h := func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
		calls++
		return []byte(fmt.Sprintf("%s-%d", key, calls)), nil
	}
	// Someone else already completed s1 with other bytes.
	js, err := nc.JetStream()
	require.NoError(t, err)
	kv, err := js.KeyValue(cluster.BucketName)
	require.NoError(t, err)
	msg, err := js.GetLastMsg(cluster.StreamName, "shard."+job+".s1")
	require.NoError(t, err)
	_, err = kv.Create("done."+job+".s1", cluster.DoneValue(string(msg.Data), job, "s1", cluster.Digest([]byte("other bytes"))))
	require.NoError(t, err)

	ev := newEvents()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Work(wctx, h, ev.add) }()
	// Both messages are handled (s1's done record already counts, so the
	// job looks finished before s1's duplicate completion is seen).
	for handled := 0; handled < 2; {
		select {
		case <-ev.ch:
			handled++
		case <-ctx.Done():
			t.Fatal("shards not handled")
		}
	}
	stop()
	<-done
	st, err := q.Status(ctx, job)
	require.NoError(t, err)
	require.True(t, st.Finished())
	require.Contains(t, st.Failed, "shard s1: determinism bug: shard s1 completed with SHA-256 "+cluster.Digest([]byte("other bytes")))
	var failed []cluster.Event
	for _, e := range ev.list() {
		if e.Outcome == "failed" {
			failed = append(failed, e)
		}
	}
	require.Len(t, failed, 1)
	require.ErrorIs(t, failed[0].Err, cluster.ErrDeterminism)
}

// Cancelling a job stops its running shard at the next check and purges
// the queued ones.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 3 * time.Second})
	const job = "job-cancel"
	keys := []string{"a", "b", "c", "d", "e"}
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), keys))
	running := make(chan struct{}, 1)
	h := func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
		running <- struct{}{}
		<-ctx.Done() // a long shard that checks for cancellation
		return nil, ctx.Err()
	}
	ev := newEvents()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Work(wctx, h, ev.add) }()
	select {
	case <-running:
	case <-ctx.Done():
		t.Fatal("no shard started")
	}
	require.NoError(t, q.Cancel(ctx, job))
	var got cluster.Event
	select {
	case got = <-ev.ch:
	case <-ctx.Done():
		t.Fatal("the running shard did not stop")
	}
	stop()
	<-done
	require.Equal(t, "cancelled", got.Outcome)
	st, err := q.Status(ctx, job)
	require.NoError(t, err)
	require.True(t, st.Cancelled)
	require.Equal(t, 0, st.Done)
	pending, _, err := q.Pending(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(0), pending)
}

// Chunks no object refers to (a put killed half-way) are purged once
// older than the age bound (the ack deadline by default: younger ones may
// be a live put); live objects are kept.
func TestCollectOrphans(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{})
	const job = "job-gc"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"x"}))
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Work(wctx, func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			return bytes.Repeat([]byte("geostat"), 300_000), nil // 2.1 MB: three 1 MiB chunks
		}, nil)
	}()
	_, err := q.Wait(ctx, job, nil)
	stop()
	<-done
	require.NoError(t, err)
	publishOrphanChunks(t, ctx, nc, 3)
	// Younger than the ack deadline (60 s): maybe a put in progress, kept.
	n, err := q.CollectOrphans(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	require.Equal(t, 2, chunkSubjects(t, ctx, nc), "the result's chunks and the young orphan's")
	n, err = q.CollectOrphansOlderThan(ctx, time.Hour)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	// Older than 1 ns: purged.
	n, err = q.CollectOrphansOlderThan(ctx, time.Nanosecond)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, chunkSubjects(t, ctx, nc))
	b, err := q.Result(ctx, job, "x")
	require.NoError(t, err)
	require.Len(t, b, 2_100_000)
	n, err = q.CollectOrphansOlderThan(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 0, n)
}

// Forgetting a job also collects the orphan chunks older than the ack
// deadline, whichever job's upload left them: so tile and location-wise
// jobs leave none behind either, as simulations did.
func TestForgetCollectsOrphans(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const ackWait = 50 * time.Millisecond
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: ackWait})
	publishOrphanChunks(t, ctx, nc, 2)
	require.Equal(t, 1, chunkSubjects(t, ctx, nc))
	time.Sleep(2 * ackWait) // the chunks are now older than the ack deadline
	require.NoError(t, q.Forget(ctx, "job-gone"))
	require.Equal(t, 0, chunkSubjects(t, ctx, nc))
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A 3-node JetStream cluster on 127.0.0.1 runs a job with 3 replicas,
// consumers attached to different nodes; the ensemble equals the single-
// process one bit for bit.
func TestThreeNodeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("forms a 3-node cluster (several seconds)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var routes []string
	var clusterPorts []int
	for i := 0; i < 3; i++ {
		p := freePort(t)
		clusterPorts = append(clusterPorts, p)
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var servers []*server.Server
	key, err := natsauth.NewKey()
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		ns, err := cluster.StartServer(cluster.ServerOptions{
			Name: fmt.Sprintf("n%d", i), Dir: t.TempDir(),
			Listen:        fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			Users:         []natsauth.User{{Role: natsauth.RoleAPI, NKey: key.Public}},
			ClusterListen: fmt.Sprintf("127.0.0.1:%d", clusterPorts[i]), ClusterName: "geostat-test", Routes: routes,
			RoutePassword: "route-secret-of-the-test",
		})
		require.NoError(t, err)
		t.Cleanup(ns.Shutdown)
		servers = append(servers, ns)
	}
	cfg := cluster.Config{Replicas: 3, AckWait: 5 * time.Second}
	// The stream can be created once the cluster has a meta leader: try
	// with a short timeout, at most 60 times.
	open := func(nc *nats.Conn) *cluster.Queue {
		var lastErr error
		for attempt := 0; attempt < 60; attempt++ {
			actx, acancel := context.WithTimeout(ctx, 2*time.Second)
			q, err := cluster.Open(actx, nc, cfg)
			acancel()
			if err == nil {
				return q
			}
			lastErr = err
			select {
			case <-ctx.Done():
				t.Fatalf("cluster not formed: %v", lastErr)
			case <-time.After(500 * time.Millisecond):
			}
		}
		t.Fatalf("cluster not formed after 60 attempts: %v", lastErr)
		return nil
	}
	t0 := time.Now()
	var queues []*cluster.Queue
	for i, ns := range servers {
		nc, err := nats.Connect(ns.ClientURL(), nats.Name(fmt.Sprintf("c%d", i)), key.Option())
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		queues = append(queues, open(nc))
	}
	t.Logf("cluster formed and assets created in %v", time.Since(t0).Round(time.Millisecond))

	j := newSimJob(t, 4, shard.Sizes{TileBytes: 60 * 4 * 8, ShardBytes: 60 * 2 * 8})
	const job = "job-cluster"
	require.NoError(t, queues[0].Submit(ctx, job, json.RawMessage(`{}`), j.keys))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	ev := newEvents()
	for _, q := range queues[1:] {
		wg.Add(1)
		go func() { defer wg.Done(); _ = q.Work(wctx, j.handler, ev.add) }()
	}
	st, err := queues[0].Wait(ctx, job, nil)
	stop()
	wg.Wait()
	require.NoError(t, err)
	require.Equal(t, len(j.keys), st.Done)
	require.Empty(t, st.Failed)
	for _, e := range ev.list() {
		require.Equal(t, "done", e.Outcome, "shard %s: %v", e.Shard, e.Err)
	}
	j.check(t, ctx, queues[0], job)
}

// A shard whose every delivery dies (workers killed each time) fails its
// job once MaxDeliver is reached, instead of leaving it waiting for ever.
// dieOnDeliveries takes the next n deliveries of q's shards and dies on
// each (its Work loop is cancelled while the handler runs), as a compute
// worker killed mid-shard would: no ack, no fail record.
func dieOnDeliveries(t *testing.T, ctx context.Context, q *cluster.Queue, n int) {
	t.Helper()
	for attempt := 1; attempt <= n; attempt++ {
		wctx, kill := context.WithCancel(ctx)
		taken := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = q.Work(wctx, func(ctx context.Context, _ string, _ json.RawMessage, _ string) ([]byte, error) {
				taken <- struct{}{}
				<-ctx.Done()
				return nil, ctx.Err()
			}, nil)
		}()
		select {
		case <-taken:
		case <-ctx.Done():
			t.Fatalf("delivery %d never came", attempt)
		}
		kill()
		<-done
	}
}

func TestMaxDeliverFailsJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: time.Second, MaxDeliver: 2})
	const job = "job-dies"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"only"}))
	dieOnDeliveries(t, ctx, q, 2)
	// A healthy worker (its reaper) records the failure.
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Work(wctx, func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			return nil, fmt.Errorf("a third delivery must not happen")
		}, nil)
	}()
	st, err := q.Wait(ctx, job, nil)
	stop()
	<-done
	require.NoError(t, err)
	require.Equal(t, "shard only: delivered 2 times without completing (workers killed or stalled each time)", st.Failed)
	pending, ackPending, err := q.Pending(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(0), pending)
	require.Equal(t, 0, ackPending)
}

// A shard message delivered again after its result and done record were
// stored (the worker died before its ack) is acknowledged without
// recomputing.
func TestLostAckNotRecomputed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{})
	const job = "job-lost-ack"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"k"}))
	calls := 0
	ev := newEvents()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Work(wctx, func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			calls++
			return []byte("result"), nil
		}, ev.add)
	}()
	next := func() cluster.Event {
		select {
		case e := <-ev.ch:
			return e
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return cluster.Event{}
	}
	require.Equal(t, "done", next().Outcome)
	// The same shard message again, as the server redelivers it when the
	// ack was lost.
	js, err := nc.JetStream()
	require.NoError(t, err)
	kv, err := js.KeyValue(cluster.BucketName)
	require.NoError(t, err)
	key, err := kv.Get("key." + job)
	require.NoError(t, err)
	_, err = js.Publish("shard."+job+".k", []byte(cluster.ShardToken(key.Value(), "k")))
	require.NoError(t, err)
	require.Equal(t, "skipped", next().Outcome)
	stop()
	<-done
	require.Equal(t, 1, calls)
}

// Bad submissions are refused with the reason; an unknown job is ErrNoJob.
func TestSubmitValidation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{})
	require.ErrorContains(t, q.Submit(ctx, "a.b", nil, []string{"s"}), `job id "a.b"`)
	require.ErrorContains(t, q.Submit(ctx, "j", nil, nil), "job j has no shards")
	require.ErrorContains(t, q.Submit(ctx, "j", nil, []string{"s", "s"}), `repeated shard key "s"`)
	require.ErrorContains(t, q.Submit(ctx, "j", nil, []string{"a..b"}), `bad or repeated shard key "a..b"`)
	_, err := q.Status(ctx, "nope")
	require.ErrorIs(t, err, cluster.ErrNoJob)
}

// A Submit whose context ends while it queues its shards returns the
// context's error only once the store call under way has ended, so that a
// cleanup right after it (Forget) leaves nothing behind: no queued shard,
// no record. Several rounds, each cut off after its first shard is queued.
func TestSubmitCutOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{})
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("s%d", i)
	}
	for round := range 5 {
		job := fmt.Sprintf("cut-%d", round)
		sctx, stop := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { errc <- q.Submit(sctx, job, json.RawMessage(`{}`), keys) }()
		clustertest.WaitQueued(t, ctx, q)
		stop()
		select {
		case err := <-errc:
			require.ErrorIs(t, err, context.Canceled, "round %d", round)
		case <-ctx.Done():
			t.Fatal("the submit did not return after its context ended")
		}
		require.NoError(t, q.Forget(ctx, job))
		pending, _, err := q.Pending(ctx)
		require.NoError(t, err)
		require.Zero(t, pending, "round %d: a shard stayed queued after the cleanup", round)
		clustertest.RequireEmpty(t, ctx, nc)
	}
}

// helperEnv names the NATS URL for TestHelperWorkerProcess; set only in the
// child processes TestKilledProcess starts.
const helperEnv = "GEOSTAT_CLUSTER_TEST_NATS"

// helperCredsEnv names the compute credential file of the child.
const helperCredsEnv = "GEOSTAT_CLUSTER_TEST_NATS_CREDENTIALS"

// TestHelperWorkerProcess is the compute worker child of TestKilledProcess
// (it does nothing in a normal test run): it connects over TCP, computes
// shards of the test job, announcing each on stdout, and hangs in its
// second shard until it is killed (at most 60 s).
func TestHelperWorkerProcess(t *testing.T) {
	url := os.Getenv(helperEnv)
	if url == "" {
		t.Skip("only run as a child of TestKilledProcess")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	key, err := natsauth.ReadKey(os.Getenv(helperCredsEnv))
	require.NoError(t, err)
	nc, err := cluster.Connect(url, "child", key.Option(), nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.RoleCompute)))
	require.NoError(t, err)
	defer nc.Close()
	q, err := cluster.Open(ctx, nc, cluster.Config{Bind: true})
	require.NoError(t, err)
	j := newSimJob(t, 10, killedSizes)
	n := 0
	stored := make(chan struct{}) // the first shard's result is stored and acknowledged
	_ = q.Work(ctx, func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
		n++
		if n == 2 {
			// The next shard computes while the first one's result is
			// stored: hang once that is done.
			select {
			case <-stored:
			case <-ctx.Done():
			}
			fmt.Printf("hang %s\n", key)
			<-ctx.Done() // killed here
			return nil, ctx.Err()
		}
		b, err := j.handler(ctx, job, spec, key)
		fmt.Printf("computed %s\n", key)
		return b, err
	}, func(ev cluster.Event) {
		if ev.Outcome == "done" {
			close(stored)
		}
	})
}

// killedSizes split the 10-realisation job of TestKilledProcess.
var killedSizes = shard.Sizes{TileBytes: 50 * 10 * 8, ShardBytes: 50 * 5 * 8}

// A compute worker process connected over TCP to a listening embedded
// server is killed (SIGKILL, by PID) in the middle of a shard after
// computing another: its finished shard counts, the killed one is
// redelivered after the ack deadline and computed here, and the assembled
// 10-realisation ensemble equals the single-process one byte for byte.
func TestKilledProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ns, creds, _, nc := authServer(t, ctx, nil)
	q, err := cluster.Open(ctx, nc, cluster.Config{AckWait: 2 * time.Second})
	require.NoError(t, err)
	j := newSimJob(t, 10, killedSizes)
	const job = "job-killed-process"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), j.keys))

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+ns.ClientURL(), helperCredsEnv+"="+creds.Compute)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var computed []string
	var hung string
	sc := bufio.NewScanner(out)
	for hung == "" && sc.Scan() {
		if k, ok := strings.CutPrefix(sc.Text(), "computed "); ok {
			computed = append(computed, k)
		}
		if k, ok := strings.CutPrefix(sc.Text(), "hang "); ok {
			hung = k
		}
	}
	require.NotEmpty(t, hung, "the child never reached its second shard")
	require.Len(t, computed, 1)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL, by PID
	_ = cmd.Wait()

	ev := newEvents()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Work(wctx, j.handler, ev.add) }()
	st, err := q.Wait(ctx, job, nil)
	stop()
	<-done
	require.NoError(t, err)
	require.Equal(t, len(j.keys), st.Done)
	here := map[string]cluster.Event{}
	for _, e := range ev.list() {
		require.Equal(t, "done", e.Outcome, "shard %s: %v", e.Shard, e.Err)
		here[e.Shard] = e
	}
	require.NotContains(t, here, computed[0], "the child's finished shard is not recomputed")
	require.Contains(t, here, hung)
	require.Equal(t, uint64(2), here[hung].Delivery, "the killed shard is a redelivery")
	require.Len(t, here, len(j.keys)-1)
	j.check(t, ctx, q, job)
}

// objectNames lists the live objects of the result store.
func objectNames(t *testing.T, ctx context.Context, nc *nats.Conn) []string {
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	obs, err := js.ObjectStore(ctx, cluster.ObjectBucket)
	require.NoError(t, err)
	list, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, o := range list {
		names = append(names, o.Name)
	}
	return names
}

// chunkSubjects counts the chunk subjects with messages in the result
// store's stream.
// publishOrphanChunks stores n chunks of a put that never finished, each
// acknowledged by the stream: a core publish and a flush only say the server
// received them, not that the stream holds them yet.
func publishOrphanChunks(t *testing.T, ctx context.Context, nc *nats.Conn, n int) {
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		_, err := js.Publish(ctx, "$O."+cluster.ObjectBucket+".C.orphanNUID", []byte("chunk"))
		require.NoError(t, err)
	}
}

func chunkSubjects(t *testing.T, ctx context.Context, nc *nats.Conn) int {
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(ctx, "OBJ_"+cluster.ObjectBucket)
	require.NoError(t, err)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("$O."+cluster.ObjectBucket+".C.>"))
	require.NoError(t, err)
	return len(info.State.Subjects)
}

// Forget deletes a finished job's results (object and chunks) and records,
// keeps a result another job's done record names, and a shard message of a
// forgotten job is dropped without a fail record.
func TestForget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{})
	blob := func(key string) []byte { return bytes.Repeat([]byte(key), 400_000) } // 2 chunks of 1 MiB for 4-byte keys
	require.NoError(t, q.Submit(ctx, "job-a", json.RawMessage(`{}`), []string{"xxxx", "yyyy"}))
	require.NoError(t, q.Submit(ctx, "job-b", json.RawMessage(`{}`), []string{"xxxx"}))
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Work(wctx, func(_ context.Context, _ string, _ json.RawMessage, key string) ([]byte, error) {
			return blob(key), nil
		}, nil)
	}()
	for _, job := range []string{"job-a", "job-b"} {
		st, err := q.Wait(ctx, job, nil)
		require.NoError(t, err)
		require.Equal(t, st.Shards, st.Done)
	}
	stop()
	<-done
	require.ElementsMatch(t, []string{cluster.Digest(blob("xxxx")), cluster.Digest(blob("yyyy"))}, objectNames(t, ctx, nc))

	require.NoError(t, q.Forget(ctx, "job-a"))
	// job-b's shard has the same result as job-a's "xxxx": kept.
	require.Equal(t, []string{cluster.Digest(blob("xxxx"))}, objectNames(t, ctx, nc))
	b, err := q.Result(ctx, "job-b", "xxxx")
	require.NoError(t, err)
	require.Equal(t, blob("xxxx"), b)
	_, err = q.Status(ctx, "job-a")
	require.ErrorIs(t, err, cluster.ErrNoJob)

	require.NoError(t, q.Forget(ctx, "job-b"))
	require.Empty(t, objectNames(t, ctx, nc))
	require.Zero(t, chunkSubjects(t, ctx, nc))
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, cluster.BucketName)
	require.NoError(t, err)
	keys, err := kv.Keys(ctx)
	if !errors.Is(err, jetstream.ErrNoKeysFound) {
		require.NoError(t, err)
	}
	require.Empty(t, keys)
	require.NoError(t, q.Forget(ctx, "job-b"), "forgetting twice does nothing")

	// A late shard message of a forgotten job is dropped, not failed.
	_, err = js.Publish(ctx, "shard.job-a.zzzz", []byte("zzzz"))
	require.NoError(t, err)
	ev := newEvents()
	wctx, stop = context.WithCancel(ctx)
	done = make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Work(wctx, func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			return nil, errors.New("must not run")
		}, ev.add)
	}()
	var got cluster.Event
	select {
	case got = <-ev.ch:
	case <-ctx.Done():
		t.Fatal("the late shard message was not delivered")
	}
	stop()
	<-done
	require.Equal(t, "cancelled", got.Outcome)
	keys, err = kv.Keys(ctx)
	if !errors.Is(err, jetstream.ErrNoKeysFound) {
		require.NoError(t, err)
	}
	require.Empty(t, keys)
}

// A Work loop with Concurrency 3 computes three shards at once, never
// more: the handler records the calls in flight, and the first three wait
// until all three are in.
func TestWorkConcurrency(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{Concurrency: 3})
	const job = "job-conc"
	var keys []string
	for i := 0; i < 12; i++ {
		keys = append(keys, fmt.Sprintf("s%d", i))
	}
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), keys))
	h, counts := gatedHandler(3)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Work(wctx, h, nil) }()
	st, err := q.Wait(ctx, job, nil)
	stop()
	<-done
	require.NoError(t, err)
	require.Equal(t, len(keys), st.Done)
	require.Empty(t, st.Failed)
	most, calls := counts()
	require.Equal(t, 3, most, "shards computed at once")
	require.Equal(t, len(keys), calls)
	for _, k := range keys {
		b, err := q.Result(ctx, job, k)
		require.NoError(t, err)
		require.Equal(t, k, string(b))
	}
}

// With MaxMemory 100 and shards estimated at 40 a loop of Concurrency 3
// computes two shards at once, never three: the first two wait until both
// are in, and the most in flight is two.
func TestMemoryAdmission(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{Concurrency: 3, MaxMemory: 100})
	const job = "job-mem"
	var keys []string
	for i := 0; i < 8; i++ {
		keys = append(keys, fmt.Sprintf("s%d", i))
	}
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), keys))
	h, counts := gatedHandler(2)
	est := func(_ context.Context, j string, _ json.RawMessage, _ string) (int64, error) {
		require.Equal(t, job, j)
		return 40, nil
	}
	ev := newEvents()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.WorkSized(wctx, h, est, ev.add) }()
	st, err := q.Wait(ctx, job, nil)
	stop()
	<-done
	require.NoError(t, err)
	require.Equal(t, len(keys), st.Done)
	most, _ := counts()
	require.Equal(t, 2, most, "two shards of 40 fit in 100, three do not")
	for _, e := range ev.list() {
		require.Equal(t, "done", e.Outcome, "shard %s: %v", e.Shard, e.Err)
	}
}

// A shard estimated above a worker's MaxMemory is never computed by it: the
// worker hands it back, a worker with room computes it, and when no worker
// has room the job fails after MaxDeliver deliveries naming the memory.
func TestShardTooLarge(t *testing.T) {
	ns := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := cluster.Config{MaxDeliver: 2, MaxMemory: 100}
	small, err := cluster.Open(ctx, connect(t, ns, "small"), cfg)
	require.NoError(t, err)
	est := func(_ context.Context, _ string, _ json.RawMessage, shard string) (int64, error) {
		if shard == "huge" {
			return 150 << 20, nil
		}
		return 10, nil
	}
	h := func(_ context.Context, _ string, _ json.RawMessage, key string) ([]byte, error) {
		return []byte(key), nil
	}
	run := func(q *cluster.Queue, h cluster.Handler) (stop func(), ev *events) {
		ev = newEvents()
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = q.WorkSized(wctx, h, est, ev.add) }()
		return func() { cancel(); <-done }, ev
	}
	// The small worker refuses "huge".
	refused := func(h cluster.Handler) cluster.Handler {
		return func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
			require.NotEqual(t, "huge", key, "the small worker never computes the huge shard")
			return h(ctx, job, spec, key)
		}
	}
	const job = "job-big"
	require.NoError(t, small.Submit(ctx, job, json.RawMessage(`{}`), []string{"huge"}))
	stopSmall, ev := run(small, refused(h))
	for seen := false; !seen; {
		select {
		case e := <-ev.ch:
			seen = e.Shard == "huge"
			if seen {
				require.Equal(t, "too large", e.Outcome)
				require.ErrorContains(t, e.Err, "needs an estimated 150.0 MiB of memory, more than the 100 bytes")
			}
		case <-ctx.Done():
			t.Fatal("the small worker was never offered the huge shard")
		}
	}
	stopSmall()
	// A worker with room takes it on its next delivery.
	big, err := cluster.Open(ctx, connect(t, ns, "big"), cluster.Config{MaxDeliver: 2, MaxMemory: 1 << 30})
	require.NoError(t, err)
	stopBig, _ := run(big, h)
	st, err := big.Wait(ctx, job, nil)
	stopBig()
	require.NoError(t, err)
	require.Empty(t, st.Failed)
	require.Equal(t, 1, st.Done)
	b, err := big.Result(ctx, job, "huge")
	require.NoError(t, err)
	require.Equal(t, "huge", string(b))
	require.NoError(t, big.Forget(ctx, job))

	// No worker has room: the job fails with the recorded reason.
	const job2 = "job-big-2"
	require.NoError(t, small.Submit(ctx, job2, json.RawMessage(`{}`), []string{"a", "huge", "b"}))
	stopSmall, _ = run(small, refused(h))
	st, err = small.Wait(ctx, job2, nil)
	require.NoError(t, err)
	stopSmall()
	require.Contains(t, st.Failed, "shard huge needs an estimated 150.0 MiB of memory")
	require.Contains(t, st.Failed, "-max-memory")
	require.NoError(t, small.Forget(ctx, job2))
	kv, err := jetstream.New(connect(t, ns, "kv"))
	require.NoError(t, err)
	b2, err := kv.KeyValue(ctx, cluster.BucketName)
	require.NoError(t, err)
	keys, err := b2.Keys(ctx)
	if !errors.Is(err, jetstream.ErrNoKeysFound) {
		require.NoError(t, err)
	}
	require.Empty(t, keys, "Forget removes the big records too")
}

// WaitShards names each shard as its done record appears, those done
// before the call included: the last shard's handler waits until the
// first two have been reported.
func TestWaitShards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{})
	const job = "job-each"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"a", "b", "c"}))
	firstTwo := make(chan struct{})
	h := func(ctx context.Context, _ string, _ json.RawMessage, key string) ([]byte, error) {
		if key == "c" {
			select {
			case <-firstTwo:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return []byte(key), nil
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Work(wctx, h, nil) }()
	defer func() { stop(); <-done }()
	// "a" is done before WaitShards starts.
	for i := 0; ; i++ {
		st, err := q.Status(ctx, job)
		require.NoError(t, err)
		if st.Done > 0 {
			break
		}
		require.Less(t, i, 1000, "no shard done")
		time.Sleep(10 * time.Millisecond)
	}
	var seen []string
	st, err := q.WaitShards(ctx, job, func(shard string, n, total int) {
		seen = append(seen, shard)
		require.Equal(t, len(seen), n)
		require.Equal(t, 3, total)
		if n == 2 {
			close(firstTwo)
		}
	})
	require.NoError(t, err)
	require.Equal(t, 3, st.Done)
	require.Equal(t, []string{"a", "b", "c"}, seen)
}

// gatedHandler returns a handler whose first n calls wait until all n are
// in flight (each result is its shard key), and counts, which gives the
// most calls in flight at once and the calls so far.
func gatedHandler(n int) (h cluster.Handler, counts func() (most, calls int)) {
	var mu sync.Mutex
	inFlight, most, calls := 0, 0, 0
	in := make(chan struct{})
	h = func(ctx context.Context, _ string, _ json.RawMessage, key string) ([]byte, error) {
		mu.Lock()
		inFlight++
		calls++
		most = max(most, inFlight)
		if inFlight == n && calls == n {
			close(in)
		}
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		select {
		case <-in:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		time.Sleep(5 * time.Millisecond) // overlap with the next fetches
		return []byte(key), nil
	}
	counts = func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return most, calls
	}
	return h, counts
}
