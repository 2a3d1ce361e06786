package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
)

// faultyKV is the job bucket with fail records that cannot be written
// while refuse says so, and a record of the keys listed and read.
type faultyKV struct {
	jetstream.KeyValue
	refuse   func() bool
	failPuts atomic.Int64 // refused fail-record writes
	mu       sync.Mutex
	filters  []string
	gets     []string
}

var errInjected = errors.New("injected store error")

func (f *faultyKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if strings.HasPrefix(key, "fail.") && f.refuse != nil && f.refuse() {
		f.failPuts.Add(1)
		return 0, errInjected
	}
	return f.KeyValue.Create(ctx, key, value, opts...)
}

func (f *faultyKV) ListKeysFiltered(ctx context.Context, filters ...string) (jetstream.KeyLister, error) {
	f.mu.Lock()
	f.filters = append(f.filters, filters...)
	f.mu.Unlock()
	return f.KeyValue.ListKeysFiltered(ctx, filters...)
}

func (f *faultyKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	f.mu.Lock()
	f.gets = append(f.gets, key)
	f.mu.Unlock()
	return f.KeyValue.Get(ctx, key)
}

// failJob runs one Work loop whose handler fails every shard, until the
// job's Wait returns, and returns Wait's status and the loop's events.
func failJob(t *testing.T, ctx context.Context, q *cluster.Queue, job string, onEvent func(cluster.Event)) (cluster.Status, []cluster.Event) {
	t.Helper()
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"a"}))
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var mu sync.Mutex
	var evs []cluster.Event
	go func() {
		defer close(done)
		_ = q.Work(wctx, func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			return nil, errors.New("bad shard")
		}, func(e cluster.Event) {
			mu.Lock()
			evs = append(evs, e)
			mu.Unlock()
			if onEvent != nil {
				onEvent(e)
			}
		})
	}()
	st, err := q.Wait(ctx, job, nil)
	stop()
	<-done
	require.NoError(t, err, "the job fails, it does not hang")
	return st, evs
}

// A fail record whose first writes are refused is written by a retry of
// the same delivery: the job fails with the shard's reason (the old queue
// dropped the write's error and terminated the message: the job waited
// for ever).
func TestFailRecordRetried(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second})
	var calls atomic.Int64
	fk := &faultyKV{refuse: func() bool { return calls.Add(1) <= 3 }}
	cluster.WrapStores(q, func(kv jetstream.KeyValue) jetstream.KeyValue { fk.KeyValue = kv; return fk }, nil)
	st, evs := failJob(t, ctx, q, "job-retry", nil)
	require.Equal(t, "shard a: bad shard", st.Failed)
	require.EqualValues(t, 3, fk.failPuts.Load(), "three refused writes, then the record")
	require.Len(t, evs, 1)
	require.Equal(t, "failed", evs[0].Outcome)
	require.Equal(t, uint64(1), evs[0].Delivery)
}

// A fail record that cannot be written during a whole delivery is logged
// and its shard handed back (outcome "retry", not terminated): the next
// delivery writes it and the job fails with the shard's reason.
func TestFailRecordRedelivered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logger, logs := testLogger()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second, Logger: logger})
	var refuse atomic.Bool
	refuse.Store(true)
	fk := &faultyKV{refuse: refuse.Load}
	cluster.WrapStores(q, func(kv jetstream.KeyValue) jetstream.KeyValue { fk.KeyValue = kv; return fk }, nil)
	st, evs := failJob(t, ctx, q, "job-redeliver", func(e cluster.Event) {
		if e.Outcome == "retry" {
			refuse.Store(false) // the store is back
		}
	})
	require.Equal(t, "shard a: bad shard", st.Failed)
	require.Greater(t, fk.failPuts.Load(), int64(1), "the write was retried within the delivery")
	require.Len(t, evs, 2)
	require.Equal(t, "retry", evs[0].Outcome)
	require.ErrorIs(t, evs[0].Err, errInjected)
	require.Equal(t, "failed", evs[1].Outcome)
	require.Equal(t, uint64(2), evs[1].Delivery)
	out := logs.String()
	require.Contains(t, out, "cannot record why a job failed")
	require.Contains(t, out, "job=job-redeliver")
}

// syncBuffer is a bytes.Buffer safe for concurrent use (a log sink the
// queue's goroutines write to while the test reads it).
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

// testLogger is a text logger writing to the returned buffer.
func testLogger() (*slog.Logger, *syncBuffer) {
	logs := &syncBuffer{}
	return slog.New(slog.NewTextHandler(logs, nil)), logs
}

// faultyObjects is the result store with deletions that fail.
type faultyObjects struct {
	jetstream.ObjectStore
	deletes atomic.Int64
}

func (f *faultyObjects) Delete(context.Context, string) error {
	f.deletes.Add(1)
	return errInjected
}

// A cleanup that fails after a job succeeded leaves the job succeeded: the
// failure is logged and counted, not returned; a later Forget collects the
// leftovers.
func TestCleanupFailureLoggedAndCounted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logger, logs := testLogger()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second, Logger: logger})
	const job = "job-clean"
	digest, err := q.PutInput(ctx, job, []byte("input"))
	require.NoError(t, err)
	_, _, err = clustertest.Run(t, ctx, q, func(context.Context, string, json.RawMessage, string) ([]byte, error) {
		return []byte("result"), nil
	}, 1, false, func(ctx context.Context) error {
		return q.SubmitWait(ctx, job, json.RawMessage(`{}`), []string{"a"}, nil)
	})
	require.NoError(t, err, "the job succeeded")

	fo := &faultyObjects{}
	cluster.WrapStores(q, nil, func(obs jetstream.ObjectStore) jetstream.ObjectStore { fo.ObjectStore = obs; return fo })
	require.Zero(t, q.CleanupFailures())
	q.Cleanup(ctx, job, digest)
	require.EqualValues(t, 1, q.CleanupFailures())
	require.Positive(t, fo.deletes.Load())
	out := logs.String()
	require.Contains(t, out, "cleaning up a finished job failed")
	require.Contains(t, out, "job="+job)
	require.Contains(t, out, errInjected.Error())
	st, err := q.Status(ctx, job)
	require.NoError(t, err, "the failed cleanup kept the job record: Forget again retries")
	require.Equal(t, 1, st.Done)

	// The store is back: the next cleanup collects everything, even with
	// an ended context.
	cluster.WrapStores(q, nil, func(jetstream.ObjectStore) jetstream.ObjectStore { return fo.ObjectStore })
	dead, stop := context.WithCancel(ctx)
	stop()
	q.Cleanup(dead, job, digest)
	require.EqualValues(t, 1, q.CleanupFailures())
	clustertest.RequireEmpty(t, ctx, nc)
}

// Forget of one job reads only that job's records (its done keys, by a
// listing filtered to "done.<job>.>"), never every done record of the
// bucket, and leaves the other jobs' records and results intact.
func TestForgetScopedToJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second})
	jobs := map[string][]string{"job-a": {"x", "y"}, "job-ab": {"x"}, "job-c": {"x", "z"}}
	_, _, err := clustertest.Run(t, ctx, q, func(_ context.Context, job string, _ json.RawMessage, key string) ([]byte, error) {
		return []byte("result of " + key), nil // identical results across jobs: shared objects
	}, 1, false, func(ctx context.Context) error {
		for job, keys := range jobs {
			if err := q.SubmitWait(ctx, job, json.RawMessage(`{}`), keys, nil); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	fk := &faultyKV{}
	cluster.WrapStores(q, func(kv jetstream.KeyValue) jetstream.KeyValue { fk.KeyValue = kv; return fk }, nil)
	require.NoError(t, q.Forget(ctx, "job-a"))
	for _, f := range fk.filters {
		require.NotEqual(t, "done.>", f, "Forget lists only its job's keys")
		if strings.HasPrefix(f, "done.") {
			require.Equal(t, "done.job-a.>", f)
		}
	}
	for _, k := range fk.gets {
		if strings.HasPrefix(k, "done.") {
			require.True(t, strings.HasPrefix(k, "done.job-a."), "Forget read %s", k)
		}
	}
	_, err = q.Status(ctx, "job-a")
	require.ErrorIs(t, err, cluster.ErrNoJob)
	for _, job := range []string{"job-ab", "job-c"} {
		st, err := q.Status(ctx, job)
		require.NoError(t, err)
		require.Equal(t, st.Shards, st.Done, job)
		for _, key := range jobs[job] {
			b, err := q.Result(ctx, job, key)
			require.NoError(t, err, "%s %s: the shared result is kept", job, key)
			require.Equal(t, "result of "+key, string(b))
		}
	}
}

// Wait does not wait for ever on a job that cannot finish: one whose shard
// messages are gone without a done or fail record fails at the next check,
// and one whose shards no compute worker takes fails after AckWait ×
// (MaxDeliver+1), each with a fail record saying why.
func TestWaitFailsStalledJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: time.Second, MaxDeliver: 2})
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	stream, err := js.Stream(ctx, cluster.StreamName)
	require.NoError(t, err)

	require.NoError(t, q.Submit(ctx, "job-lost", json.RawMessage(`{}`), []string{"a", "b"}))
	require.NoError(t, stream.Purge(ctx, jetstream.WithPurgeSubject("shard.job-lost.>")))
	st, err := q.Wait(ctx, "job-lost", nil)
	require.NoError(t, err)
	require.Contains(t, st.Failed, "none of the job's shards is queued or running")
	rec, err := q.Status(ctx, "job-lost")
	require.NoError(t, err)
	require.Equal(t, st.Failed, rec.Failed, "recorded for every waiter and worker")

	require.NoError(t, q.Submit(ctx, "job-idle", json.RawMessage(`{}`), []string{"a"}))
	start := time.Now()
	st, err = q.Wait(ctx, "job-idle", nil)
	require.NoError(t, err)
	require.Contains(t, st.Failed, "no compute worker held a shard")
	require.GreaterOrEqual(t, time.Since(start), 3*time.Second, "not before AckWait × (MaxDeliver+1)")
	require.ErrorContains(t, cluster.FailedError("job-idle", st.Failed), "are compute workers running?")
}

// A Runner whose job succeeded returns its results even when the cleanup
// after it fails (here every deletion in the result store): the failure
// is logged and counted, not the job's error (the old runners joined it
// to Run's error, failing a job whose results were complete).
func TestRunnerSucceedsDespiteFailedCleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logger, logs := testLogger()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second, Logger: logger})
	fo := &faultyObjects{}
	cluster.WrapStores(q, nil, func(obs jetstream.ObjectStore) jetstream.ObjectStore { fo.ObjectStore = obs; return fo })
	cols := make([][]float64, 3)
	for r := range cols {
		cols[r] = make([]float64, 100)
		for i := range cols[r] {
			cols[r][i] = float64(r*100 + i)
		}
	}
	ops := ensemble.Operations{Summary: true}
	lw, err := ensemble.NewLocationWise(ops, 100, 3)
	require.NoError(t, err)
	require.NoError(t, ensemble.Process(ctx, ensemble.NewColumnsSource(cols, 100), lw))
	var got []ensemble.Output
	_, _, err = clustertest.Run(t, ctx, q, (&lwjob.Handler{Inputs: q}).Compute, 1, false, func(ctx context.Context) error {
		var err error
		got, err = (&lwjob.Runner{Queue: q}).Run(ctx, ops, ensemble.NewColumnsSource(cols, 40), nil)
		return err
	})
	require.NoError(t, err, "the job succeeded; its cleanup failing is not its error")
	require.Equal(t, lw.Outputs(), got)
	require.Positive(t, fo.deletes.Load(), "the cleanup ran and failed")
	require.EqualValues(t, 1, q.CleanupFailures())
	require.Contains(t, logs.String(), "cleaning up a finished job failed")
}
